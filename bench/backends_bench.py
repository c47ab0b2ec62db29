"""Backends benchmark: a Mycel step and an EZ step through the relay, each beside the raw wire round trip.

In one run and against the same peer, each step is measured twice: through the
relay (``session.next()`` returns the next stop) and by a bare client of the
wire (a WebSocket JSON-RPC client sending ``debug.next`` and waiting for
``event.stopped``; a subprocess line-JSON client sending ``stepOver`` and
waiting for ``stopped``). The peers: the Mycel demo runtime in its own process,
and the EZ test peer ``tests/peers/ez`` stepping ``forever.ez``. Rounds
alternate relay and raw so that drift hits both alike. Prints medians and p95
in ms and the time the relay adds (goal: at most 1 ms).

    python bench/backends_bench.py [-n 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from common import LineReader, Samples, Table, record, timed
from websockets.sync.client import ClientConnection, connect

from jupyter_debug_relay import Relay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EZ = os.path.join(ROOT, "tests", "peers", "ez")
EZ_PROGRAM = os.path.join(ROOT, "tests", "peers", "ez_programs", "forever.ez")
FLOW = "create_user"
STEPS_PER_REQUEST = 4  # create_user: sanitize -> validate_input -> enrich -> transform -> write
GOAL_MS = 1.0
WAIT = 10.0


def user(number: int) -> dict[str, str]:
    return {"email": f"user{number}@example.com", "name": f"User {number}"}


# -- Mycel ------------------------------------------------------------------------------------


@contextmanager
def mycel_runtime() -> Iterator[str]:
    """The demo runtime in its own process group; yields its URL."""
    argv = [sys.executable, "-m", "jupyter_debug_relay.examples.mycel_demo", "--port", "0"]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout is not None
        url = LineReader(proc.stdout).readline(time.monotonic() + WAIT, "URL from the Mycel demo runtime")
        yield url.decode().strip()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(WAIT)


class RawMycel:
    """A bare JSON-RPC 2.0 client over a WebSocket: what any Mycel Studio client does."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.stops: deque[dict[str, Any]] = deque()  # event.stopped seen while waiting for something else

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        req_id = next(self.ids)
        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": req_id, "method": method, "params": params or {}}))
        return req_id

    def _next_message(self) -> dict[str, Any]:
        message = json.loads(self.ws.recv(WAIT))
        if message.get("method") == "event.stopped":
            self.stops.append(message["params"])
        return message

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        req_id = self.send(method, params)
        while (message := self._next_message()).get("id") != req_id:
            pass
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message["result"]

    def stopped(self) -> dict[str, Any]:
        while not self.stops:
            self._next_message()
        return self.stops.popleft()

    def step(self, thread: str) -> dict[str, Any]:
        """``debug.next`` and the stop it leads to (its answer is read later, in passing)."""
        self.send("debug.next", {"threadId": thread})
        return self.stopped()


def raw_mycel_steps(url: str, n: int, numbers: Iterator[int]) -> list[float]:
    with connect(url, compression=None, max_size=None) as ws:
        client = RawMycel(ws)
        client.call("debug.attach", {"clientName": "backends_bench"})
        client.call("debug.setBreakpoints", {"flow": FLOW, "breakpoints": [{"stage": "sanitize", "ruleIndex": -1}]})
        client.call("debug.ready")
        samples: list[float] = []
        while len(samples) < n:
            client.call("demo.request", {"flow": FLOW, "input": user(next(numbers))})
            thread = client.stopped()["threadId"]
            samples += [timed(client.step, thread) for _ in range(STEPS_PER_REQUEST)]
            client.call("debug.continue", {"threadId": thread})
        client.call("debug.detach")
        return samples[:n]


def relay_mycel_steps(relay: Relay, url: str, n: int, numbers: Iterator[int]) -> list[float]:
    session = relay.connect_mycel(url)
    try:
        samples: list[float] = []
        while len(samples) < n:
            session.custom_request("demo.request", {"flow": FLOW, "input": user(next(numbers))})
            session.wait_for_stop(WAIT)
            for _ in range(STEPS_PER_REQUEST):
                samples.append(timed(session.next, timeout=WAIT))
            session.continue_(wait=False)
        return samples[:n]
    finally:
        session.terminate()


# -- EZ ---------------------------------------------------------------------------------------


class RawEz:
    """A bare line-JSON client of `ez debugserver PROGRAM`: what the EZ IDE does."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [EZ, "debugserver", EZ_PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
        assert self.proc.stdout is not None
        self.lines = LineReader(self.proc.stdout)
        self.seen: set[str] = set()  # the names of the events read so far

    def send(self, command: str, params: dict[str, Any] | None = None) -> None:
        assert self.proc.stdin is not None
        line = {"type": "command", "command": command, "params": params or {}}
        self.proc.stdin.write(json.dumps(line, separators=(",", ":")).encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, event: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while line := self.lines.readline(deadline, f"{event!r} from the EZ peer"):
            if not line.startswith(b"{"):
                continue  # the program's own print
            message = json.loads(line)
            self.seen.add(message.get("event"))
            if message.get("event") == event:
                return message["data"]
        raise SystemExit(f"the EZ peer ended before sending {event!r}")

    def step(self) -> dict[str, Any]:
        """``stepOver`` and the stop it leads to."""
        self.send("stepOver")
        return self.until("stopped")

    def close(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(WAIT)


def raw_ez_steps(n: int) -> list[float]:
    client = RawEz()
    try:
        client.send("initialize", {"file": EZ_PROGRAM, "workingDir": ROOT})
        client.until("initialized")
        client.send("start")
        client.until("started")
        if "stopped" not in client.seen:  # a loose server stops on entry before it answers `initialize`
            client.until("stopped")
        return [timed(client.step) for _ in range(n)]
    finally:
        client.close()


def relay_ez_steps(relay: Relay, n: int) -> list[float]:
    session = relay.connect_ez(EZ_PROGRAM, ez=EZ)
    try:
        session.wait_for_stop(WAIT)
        return [timed(session.next, timeout=WAIT) for _ in range(n)]
    finally:
        session.terminate()


# -- the run ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000, help="steps measured per backend and per client")
    parser.add_argument("--rounds", type=int, default=5, help="alternations of relay and raw")
    args = parser.parse_args()
    per_round = max(1, args.n // args.rounds)
    results = {key: Samples() for key in ("mycel relay", "mycel raw", "ez relay", "ez raw")}
    numbers = itertools.count(1)
    with mycel_runtime() as url, Relay() as relay:
        relay.breakpoints.add_stage(FLOW, "sanitize")
        runs = [("mycel raw", lambda: raw_mycel_steps(url, per_round, numbers)),
                ("mycel relay", lambda: relay_mycel_steps(relay, url, per_round, numbers)),
                ("ez raw", lambda: raw_ez_steps(per_round)),
                ("ez relay", lambda: relay_ez_steps(relay, per_round))]
        for number in range(args.rounds):  # raw first in even rounds, the relay first in odd ones
            for key, run in runs if number % 2 == 0 else [runs[1], runs[0], runs[3], runs[2]]:
                results[key].values += run()
    print(f"times in ms, steps in {args.rounds} rounds alternating relay and raw; goal: the relay adds "
          f"<= {GOAL_MS:g} ms\n")
    table = Table("step (next -> stopped)", "n", "relay p50", "relay p95", "raw p50", "raw p95", "added p50",
                  "added p95", "goal")
    figures = {}
    for name, key in (("Mycel, JSON-RPC/WebSocket", "mycel"), ("EZ, line JSON/stdio", "ez")):
        mine, raw = results[f"{key} relay"], results[f"{key} raw"]
        added = mine.median - raw.median
        table.row(name, mine.n, mine.median, mine.p(95), raw.median, raw.p(95), added, mine.p(95) - raw.p(95),
                  "met" if added <= GOAL_MS else "MISSED")
        figures[key] = {"relay_step_ms": mine.summary(), "raw_step_ms": raw.summary(), "added_ms": round(added, 3)}
    record("backends", figures)


if __name__ == "__main__":
    main()
