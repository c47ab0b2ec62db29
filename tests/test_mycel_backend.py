"""The Mycel backend against the Mycel test peer: stops, stepping, threads, inspection and broken peers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import select
import socket
import subprocess
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_debug_relay.backends.mycel.backend import MycelBackend
from jupyter_debug_relay.backends.mycel.messages import PIPELINE_STAGES
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.model import Breakpoint, BreakpointResult, StopInfo
from tests.backend_events import Recorder
from tests.peers.mycel_peer import RuntimeThread, start_peer

ROOT = Path(__file__).resolve().parent.parent
ALICE = {"email": " ALICE@EXAMPLE.COM ", "name": "Alice"}
BOB = {"email": "bob@example.com", "name": "Bob"}
WAIT = 5.0


def MycelEvents() -> Recorder:  # noqa: N802 - it makes a Recorder, as a class would
    """What a Mycel backend reports: never an exit, a child or a breakpoint result of its own."""
    return Recorder({"exited": "a Mycel runtime outlives its debug sessions", "child": "Mycel has no child processes",
                     "breakpoint": "the Mycel backend returns breakpoint results instead"})




def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run one test coroutine with an overall timeout."""
    return asyncio.run(asyncio.wait_for(coro, 30))


def stage_bp(
    bp_id: int,
    stage: str,
    rule_index: int | None = None,
    condition: str | None = None,
    flow: str = "create_user",
) -> Breakpoint:
    return Breakpoint(
        id=bp_id, kind="stage", flow=flow, stage=stage, rule_index=rule_index, condition=condition
    )


async def finished(future: concurrent.futures.Future[dict[str, Any]]) -> dict[str, Any]:
    """The result of a request sent with ``peer.request``."""
    return await asyncio.wait_for(asyncio.wrap_future(future), WAIT)


@pytest.fixture
def peer() -> Iterator[RuntimeThread]:
    runtime = start_peer(oversized_bytes=256 * 1024)
    yield runtime
    runtime.stop()


async def connected(url: str, *bps: Breakpoint, **options: Any) -> tuple[MycelBackend, Recorder]:
    events = MycelEvents()
    backend = MycelBackend(events, url, **options)
    await backend.start(list(bps), "none")
    return backend, events


async def paused_at(
    peer: RuntimeThread, *bps: Breakpoint
) -> tuple[MycelBackend, Recorder, concurrent.futures.Future[dict[str, Any]], StopInfo]:
    """Connect with ``bps``, send Alice through create_user and wait for the first stop."""
    backend, events = await connected(peer.url, *bps)
    request = peer.request("create_user", ALICE)
    return backend, events, request, await events.next_stop()


def test_stage_breakpoint_stop_frame_scopes_and_evaluate(peer):
    async def main():
        backend, events, request, stop = await paused_at(peer, stage_bp(7, "transform"))
        assert backend.breakpoint_results == {7: BreakpointResult(verified=True)}
        assert backend.flows == ["create_user", "get_users", "process_order", "record_reading"]
        assert (stop.reason, stop.breakpoint_ids, stop.stopped_threads) == (
            "breakpoint",
            [7],
            [stop.thread_id],
        )
        frame = stop.frame
        assert (frame.name, frame.path, frame.line, frame.column) == (
            "transform",
            "flow:create_user",
            PIPELINE_STAGES.index("transform") + 1,
            1,
        )
        assert "create_user paused at transform" in stop.description
        assert await backend.stack(stop.thread_id, 0, None) == ([frame], 1)
        assert backend.paused_threads() == [stop.thread_id]

        scopes = {s.name: s.ref for s in await backend.scopes(frame.id)}
        assert list(scopes) == ["input", "output", "enriched"]
        page = await backend.variables(scopes["input"], 0, 100)
        values = {v.name: (v.value, v.type, v.evaluate_name) for v in page.items}
        assert page.total == 2
        assert values["email"] == ('" ALICE@EXAMPLE.COM "', "string", "input.email")
        assert values["name"] == ('"Alice"', "string", "input.name")
        enriched = (await backend.variables(scopes["enriched"], 0, 10)).items
        assert [(v.name, v.value, v.type) for v in enriched] == [("existing_user", "null", "null_type")]
        assert (await backend.variables(scopes["input"], 1, 5)).items[0].name == "name"

        value = await backend.evaluate("lower(trim(input.email))", frame.id, "repl")
        assert (value.value, value.type) == ('"alice@example.com"', "string")
        whole = await backend.evaluate("input", None, "watch")
        assert (whole.type, whole.named) == ("map", 2) and whole.ref
        assert [v.name for v in (await backend.variables(whole.ref, 0, 10)).items] == ["email", "name"]
        assert (
            await backend.evaluate('size(input.name) > 3 ? "long" : "short"', None, "repl")
        ).value == '"long"'
        with pytest.raises(RelayError) as bad:
            await backend.evaluate("input.nope", frame.id, "repl")
        assert bad.value.code == "evaluation_failed" and "no such key" in bad.value.message
        with pytest.raises(RelayError) as python:
            await backend.evaluate('__import__("os").getcwd()', frame.id, "repl")
        assert "undeclared function" in python.value.message

        await backend.resume("continue", stop.thread_id)
        result = await finished(request)
        assert result["error"] == ""
        assert result["output"] == {
            "id": 2,
            "email": "alice@example.com",
            "name": "Alice",
            "domain": "example.com",
            "is_new": True,
        }
        await events.until(lambda: (stop.thread_id, "exited") in events.threads)
        assert events.continued == [stop.thread_id]
        assert (stop.thread_id, "started") in events.threads
        assert backend.paused_threads() == []
        with pytest.raises(RelayError) as gone:
            await backend.scopes(frame.id)
        assert gone.value.code == "not_paused"
        await backend.close()

    run(main())


def test_step_into_rules_then_next_stage(peer):
    async def main():
        backend, events, request, stop = await paused_at(peer, stage_bp(1, "transform"))
        await backend.resume("stepIn", stop.thread_id)
        rule0 = await events.next_stop()
        assert (rule0.reason, rule0.breakpoint_ids, rule0.thread_id) == ("step", [], stop.thread_id)
        assert (rule0.frame.name, rule0.frame.column) == ("transform rule 0 (email)", 1)
        assert "email = lower(trim(input.email))" in rule0.description
        scopes = {s.name: s.ref for s in await backend.scopes(rule0.frame.id)}
        assert list(scopes) == ["input", "output", "enriched", "rule"]
        rule = {v.name: v.value for v in (await backend.variables(scopes["rule"], 0, 10)).items}
        assert rule == {"index": "0", "target": '"email"', "expression": '"lower(trim(input.email))"'}
        assert (await backend.evaluate("output", None, "repl")).value == "{}"

        await backend.resume("stepIn", None)
        rule1 = await events.next_stop()
        assert (rule1.frame.name, rule1.frame.column) == ("transform rule 1 (name)", 2)
        output = await backend.evaluate("output", rule1.frame.id, "repl")
        assert output.value == '{"email": "alice@example.com"}'

        await backend.resume("next", rule1.thread_id)
        write = await events.next_stop()
        assert (write.reason, write.frame.name, write.frame.line) == (
            "step",
            "write",
            PIPELINE_STAGES.index("write") + 1,
        )
        assert (await backend.evaluate("output.domain", None, "repl")).value == '"example.com"'
        await backend.resume("stepOut", None)
        result = await finished(request)
        assert result["output"]["id"] == 2
        assert not events.untaken()
        await backend.close()

    run(main())


def test_rule_breakpoints_with_a_condition(peer):
    async def main():
        bps = [
            stage_bp(1, "transform", rule_index=1),
            stage_bp(2, "transform", 3, condition='input.name == "Bob"'),
        ]
        backend, events = await connected(peer.url, *bps)
        alice = peer.request("create_user", ALICE)
        stop = await events.next_stop()
        assert (stop.reason, stop.breakpoint_ids, stop.frame.name) == (
            "breakpoint",
            [1],
            "transform rule 1 (name)",
        )
        await backend.resume("continue", None)
        assert (await finished(alice))["output"]["is_new"] is True

        bob = peer.request("create_user", BOB)
        first = await events.next_stop()
        assert first.breakpoint_ids == [1]
        await backend.resume("continue", None)
        second = await events.next_stop()
        assert (second.breakpoint_ids, second.frame.column) == ([2], 4)
        assert (await backend.evaluate("enriched.existing_user.name", None, "repl")).value == '"Bob"'
        await backend.resume("continue", second.thread_id)
        assert (await finished(bob))["output"]["is_new"] is False
        await backend.close()

    run(main())


def test_two_threads_paused_at_once_each_controlled_by_id(peer):
    async def main():
        backend, events, alice, first = await paused_at(peer, stage_bp(1, "transform"))
        bob = peer.request("create_user", {"email": "dave@example.com", "name": "Dave"})
        second = await events.next_stop()
        assert first.thread_id != second.thread_id
        threads = await backend.threads()
        assert sorted((t.id, t.stopped) for t in threads) == sorted(
            [(first.thread_id, True), (second.thread_id, True)]
        )
        assert {t.name.split()[0] for t in threads} == {"create_user"}
        assert backend.paused_threads() == [first.thread_id, second.thread_id]
        assert (await backend.evaluate("input.name", first.frame.id, "repl")).value == '"Alice"'
        assert (await backend.evaluate("input.name", second.frame.id, "repl")).value == '"Dave"'

        await backend.resume("continue", second.thread_id)
        assert (await finished(bob))["output"]["name"] == "Dave"
        again = await events.next_stop()
        assert (again.thread_id, again.frame) == (first.thread_id, first.frame)
        assert not alice.done()

        await backend.resume("next", first.thread_id)
        write = await events.next_stop()
        assert (write.thread_id, write.frame.name) == (first.thread_id, "write")
        with pytest.raises(RelayError) as not_paused:
            await backend.resume("continue", second.thread_id)
        assert not_paused.value.code == "not_paused"
        await backend.resume("continue", first.thread_id)
        assert (await finished(alice))["output"]["name"] == "Alice"
        await backend.close()

    run(main())


def test_inspect_ready_and_errors_of_the_runtime(peer):
    async def main():
        backend, _events = await connected(peer.url)
        flows = await backend.inspect("flows")
        assert [f["name"] for f in flows] == backend.flows
        flow = await backend.inspect("flow", "create_user")
        assert flow["transform"]["email"] == "lower(trim(input.email))"
        assert flow["from"] == {"connector": "api", "operation": "POST /users"}
        assert flow["validate"] == {"input": "user", "output": ""}
        connectors = {c["name"]: c for c in await backend.inspect("connectors")}
        assert connectors["postgres"] == {"name": "postgres", "type": "database", "driver": "postgres"}
        types = {t["name"]: t["fields"] for t in await backend.inspect("types")}
        assert {"name": "email", "type": "string", "required": True} in types["user"]
        assert await backend.inspect("transforms") == [
            {"name": "normalize_email", "mappings": {"email": "lower(trim(input.email))"}}
        ]
        with pytest.raises(RelayError) as missing:
            await backend.inspect("flow", "nope")
        assert (missing.value.code, missing.value.details["rpc_code"]) == ("invalid_request", -32002)
        for bad in (("bogus", None), ("flow", None)):
            with pytest.raises(RelayError) as wrong:
                await backend.inspect(*bad)
            assert wrong.value.code == "invalid_request"

        sources = {s["connector"]: s for s in await backend.ready()}
        assert sources["orders_queue"] == {
            "connector": "orders_queue",
            "type": "rabbitmq",
            "source": "orders",
            "manualConsume": True,
        }
        assert sources["sensors"]["manualConsume"] is False
        assert backend.capabilities["sources"] == list(sources.values())

        with pytest.raises(RelayError) as unknown:
            await backend.custom_request("debug.frobnicate", {})
        assert unknown.value.code == "unsupported" and "debug.frobnicate" in unknown.value.message
        started = await backend.custom_request("demo.request", {"flow": "get_users", "input": {}})
        assert started["ok"] is True and started["threadId"].startswith("t")
        with pytest.raises(RelayError) as not_paused:
            await backend.custom_request("debug.variables", {"threadId": "t0000000000000000"})
        assert not_paused.value.code == "invalid_request" and not_paused.value.details["rpc_code"] == -32001
        await backend.close()

    run(main())


def test_consume_pulls_one_queued_message_through_its_flow(peer):
    async def main():
        backend, events = await connected(peer.url, stage_bp(1, "transform", flow="process_order"))
        pulled = await backend.consume("orders_queue")
        stop = await events.next_stop()
        assert pulled == {"connector": "orders_queue", "done": False, "thread_id": stop.thread_id}
        scopes = {s.name: s.ref for s in await backend.scopes(stop.frame.id)}
        assert list(scopes) == ["input", "output", "steps"]
        steps = (await backend.variables(scopes["steps"], 0, 10)).items
        assert steps[0].name == "customer" and steps[0].named == 2
        count = (await backend.variables(steps[0].ref, 0, 10)).items[0]
        assert (count.name, count.value, count.evaluate_name) == ("count", "1", "steps.customer.count")
        assert (await backend.evaluate("input.orderId", None, "repl")).value == '"ORD-1"'
        await backend.resume("continue", None)
        await events.until(
            lambda: ("mycel", "debug.consume", {"connector": "orders_queue", "ok": True}) in events.raw
        )

        await backend.set_stage_breakpoints([])
        assert (await backend.consume("orders_queue"))["done"] is True
        for connector, text in (("sensors", "does not support manual consume"), ("nope", "not found")):
            with pytest.raises(RelayError) as refused:
                await backend.consume(connector)
            assert text in refused.value.message
        with pytest.raises(RelayError):
            await backend.consume("")
        await backend.close()

    run(main())


def test_raw_events_and_the_timeline_of_a_thread(peer):
    async def main():
        backend, events, request, stop = await paused_at(peer, stage_bp(1, "write"))
        await backend.resume("continue", stop.thread_id)
        await finished(request)
        await events.until(lambda: (stop.thread_id, "exited") in events.threads)
        names = [name for protocol, name, _ in events.raw if protocol == "mycel"]
        for name in (
            "event.flowStart",
            "event.stageEnter",
            "event.stageExit",
            "event.ruleEval",
            "event.stopped",
            "event.continued",
            "event.flowEnd",
        ):
            assert name in names
        timeline = backend.timeline(stop.thread_id)
        kinds = [entry["event"] for entry in timeline]
        assert kinds[0] == "event.flowStart" and kinds[-1] == "event.flowEnd"
        assert kinds.count("event.ruleEval") == 4
        assert kinds.index("event.stopped") < kinds.index("event.continued")
        rules = [e["body"] for e in timeline if e["event"] == "event.ruleEval"]
        assert [(r["ruleIndex"], r["target"], r["result"]) for r in rules][:2] == [
            (0, "email", "alice@example.com"),
            (1, "name", "Alice"),
        ]
        exits = {e["body"]["stage"]: e["body"] for e in timeline if e["event"] == "event.stageExit"}
        assert list(exits) == ["sanitize", "validate_input", "enrich", "transform", "write"]
        assert exits["write"]["output"]["id"] == 2 and exits["write"]["error"] == ""
        assert all(isinstance(e["ts"], float) for e in timeline)
        with pytest.raises(RelayError):
            backend.timeline(999)
        await backend.close()

    run(main())


def test_breakpoint_results_and_replacement(peer):
    async def main():
        backend, events = await connected(peer.url)
        results = await backend.set_stage_breakpoints(
            [
                stage_bp(1, "transform", flow="nope"),
                stage_bp(2, "transmogrify"),
                stage_bp(3, "write", rule_index=0),
                stage_bp(4, "validate_input", condition='input.name == "Zed"'),
                stage_bp(5, "enrich"),
            ]
        )
        assert [r.verified for r in results] == [False, False, False, True, True]
        assert "no flow 'nope'" in results[0].message
        assert "not a Mycel stage" in results[1].message
        assert "transform stage only" in results[2].message
        request = peer.request("create_user", ALICE)
        stop = await events.next_stop()
        assert (stop.frame.name, stop.breakpoint_ids) == ("enrich existing_user", [5])
        await backend.set_stage_breakpoints([])
        await backend.resume("continue", None)
        assert (await finished(request))["error"] == ""
        assert (await finished(peer.request("create_user", BOB)))["output"]["is_new"] is False
        assert not events.untaken()
        await backend.close()

    run(main())


def test_a_failing_flow_reports_its_error(peer):
    async def main():
        backend, events = await connected(peer.url)
        result = await finished(peer.request("create_user", {"email": "x@example.com"}))
        assert result["error"] == "validation failed: field 'name' is required"
        await events.until(lambda: any(n == "event.flowEnd" for _, n, _ in events.raw))
        ends = [body for _, name, body in events.raw if name == "event.flowEnd"]
        assert ends[0]["error"] == result["error"]
        await backend.close()

    run(main())


def test_push_connector_messages_run_at_once(peer):
    async def main():
        backend, events = await connected(peer.url, stage_bp(1, "transform", 1, flow="record_reading"))
        started = await backend.custom_request(
            "demo.publish", {"connector": "sensors", "message": {"sensor": "s1", "fahrenheit": 212}}
        )
        stop = await events.next_stop()
        assert backend.timeline(stop.thread_id)[0]["body"]["threadId"] == started["threadId"]
        assert (stop.frame.path, stop.frame.name) == ("flow:record_reading", "transform rule 1 (celsius)")
        celsius = await backend.evaluate("(double(input.fahrenheit) - 32.0) * 5.0 / 9.0", None, "repl")
        assert (celsius.value, celsius.type) == ("100.0", "double")
        await backend.resume("continue", None)
        assert await asyncio.to_thread(peer.publish, "orders_queue", {"orderId": "ORD-9"}) == ""
        await backend.close()

    run(main())


def test_detach_lets_paused_threads_run_on(peer):
    async def main():
        backend, events, request, stop = await paused_at(peer, stage_bp(1, "validate_input"))
        assert stop.frame.name == "validate_input"
        await backend.detach()
        assert (await finished(request))["output"]["email"] == "alice@example.com"
        assert events.lost == []
        with pytest.raises(RelayError) as closed:
            await backend.threads()
        assert closed.value.code == "connection_failed"

    run(main())


def test_unreachable_url_is_connection_failed_naming_the_address():
    async def main():
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        url = f"ws://127.0.0.1:{port}/debug"
        with pytest.raises(RelayError) as refused:
            await MycelBackend(MycelEvents(), url).start([], "none")
        assert refused.value.code == "connection_failed" and url in refused.value.message
        with pytest.raises(RelayError) as scheme:
            await MycelBackend(MycelEvents(), "http://127.0.0.1:9/debug").start([], "none")
        assert scheme.value.code == "invalid_request"

    run(main())


def test_wrong_path_is_connection_failed(peer):
    async def main():
        url = peer.url.replace("/debug", "/nope")
        with pytest.raises(RelayError) as refused:
            await MycelBackend(MycelEvents(), url).start([], "none")
        assert refused.value.code == "connection_failed" and "/nope" in refused.value.message

    run(main())


@pytest.mark.parametrize(
    ("fault", "code", "text"),
    [
        ("garbage", "protocol_error", "not JSON"),
        ("binary", "protocol_error", "binary frame"),
        ("oversized", "protocol_error", "65536 byte cap"),
        ("drop", "connection_failed", "/debug"),
        ("unreadable", "protocol_error", "could not read a request: parse error (-32700)"),
    ],
)
def test_a_broken_peer_fails_the_request_and_is_lost(peer, fault, code, text):
    async def main():
        backend, events = await connected(peer.url, max_frame=64 * 1024)
        peer.runtime.set_fault(fault)
        with pytest.raises(RelayError) as broken:
            await backend.threads()
        assert broken.value.code == code and text in broken.value.message
        await events.until(lambda: events.lost)
        assert [e.code for e in events.lost] == [code]
        with pytest.raises(RelayError) as after:
            await backend.threads()
        assert after.value.code == code
        await backend.close()

    run(main())


@pytest.mark.parametrize(
    ("rpc_code", "message", "code", "hint"),
    [
        (-32700, "parse error", "protocol_error", "relay bug"),
        (-32600, "invalid request", "protocol_error", "relay bug"),
        (-32601, "unknown method: debug.threads", "unsupported", "version"),
        (-32602, "thread not paused", "not_paused", "stage breakpoint"),
        (-32602, "threadId is required", "invalid_request", "arguments"),
        (-32603, "connector \"x\" not found", "invalid_request", "its message says why"),
        (-32001, "thread not found: t1", "invalid_request", "threads()"),
        (-32002, "flow not found", "invalid_request", "inspect('flows')"),
        (-32003, "eval error: no such key", "evaluation_failed", "CEL expression"),
        (-1, "something new", "invalid_request", "its message says why"),
    ],
)
def test_each_mycel_error_code_is_a_relay_error_and_the_link_stays_up(peer, rpc_code, message, code, hint):
    async def main():
        backend, events = await connected(peer.url)
        peer.runtime.set_fault("error", rpc_code, message)
        with pytest.raises(RelayError) as refused:
            await backend.threads()
        error = refused.value
        assert (error.code, error.details["rpc_code"], error.details["method"]) == (code, rpc_code, "debug.threads")
        assert message in error.message and hint in error.hint
        peer.runtime.set_fault(None)
        assert await backend.threads() == [] and events.lost == []
        await backend.close()

    run(main())


def test_a_forgotten_session_is_lost_not_running_until_a_reconnect(peer):
    async def main():
        backend, events = await connected(peer.url)
        peer.runtime.set_fault("error", -32000, "session not found")
        with pytest.raises(RelayError) as refused:
            await backend.threads()
        assert refused.value.code == "not_running" and "session.reconnect()" in refused.value.hint
        assert [e.code for e in events.lost] == ["not_running"]
        peer.runtime.set_fault(None)
        await backend.close()
        await backend.start([], "none")
        assert await backend.threads() == []
        await backend.close()

    run(main())


def test_a_silent_peer_times_out(peer):
    async def main():
        backend, events = await connected(peer.url, request_timeout=0.2)
        assert backend.request_timeout == 1.0
        peer.runtime.set_fault("silent")
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(RelayError) as silent:
            await backend.threads()
        assert silent.value.code == "timeout" and "debug.threads" in silent.value.message
        assert loop.time() - began > 0.9  # the clamped timeout, waited whole
        peer.runtime.set_fault(None)
        assert await backend.threads() == []
        assert events.lost == []
        await backend.close()

    run(main())


def test_a_peer_that_dies_is_lost_and_a_new_start_connects_again():
    first = start_peer()
    try:
        port = int(first.url.rsplit(":", 1)[1].split("/")[0])
        events = MycelEvents()

        async def main():
            backend = MycelBackend(events, first.url)
            await backend.start([stage_bp(1, "transform")], "none")
            request = first.request("create_user", ALICE)
            await events.next_stop()
            await asyncio.to_thread(first.stop)
            with contextlib.suppress(Exception):
                await finished(request)
            await events.until(lambda: events.lost)
            assert events.lost[0].code == "connection_failed" and first.url in events.lost[0].message
            assert backend.paused_threads() == []
            with pytest.raises(RelayError) as closed:
                await backend.threads()
            assert closed.value.code == "connection_failed"

            second = start_peer(port=port)
            try:
                await backend.start([stage_bp(1, "transform")], "none")
                again = second.request("create_user", BOB)
                stop = await events.next_stop()
                assert stop.breakpoint_ids == [1]
                await backend.resume("continue", stop.thread_id)
                assert (await finished(again))["output"]["name"] == "Bob"
                await backend.terminate()
                assert len(events.lost) == 1
            finally:
                await asyncio.to_thread(second.stop)

        run(main())
    finally:
        first.stop()


@pytest.mark.parametrize("module", ["tests.peers.mycel_peer", "jupyter_debug_relay.examples.mycel_demo"])
def test_the_runtime_runs_as_a_program(module):
    argv = [sys.executable, "-m", module, "--port", "0"]
    with subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        try:
            ready, _, _ = select.select([proc.stdout], [], [], 10)
            assert ready, "the runtime printed no URL within 10 s"
            url = proc.stdout.readline().strip()
            assert url.startswith("ws://127.0.0.1:") and url.endswith("/debug")

            async def main():
                backend, _events = await connected(url)
                assert "create_user" in backend.flows
                await backend.terminate()

            run(main())
        finally:
            proc.terminate()
            assert proc.wait(10) == 0
