"""Core benchmark: the relay's debugpy sessions beside the raw DAP anchors, in one run.

Prints the project's medians (ms) beside ``../shared/bench/raw_dap_bench.py``
over TCP and over stdio, with ratios (anchor / relay: how many times faster) and sample counts. The relay's
steps and the anchors' runs alternate in ``--rounds`` rounds, so that drift hits both alike.

    python bench/core_bench.py [-n 200] [--anchor-n 50] [--rounds 3] [--no-anchors]

The session store's cost is measured in the same run: steps with the store off and on, interleaved.
Launches are timed phase by phase (``SessionInfo.startup``), restarts too; many sessions step at once
(20 and 50, each at an agent's pace); and whole test suites run plainly and under the relay on every target
Python found (``suites.py``: a suite the bench writes, with its no-op tracer floors, and a PyPI project's own).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import threading
import time

import suites
from common import AnchorRuns, Samples, Table, ms, ratio, record, rounds, wait_until

from jupyter_debug_relay import Relay

# The same target as the anchor client, so the figures compare like with like.
TARGET = """
def work(i):
    total = 0
    for k in range(3):
        total += i * k
    return total

acc = []
for i in range(100000):
    acc.append(work(i))
big = list(range(1000000))
print("done", len(acc))
"""


def measure_relay(n: int, program: str, samples: dict[str, Samples]) -> None:
    """A launch to its first stop, then ``n`` rounds of a step, a look at the stop and an evaluate, added to
    ``samples`` (``first_stop``, ``step``, ``inspect``, ``evaluate``)."""
    with Relay() as relay:
        bp = relay.breakpoints.add(program, 3)
        started = time.perf_counter()
        session = relay.launch(program)
        session.wait_for_stop(30)
        samples["first_stop"].add(ms(time.perf_counter() - started))
        relay.breakpoints.remove(bp.id)
        for _ in range(n):
            samples["step"].time(session.next, timeout=30)
            t = time.perf_counter()
            frames = session.stack(levels=20)
            scopes = session.scopes(frames[0].id)
            session.variables(scopes[0].ref)
            samples["inspect"].add(ms(time.perf_counter() - t))
            samples["evaluate"].time(session.evaluate, "i * 2", frame_id=frames[0].id)
        session.terminate()


def measure_launches(program: str, launches: int = 10) -> dict:
    """Launch -> first stop and restart -> first stop; the median of each phase of the launches."""
    firsts, restarts, phases = Samples(), Samples(), {}
    with Relay(record=False) as relay:
        relay.breakpoints.add(program, 3)
        for _ in range(launches):
            started = time.perf_counter()
            session = relay.launch(program)
            session.wait_for_stop(30)
            firsts.add(ms(time.perf_counter() - started))
            for phase, took in session.info().startup.items():
                phases.setdefault(phase, Samples()).add(took)
            started = time.perf_counter()
            session.restart()
            session.wait_for_stop(30)
            restarts.add(ms(time.perf_counter() - started))
            session.terminate()
    return {"launch": firsts, "restart": restarts, "phases": phases}


def measure_paced(program: str, sessions: int, steps: int = 40, think: float = 0.1) -> Samples:
    """``sessions`` sessions stepping at once, each at an agent's pace (a step, then 0.5-1.5 x ``think`` s to
    read it; 0: flat out): the steps' times, recording on as by default."""
    with Relay() as relay:
        bp = relay.breakpoints.add(program, 3)
        handles = [relay.launch(program) for _ in range(sessions)]
        for handle in handles:
            handle.wait_for_stop(60)
        relay.breakpoints.remove(bp.id)
        times = Samples()
        lock = threading.Lock()

        def drive(handle, seed: int) -> None:
            pace = random.Random(seed)
            time.sleep(pace.uniform(0, think))
            for _ in range(steps):
                t = time.perf_counter()
                handle.next(timeout=60)
                with lock:
                    times.add(ms(time.perf_counter() - t))
                time.sleep(pace.uniform(0.5, 1.5) * think)

        threads = [threading.Thread(target=drive, args=(h, n)) for n, h in enumerate(handles)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        if any(thread.is_alive() for thread in threads) or times.n != sessions * steps:
            raise RuntimeError(f"{sessions} paced sessions: {times.n} of {sessions * steps} steps came back")
    return times


def measure_store(n: int, program: str, home: str) -> dict:
    """Steps (with the usual look at each stop) with the session store off and on, interleaved in one run, and
    the time from appending a command to a session's commands.jsonl to its answer in events.jsonl."""
    with Relay(record=False) as off, Relay(home=home) as on:
        sessions = []
        for relay in (off, on):
            bp = relay.breakpoints.add(program, 3)
            sessions.append(relay.launch(program))
            sessions[-1].wait_for_stop(30)
            relay.breakpoints.remove(bp.id)
        steps = {0: Samples(), 1: Samples()}
        for k in range(n):
            for which in (0, 1) if k % 2 == 0 else (1, 0):  # neither always goes first
                session = sessions[which]
                steps[which].time(session.next, timeout=30)
                frames = session.stack(levels=20)
                session.variables(session.scopes(frames[0].id)[0].ref)
        folder = os.path.join(home, "sessions", sessions[1].info().uid)
        answers = Samples()
        for number in range(max(20, n // 5)):
            events = os.path.join(folder, "events.jsonl")
            offset = os.path.getsize(events)
            t = time.perf_counter()
            with open(os.path.join(folder, "commands.jsonl"), "a") as f:
                f.write(json.dumps({"id": f"b{number}", "type": "status", "args": {}}) + "\n")
            wait_until(lambda number=number, offset=offset, events=events: answered(events, offset, f"b{number}"),
                       30, f"the answer to command b{number}")
            answers.add(ms(time.perf_counter() - t))
        for session in sessions:
            session.terminate()
    return {"store_off": steps[0], "store_on": steps[1], "command_response": answers}


def answered(events: str, offset: int, command: str) -> bool:
    """Whether ``events`` holds, past ``offset``, the answer to the command of id ``command``."""
    with open(events) as f:
        f.seek(offset)
        return f'"command_id": "{command}"' in f.read()


def measure_big_page(program: str) -> Samples:
    with Relay() as relay:
        relay.breakpoints.add(program, len(TARGET.strip().splitlines()) + 1)
        session = relay.launch(program)
        session.wait_for_stop(60)
        scope = session.scopes()[0]
        big = next(v for v in session.variables(scope.ref, count=1000).items if v.name == "big")
        times = Samples()
        for _ in range(20):
            page = times.time(session.variables, big.ref, start=0, count=100)
            assert page.total == 1_000_000 and len(page.items) == 100
        session.terminate()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="steps timed for the relay")
    parser.add_argument("--anchor-n", type=int, default=50, help="steps timed for each anchor")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the relay's steps and the anchors'")
    parser.add_argument("--launches", type=int, default=10, help="launches timed to their first stop")
    parser.add_argument("--no-anchors", action="store_true")
    parser.add_argument("--suite-rounds", type=int, default=3, help="runs of each whole suite, per target Python")
    parser.add_argument("--python", action="append", help="a target Python for the suites (default: all found)")
    opts = parser.parse_args()
    anchors = [] if opts.no_anchors else [
        (AnchorRuns("raw_dap_bench.py", ["--transport", "tcp"]), "raw DAP, TCP"),
        (AnchorRuns("raw_dap_bench.py", ["--transport", "stdio"]), "raw DAP, stdio")]
    anchors = [(runs, label) for runs, label in anchors if runs.available]
    per_round = ["-n", str(max(1, opts.anchor_n // opts.rounds))]

    with tempfile.TemporaryDirectory() as workdir:
        os.environ["JUPYTER_DEBUG_RELAY_HOME"] = os.path.join(workdir, "home")  # recordings stay in the run's folder
        program = os.path.join(workdir, "target.py")
        with open(program, "w") as f:
            f.write(TARGET)
        core = {key: Samples() for key in ("first_stop", "step", "inspect", "evaluate")}
        rounds(opts.rounds, lambda _: measure_relay(max(1, opts.n // opts.rounds), program, core),
               [(runs, per_round) for runs, _ in anchors])
        launches = measure_launches(program, opts.launches)
        big_page = measure_big_page(program)
        flat_out = measure_paced(program, 10, steps=50, think=0)
        store = measure_store(opts.n, program, os.path.join(workdir, "store"))
        paced = {count: measure_paced(program, count) for count in (20, 50)}
        targets = [suites.prepare_target(python) for python in opts.python or suites.find_pythons()]
        suite = suites.measure(targets, suites.prepare(os.path.join(workdir, "suites")), opts.suite_rounds)

    head = ["measure (ms)", "n", "relay", "goal"]
    for _, label in anchors:
        head += [label, "ratio"]
    table = Table(*head)
    print_row = _rower(table, anchors)
    print_row("launch to first stop, median", launches["launch"], 250, "first_stop_ms")
    print_row("  the first launch of the run", Samples(core["first_stop"].values[:1]), None)
    print_row("step (next -> stopped)", core["step"], 3, "step_ms")
    print_row("stack+scopes+variables", core["inspect"], 5, "inspect_ms")
    print_row("evaluate", core["evaluate"], 2, "evaluate_ms")
    print_row("restart -> first stop", launches["restart"], 250)
    for phase, took in launches["phases"].items():
        print_row(f"  {phase}", took, None)
    print_row("1M-element list, first 100", big_page, 50)
    table.row("step p99, 10 sessions at once", flat_out.n, flat_out.p(99), 50)
    print_row("step, session store off", store["store_off"], None)
    print_row("step, session store on", store["store_on"], None)
    store_cost = store["store_on"].median - store["store_off"].median
    table.row("store cost per step", store["store_on"].n, store_cost, 0.2)
    print_row("command append -> response", store["command_response"], 100)
    for count, times in paced.items():
        table.row(f"step p50, {count} sessions paced", times.n, times.median, "")
        table.row(f"step p99, {count} sessions paced", times.n, times.p(99), 30)
    print()
    suite_table = Table(*suites.SUITE_COLUMNS)
    for target in targets:
        suites.print_rows(suite_table, suite[target.version], target)
    for runs, label in anchors:
        print(f"{label}: {len(runs.runs)} runs, {runs.samples()} steps; its first stop is one launch a run")

    record("core", {
        "launch_ms": launches["launch"].summary(), "first_launch_ms": core["first_stop"].values[0],
        "restart_ms": launches["restart"].summary(), "step_ms": core["step"].summary(),
        "inspect_ms": core["inspect"].summary(), "evaluate_ms": core["evaluate"].summary(),
        "phases_ms": {phase: round(took.median, 2) for phase, took in launches["phases"].items()},
        "big_page_ms": big_page.summary(), "step_10_flat_out_ms": flat_out.summary(),
        "step_store_off_ms": store["store_off"].summary(), "step_store_on_ms": store["store_on"].summary(),
        "store_cost_ms": round(store_cost, 3), "command_response_ms": store["command_response"].summary(),
        **{f"step_{count}_paced_ms": times.summary() for count, times in paced.items()},
        "suites": suites.figures(suite),
        "anchors": {label: {"runs": runs.runs, **{key: runs.figure(key) for key in
                                                    ("first_stop_ms", "step_ms", "inspect_ms", "evaluate_ms")}}
                    for runs, label in anchors}})


def _rower(table: Table, anchors: list[tuple[AnchorRuns, str]]):
    """A row printer: a measure's n and median, its goal, and each anchor's figure with its ratio."""

    def row(title: str, samples: Samples, goal: float | None, key: str | None = None) -> None:
        cells: list = [title, samples.n, samples.median, "" if goal is None else f"{goal:g}"]
        for runs, _ in anchors:
            figure = runs.figure(key) if key else None
            cells += [figure if figure is not None else "", ratio(figure, samples.median) if key else ""]
        table.row(*cells)

    return row


if __name__ == "__main__":
    main()
