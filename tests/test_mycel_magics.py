"""Mycel's own verbs through the magics in a real kernel (inspect, ready, consume, timeline), a flow's end ending a
step, the Mycel small ones (-32000, a reconnect with a thread still paused, CEL conditions, stage and flow errors),
and the same verbs over HTTP."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from jupyter_debug_relay.engine.breakpoints import BreakpointStore
from jupyter_debug_relay.examples.mycel_demo import RuntimeThread
from jupyter_debug_relay.source import cel as cel_source
from tests.peers.mycel_peer import FaultyRuntime
from tests.server_fixtures import live_server

NO_AT = {"name": "Nat", "email": "no-at-sign"}  # passes validation; the transform's rule 2 (the domain) fails


def test_inspect_ready_consume_and_timeline_through_the_magics(kernel, peer):
    assert kernel.magic(f"%dbg connect mycel {peer.url} --name pipe").text == "pipe: running"
    flows = kernel.magic("%dbg inspect").text.splitlines()
    assert "create_user: api POST /users -> postgres users (4 rules)" in flows, flows
    assert "process_order: orders_queue orders -> postgres orders (5 rules, steps)" in flows, flows
    flow = kernel.magic("%dbg inspect flow create_user").text.splitlines()
    assert flow[1] == "  rule 0: email = lower(trim(input.email))", flow
    assert "orders_queue: type rabbitmq, driver amqp" in kernel.magic("%dbg inspect connectors").text
    assert "user: email string, name string, age number?" in kernel.magic("%dbg inspect types").text
    assert kernel.magic("%dbg inspect transforms").text == "normalize_email: email = lower(trim(input.email))"
    assert kernel.magic("%dbg inspect flow").text.startswith("error invalid_request: inspect('flow') needs")
    assert kernel.magic("%dbg inspect rules").text.startswith("error invalid_request: inspect: 'what': ")
    ready = kernel.magic("%dbg ready")
    assert "orders_queue  rabbitmq  orders  manual consume: `%debug_session consume orders_queue`" in ready.text
    assert kernel.run("[s['connector'] for s in _.sources if s['manualConsume']]").text == "['orders_queue']"

    assert kernel.magic("%bp stage process_order transform").text.startswith("breakpoint 1 at ")
    consumed = kernel.magic("%dbg consume orders_queue").text
    assert consumed.startswith("consumed one message from orders_queue; paused at flow:process_order:"), consumed
    assert consumed.endswith("in transform() — breakpoint 1 [thread 1]"), consumed
    timeline = kernel.magic("%dbg timeline").text.splitlines()
    assert 'flowStart input {"orderId": "ORD-1"' in timeline[0], timeline
    assert timeline[-1].endswith("stopped transform (breakpoint)"), timeline
    assert kernel.magic("%dbg timeline 1").text.splitlines() == timeline
    assert kernel.magic("%dbg timeline 99").text.startswith("error invalid_request: No Mycel thread 99")

    ended = kernel.magic("%dbg continue").text  # the flow's end ends the wait: no 10 s "still running"
    assert ended.startswith('flow process_order ended [thread 1]: {"id": 1, "orderId": "ORD-1"'), ended
    assert kernel.run("_.thread_end['error'], _.state").text == "(None, 'running')"
    assert "flowEnd -> " in kernel.magic("%dbg timeline 1").text
    assert kernel.magic("%dbg consume nowhere").text.startswith("error invalid_request: ")
    assert kernel.magic("%dbg stop").text == "pipe stopped"


def test_a_failing_flow_ends_the_step_with_its_error_and_the_error_is_output(kernel, peer):
    kernel.magic("%bp stage create_user transform")
    kernel.magic(f"%dbg connect mycel {peer.url}")
    reply = peer.request("create_user", NO_AT)
    assert "in transform() — breakpoint 1" in kernel.magic("%dbg wait").text
    ended = kernel.magic("%dbg continue").text
    assert ended.startswith("flow create_user failed [thread 1]: failed to evaluate expression for 'domain': "), ended
    output = kernel.magic("%dbg output").text.splitlines()
    assert output[0].startswith("[thread 1] create_user: stage transform failed: failed to evaluate "), output
    assert output[1].startswith("[thread 1] create_user: flow failed: "), output
    assert reply.result(10)["error"]
    assert kernel.run("[c.category for c in _.chunks]").text == "['stderr', 'stderr']"
    kernel.magic("%dbg stop")


def test_mycel_verbs_on_another_backend_are_unsupported(kernel):
    ez, program = Path(__file__).parent / "peers" / "ez", Path(__file__).parent / "peers" / "ez_programs" / "calls.ez"
    kernel.magic(f"%dbg connect ez {program} --ez {ez} --name e")
    for line in ("inspect", "ready", "consume q", "timeline 1"):
        text = kernel.magic(f"%dbg {line}").text
        assert text.startswith("error unsupported: Session e (ez) is not a Mycel session"), (line, text)
    kernel.magic("%dbg stop")


def test_session_not_found_fails_the_session_until_a_reconnect(kernel, peer):
    kernel.magic(f"%dbg connect mycel {peer.url} --name pipe")
    peer.runtime.set_fault("error", -32000, "session not found: call debug.attach first")
    assert kernel.magic("%dbg threads").text.startswith("error not_running: ")
    assert kernel.magic("%dbg status").text.endswith("failed: not_running")
    peer.runtime.set_fault(None)
    assert kernel.magic("%dbg reconnect").text == "pipe reconnected: running"
    assert kernel.magic("%dbg threads").text == "no threads"
    kernel.magic("%dbg stop")


class KeepsPaused(FaultyRuntime):
    """A runtime that keeps a thread paused when its client goes, and hands it to the next client that attaches."""

    def _end_session(self, conn: Any) -> None:
        session, conn.session = conn.session, None
        if session is not None:
            self.sessions.pop(session.id, None)
            if conn.forwarder is not None:
                conn.forwarder.cancel()

    async def _attach(self, conn: Any, params: dict[str, Any]) -> dict[str, Any]:
        attached = await super()._attach(conn, params)
        for thread in self.threads.values():
            if thread.session is None or thread.session.id not in self.sessions:
                thread.session = conn.session
        return attached


def test_after_a_reconnect_a_thread_still_paused_is_paused_for_threads_and_steps(relay):
    with RuntimeThread(KeepsPaused()) as runtime:
        relay.breakpoints.add_stage("create_user", "transform")
        session = relay.connect_mycel(runtime.url)
        reply = runtime.request("create_user", {"name": "Ann", "email": "ann@example.com"})
        tid = session.wait_for_stop(10).thread_id
        runtime.call(runtime.runtime.drop_clients())
        deadline = time.monotonic() + 10
        while session.state != "failed":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        session.reconnect()
        assert session.state == "paused" and session.stop.thread_id == tid
        assert [(t.id, t.stopped) for t in session.threads()] == [(tid, True)]
        assert session.evaluate("input.name").value == '"Ann"'
        assert session.continue_(thread_id=tid) is None
        assert reply.result(10)["output"]["email"] == "ann@example.com"
        session.terminate()


def test_a_malformed_cel_condition_is_refused_before_it_is_sent(kernel, peer):
    refused = kernel.magic("%bp stage create_user transform if input.email ==").text
    assert refused.startswith("error invalid_condition: The condition 'input.email ==' is not valid CEL: a syntax "
                              "error at line 1, column"), refused
    assert kernel.magic("%bp list").text == "no breakpoints (add one with `%bp FILE:LINE`)"
    kernel.magic('%bp stage create_user transform if input.name == "Bo"')
    kernel.magic(f"%dbg connect mycel {peer.url}")
    assert kernel.magic("%bp list").text.endswith('if input.name == "Bo" — verified')
    peer.request("create_user", {"name": "Al", "email": "al@example.com"}).result(10)
    peer.request("create_user", {"name": "Bo", "email": "bo@example.com"})
    assert "breakpoint 1" in kernel.magic("%dbg wait").text
    assert kernel.magic("%dbg eval input.name").text == '"Bo"'
    kernel.magic("%dbg stop")


def test_without_cel_python_a_condition_goes_unchecked_and_the_breakpoint_says_so(monkeypatch):
    monkeypatch.setattr(cel_source, "_celpy", lambda: None)
    bp = BreakpointStore().add_stage("create_user", "transform", condition="input.email ==")
    assert bp.message == "its CEL condition was not checked here (cel-python is not installed); the runtime judges it"


def test_line_function_and_output_breakpoints_say_a_mycel_session_has_none(relay, peer, tmp_path):
    app = tmp_path / "app.py"
    app.write_text("def work():\n    return 1\n\nwork()\n")
    line = relay.breakpoints.add(str(app), 2)
    events: list[Any] = []
    relay.subscribe(events.append)
    session = relay.connect_mycel(peer.url)
    assert relay.breakpoints.get(line.id).message == "mycel sessions have no line breakpoints"
    function = relay.breakpoints.add_function("work")  # added while the session is live
    output = relay.breakpoints.add_output("ERROR")
    assert relay.breakpoints.get(function.id).message == "mycel sessions have no function breakpoints"
    assert relay.breakpoints.get(output.id).message == ("mycel sessions cannot pause, so output breakpoints do not "
                                                       "apply to them")
    deadline = time.monotonic() + 10
    while function.id not in (said := {e.body["breakpoint"]["id"]: e.body["breakpoint"]["message"]
                                       for e in list(events) if e.event == "breakpoint"}):
        assert time.monotonic() < deadline, said
        time.sleep(0.02)
    assert said[function.id] == "mycel sessions have no function breakpoints"
    session.terminate()
    launched = relay.launch(str(app))  # a backend that has them takes them
    stop = launched.wait_for_stop(10)
    assert stop.breakpoint_ids in ([line.id], [function.id]) and relay.breakpoints.get(line.id).verified
    assert relay.breakpoints.get(function.id).verified
    launched.terminate()


def test_the_mycel_verbs_and_an_output_breakpoint_over_http(peer):
    with live_server() as (server, api):
        sid = api.post("/sessions", json={}).json()["session"]["id"]
        assert api.post(f"/sessions/{sid}/connect", json={"kind": "mycel", "url": peer.url}).status_code == 200
        flows = api.get(f"/sessions/{sid}/inspect/flows").json()
        assert flows["what"] == "flows" and "process_order" in [f["name"] for f in flows["inspection"]]
        flow = api.get(f"/sessions/{sid}/inspect/flow", params={"name": "get_users"}).json()["inspection"]
        assert flow["to"] == {"connector": "postgres", "operation": "users"}
        sources = api.post(f"/sessions/{sid}/ready", json={}).json()["sources"]
        assert [s["connector"] for s in sources if s["manualConsume"]] == ["orders_queue"]
        api.post(f"/sessions/{sid}/breakpoints", json={"kind": "stage", "flow": "process_order", "stage": "write"})
        consumed = api.post(f"/sessions/{sid}/consume", json={"connector": "orders_queue"}).json()
        assert consumed == {"connector": "orders_queue", "done": False, "thread_id": 1}
        events = api.get(f"/sessions/{sid}/timeline").json()
        assert events["thread_id"] == 1 and events["events"][-1]["event"] == "event.stopped"
        ended = api.post(f"/sessions/{sid}/continue", json={}).json()
        assert ended["stop"] is None and ended["thread_end"]["flow"] == "process_order"
        assert ended["thread_end"]["output"]["orderId"] == "ORD-1" and ended["thread_end"]["error"] is None
        bad = api.post(f"/sessions/{sid}/breakpoints", json={"kind": "output", "pattern": "(oops"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"
        assert "missing ), unterminated subpattern" in bad.json()["error"]["message"]
        good = api.post(f"/sessions/{sid}/breakpoints", json={"kind": "output", "pattern": "^ERROR"}).json()
        assert good["breakpoint"]["kind"] == "output" and good["breakpoint"]["pattern"] == "^ERROR"
        wrong = api.get("/sessions/nope/inspect/flows")
        assert wrong.status_code == 404
