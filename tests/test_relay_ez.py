"""EZ sessions through the Relay facade: the same session model as debugpy."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_debug_relay import RelayError

PEERS = Path(__file__).resolve().parent / "peers"
EZ = str(PEERS / "ez")
CALLS = str(PEERS / "ez_programs" / "calls.ez")


def test_ez_session_breaks_inspects_steps_and_ends_with_its_exit_code(relay):
    bp = relay.breakpoints.add(CALLS, 3)
    session = relay.connect_ez(CALLS, ez=EZ, name="ez")
    assert session.backend == "ez"
    assert session.wait_for_stop(10).reason == "entry"
    stop = session.continue_()
    assert stop.reason == "breakpoint" and stop.frame.line == 3
    assert relay.breakpoints.get(bp.id).verified
    assert [f.name for f in session.stack()][:2] == ["add", "twice"]
    names = {v.name: v.value for v in session.variables(session.scopes()[0].ref).items}
    assert names["a"] == "10" and names["b"] == "10"
    assert session.evaluate("a + b").value == "20"
    relay.breakpoints.remove(bp.id)
    with pytest.raises(RelayError) as info:
        session.continue_()
    assert info.value.code == "target_exited"
    assert session.exit_code == 0
    assert "y is 20" in session.output().text and "done Ada" in session.output().text


def test_missing_ez_binary_is_connection_failed(relay):
    with pytest.raises(RelayError) as info:
        relay.connect_ez(CALLS, ez="/no/such/ez")
    assert info.value.code == "connection_failed" and "/no/such/ez" in info.value.message


def test_loose_answers_leave_the_session_usable(relay):
    session = relay.connect_ez(CALLS, ez=EZ)
    entry = session.wait_for_stop(10)  # the peer stops on entry before it answers `initialize`
    assert [(f.name, f.line) for f in session.stack()] == [("main", entry.frame.line)]  # it lists no frame
    session.next()
    with pytest.raises(RelayError) as info:
        session.evaluate("nope + 1")  # answered by an `error` event that names no command
    assert info.value.code == "invalid_request" and "undefined: nope" in info.value.message
    assert session.state == "paused" and session.evaluate("x * 2").value == "20"
    session.terminate()
    assert session.state == "terminated"


def test_an_ez_program_cannot_be_paused(relay):
    session = relay.connect_ez(str(PEERS / "ez_programs" / "forever.ez"), ez=EZ)
    session.wait_for_stop(10)
    session.continue_(wait=False)
    with pytest.raises(RelayError) as info:
        session.pause()
    assert info.value.code == "unsupported" and "ez does not support pause" in info.value.message
    assert session.state == "running"
    session.terminate()
    assert session.state == "terminated"
