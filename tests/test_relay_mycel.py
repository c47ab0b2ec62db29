"""Mycel sessions through the Relay facade: the same session model as debugpy."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_debug_relay import RelayError
from tests.conftest import wait_until

PEERS = Path(__file__).resolve().parent / "peers"
EZ, EZ_PROGRAM = str(PEERS / "ez"), str(PEERS / "ez_programs" / "forever.ez")


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


def test_many_threads_paused_at_once_are_each_driven_by_their_id(relay, peer):
    relay.breakpoints.add_stage("create_user", "transform")
    session = relay.connect_mycel(peer.url)
    events = []
    session.subscribe(events.append)
    names = ["Ann", "Ben", "Cid", "Dee", "Eve"]
    replies = {name: peer.request("create_user", {"email": f"{name}@example.com", "name": name}) for name in names}
    wait_until(lambda: sum(t.stopped for t in session.threads()) == len(names))
    owner = {}
    for thread in session.threads():
        frame = session.stack(thread.id)[0]
        assert (frame.name, frame.path) == ("transform", "flow:create_user")
        owner[thread.id] = session.evaluate("input.name", frame_id=frame.id).value.strip('"')
    assert sorted(owner.values()) == names

    by_name = {name: tid for tid, name in owner.items()}
    write = session.next(thread_id=by_name["Cid"])
    assert (write.thread_id, write.frame.name) == (by_name["Cid"], "write")
    assert session.evaluate("output.email").value == '"cid@example.com"'
    paused = set(names)
    for name in ["Eve", "Cid", "Ann", "Dee"]:
        paused.remove(name)
        still = session.continue_(thread_id=by_name[name])  # shows a thread that is still paused
        assert replies[name].result(10)["output"]["name"] == name
        assert owner[still.thread_id] in paused and session.state == "paused"
    assert session.continue_(thread_id=by_name["Ben"], wait=False) is None
    assert replies["Ben"].result(10)["output"]["name"] == "Ben"
    wait_until(lambda: session.state == "running")
    wait_until(lambda: sum(e.body["name"] == "event.flowEnd" for e in events if e.event == "raw") == len(names))
    assert {e.body["protocol"] for e in events if e.event == "raw"} == {"mycel"}


def test_a_dropped_socket_fails_the_session_and_reconnect_restores_it(relay, peer):
    transform = relay.breakpoints.add_stage("create_user", "transform")
    session = relay.connect_mycel(peer.url, name="pipeline")
    events = []
    session.subscribe(events.append)
    alice = peer.request("create_user", {"name": "Alice", "email": "alice@example.com"})
    first = session.wait_for_stop(10)

    peer.call(peer.runtime.drop_clients())
    wait_until(lambda: session.state == "failed")
    error = session.info().error
    assert error["code"] == "connection_failed" and peer.url in error["message"]
    wait_until(lambda: any(e.event == "error" for e in events))
    with pytest.raises(RelayError) as lost:
        session.threads()
    assert lost.value.code == "connection_failed"
    # the runtime let the paused thread go on, and serves requests while no debugger is attached
    assert alice.result(10)["output"]["email"] == "alice@example.com"
    assert peer.request("create_user", {"name": "Carol", "email": "carol@example.com"}).result(10)["error"] == ""

    write = relay.breakpoints.add_stage("create_user", "write")  # added while the socket was down
    session.reconnect()
    assert session.state == "running" and session.info().error is None
    assert relay.breakpoints.get(write.id).verified
    bob = peer.request("create_user", {"name": "Bob", "email": "bob@example.com"})
    stop = session.wait_for_stop(10)
    assert stop.breakpoint_ids == [transform.id] and stop.thread_id != first.thread_id
    stop = session.continue_()
    assert (stop.breakpoint_ids, stop.frame.name) == ([write.id], "write")
    session.continue_(wait=False)
    assert bob.result(10)["output"]["name"] == "Bob"
    assert session.consume("orders_queue")["done"]  # the runtime was told `ready` again
    states = [e.body["state"] for e in events if e.event == "session"]
    assert states[states.index("failed"):][:3] == ["failed", "launching", "running"]

    peer.stop()
    wait_until(lambda: session.state == "failed")
    with pytest.raises(RelayError) as refused:
        session.reconnect()
    assert refused.value.code == "connection_failed" and peer.url in refused.value.message
    assert session.state == "failed"


def test_reconnect_is_for_mycel_sessions_only(relay):
    session = relay.connect_ez(EZ_PROGRAM, ez=EZ)
    assert not hasattr(session, "reconnect")  # the handle of an EZ session has no such verb
    with pytest.raises(RelayError) as info:
        relay.operations.call("reconnect", {"session": session.id})  # nor does the operation, from any front end
    assert info.value.code == "unsupported" and "ez" in info.value.message
    session.terminate()
