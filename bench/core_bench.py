"""Core benchmark: the relay's debugpy sessions beside the raw DAP anchors, in one run.

Prints the project's medians (ms) beside ``../shared/bench/raw_dap_bench.py``
over TCP and over stdio, with ratios (anchor / relay: how many times faster).

    python bench/core_bench.py [-n 200] [--anchor-n 50] [--no-anchors]

The session store's cost is measured in the same run: steps with the store off and on, interleaved.
Launches are timed phase by phase (``SessionInfo.startup``), restarts too; many sessions step at once
(20 and 50, each at an agent's pace); and a test suite the bench writes runs plainly, under a no-op trace
function in Python and in C (the floor of any debugger that traces through ``sys.settrace`` on this Python;
the C one is built when a C compiler is here), and under the relay without a breakpoint and with one never hit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

from jupyter_debug_relay import Relay, RelayError

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHORS = os.path.join(HERE, "..", "..", "shared", "bench")

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


def ms(seconds: float) -> float:
    return seconds * 1000


def measure_relay(n: int, program: str) -> dict:
    with Relay() as relay:
        bp = relay.breakpoints.add(program, 3)
        started = time.perf_counter()
        session = relay.launch(program)
        session.wait_for_stop(30)
        first_stop = ms(time.perf_counter() - started)
        relay.breakpoints.remove(bp.id)
        steps, inspects, evaluates = [], [], []
        for _ in range(n):
            t = time.perf_counter()
            session.next()
            steps.append(ms(time.perf_counter() - t))
            t = time.perf_counter()
            frames = session.stack(levels=20)
            scopes = session.scopes(frames[0].id)
            session.variables(scopes[0].ref)
            inspects.append(ms(time.perf_counter() - t))
            t = time.perf_counter()
            session.evaluate("i * 2", frame_id=frames[0].id)
            evaluates.append(ms(time.perf_counter() - t))
        session.terminate()
    return {"first_stop_ms": first_stop, "step_ms": statistics.median(steps),
            "inspect_ms": statistics.median(inspects), "evaluate_ms": statistics.median(evaluates)}


def measure_launches(program: str, launches: int = 10) -> dict:
    """Launch -> first stop and restart -> first stop, medians; the median of each phase of the launches."""
    firsts, restarts, phases = [], [], {}
    with Relay(record=False) as relay:
        relay.breakpoints.add(program, 3)
        for _ in range(launches):
            started = time.perf_counter()
            session = relay.launch(program)
            session.wait_for_stop(30)
            firsts.append(ms(time.perf_counter() - started))
            for phase, took in session.info().startup.items():
                phases.setdefault(phase, []).append(took)
            started = time.perf_counter()
            session.restart()
            session.wait_for_stop(30)
            restarts.append(ms(time.perf_counter() - started))
            session.terminate()
    return {"launch_ms": statistics.median(firsts), "restart_ms": statistics.median(restarts),
            "phases": {phase: statistics.median(took) for phase, took in phases.items()}}


def measure_paced(program: str, sessions: int, steps: int = 40, think: float = 0.1) -> dict:
    """``sessions`` sessions stepping at once, each at an agent's pace (a step, then 0.5-1.5 x ``think`` s to
    read it; 0: flat out): p50 and p99 of a step, recording on as by default."""
    with Relay() as relay:
        bp = relay.breakpoints.add(program, 3)
        handles = [relay.launch(program) for _ in range(sessions)]
        for handle in handles:
            handle.wait_for_stop(60)
        relay.breakpoints.remove(bp.id)
        times: list[float] = []
        lock = threading.Lock()

        def drive(handle, seed: int) -> None:
            pace = random.Random(seed)
            time.sleep(pace.uniform(0, think))
            for _ in range(steps):
                t = time.perf_counter()
                handle.next()
                with lock:
                    times.append(ms(time.perf_counter() - t))
                time.sleep(pace.uniform(0.5, 1.5) * think)

        threads = [threading.Thread(target=drive, args=(h, n)) for n, h in enumerate(handles)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
    times.sort()
    return {"p50": times[len(times) // 2], "p99": times[int(len(times) * 0.99) - 1]}


SUITE_TEST = """
def test_{k}():
    items = parse(" ".join(f"item{{i}}:{{i}}.5x{{i % 7}}" for i in range({size})))
    assert len(items) == {size} and total(items) >= 0
    data = json.loads(json.dumps([dataclasses.asdict(i) for i in items]))
    assert sorted(d["qty"] for d in data) == sorted(i.qty for i in items)
    assert fib({k} % 30) >= 0 and sum(collections.Counter(i.qty for i in items).values()) == len(items)
"""
SUITE_HEAD = """import collections, dataclasses, json, re

@dataclasses.dataclass
class Item:
    name: str
    price: float
    qty: int

def parse(text):
    return [Item(n, float(p), int(q)) for n, p, q in re.findall(r"(\\w+):(\\d+\\.\\d+)x(\\d+)", text)]

def total(items):
    return sum(i.price * i.qty for i in items)

def never_called():
    return "the breakpoint is here"  # never

def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
"""
NOOP_TRACE = "import sys, pytest\nsys.settrace(lambda *a: None)\nsys.exit(pytest.main(sys.argv[1:]))\n"
# The same in C: what the interpreter's own tracing costs, with a trace function that takes no time.
C_NOOP_TRACE = """#include <Python.h>
#include <frameobject.h>
static int noop(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) { return 0; }
static PyObject *on(PyObject *self, PyObject *unused) { PyEval_SetTrace(noop, NULL); Py_RETURN_NONE; }
static PyMethodDef methods[] = {{"on", on, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "c_noop_trace", NULL, -1, methods};
PyMODINIT_FUNC PyInit_c_noop_trace(void) { return PyModule_Create(&module); }
"""
C_NOOP_RUN = "import sys, pytest, c_noop_trace\nc_noop_trace.on()\nsys.exit(pytest.main(sys.argv[1:]))\n"


def build_c_noop(folder: str) -> str | None:
    """Compile the C no-op tracer beside the suite; the runner's path, or None with no C compiler here."""
    source = os.path.join(folder, "c_noop_trace.c")
    with open(source, "w") as f:
        f.write(C_NOOP_TRACE)
    library = os.path.join(folder, "c_noop_trace" + sysconfig.get_config_var("EXT_SUFFIX"))
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    try:
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"], source,
                        "-o", library], check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    runner = os.path.join(folder, "c_noop_run.py")
    with open(runner, "w") as f:
        f.write(C_NOOP_RUN)
    return runner


def measure_suite(folder: str, tests: int = 300, runs: int = 3) -> dict:
    """A suite of ``tests`` tests: plainly, under a no-op trace function in Python and in C, and under the relay
    with a breakpoint in a function no test calls, and with none (wall time of the whole pytest run, best of
    ``runs``)."""
    suite = os.path.join(folder, "test_suite.py")
    with open(suite, "w") as f:
        f.write(SUITE_HEAD + "".join(SUITE_TEST.format(k=k, size=k % 50 + 20) for k in range(tests)))
    noop = os.path.join(folder, "noop_trace.py")
    with open(noop, "w") as f:
        f.write(NOOP_TRACE)
    args = ["-q", "-p", "no:cacheprovider", suite]
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

    def timed(argv: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(argv, env=env, cwd=folder, check=True, capture_output=True, timeout=600)
        return ms(time.perf_counter() - started)

    plain = min(timed([sys.executable, "-m", "pytest", *args]) for _ in range(runs))
    traced = min(timed([sys.executable, noop, *args]) for _ in range(runs))
    c_runner = build_c_noop(folder)
    c_traced = min(timed([sys.executable, c_runner, *args]) for _ in range(runs)) if c_runner else None

    def debugged(relay: Relay) -> float:
        started = time.perf_counter()
        session = relay.launch(module="pytest", args=args, cwd=folder, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        try:
            session.wait_for_stop(600)
            raise AssertionError("the breakpoint no test reaches stopped the suite")
        except RelayError:
            pass  # the suite ran to its end
        assert session.exit_code == 0, session.output().text[-2000:]
        return ms(time.perf_counter() - started)

    with Relay(record=False) as relay:
        bare = min(debugged(relay) for _ in range(runs))
        relay.breakpoints.add(suite, SUITE_HEAD.splitlines().index('    return "the breakpoint is here"  # never') + 1)
        with_bp = min(debugged(relay) for _ in range(runs))
    return {"suite_plain_ms": plain, "suite_noop_trace_ms": traced, "suite_c_noop_trace_ms": c_traced,
            "suite_no_bp_ms": bare, "suite_debugged_ms": with_bp, "suite_ratio": with_bp / plain,
            "suite_floor_ratio": traced / plain, "suite_c_floor_ratio": c_traced / plain if c_traced else None,
            "suite_no_bp_ratio": bare / plain}


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
        steps: dict[int, list[float]] = {0: [], 1: []}
        for k in range(n):
            for which in (0, 1) if k % 2 == 0 else (1, 0):  # neither always goes first
                session = sessions[which]
                t = time.perf_counter()
                session.next()
                steps[which].append(ms(time.perf_counter() - t))
                frames = session.stack(levels=20)
                session.variables(session.scopes(frames[0].id)[0].ref)
        folder = os.path.join(home, "sessions", sessions[1].info().uid)
        answers = []
        for number in range(max(20, n // 5)):
            events = os.path.join(folder, "events.jsonl")
            offset = os.path.getsize(events)
            t = time.perf_counter()
            with open(os.path.join(folder, "commands.jsonl"), "a") as f:
                f.write(json.dumps({"id": f"b{number}", "type": "status", "args": {}}) + "\n")
            answer = f'"command_id": "b{number}"'
            while True:
                with open(events) as f:
                    f.seek(offset)
                    if answer in f.read():
                        break
                time.sleep(0.0005)
            answers.append(ms(time.perf_counter() - t))
        for session in sessions:
            session.terminate()
    off_ms, on_ms = statistics.median(steps[0]), statistics.median(steps[1])
    return {"step_store_off_ms": off_ms, "step_store_on_ms": on_ms, "store_cost_ms": on_ms - off_ms,
            "command_response_ms": statistics.median(answers)}


def measure_big_page(program: str) -> float:
    with Relay() as relay:
        relay.breakpoints.add(program, len(TARGET.strip().splitlines()) + 1)
        session = relay.launch(program)
        session.wait_for_stop(60)
        scope = session.scopes()[0]
        big = next(v for v in session.variables(scope.ref, count=1000).items if v.name == "big")
        times = []
        for _ in range(20):
            t = time.perf_counter()
            page = session.variables(big.ref, start=0, count=100)
            times.append(ms(time.perf_counter() - t))
            assert page.total == 1_000_000 and len(page.items) == 100
        session.terminate()
    return statistics.median(times)


def run_anchor(args: list[str]) -> dict | None:
    script = os.path.join(ANCHORS, "raw_dap_bench.py")
    if not os.path.exists(script):
        return None
    out = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=600)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="steps timed for the relay")
    parser.add_argument("--anchor-n", type=int, default=50, help="steps timed for each anchor")
    parser.add_argument("--no-anchors", action="store_true")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir:
        os.environ["JUPYTER_DEBUG_RELAY_HOME"] = os.path.join(workdir, "home")  # recordings stay in the run's folder
        program = os.path.join(workdir, "target.py")
        with open(program, "w") as f:
            f.write(TARGET)
        relay = measure_relay(opts.n, program)
        relay["big_page_ms"] = measure_big_page(program)
        relay["p99_step_10_sessions_ms"] = measure_paced(program, 10, steps=50, think=0)["p99"]  # flat out
        relay.update(measure_store(opts.n, program, os.path.join(workdir, "store")))
        launches = measure_launches(program)
        relay.update(launch_ms=launches["launch_ms"], restart_ms=launches["restart_ms"], phases=launches["phases"])
        for count in (20, 50):
            paced = measure_paced(program, count)
            relay[f"p50_step_{count}_sessions_ms"], relay[f"p99_step_{count}_sessions_ms"] = paced["p50"], paced["p99"]
        relay.update(measure_suite(workdir))

    anchors = {}
    if not opts.no_anchors:
        for label, args in (("raw DAP, TCP", ["--transport", "tcp"]), ("raw DAP, stdio", ["--transport", "stdio"])):
            anchors[label] = run_anchor([*args, "-n", str(opts.anchor_n)])

    rows = [("launch to first stop", "first_stop_ms", 250), ("step (next -> stopped)", "step_ms", 3),
            ("stack+scopes+variables", "inspect_ms", 5), ("evaluate", "evaluate_ms", 2)]
    labels = list(anchors)
    head = f"| {'measure (median ms)':<30} | {'relay':>8} | {'goal':>6} | " + " | ".join(
        f"{label:>14} | {'ratio':>6}" for label in labels) + " |"
    print(head)
    print("|" + "|".join("-" * (len(cell) + 0) for cell in head.split("|")[1:-1]) + "|")
    for title, key, goal in rows:
        cells = [f"| {title:<30} | {relay[key]:>8.2f} | {goal:>6} |"]
        for label in labels:
            anchor = anchors[label]
            if anchor is None:
                cells.append(f" {'n/a':>14} | {'':>6} |")
            else:
                cells.append(f" {anchor[key]:>14.2f} | {anchor[key] / relay[key]:>5.1f}x |")
        print("".join(cells))
    print(f"| {'launch -> first stop, median/10':<30} | {relay['launch_ms']:>8.2f} | {250:>6} |")
    print(f"| {'restart -> first stop, median':<30} | {relay['restart_ms']:>8.2f} | {250:>6} |")
    for phase, took in relay["phases"].items():
        print(f"|   {phase:<28} | {took:>8.2f} | {'':>6} |")
    print(f"| {'1M-element list, first 100':<30} | {relay['big_page_ms']:>8.2f} | {50:>6} |")
    print(f"| {'step p99, 10 sessions at once':<30} | {relay['p99_step_10_sessions_ms']:>8.2f} | {50:>6} |")
    print(f"| {'step, session store off':<30} | {relay['step_store_off_ms']:>8.2f} | {'':>6} |")
    print(f"| {'step, session store on':<30} | {relay['step_store_on_ms']:>8.2f} | {'':>6} |")
    print(f"| {'store cost per step':<30} | {relay['store_cost_ms']:>8.2f} | {0.2:>6} |")
    print(f"| {'command append -> response':<30} | {relay['command_response_ms']:>8.2f} | {100:>6} |")
    for count in (20, 50):
        p50, p99 = relay[f"p50_step_{count}_sessions_ms"], relay[f"p99_step_{count}_sessions_ms"]
        print(f"| {f'step p50, {count} sessions paced':<30} | {p50:>8.2f} | {'':>6} |")
        print(f"| {f'step p99, {count} sessions paced':<30} | {p99:>8.2f} | {30:>6} |")
    print(f"| {'300-test suite, plain':<30} | {relay['suite_plain_ms']:>8.0f} | {'':>6} |")
    print(f"| {'  under a no-op trace function':<30} | {relay['suite_noop_trace_ms']:>8.0f} | {'':>6} |")
    print(f"| {'  under the relay, bp not hit':<30} | {relay['suite_debugged_ms']:>8.0f} | {'':>6} |")
    print(f"| {'  ratio debugged / plain':<30} | {relay['suite_ratio']:>8.2f} | {1.5:>6} |")
    print(f"| {'  ratio relay, no bp / plain':<30} | {relay['suite_no_bp_ratio']:>8.2f} | {'':>6} |")
    print(f"| {'  ratio no-op tracer / plain':<30} | {relay['suite_floor_ratio']:>8.2f} | {'':>6} |")
    if relay["suite_c_floor_ratio"] is not None:
        print(f"| {'  ratio C no-op tracer / plain':<30} | {relay['suite_c_floor_ratio']:>8.2f} | {'':>6} |")
    print(json.dumps({"relay": relay, "anchors": anchors}))


if __name__ == "__main__":
    main()
