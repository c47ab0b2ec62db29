"""Kernel benchmark: magics and the comm channel through a real kernel, beside ipykernel's debug protocol.

Measures, in one run:
- what importing the package costs (``python -X importtime -c "import jupyter_debug_relay"``: its self and cumulative
  time) beside ipykernel's own import, interleaved, and ``%load_ext jupyter_debug_relay`` timed inside each kernel the
  bench starts (what every kernel of the ``debug-relay`` spec pays at its start);
- the round trip of ``%debug_session next`` executed from jupyter_client (execute → reply and idle), interleaved
  with the same step through the Python API (``s.next()`` in a cell) and an empty cell;
- a comm request ``next`` to its ``stopped`` event;
- with ``%debug_session sidebar`` on, JupyterLab's ``debug_request`` ``next`` on the control channel to its
  ``stopped`` ``debug_event`` on IOPub (what JupyterLab's step button costs), beside ipykernel's own debugger's step;
- comm event throughput while the target prints as fast as it can, and the kernel's memory growth;
- 20 sessions stepping at once, each driven by its own agent at an agent's pace (a step, then 0.05-0.15 s to
  read it, as ``core_bench`` paces the Python API): 19 through the comm, the 20th by cells running
  ``%debug_session next --session``; p50 and p99 of each path;
- the same 20 stepped in one instant, round after round (the worst case: every step queues behind the
  others), and the kernel's memory growth;
and runs ``../shared/bench/ipykernel_debug_bench.py`` (JupyterLab's debug protocol) for the ratio, in
``--rounds`` rounds alternating with the steps' rounds (each in a kernel of its own).

    python bench/kernel_bench.py [-n 200] [--anchor-n 50] [--rounds 3] [--flood-seconds 5] [--import-runs 10]
                                 [--no-anchors]
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import re
import subprocess
import sys
import tempfile
import time
import uuid

from common import AnchorRuns, Samples, Table, fmt, ms, ratio, record, rounds
from core_bench import TARGET  # the same target as the core benchmark and the anchors
from jupyter_client.manager import start_new_kernel

FLOOD = "import sys\nn = 0\nwhile True:\n    n += 1\n    sys.stdout.write(f'line {n}\\n')\n"
IMPORTED = ("jupyter_debug_relay", "ipykernel")  # the package, and ipykernel's own import for scale
LOAD_EXT = Samples()  # %load_ext jupyter_debug_relay timed inside each kernel the bench starts, ms
TIMED_LOAD = ("import time as _t\n_a = _t.perf_counter()\nget_ipython().run_line_magic('load_ext', "
              "'jupyter_debug_relay')\n(_t.perf_counter() - _a) * 1000")


def import_times(module: str) -> tuple[float, float]:
    """``python -X importtime -c "import MODULE"`` in a fresh interpreter: MODULE's self and cumulative ms."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                          text=True, timeout=120, check=True)
    for line in done.stderr.splitlines():
        found = re.fullmatch(r"import time:\s*(\d+) \|\s*(\d+) \| (\S+)", line)
        if found and found.group(3) == module:  # its own line, not indented under another import
            return int(found.group(1)) / 1000, int(found.group(2)) / 1000
    raise RuntimeError(f"python -X importtime printed no line for {module}")


def measure_imports(runs: int) -> dict[str, dict[str, Samples]]:
    """``runs`` fresh imports of each of ``IMPORTED``, interleaved: per module, its self and cumulative ms."""
    times = {module: {"self": Samples(), "cumulative": Samples()} for module in IMPORTED}
    for _ in range(runs):
        for module in IMPORTED:
            own, cumulative = import_times(module)
            times[module]["self"].add(own)
            times[module]["cumulative"].add(cumulative)
    return times


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def events_of(data: dict) -> list[dict]:
    """The events a comm message carries: a batch's, an event itself, none for a hello or a response."""
    return data["events"] if data["type"] == "batch" else [data] if data["type"] == "event" else []


class Bench:
    """A kernel with the extension loaded and one comm open to it."""

    def __init__(self, folder: str) -> None:
        self.manager, self.client = start_new_kernel(kernel_name="python3", cwd=folder, stderr=subprocess.DEVNULL)
        self.pid = self.manager.provisioner.process.pid
        LOAD_EXT.add(float(self.cell(TIMED_LOAD)))
        self.comm_id = uuid.uuid4().hex
        self.client.shell_channel.send(self.client.session.msg(
            "comm_open", {"comm_id": self.comm_id, "target_name": "jupyter_debug_relay", "data": {}}))
        self.next_comm("hello")
        self._ids = iter(range(1, 10**9))

    def cell(self, code: str) -> str:
        shown: list[str] = []
        self.client.execute_interactive(code, timeout=60, output_hook=lambda m: shown.append(
            m["content"]["data"]["text/plain"]) if m["msg_type"] == "execute_result" else None)
        return "\n".join(shown)

    def comm_messages(self, timeout: float):
        """Comm data sent by the kernel, until ``timeout`` passes with nothing."""
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                return
            if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == self.comm_id:
                yield msg["content"]["data"]

    def next_comm(self, kind: str) -> dict:
        for data in self.comm_messages(30):
            if data["type"] == kind:
                return data
        raise TimeoutError(kind)

    def request(self, command: str, session: str = "s1", **args) -> int:
        number = next(self._ids)
        self.client.shell_channel.send(self.client.session.msg("comm_msg", {"comm_id": self.comm_id, "data": {
            "type": "request", "v": 1, "id": number, "command": command, "session": session, "args": args}}))
        return number

    def requests(self, command: str, sessions: list[str]) -> None:
        """One ``requests`` message: ``command`` for each of ``sessions``."""
        batch = [{"type": "request", "v": 1, "id": next(self._ids), "command": command, "session": session,
                  "args": {}} for session in sessions]
        self.client.shell_channel.send(self.client.session.msg("comm_msg", {"comm_id": self.comm_id, "data": {
            "type": "requests", "v": 1, "requests": batch}}))

    def launch_paused(self, sessions: int) -> list[str]:
        """``sessions`` sessions of target.py, each paused at its line 3; their names, s1 to sN."""
        self.cell("%bp target.py:3")
        names = [f"s{n}" for n in range(1, sessions + 1)]
        for _ in names:
            assert "paused at" in self.cell("%debug_session launch target.py"), "a target did not stop"
        self.cell("%bp clear")
        return names

    def wait_event(self, name: str) -> dict:
        for data in self.comm_messages(30):
            for event in events_of(data):
                if event["event"] == name:
                    return event
        raise TimeoutError(name)

    def debug_step(self, seq: int) -> None:
        """JupyterLab's step button: a ``next`` debug_request on the control channel, then its ``stopped``
        debug_event on IOPub."""
        msg = self.client.session.msg("debug_request", {"type": "request", "seq": seq, "command": "next",
                                                        "arguments": {"threadId": 1}})
        self.client.control_channel.send(msg)
        reply = self.client.control_channel.get_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            reply = self.client.control_channel.get_msg(timeout=30)
        assert reply["content"].get("success"), reply["content"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            got = self.client.get_iopub_msg(timeout=30)
            if got["msg_type"] == "debug_event" and got["content"]["event"] == "stopped":
                return
        raise TimeoutError("stopped debug_event")

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=False)


STEPS = ("magic", "api", "empty", "magic_over_api", "comm", "echo", "inside", "sidebar")


def measure_steps(n: int, folder: str, samples: dict[str, Samples]) -> None:
    """In a kernel of its own, ``n`` of each: the magic's step, the API's step in a cell and an empty cell
    (interleaved); a comm echo and a comm step (interleaved); the step timed inside the kernel (``samples``
    gets them under ``STEPS``)."""
    program = os.path.join(folder, "target.py")
    with open(program, "w") as f:
        f.write(TARGET)
    bench = Bench(folder)
    try:
        bench.cell("%bp target.py:3")
        assert "paused at" in bench.cell("%debug_session launch target.py"), "the target did not stop"
        bench.cell("%bp clear")
        bench.cell("from jupyter_debug_relay.kernel.extension import load\n_s = load(get_ipython()).relay.get('s1')")
        for _ in range(n):  # interleaved: the magic, the same step through the Python API, an empty cell
            t = time.perf_counter()
            text = bench.cell("%debug_session next")
            magic = ms(time.perf_counter() - t)
            assert text.startswith("paused at"), text
            t = time.perf_counter()
            text = bench.cell("_s.next()")
            api = ms(time.perf_counter() - t)
            assert text.startswith("StopInfo(reason='step'"), text
            samples["magic"].add(magic)
            samples["api"].add(api)
            samples["magic_over_api"].add(magic - api)
            samples["empty"].time(bench.cell, "pass")
        for _ in range(n):  # interleaved: an echo (status, answered at once), then a step until its stop
            t = time.perf_counter()
            bench.request("status")
            bench.next_comm("response")
            samples["echo"].add(ms(time.perf_counter() - t))
            t = time.perf_counter()
            bench.request("next")
            bench.wait_event("stopped")
            samples["comm"].add(ms(time.perf_counter() - t))
        bench.cell("%debug_session sidebar")
        for number in range(n):  # JupyterLab's step button through the sidebar: debug_request to debug_event
            samples["sidebar"].time(bench.debug_step, number + 1)
        bench.cell("%debug_session sidebar off")
        inside = bench.cell(  # the step itself, timed inside the kernel: what the comm adds is the rest
            f"import time as _t\n_d = []\nfor _ in range({n}):\n    _a = _t.perf_counter()\n"
            "    _s.next()\n    _d.append((_t.perf_counter() - _a) * 1000)\n_d")
        samples["inside"].values += [float(value) for value in inside.strip("[]").split(",")]
        bench.cell("%debug_session stop")
    finally:
        bench.close()


def measure_flood(seconds: float, folder: str) -> dict:
    with open(os.path.join(folder, "flood.py"), "w") as f:
        f.write(FLOOD)
    bench = Bench(folder)
    try:
        before = rss_mb(bench.pid)
        bench.request("sessions")
        bench.cell("%debug_session launch --no-wait flood.py")
        events = chunks = messages = lines = dropped = 0
        peak = before
        started = time.perf_counter()
        for data in bench.comm_messages(5):
            messages += 1
            for event in events_of(data):
                if event["event"] == "output":
                    events += 1
                    chunks += event["body"].get("count", 1)
                    lines += event["body"]["text"].count("\n")
                elif event["event"] == "dropped":
                    dropped += event["body"]["events"]
            if messages % 50 == 0:
                peak = max(peak, rss_mb(bench.pid))
            if time.perf_counter() - started > seconds:
                break
        elapsed = time.perf_counter() - started
        peak = max(peak, rss_mb(bench.pid))
        bench.cell("%debug_session stop")
    finally:
        bench.close()
    return {"events_per_s": chunks / elapsed, "messages_per_s": messages / elapsed, "lines_per_s": lines / elapsed,
            "dropped_events": dropped, "memory_growth_mb": peak - before}


def measure_many(folder: str, sessions: int = 20, rounds: int = 40, think: float = 0.1, together: bool = False) -> dict:
    """``sessions`` sessions stepping at once in one kernel, rounds ``think`` s apart: the comm steps all but
    the last together (one request message each, or all in one ``requests`` message), a cell steps the last
    with the magic at the same moment."""
    bench = Bench(folder)
    try:
        before = rss_mb(bench.pid)
        names = bench.launch_paused(sessions)
        launched = rss_mb(bench.pid)
        comm_steps, magic_steps = Samples(), Samples()
        for _ in range(rounds):
            sent = {}
            if together:
                bench.requests("next", names[:-1])
            for name in names[:-1]:
                if not together:
                    bench.request("next", session=name)
                sent[name] = time.perf_counter()
            t = time.perf_counter()
            cell = bench.client.execute(f"%debug_session next --session {names[-1]}")
            shown, done = "", False
            while sent or not done:  # the cell's reply and the comm's events come on the same channel
                msg = bench.client.get_iopub_msg(timeout=30)
                kind, content = msg["msg_type"], msg["content"]
                if kind == "comm_msg" and content["comm_id"] == bench.comm_id:
                    data = content["data"]
                    for event in events_of(data):
                        if event.get("event") == "stopped" and event.get("session") in sent:
                            comm_steps.add(ms(time.perf_counter() - sent.pop(event["session"])))
                elif msg["parent_header"].get("msg_id") == cell:
                    if kind == "execute_result":
                        shown = content["data"]["text/plain"]
                    elif kind == "status" and content["execution_state"] == "idle":
                        magic_steps.add(ms(time.perf_counter() - t))
                        done = True
                        assert "paused at" in shown, shown
            assert not sent, f"no stop from {sorted(sent)}"
            time.sleep(think)
        grown = rss_mb(bench.pid) - before
    finally:
        bench.close()
    return {"comm": comm_steps, "magic": magic_steps, "memory_mb": grown, "memory_launch_mb": launched - before}


def measure_paced(folder: str, sessions: int = 20, steps: int = 40, think: float = 0.1) -> dict:
    """``sessions`` sessions in one kernel, each stepped by its own agent at an agent's pace (a step, then
    0.5-1.5 x ``think`` s to read it), as ``core_bench`` paces the Python API: the comm steps all but the last,
    one request each when its agent is ready; cells step the last with the magic, one after another."""
    bench = Bench(folder)
    try:
        names = bench.launch_paused(sessions)
        pace = random.Random(0)
        now = time.perf_counter()
        due = {name: now + pace.uniform(0, think) for name in names}  # when each agent sends its next step
        left = dict.fromkeys(names, steps)
        sent: dict[str, float] = {}
        cell, comm_steps, magic_steps, shown = None, Samples(), Samples(), ""
        while due or sent or cell:
            now = time.perf_counter()
            if sent and now - min(sent.values()) > 30:
                raise TimeoutError(f"no stop from {sorted(sent)} within 30 s")
            for name in [name for name, at in due.items() if at <= now]:
                del due[name]
                if name == names[-1]:
                    cell = bench.client.execute(f"%debug_session next --session {name}")
                else:
                    bench.request("next", session=name)
                sent[name] = time.perf_counter()
            wait = min(due.values(), default=now + 0.05) - time.perf_counter()
            try:
                msg = bench.client.get_iopub_msg(timeout=min(max(wait, 0.0), 0.05))
            except queue.Empty:
                continue
            kind, content, done = msg["msg_type"], msg["content"], []  # a batch can bring several stops
            if kind == "comm_msg" and content["comm_id"] == bench.comm_id:
                for event in events_of(content["data"]):
                    if event.get("event") == "stopped" and event.get("session") in sent.keys() - {names[-1]}:
                        done.append(event["session"])
                        comm_steps.add(ms(time.perf_counter() - sent.pop(done[-1])))
            elif cell and msg["parent_header"].get("msg_id") == cell:
                if kind == "execute_result":
                    shown = content["data"]["text/plain"]
                elif kind == "status" and content["execution_state"] == "idle":
                    done, cell = [names[-1]], None
                    magic_steps.add(ms(time.perf_counter() - sent.pop(names[-1])))
                    assert "paused at" in shown, shown
            for name in done:
                left[name] -= 1
                if left[name]:
                    due[name] = time.perf_counter() + pace.uniform(0.5, 1.5) * think
        if comm_steps.n + magic_steps.n != sessions * steps:
            raise RuntimeError(f"{comm_steps.n + magic_steps.n} of {sessions * steps} paced steps were timed")
    finally:
        bench.close()
    return {"comm": comm_steps, "magic": magic_steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--anchor-n", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the steps' runs and the anchor's")
    parser.add_argument("--flood-seconds", type=float, default=5.0)
    parser.add_argument("--import-runs", type=int, default=10, help="fresh interpreters timing each import")
    parser.add_argument("--no-anchors", action="store_true")
    options = parser.parse_args()
    anchor = AnchorRuns("ipykernel_debug_bench.py")
    anchors = [] if options.no_anchors or not anchor.available else [
        (anchor, [str(max(1, options.anchor_n // options.rounds))])]
    steps = {key: Samples() for key in STEPS}
    imports = measure_imports(options.import_runs)
    with tempfile.TemporaryDirectory() as folder:
        rounds(options.rounds, lambda _: measure_steps(max(1, options.n // options.rounds), folder, steps), anchors)
        flood = measure_flood(options.flood_seconds, folder)
        many = measure_many(folder)
        together = measure_many(folder, together=True)
        paced = measure_paced(folder)
    step_anchor = anchor.figure("step_ms") if anchors else None
    print(f"kernel benchmark, {options.rounds} rounds; times in ms")
    table = Table("import (python -X importtime, medians)", "n", "self", "cumulative", "goal")
    package, ipykernel = imports["jupyter_debug_relay"], imports["ipykernel"]
    table.row("import jupyter_debug_relay", package["cumulative"].n, package["self"].median,
              package["cumulative"].median, "<= 50")
    table.row("import ipykernel, same run", ipykernel["cumulative"].n, ipykernel["self"].median,
              ipykernel["cumulative"].median)
    table.row("%load_ext jupyter_debug_relay in a kernel", LOAD_EXT.n, "", LOAD_EXT.median, "<= 50")
    print()
    table = Table("measure", "n", "median", "p95", "goal", "ipykernel debug protocol", "ratio")

    def row(name: str, samples: Samples, goal: str, anchor_ms: float | None = None) -> None:
        table.row(name, samples.n, samples.median, samples.p(95), goal, "" if anchor_ms is None else anchor_ms,
                  "" if anchor_ms is None else ratio(anchor_ms, samples.median))

    row("%debug_session next, execute round trip", steps["magic"], "<= 25", step_anchor)
    row("s.next() in a cell, execute round trip", steps["api"], "")
    row("empty cell, execute round trip", steps["empty"], "")
    row("the magic over s.next(), same run", steps["magic_over_api"], "<= 1")
    row("comm request next -> stopped event", steps["comm"], "<= 10", step_anchor)
    row("sidebar: debug_request next -> stopped debug_event", steps["sidebar"], "<= 10", step_anchor)
    row("comm echo (status request), same run", steps["echo"], "")
    row("s.next() timed inside the kernel", steps["inside"], "")
    comm_over = steps["comm"].median - steps["echo"].median - steps["inside"].median
    table.row("comm next over echo + step, same run", steps["comm"].n, comm_over, "", "<= 1")
    print()
    table = Table("flood", "figure", "goal")
    table.row("comm output events delivered per second", fmt(flood["events_per_s"], 0), ">= 5000")
    table.row("  target lines delivered per second", fmt(flood["lines_per_s"], 0))
    table.row("  comm messages per second", fmt(flood["messages_per_s"], 0))
    table.row("  events dropped by flow control", flood["dropped_events"])
    table.row("kernel memory growth during the flood, MB", fmt(flood["memory_growth_mb"], 1), "<= 50")
    print()
    table = Table("20 sessions in one kernel (ms)", "n", "p50", "p99", "goal")
    table.row("at an agent's pace: comm next", paced["comm"].n, paced["comm"].median, paced["comm"].p(99), "<= 30")
    table.row("  %debug_session next", paced["magic"].n, paced["magic"].median, paced["magic"].p(99), "<= 30")
    table.row("in the same instant: comm next", many["comm"].n, many["comm"].median, many["comm"].p(99))
    table.row("  %debug_session next meanwhile", many["magic"].n, many["magic"].median, many["magic"].p(99))
    table.row("  the 19 in one requests message", together["comm"].n, together["comm"].median,
              together["comm"].p(99))
    table.row("  kernel memory growth, MB", "", fmt(many["memory_mb"], 1), "", "<= 50")
    if anchors:
        print(f"ipykernel debug protocol: {len(anchor.runs)} runs, {anchor.samples()} steps")
    record("kernel", {
        "import_ms": {**{module: {kind: samples.summary() for kind, samples in times.items()}
                         for module, times in imports.items()}, "load_ext": LOAD_EXT.summary()},
        **{f"{key}_ms": samples.summary() for key, samples in steps.items()},
        "comm_over_echo_and_step_ms": round(comm_over, 3), "flood": flood,
        "paced_20": {key: samples.summary() for key, samples in paced.items()},
        "instant_20": {key: samples.summary() for key, samples in many.items() if isinstance(samples, Samples)},
        "instant_20_requests": together["comm"].summary(), "instant_20_memory_mb": round(many["memory_mb"], 1),
        "anchor": {"runs": anchor.runs, "step_ms": step_anchor} if anchors else None})


if __name__ == "__main__":
    main()
