"""Breakpoints checked in hot loops: the target's CPU per pass under the relay and under raw debugpy, beside plain.

A function loops ``--passes`` times (2,000,000), its body ``acc += i & 7``; the target prints the loop's own CPU
time (its thread's, ``time.thread_time``). Per target Python (the kernel's 3.11 and the 3.12 and 3.13 that
``tests/targets.py`` finds), per row, in rounds (one run of each in turn, the order flipped every other round):
the plain run (no debugger, the base), a launch by the relay, and raw debugpy: the same target run under
``python -m debugpy --listen 127.0.0.1:PORT --wait-for-client`` (the debugpy the relay lends that Python), driven by
a raw DAP client (``Dap`` of ``../shared/bench/raw_dap_bench.py``) that sets the same breakpoints. Rows (``ROWS``):

1. a breakpoint on the body with a condition true at the last pass only: stops once, continued at once;
2. a hit count of passes - 1 (``== 1999999``; DAP ``hitCondition`` ``1999999``): stops once, continued;
3. a log point with a condition, every 100,000th pass (``at {i}``): no stop; its lines are counted;
4. exceptions "raised" limited to KeyError while the loop raises and catches a ValueError every 10th pass: no stop;
5. a breakpoint without condition: stops at the first 3 passes, removed at the third, continued;
6. row 1's breakpoint added while the loop's function runs: its frame waits (before its loop) for a file the bench
   makes once the add is answered, then times its loop: all of the figure is after the add.

The figures of rows with stops hold them (the target's CPU while it waits at a stop: a few ms at most). pydevd's
own check of a condition costs ~10 us a pass (20 s a run at 2,000,000 passes), so raw debugpy runs
``--raw-passes`` (200,000), beside plain runs of as many passes that its added ns a pass and its ratio are taken
against. Where valgrind is here (``instructions.py``'s wrapper), the instructions of each row's loop are counted too,
one run of each (a count the machine's load leaves be): callgrind instruments the target only between two calls it makes
around its loop (``--instr-atstart=no``, a switch built from valgrind's header); row 6 is not counted.

    python bench/hot_breakpoints.py [--passes 2000000] [--raw-passes 200000] [--runs 5] [--pythons 3.11 3.12 3.13]
                                    [--rows 1 ...] [--count-passes 200000] [--raw-count-passes 5000]
                                    [--no-instructions]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from common import ANCHORS, ROOT, Samples, Table, keep_bytecode, record, shown, wait_until
from instructions import OUTPUT, SLOWED_CONNECT, wrapper

from jupyter_debug_relay import Relay, RelayError, SessionHandle
from jupyter_debug_relay.backends.debugpy import direct, interpreter, lending

sys.path.insert(0, ROOT)
from tests import targets  # noqa: E402 - the interpreters the tests find, found the same way

sys.path.insert(0, ANCHORS)
try:
    from raw_dap_bench import Dap  # noqa: E402 - the anchor's DAP client
except ImportError:  # the anchors are not on this machine: no raw debugpy column
    Dap = None

TARGET = """import os, sys, time

if os.environ.get("HOT_BREAKPOINTS_COUNT"):  # counted under valgrind: the loop only (callgrind instruments it)
    import ctypes
    counting = ctypes.CDLL(os.environ["HOT_BREAKPOINTS_COUNT"])
    start, stop = counting.hot_breakpoints_start, counting.hot_breakpoints_stop
else:
    def start():
        pass
    stop = start


def loop(n, go):
    while go and not os.path.exists(go):  # row 6: the breakpoint is added while this frame waits here
        time.sleep(0.005)
    start()
    cpu = time.thread_time()
    acc = 0
    for i in range(n):
        acc += i & 7  # the breakpoint
    return acc, cpu


def raising(n, go):
    start()
    cpu = time.thread_time()
    acc = 0
    for i in range(n):
        acc += i & 7
        if i % 10 == 0:
            try:
                raise ValueError(i)
            except ValueError:
                acc += 1
    return acc, cpu


def main():
    mode, n, go = sys.argv[1], int(sys.argv[2]), (sys.argv[3] if len(sys.argv) > 3 else "")
    if go:
        print("waiting", flush=True)
    acc, cpu = (loop if mode == "loop" else raising)(n, go)
    cpu = (time.thread_time() - cpu) * 1000
    stop()
    print("loop_cpu_ms", cpu, "acc", acc, flush=True)


main()
"""
COUNTING = """#include <valgrind/callgrind.h>
void hot_breakpoints_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void hot_breakpoints_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""
BODY = TARGET.splitlines().index("        acc += i & 7  # the breakpoint") + 1
LOG_EVERY = 100_000
RUN_TIMEOUT = 600.0  # seconds one run may take (pydevd's own condition check: ~15 us a pass, 30 s at 2M passes)
CONNECT_TIMEOUT = 60.0  # seconds a target under raw debugpy may take to listen (SLOWED_CONNECT under valgrind)
LOG_LINE = re.compile(r"at \d+\n")  # a log point's line (raw debugpy's may come inside a line the program printed)


@dataclass
class Row:
    """A row: what is set, how many stops it makes (and the breakpoint removed at the last), the loop it times."""

    key: str
    title: str
    mode: str = "loop"  # the target's function: loop, or raising (a ValueError caught every 10th pass)
    stops: int = 0
    remove_at_last_stop: bool = False
    added_while_running: bool = False
    counted: bool = True  # its instructions counted under valgrind

    def breakpoint(self, passes: int) -> dict[str, str]:
        """The relay's options of its line breakpoint (none for the exceptions row)."""
        return {"1": {"condition": f"i == {passes - 1}"}, "2": {"hit_condition": f"== {passes - 1}"},
                "3": {"condition": f"i % {LOG_EVERY} == 0", "log_message": "at {i}"}, "4": {}, "5": {},
                "6": {"condition": f"i == {passes - 1}"}}[self.key]

    def logs(self, passes: int) -> int:
        """The log point's lines a run prints."""
        return -(-passes // LOG_EVERY) if self.key == "3" else 0

    def expected_stops(self, passes: int) -> int:
        """The stops a run of ``passes`` makes."""
        return min(self.stops, passes)


ROWS = [
    Row("1", "condition true at the last pass (1 stop)", stops=1),
    Row("2", "hit count passes-1 (1 stop)", stops=1),
    Row("3", "log point, condition every 100,000th pass", stops=0),
    Row("4", "raised KeyError only; a ValueError caught every 10th pass", mode="raising"),
    Row("5", "no condition: 3 stops, removed at the 3rd", stops=3, remove_at_last_stop=True),
    Row("6", "row 1 added while the loop's frame runs (the loop after it)", stops=1, added_while_running=True,
        counted=False),
]


@dataclass
class Python:
    """A target Python: its interpreter (None: the kernel's, launched without ``python=``), version, debugpy."""

    version: str
    path: str | None
    debugpy: list[str] = field(default_factory=list)  # the command that runs the debugpy the relay lends it

    @property
    def argv0(self) -> str:
        """The interpreter a plain run starts."""
        return self.path or sys.executable


def loop_cpu(text: str) -> float:
    """The loop's CPU time (ms) the target printed."""
    found = re.findall(r"loop_cpu_ms (\S+)", LOG_LINE.sub("", text))
    if not found:
        raise RuntimeError(f"the target printed no loop time: {text[-1500:]!r}")
    return float(found[-1])


def check_logs(row: Row, passes: int, text: str, who: str) -> None:
    """Raise unless ``text`` holds as many log point lines as the row's run prints."""
    if len(LOG_LINE.findall(text)) != row.logs(passes):
        raise RuntimeError(f"{who}, row {row.key}: {len(LOG_LINE.findall(text))} log lines, not {row.logs(passes)}")


# -- plain ----------------------------------------------------------------------------------------


def plain_run(python: Python, target: str, row: Row, passes: int, env: dict[str, str] | None = None) -> str:
    """One run without a debugger: what it printed."""
    done = subprocess.run([python.argv0, target, row.mode, str(passes)], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, env={**os.environ, **(env or {})})
    if done.returncode:
        raise RuntimeError(f"the plain run failed ({done.returncode}): {done.stderr[-1500:]}")
    return done.stdout


# -- the relay ------------------------------------------------------------------------------------


def next_stop(session: SessionHandle, deadline: float) -> bool:
    """Wait for the session's next stop (True) or its end (False) until ``deadline`` (``time.monotonic()``)."""
    while True:
        try:
            session.wait_for_stop(max(1.0, min(60.0, deadline - time.monotonic())))
            return True
        except RelayError as exc:
            if exc.code == "timeout" and time.monotonic() < deadline:
                continue  # still running
            if exc.code == "target_exited":
                return False
            raise


def relay_run(python: str | None, target: str, row: Row, passes: int, folder: str,
              env: dict[str, str] | None = None) -> str:
    """One launch by the relay, through the row's stops to the end: the target's output."""
    deadline = time.monotonic() + RUN_TIMEOUT
    go = os.path.join(folder, "go")
    if os.path.exists(go):
        os.remove(go)
    args = [row.mode, str(passes), *([go] if row.added_while_running else [])]
    with Relay(record=False) as relay:
        bp = None
        if row.key == "4":
            relay.breakpoints.exceptions("raised", ["KeyError"])
        elif not row.added_while_running:
            bp = relay.breakpoints.add(target, BODY, **row.breakpoint(passes))
        session = relay.launch(target, args=args, python=python, env=env)
        if row.added_while_running:
            wait_until(lambda: "waiting" in session.output().text, deadline - time.monotonic(), "the target's wait")
            bp = relay.breakpoints.add(target, BODY, **row.breakpoint(passes))
            open(go, "w").close()
        stops = 0
        while next_stop(session, deadline):
            stops += 1
            if stops > row.expected_stops(passes):
                session.terminate()
                raise RuntimeError(f"relay, row {row.key}: a stop more than {row.expected_stops(passes)}")
            if row.remove_at_last_stop and stops == row.expected_stops(passes) and bp is not None:
                relay.breakpoints.remove(bp.id)
            session.continue_(wait=False, timeout=60)
        if stops != row.expected_stops(passes):
            raise RuntimeError(f"relay, row {row.key}: {stops} stops, not {row.expected_stops(passes)}")
        if session.exit_code != 0:
            raise RuntimeError(f"relay, row {row.key}: exit {session.exit_code}: {session.output().text[-1500:]}")
        text = session.output().text
    check_logs(row, passes, text, "relay")
    return text


# -- raw debugpy ------------------------------------------------------------------------------------


class RawClient(Dap or object):  # type: ignore[misc] - Dap is None without the anchors
    """The anchor's DAP client, keeping the output events it passes by while it waits for another event."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.outputs = sock, []
        super().__init__(sock.makefile("rb"), sock.sendall)

    def wait_event(self, names: tuple[str, ...], deadline: float) -> dict[str, Any]:
        """The next event named in ``names``; ``TimeoutError`` at ``deadline``."""
        while True:
            try:
                event = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no {'/'.join(names)} event in time") from None
            self.keep(event)
            if event["event"] in names:
                return event

    def keep(self, event: dict[str, Any]) -> None:
        """Keep the text of an output event (not debugpy's telemetry)."""
        if event["event"] == "output" and event["body"].get("category") != "telemetry":
            self.outputs.append(event["body"].get("output", ""))

    def drain(self) -> None:
        """Keep the output events that came meanwhile."""
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            self.keep(event)

    def close(self) -> None:
        """Close the connection (the reader thread ends at once)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def adapters_of(port: int) -> list[int]:
    """The pids of debugpy adapters serving ``port`` (``--listen`` starts one, a daemon outside our group)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        served = argv[argv.index(b"--port") + 1:][:1] if b"--port" in argv else []
        if b"--for-server" in argv and served == [str(port).encode()]:
            found.append(int(name))
    return found


def end_adapters(port: int) -> None:
    """Wait a little for the adapters of ``port`` to end (they do once the target and client are gone); kill the
    ones left."""
    try:
        wait_until(lambda: not adapters_of(port), 10, "the adapter's end", poll=0.05)
    except TimeoutError:
        for pid in adapters_of(port):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def source_breakpoint(row: Row, passes: int) -> dict[str, Any]:
    """The row's breakpoint as DAP gives it."""
    options = row.breakpoint(passes)
    bp: dict[str, Any] = {"line": BODY}
    if options.get("condition"):
        bp["condition"] = options["condition"]
    if options.get("hit_condition"):
        bp["hitCondition"] = options["hit_condition"].removeprefix("== ")
    if options.get("log_message"):
        bp["logMessage"] = options["log_message"]
    return bp


def raw_run(python: Python, target: str, row: Row, passes: int, folder: str, argv0: str | None = None,
            env: dict[str, str] | None = None, connect_timeout: float = CONNECT_TIMEOUT) -> str:
    """One run of the target under ``debugpy --listen``, driven through the row's stops by a raw DAP client: what
    it printed, and its log point's lines."""
    deadline = time.monotonic() + RUN_TIMEOUT
    go = os.path.join(folder, "go")
    if os.path.exists(go):
        os.remove(go)
    port = free_port()
    argv = [argv0 or python.debugpy[0], *python.debugpy[1:], "--listen", f"127.0.0.1:{port}", "--wait-for-client",
            target, row.mode, str(passes), *([go] if row.added_while_running else [])]
    stdout = os.path.join(folder, "raw.stdout")  # a file: the adapter debugpy starts keeps the target's stdout open
    with open(stdout, "wb") as out, open(os.path.join(folder, "raw.stderr"), "wb") as stderr:
        process = subprocess.Popen(argv, stdout=out, stderr=stderr, env={**os.environ, **(env or {})},
                                   start_new_session=True)
    client = None

    def printed() -> str:
        """What the target printed so far."""
        with open(stdout, errors="replace") as f:
            return f.read()

    try:
        sock = wait_until(lambda: _connect(port), connect_timeout, "debugpy's listening port", poll=0.05)
        sock.settimeout(None)  # the client's reader waits as long as the run takes
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = RawClient(sock)
        client.response(client.request("initialize", {"adapterID": "debugpy", "clientID": "bench",
                                                       "linesStartAt1": True, "columnsStartAt1": True,
                                                       "pathFormat": "path"}, wait=False),
                        timeout=connect_timeout)  # under valgrind the adapter takes long to answer
        attach = client.request("attach", {"justMyCode": True}, wait=False)
        client.wait_event(("initialized",), deadline)
        source = {"source": {"path": target}}
        if row.key != "4" and not row.added_while_running:
            client.request("setBreakpoints", {**source, "breakpoints": [source_breakpoint(row, passes)]})
        exceptions: dict[str, Any] = {"filters": []}
        if row.key == "4":
            exceptions = {"filters": ["raised"], "exceptionOptions": [
                {"path": [{"names": ["Python Exceptions"]}, {"names": ["KeyError"]}], "breakMode": "always"}]}
        client.request("setExceptionBreakpoints", exceptions)
        client.request("configurationDone")
        client.response(attach, timeout=max(1.0, deadline - time.monotonic()))
        if row.added_while_running:
            wait_until(lambda: "waiting" in printed() or process.poll() is not None, deadline - time.monotonic(),
                       "the target's wait")
            client.request("setBreakpoints", {**source, "breakpoints": [source_breakpoint(row, passes)]})
            open(go, "w").close()
        stops = 0
        while (event := client.wait_event(("stopped", "terminated", "exited"), deadline))["event"] == "stopped":
            stops += 1
            if stops > row.expected_stops(passes):
                raise RuntimeError(f"raw debugpy, row {row.key}: a stop more than {row.expected_stops(passes)}")
            if row.remove_at_last_stop and stops == row.expected_stops(passes):
                client.request("setBreakpoints", {**source, "breakpoints": []})
            client.request("continue", {"threadId": event["body"]["threadId"]})
        if stops != row.expected_stops(passes):
            raise RuntimeError(f"raw debugpy, row {row.key}: {stops} stops, not {row.expected_stops(passes)}")
        process.wait(max(1.0, deadline - time.monotonic()))
        if process.returncode != 0:
            raise RuntimeError(f"raw debugpy, row {row.key}: exit {process.returncode}")
        client.drain()
    finally:
        if client is not None:
            client.close()
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait(10)
        end_adapters(port)
    logs = "".join(client.outputs)
    check_logs(row, passes, logs, "raw debugpy")
    return printed() + logs


def _connect(port: int) -> socket.socket | None:
    """A connection to ``port`` on 127.0.0.1, or None while nothing listens there."""
    try:
        return socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return None


# -- timing ---------------------------------------------------------------------------------------


@dataclass
class Figures:
    """The samples of one Python and row (the loop's CPU, ms) and its instructions a pass (None: not counted)."""

    plain: Samples = field(default_factory=Samples)
    plain_raw: Samples = field(default_factory=Samples)  # plain at raw debugpy's passes, where they differ
    relay: Samples = field(default_factory=Samples)
    raw: Samples = field(default_factory=Samples)
    instructions: dict[str, float] = field(default_factory=dict)  # plain, relay, raw: the loop's, a pass


@dataclass
class Passes:
    """The passes of each kind of run: timed (the relay and plain; raw debugpy), counted under valgrind."""

    timed: int
    raw: int
    counted: int
    raw_counted: int


def write_target(folder: str) -> str:
    """The target program written into ``folder``: its path."""
    target = os.path.join(folder, "hot.py")
    with open(target, "w") as f:
        f.write(TARGET)
    return target


def measure(python: Python, rows: list[Row], passes: Passes, runs: int, folder: str) -> dict[str, Figures]:
    """``runs`` rounds of each row: plain, relay and raw debugpy in turn (the order flipped every other round)."""
    target = write_target(folder)
    figures = {row.key: Figures() for row in rows}
    for row in rows:  # untimed: the probe, the lent copy's first load, the bytecode of every part
        plain_run(python, target, row, 1000)
        relay_run(python.path, target, row, 1000, folder)
        if Dap is not None:
            raw_run(python, target, row, 1000, folder)
    for number in range(runs):
        for row in rows:
            found = figures[row.key]
            steps: list[tuple[Samples, Callable[[], str]]] = [
                (found.plain, partial(plain_run, python, target, row, passes.timed)),
                (found.relay, partial(relay_run, python.path, target, row, passes.timed, folder))]
            if Dap is not None:
                steps.append((found.raw, partial(raw_run, python, target, row, passes.raw, folder)))
                if passes.raw != passes.timed:
                    steps.append((found.plain_raw, partial(plain_run, python, target, row, passes.raw)))
            for samples, run in steps if number % 2 == 0 else reversed(steps):
                samples.add(loop_cpu(run()))
    return figures


def build_counting(folder: str) -> str | None:
    """A library whose ``hot_breakpoints_start()`` and ``_stop()`` switch callgrind's instrumentation on and off;
    None without a C compiler or valgrind's header (said)."""
    source, library = os.path.join(folder, "counting.c"), os.path.join(folder, "libcounting.so")
    with open(source, "w") as f:
        f.write(COUNTING)
    built = subprocess.run(["cc", "-O2", "-shared", "-fPIC", source, "-o", library], capture_output=True, text=True,
                           timeout=120)
    if built.returncode:
        print(f"no instructions counted: the callgrind switch did not build ({built.stderr.strip()[-300:]})")
        return None
    return library


def counted(out: str, deadline: float) -> float:
    """The instructions (millions) callgrind wrote to ``out`` at its process's end: its ``totals`` (its ``summary``
    is 0 once the instrumentation was stopped)."""
    while time.monotonic() < deadline:
        if os.path.exists(out):
            with open(out) as f:
                for line in f:
                    if line.startswith("totals:"):
                        return int(line.split()[1]) / 1e6
        time.sleep(0.2)
    raise TimeoutError(f"valgrind wrote no count to {out}")


def count(python: Python, rows: list[Row], passes: Passes, folder: str, library: str,
          figures: dict[str, Figures]) -> None:
    """The instructions of each row's loop (only the loop: callgrind instruments the target between its calls of
    ``library`` around it, every thread), one run of each, a pass: plain and the relay at ``passes.counted``, raw
    debugpy at ``raw_counted``."""
    target = write_target(folder)
    wrapped = wrapper(python.argv0, folder)
    runs = iter(range(10**6))
    plain: dict[str, float] = {}

    def counting() -> tuple[dict[str, str], str]:
        """The environment of a counted run, and the file valgrind writes its count to."""
        out = os.path.join(folder, f"callgrind.{next(runs)}")
        return {OUTPUT: out, "HOT_BREAKPOINTS_COUNT": library, "VALGRIND_OPTS": "--instr-atstart=no"}, out

    for row in rows:
        if not row.counted:
            continue
        found = figures[row.key].instructions
        if row.mode not in plain:
            env, out = counting()
            plain_run(Python(python.version, wrapped), target, row, passes.counted, env=env)
            plain[row.mode] = counted(out, time.monotonic() + 60) * 1e6 / passes.counted
        found["plain"] = plain[row.mode]
        env, out = counting()
        relay_run(wrapped, target, row, passes.counted, folder, env=env)
        found["relay"] = counted(out, time.monotonic() + 60) * 1e6 / passes.counted
        if Dap is not None:
            env, out = counting()
            raw_run(python, target, row, passes.raw_counted, folder, argv0=wrapped, env=env,
                    connect_timeout=SLOWED_CONNECT)
            found["raw"] = counted(out, time.monotonic() + 60) * 1e6 / passes.raw_counted
        print(f"  {python.version} row {row.key}: instructions a pass "
              f"{ {key: round(value, 1) for key, value in found.items()} }", flush=True)


# -- the whole ----------------------------------------------------------------------------------------


def find_pythons(wanted: list[str]) -> list[Python]:
    """The kernel's Python and the others of ``wanted`` (``3.12``) found as the tests find them."""
    kernel = sys.version_info[:2]
    chosen: list[Python] = []
    for name in wanted:
        version = tuple(map(int, name.split(".")[:2]))
        path = None if version == kernel else targets.found().get(version)
        if version != kernel and path is None:
            print(f"no Python {name} found ({targets.WHERE}): not measured")
            continue
        argv0 = path or sys.executable
        full = subprocess.run([argv0, "-c", "import platform; print(platform.python_version())"],
                              capture_output=True, text=True, check=True, timeout=60).stdout.strip()
        if path:  # its debugpy copy is installed before anything is timed
            lending.install(asyncio.run(interpreter.probe(path)))
        chosen.append(Python(full, path, targets.debugpy_command(path)))
    return chosen


def ns_added(run: Samples, plain: Samples, passes: int) -> float | None:
    """What a pass costs more than plainly, in ns: (the run's median - plain's) / passes."""
    return (run.median - plain.median) * 1e6 / passes if run.n and plain.n else None


def ratio(run: Samples, plain: Samples) -> float | None:
    """The run's median over plain's."""
    return run.median / plain.median if run.n and plain.n else None


def raw_base(found: Figures) -> Samples:
    """The plain runs raw debugpy's are compared with: at its passes."""
    return found.plain_raw if found.plain_raw.n else found.plain


def added_instructions(found: Figures, who: str) -> float | None:
    """The instructions a pass of ``who`` (relay, raw) more than plain's."""
    if who not in found.instructions or "plain" not in found.instructions:
        return None
    return found.instructions[who] - found.instructions["plain"]


def summary(found: Figures, passes: Passes) -> dict[str, Any]:
    """The results file's part of one Python and row."""
    part: dict[str, Any] = {"plain": found.plain.summary()}
    if found.plain_raw.n:
        part["plain_at_raw_passes"] = found.plain_raw.summary()
    for who, base, n in (("relay", found.plain, passes.timed), ("raw", raw_base(found), passes.raw)):
        samples = getattr(found, who)
        if samples.n:
            part[who] = samples.summary()
            part[f"{who}_ns_per_pass"] = round(ns_added(samples, base, n), 1)
            part[f"{who}_ratio"] = round(ratio(samples, base), 2)
    if found.instructions:
        part["instructions_per_pass"] = {who: round(value, 1) for who, value in found.instructions.items()}
    return part


def main() -> None:
    """Time and count every row on every Python, print the table, keep the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=2_000_000, help="the loop's passes, plain and the relay")
    parser.add_argument("--raw-passes", type=int, default=200_000,
                        help="the loop's passes under raw debugpy (its condition check: ~10 us a pass)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pythons", nargs="+", default=["3.11", "3.12", "3.13"])
    parser.add_argument("--rows", nargs="+", choices=[row.key for row in ROWS], default=[row.key for row in ROWS])
    parser.add_argument("--count-passes", type=int, default=200_000, help="under valgrind: plain and the relay")
    parser.add_argument("--raw-count-passes", type=int, default=5_000, help="under valgrind: raw debugpy")
    parser.add_argument("--no-instructions", action="store_true", help="count no instructions, valgrind or not")
    options = parser.parse_args()
    if min(options.passes, options.raw_passes, options.count_passes, options.raw_count_passes) < 3:
        parser.error("passes: at least 3 (row 5 stops at the first 3)")
    passes = Passes(options.passes, options.raw_passes, options.count_passes, options.raw_count_passes)
    keep_bytecode()
    rows = [row for row in ROWS if row.key in options.rows]
    valgrind = shutil.which("valgrind") is not None and not options.no_instructions
    if options.no_instructions:
        print("--no-instructions: no instructions counted")
    elif not valgrind:
        print("valgrind is not installed here (apt install valgrind): no instructions counted, those columns left out")
    if Dap is None:
        print(f"the anchor client raw_dap_bench.py is not in {os.path.normpath(ANCHORS)}: no raw debugpy column")
    started = time.monotonic()
    results: dict[str, dict[str, Figures]] = {}
    with tempfile.TemporaryDirectory() as folder:
        os.environ["JUPYTER_DEBUG_RELAY_HOME"] = os.path.join(folder, "home")
        library = build_counting(folder) if valgrind else None
        valgrind = library is not None
        pythons = find_pythons(options.pythons)
        for python in pythons:
            work = os.path.join(folder, python.version)
            os.makedirs(work, exist_ok=True)
            results[python.version] = measure(python, rows, passes, options.runs, work)
            print(f"{python.version}: timed ({time.monotonic() - started:.0f} s so far)", flush=True)
        for python in pythons if library else []:
            work = os.path.join(folder, python.version, "counted")
            os.makedirs(work, exist_ok=True)
            timeout = direct.PydevdDirectBackend.connect_timeout
            direct.PydevdDirectBackend.connect_timeout = SLOWED_CONNECT
            try:
                count(python, rows, passes, work, library, results[python.version])
            finally:
                direct.PydevdDirectBackend.connect_timeout = timeout
            print(f"{python.version}: counted ({time.monotonic() - started:.0f} s so far)", flush=True)
    print(f"\nThe loop's CPU time (its thread's, printed by the target), median of n runs: plain and the relay at "
          f"{passes.timed:,} passes, raw debugpy at {passes.raw:,} (its +ns/pass and ratio against plain runs at "
          f"its passes). Rows with stops hold them; row 6: the loop after the add.")
    columns = ["Python: row", "n", "plain ms", "relay ms", "raw ms", "relay +ns/pass", "raw +ns/pass",
               "relay/plain", "raw/plain"]
    if valgrind:
        columns += ["plain ins/pass", "relay +ins/pass", "raw +ins/pass"]
    table = Table(*columns, widths=[72])
    for version, found_rows in results.items():
        for row in rows:
            found = found_rows[row.key]
            cells: list[Any] = [f"{version}: {row.key}. {row.title}", found.plain.n, found.plain.median,
                                found.relay.median if found.relay.n else None,
                                found.raw.median if found.raw.n else None,
                                ns_added(found.relay, found.plain, passes.timed),
                                ns_added(found.raw, raw_base(found), passes.raw),
                                ratio(found.relay, found.plain), ratio(found.raw, raw_base(found))]
            if valgrind:
                cells += [found.instructions.get("plain"), added_instructions(found, "relay"),
                          added_instructions(found, "raw")]
            table.row(*cells)
    if valgrind:
        print(f"Instructions: valgrind's callgrind, one run of each, the loop only (instrumented between two calls "
              f"of the target around it, every thread), a pass: plain and the relay at {passes.counted:,} passes, raw "
              f"debugpy at {passes.raw_counted:,}; row 6 not counted (the moment of its add is the wall clock's).")
    print(f"{time.monotonic() - started:.0f} s in all")
    command = " ".join(["python bench/hot_breakpoints.py", *map(shown, sys.argv[1:])])
    record("hot_breakpoints", {
        "command": command, "passes": passes.timed, "raw_passes": passes.raw, "runs": options.runs,
        "raw": Dap is not None, "instructions": valgrind,
        "count_passes": {"plain and relay": passes.counted, "raw": passes.raw_counted} if valgrind else None,
        "rows": {row.key: row.title for row in rows},
        "pythons": {version: {row.key: summary(found_rows[row.key], passes) for row in rows}
                    for version, found_rows in results.items()}})


if __name__ == "__main__":
    main()
