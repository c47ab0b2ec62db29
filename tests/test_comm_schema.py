"""The comm's request schemas are generated from the operations, and docs/comm-protocol.md shows them as they are."""

from __future__ import annotations

import jsonschema
import pytest

from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.kernel.comm import COMMANDS, _operation_of
from jupyter_debug_relay.kernel.comm_schema import DOC, camel, main, render, request_schema
from jupyter_debug_relay.operations import OPERATIONS, parse

VALIDATOR = jsonschema.Draft202012Validator(request_schema())


def request(command: str, **args) -> dict:
    return {"type": "request", "v": 1, "id": 1, "command": command, "session": "s1", "args": args}


def test_the_committed_page_matches_the_models():
    text = DOC.read_text()
    assert render(text) == text, "docs/comm-protocol.md is stale: run python -m jupyter_debug_relay.kernel.comm_schema"
    assert main(["--check", str(DOC)]) == 0


def test_a_changed_page_is_caught_and_rewritten(tmp_path):
    page = tmp_path / "comm.md"
    page.write_text(DOC.read_text().replace("| `next` | – | yes | `timeout`, `threadId`, `wait` |",
                                            "| `next` | – | yes | `timeout` |"))
    assert main(["--check", str(page)]) == 1
    assert main([str(page)]) == 0 and page.read_text() == DOC.read_text()


def test_every_operation_and_v1_alias_is_a_command_with_its_fields_in_camel_case():
    schema = request_schema()
    assert set(schema["properties"]["command"]["enum"]) == set(OPERATIONS) | {
        a for op in OPERATIONS.values() for a in op.aliases}
    for command, (name, _) in COMMANDS.items():
        fields = {camel(f) for f in OPERATIONS[name].params.model_fields} - {"session"}
        assert set(schema["$defs"][command]["properties"]) >= fields, command
    assert schema["$defs"]["stepIn"]["properties"]["threadId"]["anyOf"][0] == {"type": "integer"}
    assert schema["$defs"]["stepIn"]["properties"]["wait"]["default"] is False
    assert schema["$defs"]["step_in"]["properties"]["wait"]["default"] is True


@pytest.mark.parametrize(("command", "args"), [
    ("next", {"threadId": 1, "timeout": 2.5, "wait": True}),
    ("stepIn", {}),
    ("variables", {"ref": 3, "start": 0, "count": 10}),
    ("evaluate", {"expression": "x + 1", "frameId": 2, "context": "watch"}),
    ("setBreakpoint", {"kind": "line", "path": "app.py", "line": 3, "hitCondition": ">=2", "logMessage": "x"}),
    ("setBreakpoint", {"kind": "exception", "mode": "uncaught"}),
    ("connect", {"kind": "dap", "adapter": ["lldb-dap"], "launch": {"program": "a.out"}, "stopOnEntry": True}),
    ("launch", {"program": "app.py", "args": ["-x"], "env": {"A": "1"}, "justMyCode": False}),
])
def test_what_the_schema_accepts_the_operation_accepts(command, args):
    VALIDATOR.validate(request(command, **args))
    name, snake = _operation_of(request(command, **args))
    parse(name, snake)  # no invalid_request


@pytest.mark.parametrize(("command", "args", "field"), [
    ("next", {"threadId": "1"}, "thread_id"),
    ("next", {"timeout": -1}, "timeout"),
    ("variables", {"ref": 0}, "ref"),
    ("variables", {"ref": 1, "count": 0}, "count"),
    ("evaluate", {"expression": ""}, "expression"),
    ("evaluate", {"expression": "x", "context": "shell"}, "context"),
    ("stack", {"levels": 0}, "levels"),
    ("attach", {"port": 70000}, "port"),
    ("removeBreakpoint", {}, "id"),
    ("next", {"bogus": 1}, "bogus"),
])
def test_what_the_schema_refuses_the_operation_refuses_naming_the_field(command, args, field):
    assert not VALIDATOR.is_valid(request(command, **args))
    name, snake = _operation_of(request(command, **args))
    with pytest.raises(RelayError) as caught:
        parse(name, snake)
    assert caught.value.code == "invalid_request" and caught.value.details["field"] == field
