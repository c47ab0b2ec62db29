"""What an agent sees: the lean MCP tool list, ``snapshot`` on the front ends, an output resource it subscribes to."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_debug_relay import Relay
from jupyter_debug_relay.kernel.commands import Commands
from jupyter_debug_relay.operations import OPERATIONS
from jupyter_debug_relay.server.mcp import LISTING_CHARS, call, summary, tools
from jupyter_debug_relay.server.mcp_resources import OPERATIONS_URI, Resources, listing
from tests.server_fixtures import line_of, live_server, ok, write

APP = """
import sys
def work(values):
    total = 0
    for v in values:
        total += v  # here
    return total

print("first line", flush=True)
sys.stdout.write("second line\\n")
sys.stdout.flush()
print("sum", work([1, 2, 3]), flush=True)
"""
TASK = {"launch", "attach", "add_breakpoint", "remove_breakpoint", "next", "step_in", "step_out", "continue",
        "snapshot", "evaluate", "output", "terminate"}


def _size(listed: list) -> int:
    return len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]))


def test_the_lean_tool_list_is_small_covers_a_task_and_all_lists_every_operation():
    lean = tools()
    names = {t.name for t in lean}
    assert len(lean) <= 20 and _size(lean) <= 20_000
    assert TASK <= names and "operation" in names
    assert all(len(t.description) <= 200 for t in lean)
    assert {t.name for t in tools("all")} == set(OPERATIONS) and _size(tools("all")) > 20_000


def test_the_lean_tool_list_keeps_its_size_as_operations_are_added(monkeypatch):
    """New operations reach a model through ``operation``, whose text names none: the lean list does not grow."""
    before = _size(tools())
    extra = {f"extra_{i}": replace(op, name=f"extra_{i}", summary=op.summary * 3)
             for i, op in enumerate(OPERATIONS.values())}
    monkeypatch.setattr("jupyter_debug_relay.server.mcp.OPERATIONS", {**OPERATIONS, **extra})
    monkeypatch.setattr("jupyter_debug_relay.server.mcp_resources.OPERATIONS", {**OPERATIONS, **extra})
    assert _size(tools()) == before <= 20_000
    listed = listing().splitlines()
    assert len(listed) == 2 * len(OPERATIONS) and listed[-1].startswith(f"extra_{len(OPERATIONS) - 1}(")


def test_operation_without_a_name_lists_every_operation_and_so_does_a_resource():
    with Relay() as relay:
        answer = anyio.run(call, relay, "operation", {})
        text = summary(answer, LISTING_CHARS)
        assert [line.split("(")[0] for line in text.splitlines()] == list(OPERATIONS)
        assert "add_breakpoint(kind?, path?, line?" in text and "evaluate(session?, frame_id?, expression, " in text
        assert Resources(relay).read(OPERATIONS_URI) == text
        assert OPERATIONS_URI in {str(r.uri) for r in Resources(relay).listing()}


def _check(snap: dict, app: str) -> None:
    current = [s for s in snap["source"] if s["current"]]
    assert current and "total += v" in current[0]["text"] and len(snap["source"]) == 3
    assert snap["frames"][0]["name"] == "work" and "total += v" in snap["frames"][0]["text"]
    assert snap["frames"][1]["name"] == "<module>" and "work([1, 2, 3])" in snap["frames"][1]["text"]
    assert [v["name"] for v in snap["locals"]] == ["total"] and snap["locals"][0]["value"] == "0"
    assert snap["output"] == ["first line", "second line"]


def test_snapshot_from_the_python_api_the_magic_and_http(tmp_path):
    app = write(tmp_path, "work.py", APP)
    with live_server() as (server, client):
        ok(client.post("/breakpoints", json={"path": app, "line": line_of(app, "# here")}))
        sid = ok(client.post("/sessions", json={}))["session"]["id"]
        ok(client.post(f"/sessions/{sid}/launch", json={"program": app, "timeout": 30}))
        body = ok(client.get(f"/sessions/{sid}/snapshot", params={"context": 1, "filter": "tot*"}))
        assert body["state"] == "paused"
        _check(body["snapshot"], app)
    with Relay() as relay:
        relay.breakpoints.add(app, line_of(app, "# here"))
        session = relay.launch(app)
        session.wait_for_stop(30)
        snap = session.snapshot(context=1, filter="total")
        assert snap.locals[0].name == "total" and snap.frames[0].name == "work"
        text = Commands(relay).run_session("snapshot --context 1 --filter total").text
        assert any(line.startswith(">") and "total += v" in line for line in text.splitlines())
        assert "#0 work at" in text and "total = 0" in text and "second line" in text
        session.terminate()


def test_an_mcp_client_subscribed_to_output_is_notified(tmp_path):
    app = write(tmp_path, "work.py", APP)
    params = StdioServerParameters(command=sys.executable, args=["-m", "jupyter_debug_relay.cli", "mcp"],
                                   env=dict(os.environ), cwd=str(tmp_path))

    async def run() -> None:
        with anyio.fail_after(90):
            async with Client(params) as client:
                await client.call_tool("add_breakpoint", {"path": app, "line": line_of(app, "# here")})
                stop = await client.call_tool("launch", {"program": app, "timeout": 30})
                sid = stop.structured_content["session"]["id"]
                text = (await client.call_tool("snapshot", {"session": sid})).content[0].text
                assert "total += v" in text and "#0 work at" in text
                uri = f"debug://sessions/{sid}/output"
                listed = await client.list_resources()
                assert uri in {str(r.uri) for r in listed.resources}
                async with client.listen(resource_subscriptions=[uri]) as sub:
                    await client.call_tool("remove_breakpoint", {"id": 1})
                    await client.call_tool("continue", {"session": sid})
                    event = await sub.__anext__()
                    assert str(event.uri) == uri
                read = await client.read_resource(uri)
                assert "sum 6" in read.contents[0].text
                events = (await client.read_resource(f"debug://sessions/{sid}/events")).contents[0].text
                assert [json.loads(line)["event"] for line in events.splitlines()].count("stopped") == 1
                missing = await client.call_tool("operation", {"name": "threads", "arguments": {"session": "zz"}})
                assert missing.is_error and "session_not_found" in missing.content[0].text
                every = (await client.call_tool("operation", {})).content[0].text  # whole, past the 4,000 a call
                assert every == listing() and len(every) > 4000

    anyio.run(run)
