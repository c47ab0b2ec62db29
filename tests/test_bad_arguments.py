"""Bad arguments are refused once, in the operations, as ``invalid_request`` naming the field: API, magics, comm."""

from __future__ import annotations

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.operations import OPERATIONS, parse
from jupyter_debug_relay.protocols.timeouts import MAX_TIMEOUT
from tests.conftest import line_of
from tests.test_kernel_comm import open_frontend

BIG = """
numbers = list(range(1000))
mapping = {i: str(i) for i in range(300)}
print("ready")  # stop
"""


@pytest.fixture
def paused(relay: Relay, write):
    app = write("big.py", BIG)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app)
    session.wait_for_stop(20)
    yield session
    session.terminate()


def refused(call, field: str) -> RelayError:
    with pytest.raises(RelayError) as caught:
        call()
    assert caught.value.code == "invalid_request", caught.value
    assert repr(field) in caught.value.message or f"argument {field!r}" in caught.value.message, caught.value.message
    assert caught.value.details["field"] == field and caught.value.hint
    return caught.value


def ref_of(session, name: str) -> int:
    scope = session.scopes()[0]
    return next(v.ref for v in session.variables(scope.ref, 0, 100).items if v.name == name)


def test_breakpoint_lines_must_be_whole_numbers(relay, write):
    app = write("app.py", "x = 1\ny = 2\nz = 3\n")
    for line in ("3", 3.5, True, 0, -2):
        refused(lambda line=line: relay.breakpoints.add(app, line), "line")
    assert relay.breakpoints.list() == []  # nothing half-made was kept


def test_launch_arguments_must_be_strings(relay, write):
    app = write("app.py", "print('hi')\n")
    error = refused(lambda: relay.launch(app, args=[1, None]), "args.0")
    assert "valid string" in error.message and "not 1" in error.message
    refused(lambda: relay.launch(app, env={"A": 1}), "env.A")
    assert relay.sessions == []  # no session was started


def test_paging_arguments_are_checked(paused):
    ref = ref_of(paused, "numbers")
    refused(lambda: paused.variables(ref, start="a"), "start")
    refused(lambda: paused.variables(ref, start=-1), "start")
    refused(lambda: paused.variables(ref, count=0), "count")
    refused(lambda: paused.variables(ref, count=-5), "count")
    refused(lambda: paused.stack(levels=-3), "levels")
    refused(lambda: paused.next(timeout=-1), "timeout")
    assert paused.state == "paused"  # a refused request touches nothing


def test_a_large_page_is_whole_and_holds_no_placeholder(paused):
    page = paused.variables(ref_of(paused, "numbers"), 0, 500)
    assert page.total == 1000 and len(page.items) == 500
    assert [v.name for v in page.items] == [str(i) for i in range(500)]
    assert [v.value for v in page.items][-3:] == ["497", "498", "499"]
    page = paused.variables(ref_of(paused, "mapping"), 150, 150)
    assert page.total == 300 and [v.value for v in page.items] == [repr(str(i)) for i in range(150, 300)]


def test_waits_are_capped_not_refused():
    _op, params = parse("continue", {"timeout": 1e9})
    assert params.timeout == MAX_TIMEOUT
    _op, params = parse("wait", {"timeout": 0})
    assert params.timeout == 0


def test_every_operation_refuses_an_unknown_argument():
    for name, op in OPERATIONS.items():
        with pytest.raises(RelayError) as caught:
            parse(name, {"no_such_argument": 1})
        assert caught.value.code == "invalid_request" and "no_such_argument" in caught.value.message, name
        assert op.summary and op.returns is not None


def test_magics_name_the_bad_field(kernel, write):
    app = write("app.py", "x = 1\ny = 2\nprint(x + y)  # stop\n")
    kernel.magic(f"%bp {app}:{line_of(app, '# stop')}")
    assert "paused at app.py:3" in kernel.magic(f"%debug_session launch {app}").text
    text = kernel.magic("%debug_session where --levels -3").text
    assert text.startswith("error invalid_request") and "'levels'" in text and "-3" in text
    text = kernel.magic("%debug_session next --timeout -1").text
    assert text.startswith("error invalid_request") and "'timeout'" in text and "still running" not in text
    status = kernel.magic("%debug_session status").text
    assert status.endswith("paused at app.py:3 in <module>() — breakpoint 1 [thread 1]")
    kernel.magic("%debug_session stop")


@pytest.mark.parametrize("bad_id", [{"a": 1}, True, [1], 1.5])
def test_a_request_whose_id_is_not_an_id_is_answered_with_a_null_id(kernel, bad_id):
    front = open_frontend(kernel)
    answer = front.send({"type": "request", "id": bad_id, "command": "sessions"}, None)
    assert answer["id"] is None and answer["ok"] is False and "needs an \"id\"" in answer["error"]["message"]


@pytest.mark.parametrize(("args", "field"), [
    ({"kind": "line", "path": "/tmp/x.py", "line": "3"}, "'line'"),
    ({"kind": "line", "path": "/tmp/x.py", "line": True}, "'line'"),
    ({"kind": "line", "path": "/tmp/x.py", "line": 3.5}, "'line'"),
])
def test_comm_breakpoint_lines_are_not_coerced(kernel, args, field):
    front = open_frontend(kernel)
    answer = front.send({"type": "request", "v": 1, "id": 1, "command": "setBreakpoint", "args": args}, 1)
    assert answer["ok"] is False and answer["error"]["code"] == "invalid_request"
    assert field in answer["error"]["message"]
    assert front.request("breakpoints")["body"]["breakpoints"] == []

