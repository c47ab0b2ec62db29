"""Editors bench: a step through the relay's DAP server beside the same step through debugpy's own adapter.

Both sides are driven by the same raw DAP client (a socket, ``next`` then the ``stopped`` event), on the same
program paused at the same line, in the same run; the relay's Python API step is printed beside them. Also: how
long an editor takes to join a paused session (connect, initialize, attach, configurationDone, the stop), and how
long following an edit of a 2,000-line file takes (``source.anchors``).

Run: ``.venv/bin/python bench/editors_bench.py [--steps N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Samples, Table, fmt, ratio, record  # noqa: E402

from jupyter_debug_relay import Relay  # noqa: E402
from jupyter_debug_relay.protocols import dap  # noqa: E402
from jupyter_debug_relay.source import anchors  # noqa: E402

PROGRAM = "total = 0\nfor i in range(10_000_000):\n    total += i  # body\nprint(total)\n"
BODY = 3


class Client:
    """A raw DAP client over TCP: requests, and waits for an event; every read has a deadline."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.stream = self.sock.makefile("rb")
        self.seq = 0

    def read(self) -> dict:
        length = int(self.stream.readline().split(b":")[1])
        self.stream.readline()
        return json.loads(self.stream.read(length))

    def send(self, command: str, arguments: dict) -> int:
        self.seq += 1
        self.sock.sendall(dap.encode({"type": "request", "seq": self.seq, "command": command,
                                      "arguments": arguments}))
        return self.seq

    def request(self, command: str, arguments: dict) -> dict:
        seq = self.send(command, arguments)
        while True:
            message = self.read()
            if message["type"] == "response" and message["request_seq"] == seq:
                if not message["success"]:
                    raise RuntimeError(f"{command}: {message.get('message')}")
                return message
            if message["type"] == "request":  # a reverse request: answer it plainly
                self.sock.sendall(dap.encode({"type": "response", "seq": 0, "request_seq": message["seq"],
                                              "command": message["command"], "success": True, "body": {}}))

    def until(self, event: str) -> dict:
        while True:
            message = self.read()
            if message["type"] == "event" and message["event"] == event:
                return message

    def step(self, thread: int) -> None:
        self.send("next", {"threadId": thread})
        self.until("stopped")

    def close(self) -> None:
        self.stream.close()
        self.sock.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def debugpy_alone(program: str, steps: int) -> tuple[Samples, Samples]:
    """The anchor: debugpy's adapter on a port, launched and stepped by the raw client; (join, steps)."""
    port = free_port()
    adapter = subprocess.Popen([sys.executable, "-m", "debugpy.adapter", "--host", "127.0.0.1", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    join, stepping = Samples(), Samples()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client = Client(port)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        began = time.perf_counter()
        client.request("initialize", {"adapterID": "python", "linesStartAt1": True, "pathFormat": "path"})
        client.send("launch", {"program": program, "python": [sys.executable], "console": "internalConsole"})
        client.until("initialized")
        client.request("setBreakpoints", {"source": {"path": program}, "breakpoints": [{"line": BODY}]})
        client.request("configurationDone", {})
        thread = client.until("stopped")["body"]["threadId"]
        join.add((time.perf_counter() - began) * 1000)  # a launch here, not a join: printed apart
        for _ in range(steps):
            stepping.time(client.step, thread)
        client.send("disconnect", {"terminateDebuggee": True})
        client.close()
    finally:
        os.killpg(adapter.pid, 9)
        adapter.wait(10)
    return join, stepping


def through_the_relay(program: str, steps: int, joins: int) -> tuple[Samples, Samples, Samples]:
    """The relay: a session paused at the body; (editor joins, steps through the DAP server, API steps)."""
    join, over_dap, api = Samples(), Samples(), Samples()
    with Relay(record=False) as relay:
        relay.breakpoints.add(program, BODY)
        session = relay.launch(program)
        session.wait_for_stop(30)
        exposed = relay.operations.call("expose", {"session": session.id})
        for _ in range(joins):
            began = time.perf_counter()
            client = Client(exposed["port"])
            client.request("initialize", {"adapterID": "python", "linesStartAt1": True, "pathFormat": "path"})
            client.request("attach", {"token": exposed["token"]})
            client.request("configurationDone", {})
            thread = client.until("stopped")["body"]["threadId"]
            join.add((time.perf_counter() - began) * 1000)
            client.request("disconnect", {})
            client.close()
        client = Client(exposed["port"])
        client.request("initialize", {"adapterID": "python"})
        client.request("attach", {"token": exposed["token"]})
        client.request("configurationDone", {})
        thread = client.until("stopped")["body"]["threadId"]
        for _ in range(steps):
            over_dap.time(client.step, thread)
        client.close()
        for _ in range(steps):
            api.time(session.next)
        session.terminate()
    return join, over_dap, api


def follow_edit(lines: int = 2000, rounds: int = 20) -> Samples:
    old = "".join(f"value_{n} = {n}\n" for n in range(lines))
    new = "# a new first line\n" + old.replace("value_1000 = 1000\n", "value_1000 = 1001\n")
    samples = Samples()
    for _ in range(rounds):
        samples.time(anchors.follow, old, new, 1500)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--joins", type=int, default=10)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        program = os.path.join(folder, "loop.py")
        with open(program, "w") as f:
            f.write(PROGRAM)
        launch, anchor_steps = debugpy_alone(program, options.steps)
        join, dap_steps, api_steps = through_the_relay(program, options.steps, options.joins)
    edit = follow_edit()
    table = Table("measure (ms)", "median", "p95", "n", "debugpy alone", "ratio")
    table.row("step over, raw DAP client → relay DAP server", dap_steps.median, dap_steps.p(95), dap_steps.n,
              fmt(anchor_steps.median), ratio(anchor_steps.median, dap_steps.median))
    table.row("step over, relay Python API", api_steps.median, api_steps.p(95), api_steps.n,
              fmt(anchor_steps.median), ratio(anchor_steps.median, api_steps.median))
    table.row("editor joins a paused session (to its stop)", join.median, join.p(95), join.n,
              f"{fmt(launch.median)} (launch)", "n/a")
    table.row("follow one edit of a 2,000-line file", edit.median, edit.p(95), edit.n, "n/a", "n/a")
    record("editors", {"dap_step": dap_steps.summary(), "api_step": api_steps.summary(),
                       "debugpy_step": anchor_steps.summary(), "join": join.summary(), "follow_edit": edit.summary()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
