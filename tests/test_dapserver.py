"""Editors join a session over DAP (``expose``), tested with VS Code's own DAP client (npm
``@vscode/debugadapter-testsupport``, run by Node): several clients at once, read-only ones, and the token."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import line_of

from jupyter_debug_relay import Relay, RelayError
from jupyter_debug_relay.protocols import dap
from tests.server_fixtures import ok
from tests.test_content_breakpoints import APP  # the same small program

HERE = Path(__file__).resolve().parent
PACKAGE = "@vscode/debugadapter-testsupport@1.68.0"
CLIENTS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jupyter-debug-relay-tests" / "dap-client"

@pytest.fixture(scope="module")
def vscode_client():
    """Run a scenario of tests/dap_clients.js against a port and a token; what the clients saw."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("Node.js and npm are needed to run VS Code's DAP test client")
    if not (CLIENTS / "node_modules" / "@vscode" / "debugadapter-testsupport").is_dir():
        CLIENTS.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "install", "--prefix", str(CLIENTS), "--no-audit", "--no-fund", PACKAGE],
                              capture_output=True, text=True, timeout=240)
        if done.returncode:
            pytest.skip(f"npm could not install {PACKAGE}: {done.stderr.strip()[-300:]}")

    def run(scenario: str, port: int, token: str) -> dict:
        done = subprocess.run([node, str(HERE / "dap_clients.js"), scenario, str(port), token],
                              env={**os.environ, "NODE_PATH": str(CLIENTS / "node_modules")},
                              capture_output=True, text=True, timeout=60, start_new_session=True)
        assert done.stdout.strip(), done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture
def paused(relay, write):
    """A session paused at `total += x` (first pass), and that line."""
    app = write("app.py", APP)
    line = line_of(app, "total += x")
    relay.breakpoints.add(app, line)
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.line == line
    yield session, line
    session.terminate()


def test_two_editors_join_one_session_and_both_see_the_stop_of_a_step(relay, paused, vscode_client):
    session, line = paused
    exposed = relay.operations.call("expose", {"session": session.id})
    assert exposed["url"] == f"dap://127.0.0.1:{exposed['port']}" and len(exposed["token"]) >= 24
    seen = vscode_client("two", exposed["port"], exposed["token"])
    assert seen["before"] == line and seen["threads"] >= 1
    assert seen["reasonA"] == seen["reasonB"] == "step"
    assert seen["afterA"] == seen["afterB"] == line - 1  # the step went back to `for x in items:`
    assert {"total", "x", "items"} <= set(seen["names"])
    assert session.info().stop.frame.line == line - 1  # the notebook's handle sees the editor's step


def test_a_read_only_editor_looks_but_is_refused_a_step(relay, paused, vscode_client):
    session, line = paused
    exposed = relay.operations.call("expose", {"session": session.id, "read_only": True})
    seen = vscode_client("readonly", exposed["port"], exposed["token"])
    assert seen["line"] == seen["stillLine"] == line
    assert "read-only: next would change the session" in seen["refused"]
    assert "read-only: evaluate" in seen["refusedEval"]
    assert session.info().state == "paused" and session.info().stop.frame.line == line


def test_a_wrong_token_is_refused_and_nothing_is_answered_before_it(relay, paused, vscode_client):
    session, line = paused
    exposed = relay.operations.call("expose", {"session": session.id})
    seen = vscode_client("badtoken", exposed["port"], exposed["token"])
    assert "Attach with the token first" in seen["before"]
    assert "Wrong token" in seen["refused"] and seen["closed"] is True
    assert session.info().state == "paused" and session.info().stop.frame.line == line


class Wire:
    """A raw DAP connection: requests out, messages in (one buffered reader for the socket's life)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.stream = self.sock.makefile("rb")
        self.events: list[dict] = []  # those read while waiting for a response

    def read(self) -> dict | None:
        header = self.stream.readline()
        if not header:
            return None
        length = int(header.split(b":")[1])
        self.stream.readline()
        return json.loads(self.stream.read(length))

    def request(self, seq: int, command: str, arguments: dict) -> dict:
        """Send one request and read up to its response (events before it are kept for ``events_until``)."""
        self.sock.sendall(dap.encode({"type": "request", "seq": seq, "command": command, "arguments": arguments}))
        while (message := self.read())["type"] != "response":
            self.events.append(message)
        return message

    def events_until(self, name: str) -> list[dict]:
        """The events read so far and up to the first one called ``name``."""
        seen, self.events = self.events, []
        while not seen or seen[-1].get("event") != name:
            message = self.read()
            if message["type"] == "event":
                seen.append(message)
        return seen

    def close(self) -> None:
        self.stream.close()
        self.sock.close()


def test_steps_before_the_token_and_a_missing_token_are_refused(relay, paused):
    session, line = paused
    exposed = relay.operations.call("expose", {"session": session.id})
    wire = Wire(exposed["port"])
    refused = wire.request(1, "next", {"threadId": session.stop.thread_id})
    assert not refused["success"] and "Attach with the token first" in refused["message"]
    missing = wire.request(2, "attach", {})
    assert not missing["success"]
    assert wire.read() is None  # closed
    wire.close()
    assert session.info().stop.frame.line == line


def test_expose_listens_on_loopback_and_refuses_a_taken_port(relay, paused):
    session, _ = paused
    exposed = relay.operations.call("expose", {"session": session.id})
    with socket.socket() as probe:
        probe.settimeout(2)
        assert probe.connect_ex(("127.0.0.1", exposed["port"])) == 0
    with pytest.raises(RelayError) as taken:
        relay.operations.call("expose", {"session": session.id, "port": exposed["port"]})
    assert taken.value.code == "connection_failed"


def test_the_cli_exposes_a_session_another_process_owns(relay, paused):
    session, _ = paused
    done = subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", "dap", "--session", session.info().uid,
                           "--read-only"], capture_output=True, text=True, timeout=60, start_new_session=True)
    match = re.fullmatch(r"dap://127\.0\.0\.1:(\d+) token (\S+) \(read-only\)", done.stdout.strip())
    assert match, done.stdout + done.stderr
    wire = Wire(int(match.group(1)))
    assert wire.request(1, "attach", {"token": match.group(2)})["success"]
    refused = wire.request(2, "continue", {"threadId": session.stop.thread_id})
    assert not refused["success"] and "read-only" in refused["message"]
    wire.close()


def test_the_magics_set_a_breakpoint_by_content_and_expose_the_session(kernel, write, vscode_client):
    line = line_of(write("app.py", APP), "total += x")
    added = kernel.magic('%bp app.py:"total += x"').text
    assert re.search(rf"breakpoint 1 at .*app\.py:{line} \('total \+= x'\)", added), added
    kernel.magic("%debug_session launch app.py")
    text = kernel.magic("%debug_session expose --read-only").text
    match = re.search(r"served over DAP at dap://127\.0\.0\.1:(\d+) token (\S+) \(read-only\)", text)
    assert match, text
    seen = vscode_client("readonly", int(match.group(1)), match.group(2))
    assert seen["line"] == line and "read-only" in seen["refused"]


def test_an_editors_breakpoints_are_its_own_and_it_hears_the_output_and_the_end(relay, paused):
    session, line = paused
    notebooks = relay.breakpoints.list()
    path = notebooks[0].path
    exposed = relay.operations.call("expose", {"session": session.id})
    wire = Wire(exposed["port"])
    assert wire.request(1, "attach", {"token": exposed["token"]})["success"]
    last = line_of(path, "return total")
    set_ = wire.request(2, "setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": last}]})
    assert set_["success"] and set_["body"]["breakpoints"][0]["line"] == last
    assert [b.line for b in relay.breakpoints.list()] == [line, last]  # beside the notebook's, not instead
    assert wire.request(3, "setBreakpoints", {"source": {"path": path}, "breakpoints": []})["success"]
    assert [b.line for b in relay.breakpoints.list()] == [line]  # the notebook's breakpoint stays
    relay.breakpoints.remove(notebooks[0].id)
    assert wire.request(4, "continue", {"threadId": session.stop.thread_id})["success"]
    heard = wire.events_until("terminated")
    wire.close()
    said = "".join(e["body"]["output"] for e in heard if e["event"] == "output")
    assert "sum 6\n" in said  # a stream: print's writes may come in one event or several, as a client joins them
    assert any(e["event"] == "exited" and e["body"]["exitCode"] == 0 for e in heard)
    told = [e["body"] for e in heard if e["event"] == "breakpoint"]
    assert told and told[-1]["reason"] == "removed"  # the notebook removed its breakpoint
    assert told[-1]["breakpoint"]["id"] == notebooks[0].id and not told[-1]["breakpoint"]["verified"]


def test_a_broken_frame_closes_that_connection_only(relay, paused):
    session, line = paused
    exposed = relay.operations.call("expose", {"session": session.id})
    bad = Wire(exposed["port"])
    bad.sock.sendall(b"Content-Length: nope\r\n\r\n{}")
    assert bad.read() is None  # closed, nothing answered
    bad.close()
    big = Wire(exposed["port"])  # a body too big for a client without the token: not even read
    big.sock.sendall(b"Content-Length: 50000000\r\n\r\n" + b" " * 1024)
    assert big.read() is None
    big.close()
    good = Wire(exposed["port"])
    assert good.request(1, "attach", {"token": exposed["token"]})["success"]
    assert good.request(2, "stackTrace", {"threadId": session.stop.thread_id})["body"]["stackFrames"][0]["line"] == line
    good.close()


def test_closing_the_relay_closes_its_dap_servers(write):
    app = write("app.py", APP)
    with Relay(record=False) as relay:
        relay.breakpoints.add(app, line_of(app, "total += x"))
        session = relay.launch(app)
        session.wait_for_stop(30)
        exposed = relay.operations.call("expose", {"session": session.id})
        wire = Wire(exposed["port"])
        assert wire.request(1, "attach", {"token": exposed["token"]})["success"]
        assert os.path.exists(exposed["connection_file"])
    while (message := wire.read()) is not None:  # what was sent before the close, then the end: its client let go
        assert message["type"] == "event"
    wire.close()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", exposed["port"])) != 0
    assert not os.path.exists(exposed["connection_file"])


def test_an_agent_over_http_exposes_its_session_and_reads_the_token_from_the_connection_file(api, tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP.lstrip("\n"))
    made = ok(api.post("/sessions", json={"name": "agent"}))["session"]["id"]
    ok(api.post("/breakpoints", json={"path": str(app), "content": "total += x"}))
    stop = ok(api.post(f"/sessions/{made}/launch", json={"program": str(app)}))["stop"]
    exposed = ok(api.post(f"/sessions/{made}/expose", json={}))
    assert exposed["token"] == "<redacted>" and exposed["url"].startswith("dap://127.0.0.1:")
    with open(exposed["connection_file"]) as f:
        token = json.load(f)["token"]
    assert os.stat(exposed["connection_file"]).st_mode & 0o777 == 0o600
    wire = Wire(exposed["port"])
    assert wire.request(1, "attach", {"token": token})["success"]
    frames = wire.request(2, "stackTrace", {"threadId": stop["thread_id"]})["body"]["stackFrames"]
    assert frames[0]["line"] == line_of(str(app), "total += x")
    wire.close()


def test_a_client_counting_lines_from_zero_gets_and_gives_lines_its_way(relay, paused):
    session, line = paused
    exposed = relay.operations.call("expose", {"session": session.id})
    wire = Wire(exposed["port"])
    assert wire.request(1, "initialize", {"adapterID": "python", "linesStartAt1": False,
                                          "columnsStartAt1": False})["success"]
    assert wire.request(2, "attach", {"token": exposed["token"]})["success"]
    frame = wire.request(3, "stackTrace", {"threadId": session.stop.thread_id})["body"]["stackFrames"][0]
    assert frame["line"] == line - 1
    path = relay.breakpoints.list()[0].path
    last = line_of(path, "return total")
    set_ = wire.request(4, "setBreakpoints", {"source": {"path": path}, "breakpoints": [{"line": last - 1}]})
    assert set_["body"]["breakpoints"][0]["line"] == last - 1
    assert sorted(b.line for b in relay.breakpoints.list()) == [line, last]
    wire.close()
