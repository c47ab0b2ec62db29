"""A local process that races the launched target to the relay's pydevd listener gets nothing run, and no secret."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import line_of, marked_processes

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.backends.debugpy.backend import BOOT_VARIABLE, DebugpyBackend

PROGRAM = """
total = 0
for i in range(3):
    total += i  # stop here
print(total)
"""

# Polls /proc for a target running PROGRAM with --connect, as any local user can, and races it to the port:
# a runInTerminal and a fake stop before anything else, then answers pydevdAuthorize with what the command
# line gave (a token, if one is there) and guesses, and asks again. Prints what happened to it.
ROGUE = r"""
import os, sys, threading, time
marker, program, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from tests.peers import rogue_dap

def attack(port, token):
    rogue_dap.attack(port, marker, [token, None, "", str(port)], "breakpoint", ask_again=True)

seen = set()
while time.monotonic() < until:
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = [a.decode(errors="replace") for a in f.read().split(b"\0")]
        except (OSError, ValueError):
            continue
        if program not in args or "--connect" not in args:
            continue
        port = int(args[args.index("--connect") + 1].rpartition(":")[2])
        if port not in seen:
            seen.add(port)
            token = args[args.index("--adapter-access-token") + 1] if "--adapter-access-token" in args else None
            threading.Thread(target=attack, args=(port, token)).start()
    time.sleep(0.002)
"""

ROOT = str(Path(__file__).resolve().parent.parent)  # the rogue imports tests.peers.rogue_dap from here


def test_a_rogue_racing_three_launches_gets_nothing_run_and_every_launch_stops(relay, write, tmp_path, caplog):
    app = write("app.py", PROGRAM)
    marker = tmp_path / "rogue-was-here"
    bp = relay.breakpoints.add(app, line_of(app, "# stop here"))
    rogue = subprocess.Popen([sys.executable, "-c", ROGUE, str(marker), app, "120", ROOT], stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    caplog.set_level(logging.WARNING, logger="jupyter_debug_relay.backends.debugpy.direct")
    try:
        for _ in range(3):
            session = relay.launch(app)
            stop = session.wait_for_stop(30)
            assert (stop.reason, stop.frame.line, stop.breakpoint_ids) == ("breakpoint", bp.line, [bp.id])
            assert session.evaluate("total").value == "0"
            session.terminate()
        time.sleep(0.5)  # a command the relay had run would have made the marker by now
    finally:
        rogue.kill()
        report = rogue.communicate(timeout=10)[0].split("\n")
    assert not marker.exists()
    assert sum(line.startswith("connected") for line in report) >= 1, report
    # It raced the target and won at least once: the relay asked it to prove itself, then closed it.
    asked = {line.split()[1] for line in report if line.startswith("asked")}
    assert asked and asked <= {line.split()[1] for line in report if line.startswith("closed")}, report
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("Closed a connection from 127.0.0.1:" in w and "without the target's token" in w
               for w in warnings), warnings


def secrets_in_command_lines() -> tuple[list[str], list[str]]:
    """The tokens our debuggees were given (in their environment), and the command lines of all we started."""
    tokens, command_lines = [], []
    for pid, command_line in marked_processes().items():
        command_lines.append(command_line)
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        except OSError:
            continue
        if BOOT_VARIABLE.encode() in environ:
            tokens.append(json.loads(environ[BOOT_VARIABLE.encode()]).get("token"))
    return tokens, command_lines


@pytest.mark.parametrize("subprocess_", [False, True], ids=["direct", "adapter"])
def test_no_command_line_of_ours_holds_a_secret(relay, write, subprocess_):
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# stop here"))
    session = relay.launch(app, subprocess=subprocess_)
    session.wait_for_stop(30)
    tokens, command_lines = secrets_in_command_lines()
    session.terminate()
    assert len(tokens) == 1 and tokens[0] and len(tokens[0]) >= 32, tokens  # the debuggee got it, in its environment
    assert any("debugpy.adapter" in c for c in command_lines) == subprocess_  # the processes of that path were seen
    for command_line in command_lines:
        assert tokens[0] not in command_line and "access-token" not in command_line, command_line


REVERSE_PEER = r"""
import json, os, socket, sys
args = sys.argv[1:]
if "--connect" not in args:
    os.execv(sys.executable, [sys.executable, *args])  # the relay's probe of this "interpreter": a real one answers
port = int(args[args.index("--connect") + 1].rpartition(":")[2])
boot = json.loads(os.environ.get("JUPYTER_DEBUG_RELAY_BOOT", "{}"))
token = boot.get("token") or args[args.index("--adapter-access-token") + 1]  # where the relay put it
sock = socket.create_connection(("127.0.0.1", port))
reader = sock.makefile("rb")

def send(message):
    body = json.dumps(message).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

def receive():
    length = int(reader.readline().split(b":")[1])
    reader.readline()
    return json.loads(reader.read(length))

request = receive()
send({"seq": 1, "type": "response", "request_seq": request["seq"], "command": request["command"],
      "success": True, "body": {"clientAccessToken": token}})
send({"seq": 2, "type": "request", "command": "runInTerminal",
      "arguments": {"kind": "integrated", "args": [sys.executable, "-c", "open('ran', 'w').close()"]}})
send({"seq": 3, "type": "request", "command": "startDebugging",
      "arguments": {"request": "attach", "configuration": {"connect": {"host": "127.0.0.1", "port": 1}}}})
answers = {}
while len(answers) < 2:
    message = receive()
    if message.get("type") == "response" and message.get("request_seq") in (2, 3):
        answers[message["command"]] = message
with open("answers.json", "w") as f:
    json.dump(answers, f)
"""


def test_reverse_requests_from_a_proven_pydevd_peer_are_refused(relay, write, tmp_path):
    """A peer that passes the proof (it is the launched process) still cannot make the relay run anything."""
    app = write("app.py", PROGRAM)
    peer = write("peer.py", REVERSE_PEER)
    fake_python = tmp_path / "python"
    fake_python.write_text(f"#!/bin/sh\nexec {sys.executable} {peer} \"$@\"\n")
    fake_python.chmod(0o755)
    with pytest.raises(RelayError):
        relay.launch(app, python=str(fake_python), cwd=str(tmp_path))
    answers = json.loads((tmp_path / "answers.json").read_text())
    assert not (tmp_path / "ran").exists()
    assert set(answers) == {"runInTerminal", "startDebugging"}
    for command, answer in answers.items():
        assert answer["success"] is False and f"refuses {command!r}" in answer["message"]
    assert len(relay.sessions) == 1  # no child session was attached for startDebugging


def test_an_attach_peer_cannot_make_the_relay_run_a_command(relay, tmp_path):
    """A DAP server reached by port (attach) is not an adapter the relay started: its runInTerminal is refused."""
    listener = socket.create_server(("127.0.0.1", 0))
    answers: list[dict] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as reader:
            body = json.dumps({"seq": 1, "type": "request", "command": "runInTerminal", "arguments": {
                "kind": "integrated", "args": [sys.executable, "-c", f"open({str(tmp_path / 'ran')!r}, 'w')"]}})
            conn.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body.encode())
            while not answers:
                length = int(reader.readline().split(b":")[1])
                reader.readline()
                message = json.loads(reader.read(length))
                if message.get("type") == "response":
                    answers.append(message)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        with pytest.raises(RelayError):
            relay.start(lambda events: DebugpyBackend(events, port=listener.getsockname()[1], request_timeout=5))
        server.join(10)
    finally:
        listener.close()
    assert answers and answers[0]["success"] is False and "refuses runInTerminal" in answers[0]["message"]
    assert not os.path.exists(tmp_path / "ran")
