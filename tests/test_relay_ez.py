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
