"""Mycel sessions through the Relay facade: the same session model as debugpy."""

from __future__ import annotations

import pytest

from jupyter_debug_relay import RelayError
from tests.peers.mycel_peer import start_peer


@pytest.fixture
def peer():
    runtime = start_peer()
    yield runtime
    runtime.stop()


def test_mycel_session_stops_at_a_stage_breakpoint_and_inspects_it(relay, peer):
    bp = relay.breakpoints.add_stage("create_user", "transform")
    session = relay.connect_mycel(peer.url, name="pipeline")
    assert session.backend == "mycel"
    assert "create_user" in str(session.inspect("flows"))
    reply = peer.request("create_user", {"name": "Alice", "email": " ALICE@EXAMPLE.COM "})
    stop = session.wait_for_stop(10)
    assert stop.reason == "breakpoint" and stop.breakpoint_ids == [bp.id]
    assert (stop.frame.name, stop.frame.path) == ("transform", "flow:create_user")
    scopes = {s.name: s.ref for s in session.scopes()}
    values = {v.name: v.value for v in session.variables(scopes["input"]).items}
    assert values["name"] == '"Alice"'
    assert session.evaluate("input.name").value == '"Alice"'
    events = [e["event"] for e in session.timeline(stop.thread_id)]
    assert any("stageEnter" in name for name in events)
    relay.breakpoints.remove(bp.id)
    session.continue_(wait=False)
    assert reply.result(10)
    session.terminate()
    assert session.state == "terminated"


def test_unreachable_mycel_url_is_connection_failed(relay):
    with pytest.raises(RelayError) as info:
        relay.connect_mycel("ws://127.0.0.1:9/debug")
    assert info.value.code == "connection_failed" and "127.0.0.1:9" in info.value.message
