"""The comm channel in a real kernel: every message checked against the JSON Schemas of docs/comm-protocol.md."""

from __future__ import annotations

import json
import queue
import re
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from jupyter_debug_relay.errors import CODES, RelayError
from tests.conftest import line_of
from tests.kernels import APP, UID, Kernel

DOC = Path(__file__).resolve().parent.parent / "docs" / "comm-protocol.md"


def load_schemas() -> dict[str, dict[str, Any]]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)
    schemas = [json.loads(b) for b in blocks if '"$schema"' in b]
    return {s["title"]: s for s in schemas}


SCHEMAS = load_schemas()
REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values())
TYPES = {"hello": "Hello", "event": "Event", "batch": "Batch", "response": "Response"}


def check(message: dict[str, Any]) -> dict[str, Any]:
    """Validate a kernel → frontend message against its schema."""
    title = TYPES[message["type"]]
    jsonschema.Draft202012Validator(SCHEMAS[title], registry=REGISTRY).validate(message)
    return message


def test_the_doc_has_a_schema_for_every_message():
    assert set(SCHEMAS) == {"Common", "ErrorCode", "Hello", "Event", "Batch", "Requests", "Request", "Response"}
    for schema in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    request = jsonschema.Draft202012Validator(SCHEMAS["Request"], registry=REGISTRY)
    request.validate({"type": "request", "v": 1, "id": 1, "command": "next", "session": "s1", "args": {}})
    with pytest.raises(jsonschema.ValidationError):
        request.validate({"type": "request", "id": 1, "command": "explode"})


def test_an_error_response_carries_a_declared_code():
    response = jsonschema.Draft202012Validator(SCHEMAS["Response"], registry=REGISTRY)
    for code in CODES:
        response.validate({"type": "response", "v": 1, "id": 1, "ok": False,
                           "error": RelayError(code, "It went wrong.").to_dict()})
    with pytest.raises(jsonschema.ValidationError):
        response.validate({"type": "response", "v": 1, "id": 1, "ok": False,
                           "error": {"code": "went_wrong", "message": "It went wrong.", "hint": ""}})


class Frontend:
    """One comm opened from the client side; collects events and answers by request id."""

    def __init__(self, kernel: Kernel, comm_id: str) -> None:
        self.kernel, self.comm_id = kernel, comm_id
        self.events: list[dict[str, Any]] = []
        self.responses: dict[Any, dict[str, Any]] = {}
        self.hello: dict[str, Any] | None = None
        self._ids = iter(range(1, 10**6))

    def take(self, message: dict[str, Any]) -> None:
        check(message)
        if message["type"] == "hello":
            self.hello = message
        elif message["type"] == "event":
            self.events.append(message)
        elif message["type"] == "batch":
            self.events.extend(message["events"])
        else:
            self.responses[message["id"]] = message

    def request(self, command: str, session: str | None = None, **args: Any) -> dict[str, Any]:
        request_id = next(self._ids)
        data: dict[str, Any] = {"type": "request", "v": 1, "id": request_id, "command": command, "args": args}
        if session:
            data["session"] = session
        jsonschema.Draft202012Validator(SCHEMAS["Request"], registry=REGISTRY).validate(data)  # the doc's contract
        return self.send(data, request_id)

    def send(self, data: Any, request_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        self.kernel.comm_send(self.comm_id, data)
        pump(self.kernel, [self], lambda: request_id in self.responses, timeout)
        return self.responses.pop(request_id)

    def wait_event(self, name: str, timeout: float = 15.0, after: int = 0) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            return next((e for e in self.events[after:] if e["event"] == name), None)
        pump(self.kernel, [self], lambda: found() is not None, timeout)
        return found()


def pump(kernel: Kernel, frontends: list[Frontend], done, timeout: float) -> None:
    by_id = {f.comm_id: f for f in frontends}
    deadline = time.monotonic() + timeout
    while not done():
        left = deadline - time.monotonic()
        assert left > 0, "timed out waiting on the comm"
        try:
            comm_id, data = kernel.comm_data(timeout=min(left, 0.5))
        except queue.Empty:
            continue
        if comm_id in by_id:
            by_id[comm_id].take(data)


def open_frontend(kernel: Kernel, data: dict[str, Any] | None = None) -> Frontend:
    frontend = Frontend(kernel, kernel.comm_open(data=data))
    pump(kernel, [frontend], lambda: frontend.hello is not None, 20)
    return frontend


@pytest.mark.smoke
def test_hello_then_a_whole_debugging_session_over_the_comm(kernel, write):
    app = write("app.py", APP)
    line = line_of(app, "# accumulate")
    front = open_frontend(kernel)
    assert front.hello["sessions"] == [] and front.hello["breakpoints"] == []
    answer = front.request("setBreakpoint", kind="line", path=app, line=line, condition="i == 1")
    assert answer["ok"] and answer["body"]["breakpoint"]["line"] == line
    answer = front.request("launch", program=app, name="calc")
    assert answer["ok"] and answer["body"]["session"]["name"] == "calc"
    stopped = front.wait_event("stopped")
    assert stopped["session"] == "s1" and stopped["body"]["frame"]["line"] == line
    assert stopped["body"]["breakpoint_ids"] == [1]
    assert any(e["event"] == "session" and e["body"]["state"] == "paused" for e in front.events)
    frames = front.request("stack", "s1")["body"]["frames"]
    assert [f["name"] for f in frames] == ["compute", "<module>"]
    scopes = front.request("scopes", "s1", frameId=frames[0]["id"])["body"]["scopes"]
    page = front.request("variables", "s1", ref=scopes[0]["ref"])["body"]
    assert {v["name"]: v["value"] for v in page["items"]}["i"] == "1"
    assert front.request("evaluate", "calc", expression="x * 100")["body"]["variable"]["value"] == "400"  # x is 4
    snap = front.request("snapshot", "s1", filter="i", frames=1)["body"]["snapshot"]
    assert [f["name"] for f in snap["frames"]] == ["compute"] and snap["frames_total"] == 2
    assert {v["name"]: v["value"] for v in snap["locals"]}["i"] == "1"
    assert any(s["current"] and "# accumulate" in s["text"] for s in snap["source"])
    mark = len(front.events)
    answer = front.request("next", "s1")
    assert answer["ok"] and answer["body"]["stop"] is None  # the stop arrives as an event
    assert front.wait_event("stopped", after=mark)["body"]["reason"] == "step"
    front.request("removeBreakpoint", id=1)
    front.request("continue", "s1")
    assert front.wait_event("exited")["body"]["exit_code"] == 3
    output = "".join(e["body"]["text"] for e in front.events if e["event"] == "output")
    assert output == "start\nresult 32\n"
    status = front.request("status", "s1")["body"]["session"]
    assert status["state"] == "terminated" and status["exit_code"] == 3
    magic = kernel.magic("%dbg list").text  # the magics see what the comm started
    assert magic.splitlines()[1].split() == ["-", "s1", magic.splitlines()[1].split()[2], "calc", "debugpy",
                                             "terminated", "exit=3", "-", "app.py"]
    assert re.fullmatch(UID, magic.splitlines()[1].split()[2]), magic


@pytest.mark.parametrize(("data", "message"), [
    ("not an object", "A message to the kernel must be"),
    ({"type": "request", "command": "next"}, "needs an \"id\""),
    ({"type": "request", "id": 5, "command": "explode"}, "Unknown command 'explode'"),
    ({"type": "request", "id": 6, "command": "stack", "session": "s9"}, "s9"),
    ({"type": "request", "id": 7, "command": "stack"}, "There is no debug session yet"),
    ({"type": "request", "id": 8, "command": "setBreakpoint", "args": {"kind": "line", "path": 3, "line": 1}},
     "add_breakpoint: 'path': input should be a valid string, not 3"),
    ({"type": "request", "id": 9, "command": "launch", "args": []}, "\"args\" must be an object"),
    ({"type": "request", "id": 10, "v": 2, "command": "sessions"}, "Protocol version 2"),
])
def test_a_malformed_request_gets_an_error_and_the_comm_stays_open(kernel, data, message):
    front = open_frontend(kernel)
    request_id = data.get("id") if isinstance(data, dict) else None
    answer = front.send(data, request_id)
    assert answer["ok"] is False and message in answer["error"]["message"]
    assert answer["error"]["hint"]
    assert front.request("sessions")["ok"]  # still open, still answering


def test_a_requests_message_steps_several_sessions_and_answers_each(kernel, write):
    app = write("app.py", APP)
    front = open_frontend(kernel)
    front.request("setBreakpoint", kind="line", path=app, line=line_of(app, "# accumulate"))
    for _ in range(3):
        front.request("launch", program=app)
    pump(kernel, [front], lambda: len([e for e in front.events if e["event"] == "stopped"]) == 3, 30)
    stopped = len(front.events)
    requests = [{"type": "request", "v": 1, "id": f"r{n}", "command": "next", "session": f"s{n}", "args": {}}
                for n in (1, 2, 3)]
    requests.append({"type": "request", "v": 1, "id": "r4", "command": "next", "session": "s9"})
    message = {"type": "requests", "v": 1, "requests": requests}
    jsonschema.Draft202012Validator(SCHEMAS["Requests"], registry=REGISTRY).validate(message)
    front.kernel.comm_send(front.comm_id, message)
    pump(kernel, [front], lambda: {"r1", "r2", "r3", "r4"} <= set(front.responses) and len(
        [e for e in front.events[stopped:] if e["event"] == "stopped"]) == 3, 30)
    assert [front.responses[f"r{n}"]["ok"] for n in (1, 2, 3, 4)] == [True, True, True, False]
    assert "s9" in front.responses["r4"]["error"]["message"]
    assert {e["session"] for e in front.events[stopped:] if e["event"] == "stopped"} == {"s1", "s2", "s3"}
    for bad in ({"type": "requests", "v": 1, "requests": []}, {"type": "requests", "v": 1, "requests": "next"},
                {"type": "requests", "v": 1, "requests": [{"type": "request"}] * 101}):
        answer = front.send(bad, None)
        assert answer["ok"] is False and "1 to 100 requests" in answer["error"]["message"]
    assert front.request("sessions")["ok"]


def test_every_open_comm_gets_every_event_and_since_replays(kernel, write):
    app = write("app.py", APP)
    first, second = open_frontend(kernel), open_frontend(kernel)
    first.request("setBreakpoint", kind="line", path=app, line=line_of(app, "# accumulate"))
    first.request("launch", program=app)
    pump(kernel, [first, second], lambda: any(e["event"] == "stopped" for e in second.events) and
         any(e["event"] == "stopped" for e in first.events), 20)
    assert [e["seq"] for e in first.events if e["event"] == "stopped"] == \
           [e["seq"] for e in second.events if e["event"] == "stopped"]
    late = open_frontend(kernel, {"since": 0})
    assert late.hello["sessions"][0]["state"] == "paused"
    pump(kernel, [late], lambda: any(e["event"] == "stopped" for e in late.events), 10)
    first.request("threads", "s1")  # more events may follow the replay: each once, in order
    seqs = [e["seq"] for e in late.events]
    assert seqs == sorted(set(seqs)) and seqs[0] == 1
    kernel.comm_close(second.comm_id)
    first.request("terminate", "s1")


def test_a_flood_of_output_stays_bounded_and_reports_drops(kernel, write):
    flood = write("flood.py", "import sys\nwhile True:\n    sys.stdout.write('y' * 100 + '\\n')\n")
    kernel.magic("import jupyter_debug_relay.kernel.comm as c; c.MAX_BACKLOG_BYTES = 20_000")  # a slow frontend
    front = open_frontend(kernel)
    front.request("launch", program=flood)
    received = messages = 0
    started = time.monotonic()
    deadline = started + 15  # on a busy machine the flood takes longer to pile up
    while time.monotonic() < deadline and not (
            received > 1000 and any(e["event"] == "dropped" for e in front.events) and time.monotonic() > started + 4):
        try:
            _, data = kernel.comm_data(timeout=0.5)
        except queue.Empty:
            continue
        messages += 1
        check(data)
        for event in data["events"] if data["type"] == "batch" else [data]:
            front.events.append(event)
            received += event["body"].get("count", 1) if event["event"] == "output" else 0
    assert received > 1000
    dropped = [e for e in front.events if e["event"] == "dropped"]
    assert dropped and all(e["body"]["events"] >= 1 for e in dropped)
    assert not any(e["event"] in ("exited", "terminated") for e in front.events)
    assert messages / (time.monotonic() - started) < 200  # batched: the frontend is not sent a message per line
    assert max(len(json.dumps(e)) for e in front.events) < 2 << 20
    assert kernel.magic("%dbg status").text == "s1 (debugpy, flood.py): running"  # the latest session
    answer = front.request("terminate", "s1")
    assert answer["ok"]
