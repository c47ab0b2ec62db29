"""EZ sessions through the Relay facade: the same session model as debugpy, against the stand-in and the real `ez`."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from tests.peers.ez_real import BOTH

PROGRAMS = Path(__file__).resolve().parent / "peers" / "ez_programs"
CALLS = str(PROGRAMS / "calls.ez")


@pytest.mark.parametrize("ez", BOTH)
def test_ez_session_breaks_inspects_steps_and_ends_with_its_exit_code(relay, ez):
    in_add = line_of(CALLS, "temp total")
    bp = relay.breakpoints.add(CALLS, in_add)
    session = relay.connect_ez(CALLS, ez=ez, name="ez")
    assert session.backend == "ez"
    entry = session.wait_for_stop(10)
    assert (entry.reason, entry.frame.line) == ("entry", line_of(CALLS, "temp name"))
    stop = session.continue_()
    assert stop.reason == "breakpoint" and stop.frame.line == in_add
    assert relay.breakpoints.get(bp.id).verified
    assert [f.name for f in session.stack()] == ["add", "twice", "main"]
    names = {v.name: v.value for v in session.variables(session.scopes()[0].ref).items}
    assert names == {"a": "10", "b": "10"}
    with pytest.raises(RelayError) as info:
        session.evaluate("a + b")
    assert info.value.code == "unsupported"
    relay.breakpoints.remove(bp.id)
    assert session.continue_() is None
    assert session.state == "terminated" and session.exit_code == 0
    assert "y is 20" in session.output().text and "done Ada" in session.output().text


@pytest.mark.parametrize("ez", BOTH)
def test_a_function_breakpoint_is_refused_on_the_breakpoint(relay, ez):
    bp = relay.breakpoints.add_function("add")
    session = relay.connect_ez(CALLS, ez=ez)
    session.wait_for_stop(10)
    stored = relay.breakpoints.get(bp.id)
    assert stored.status == "refused" and "no function breakpoints" in stored.message
    session.terminate()


def test_missing_ez_binary_is_connection_failed(relay):
    with pytest.raises(RelayError) as info:
        relay.connect_ez(CALLS, ez="/no/such/ez")
    assert info.value.code == "connection_failed" and "/no/such/ez" in info.value.message


@pytest.mark.parametrize("ez", BOTH)
def test_an_ez_program_cannot_be_paused_and_terminate_is_the_users_stop(relay, ez):
    session = relay.connect_ez(str(PROGRAMS / "forever.ez"), ez=ez)
    session.wait_for_stop(10)
    session.continue_(wait=False)
    with pytest.raises(RelayError) as info:
        session.pause()
    assert info.value.code == "unsupported" and "ez does not support pause" in info.value.message
    assert session.state == "running"
    session.terminate()
    assert session.state == "terminated" and session.exit_code is None  # not -15: the user stopped it

