"""Kernel benchmark: magics and the comm channel through a real kernel, beside ipykernel's debug protocol.

Measures, in one run:
- the round trip of ``%debug_session next`` executed from jupyter_client (execute → reply and idle), interleaved
  with the same step through the Python API (``s.next()`` in a cell) and an empty cell;
- a comm request ``next`` to its ``stopped`` event;
- comm event throughput while the target prints as fast as it can, and the kernel's memory growth;
- 20 sessions stepping at once, each driven by its own agent at an agent's pace (a step, then 0.05-0.15 s to
  read it, as ``core_bench`` paces the Python API): 19 through the comm, the 20th by cells running
  ``%debug_session next --session``; p50 and p99 of each path;
- the same 20 stepped in one instant, round after round (the worst case: every step queues behind the
  others), and the kernel's memory growth;
and runs ``../shared/bench/ipykernel_debug_bench.py`` (JupyterLab's debug protocol) for the ratio.

    python bench/kernel_bench.py [-n 200] [--anchor-n 50] [--flood-seconds 5] [--no-anchors]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from core_bench import TARGET  # the same target as the core benchmark and the anchors
from jupyter_client.manager import start_new_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
ANCHORS = os.path.join(HERE, "..", "..", "shared", "bench")

FLOOD = "import sys\nn = 0\nwhile True:\n    n += 1\n    sys.stdout.write(f'line {n}\\n')\n"


def ms(seconds: float) -> float:
    return seconds * 1000


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
        self.cell("%load_ext jupyter_debug_relay")
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

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=False)


def measure_steps(n: int, folder: str) -> dict:
    program = os.path.join(folder, "target.py")
    with open(program, "w") as f:
        f.write(TARGET)
    bench = Bench(folder)
    try:
        bench.cell("%bp target.py:3")
        assert "paused at" in bench.cell("%debug_session launch target.py"), "the target did not stop"
        bench.cell("%bp clear")
        bench.cell("from jupyter_debug_relay.kernel.extension import load\n_s = load(get_ipython()).relay.get('s1')")
        magics, apis, empties = [], [], []
        for _ in range(n):  # interleaved: the magic, the same step through the Python API, an empty cell
            t = time.perf_counter()
            text = bench.cell("%debug_session next")
            magics.append(ms(time.perf_counter() - t))
            assert text.startswith("paused at"), text
            t = time.perf_counter()
            text = bench.cell("_s.next()")
            apis.append(ms(time.perf_counter() - t))
            assert text.startswith("StopInfo(reason='step'"), text
            t = time.perf_counter()
            bench.cell("pass")
            empties.append(ms(time.perf_counter() - t))
        comms, echoes = [], []
        for _ in range(n):  # interleaved: an echo (status, answered at once), then a step until its stop
            t = time.perf_counter()
            bench.request("status")
            bench.next_comm("response")
            echoes.append(ms(time.perf_counter() - t))
            t = time.perf_counter()
            bench.request("next")
            bench.wait_event("stopped")
            comms.append(ms(time.perf_counter() - t))
        inside = float(bench.cell(  # the step itself, timed inside the kernel: what the comm adds is the rest
            f"import time as _t, statistics as _st\n_d = []\nfor _ in range({n}):\n    _a = _t.perf_counter()\n"
            "    _s.next()\n    _d.append((_t.perf_counter() - _a) * 1000)\n_st.median(_d)"))
        bench.cell("%debug_session stop")
    finally:
        bench.close()
    return {"magic_next_ms": statistics.median(magics), "magic_next_p95_ms": p95(magics),
            "api_next_ms": statistics.median(apis), "empty_cell_ms": statistics.median(empties),
            "magic_over_api_ms": statistics.median([m - a for m, a in zip(magics, apis, strict=True)]),
            "comm_next_ms": statistics.median(comms), "comm_next_p95_ms": p95(comms),
            "comm_echo_ms": statistics.median(echoes), "step_in_kernel_ms": inside,
            "comm_over_echo_and_step_ms": statistics.median(comms) - statistics.median(echoes) - inside}


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
        comm_steps, magic_steps = [], []
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
                            comm_steps.append(ms(time.perf_counter() - sent.pop(event["session"])))
                elif msg["parent_header"].get("msg_id") == cell:
                    if kind == "execute_result":
                        shown = content["data"]["text/plain"]
                    elif kind == "status" and content["execution_state"] == "idle":
                        magic_steps.append(ms(time.perf_counter() - t))
                        done = True
                        assert "paused at" in shown, shown
            assert not sent, f"no stop from {sorted(sent)}"
            time.sleep(think)
        grown = rss_mb(bench.pid) - before
    finally:
        bench.close()
    return {"many_comm_p50_ms": statistics.median(comm_steps), "many_comm_p99_ms": p99(comm_steps),
            "many_magic_p50_ms": statistics.median(magic_steps), "many_magic_p99_ms": p99(magic_steps),
            "many_memory_mb": grown, "many_memory_launch_mb": launched - before}


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
        cell, comm_steps, magic_steps, shown = None, [], [], ""
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
            kind, content, done = msg["msg_type"], msg["content"], None
            if kind == "comm_msg" and content["comm_id"] == bench.comm_id:
                for event in events_of(content["data"]):
                    if event.get("event") == "stopped" and event.get("session") in sent.keys() - {names[-1]}:
                        done = event["session"]
                        comm_steps.append(ms(time.perf_counter() - sent.pop(done)))
            elif cell and msg["parent_header"].get("msg_id") == cell:
                if kind == "execute_result":
                    shown = content["data"]["text/plain"]
                elif kind == "status" and content["execution_state"] == "idle":
                    done, cell = names[-1], None
                    magic_steps.append(ms(time.perf_counter() - sent.pop(done)))
                    assert "paused at" in shown, shown
            if done:
                left[done] -= 1
                if left[done]:
                    due[done] = time.perf_counter() + pace.uniform(0.5, 1.5) * think
    finally:
        bench.close()
    return {"paced_comm_p50_ms": statistics.median(comm_steps), "paced_comm_p99_ms": p99(comm_steps),
            "paced_magic_p50_ms": statistics.median(magic_steps), "paced_magic_p99_ms": p99(magic_steps)}


def p99(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.99) - 1]


def p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95) - 1]


def anchor(n: int) -> dict | None:
    script = os.path.join(ANCHORS, "ipykernel_debug_bench.py")
    if not os.path.exists(script):
        return None
    out = subprocess.run([sys.executable, script, str(n)], capture_output=True, text=True, timeout=600)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--anchor-n", type=int, default=50)
    parser.add_argument("--flood-seconds", type=float, default=5.0)
    parser.add_argument("--no-anchors", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        steps = measure_steps(options.n, folder)
        flood = measure_flood(options.flood_seconds, folder)
        many = measure_many(folder)
        together = measure_many(folder, together=True)
        many.update(many_requests_p50_ms=together["many_comm_p50_ms"],
                    many_requests_p99_ms=together["many_comm_p99_ms"], **measure_paced(folder))
    reference = None if options.no_anchors else anchor(options.anchor_n)
    step_anchor = reference["step_ms"] if reference else None
    print(f"kernel benchmark (n={options.n}), medians in ms")
    print(f"{'measure':<42}{'relay':>10}{'goal':>10}{'ipykernel debug protocol':>28}")

    def row(name: str, value: float, goal: str, anchor_ms: float | None = None) -> None:
        ratio = f"{anchor_ms:.1f} ({anchor_ms / value:.0f}x faster)" if anchor_ms else ""
        print(f"{name:<42}{value:>10.2f}{goal:>10}{ratio:>28}")

    row("%debug_session next, execute round trip", steps["magic_next_ms"], "<= 25", step_anchor)
    row("  p95", steps["magic_next_p95_ms"], "")
    row("s.next() in a cell, execute round trip", steps["api_next_ms"], "")
    row("empty cell, execute round trip", steps["empty_cell_ms"], "")
    row("the magic over s.next(), same run", steps["magic_over_api_ms"], "<= 1")
    row("comm request next -> stopped event", steps["comm_next_ms"], "<= 10", step_anchor)
    row("  p95", steps["comm_next_p95_ms"], "")
    row("comm echo (status request), same run", steps["comm_echo_ms"], "")
    row("s.next() timed inside the kernel", steps["step_in_kernel_ms"], "")
    row("comm next over echo + step, same run", steps["comm_over_echo_and_step_ms"], "<= 1")
    print(f"{'comm output events delivered per second':<42}{flood['events_per_s']:>10.0f}{'>= 5000':>10}")
    print(f"{'  target lines delivered per second':<42}{flood['lines_per_s']:>10.0f}")
    print(f"{'  comm messages per second':<42}{flood['messages_per_s']:>10.0f}")
    print(f"{'  events dropped by flow control':<42}{flood['dropped_events']:>10}")
    print(f"{'kernel memory growth during the flood, MB':<42}{flood['memory_growth_mb']:>10.1f}{'<= 50':>10}")
    print(f"{'20 sessions, each at an agent pace:':<42}")
    print(f"{'  comm next, p50':<42}{many['paced_comm_p50_ms']:>10.2f}")
    print(f"{'  comm next, p99':<42}{many['paced_comm_p99_ms']:>10.2f}{'<= 30':>10}")
    print(f"{'  %debug_session next, p50':<42}{many['paced_magic_p50_ms']:>10.2f}")
    print(f"{'  %debug_session next, p99':<42}{many['paced_magic_p99_ms']:>10.2f}{'<= 30':>10}")
    print(f"{'20 sessions stepped in the same instant:':<42}")
    print(f"{'  comm next, p50':<42}{many['many_comm_p50_ms']:>10.2f}")
    print(f"{'  comm next, p99':<42}{many['many_comm_p99_ms']:>10.2f}")
    print(f"{'  %debug_session next meanwhile, p50':<42}{many['many_magic_p50_ms']:>10.2f}")
    print(f"{'  %debug_session next meanwhile, p99':<42}{many['many_magic_p99_ms']:>10.2f}")
    print(f"{'  kernel memory growth, MB':<42}{many['many_memory_mb']:>10.1f}{'<= 50':>10}")
    print(f"{'  the 19 in one requests message, p50':<42}{many['many_requests_p50_ms']:>10.2f}")
    print(f"{'  the 19 in one requests message, p99':<42}{many['many_requests_p99_ms']:>10.2f}")
    print(json.dumps({"client": "jupyter_debug_relay kernel", **steps, **flood, **many, "anchor": reference}))


if __name__ == "__main__":
    main()
