"""The MCP server driven by the official ``mcp`` SDK's own client: tools are the operations, a debug run end to end."""

from __future__ import annotations

import os
import sys

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_debug_relay import Relay
from jupyter_debug_relay.kernel.context import Context
from jupyter_debug_relay.operations import OPERATIONS
from jupyter_debug_relay.server.mcp import LEAN, input_schema, server
from tests.server_fixtures import line_of, live_server, write

APP = """
def scale(values, factor):
    out = []
    for v in values:
        out.append(v * factor)  # here
    return out

print("scaled", scale([1, 2, 3], 10))
"""


def test_every_operation_is_a_tool_described_for_a_model():
    assert all(op.when for op in OPERATIONS.values())
    for op in OPERATIONS.values():
        schema = input_schema(op)
        assert set(op.params.model_fields) <= set(schema["properties"]), op.name


@pytest.mark.smoke
def test_mcp_stdio_breakpoint_launch_evaluate_next_continue_output(tmp_path):
    app = write(tmp_path, "scale.py", APP)
    params = StdioServerParameters(command=sys.executable, args=["-m", "jupyter_debug_relay.cli", "mcp"],
                                   env=dict(os.environ), cwd=str(tmp_path))

    async def session() -> None:
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {*LEAN, "operation"}
            assert tools["launch"].input_schema["properties"]["program"]

            async def call(name: str, **args):
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content[0].text
                return result.structured_content, result.content[0].text

            bp, _ = await call("add_breakpoint", path=app, line=line_of(app, "# here"))
            assert bp["breakpoint"]["line"] == line_of(app, "# here")
            stop, text = await call("launch", program=app)
            assert stop["state"] == "paused" and "paused (breakpoint 1)" in text and "out.append" in text
            value, text = await call("evaluate", expression="v * factor")
            assert value["variable"]["value"] == "10" and text == "v * factor = 10  (int)"
            step, _ = await call("next")
            assert step["stop"]["reason"] == "step"
            await call("remove_breakpoint", id=bp["breakpoint"]["id"])
            end, text = await call("continue")
            assert end["state"] == "terminated" and text == "terminated, exit code 0"
            out, text = await call("output")
            assert "scaled [10, 20, 30]" in text and out["has_more"] is False
            bad = await client.call_tool("evaluate", {"expression": 5})
            assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_request"

    anyio.run(session)


def test_mcp_over_http_needs_the_token_and_lists_the_tools():
    with live_server(mcp_tools="all") as (server, client):
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        assert httpx.post(server.url + "/mcp/", json=hello, headers=headers).status_code == 401
        answer = client.post("/mcp/", json=hello, headers=headers)
        assert answer.status_code == 200, answer.text
        mcp_session = answer.headers.get("mcp-session-id")
        more = {**headers, **({"mcp-session-id": mcp_session} if mcp_session else {}),
                "mcp-protocol-version": "2025-06-18"}
        client.post("/mcp/", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=more)
        listed = client.post("/mcp/", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=more)
        assert {t["name"] for t in listed.json()["result"]["tools"]} == set(OPERATIONS)


def test_mcp_add_breakpoint_reads_a_place_written_in_the_path(tmp_path):
    app = write(tmp_path, "scale.py", APP)
    odd = write(tmp_path, "odd.py:5", "a = 1\nb = 2\n")  # a file whose name reads like FILE:LINE

    async def session(relay: Relay) -> None:
        async with Client(server(relay)) as client:
            async def add(**args) -> dict:
                result = await client.call_tool("add_breakpoint", args)
                assert not result.is_error, result.content[0].text
                return result.structured_content["breakpoint"]

            by_line = await add(path=f"{app}:{line_of(app, '# here')}")
            assert (by_line["path"], by_line["line"], by_line["content"]) == (app, line_of(app, "# here"), None)
            by_text = await add(path=f'{app}:"for v in values:"')
            assert (by_text["path"], by_text["line"]) == (app, line_of(app, "for v in values"))
            assert by_text["content"] == "for v in values:"
            assert (await add(path=odd, line=2))["path"] == odd
            refused = await client.call_tool("add_breakpoint", {"path": f"{app}:3", "line": 4})
            assert refused.is_error and refused.structured_content["error"]["details"]["field"] == "line"

    with Relay() as relay:
        anyio.run(session, relay)


def test_a_failed_launch_does_not_become_the_default_session(tmp_path):
    app = write(tmp_path, "scale.py", APP)
    broken = write(tmp_path, "broken.py", "def f(:\n    pass\n")

    async def session(relay: Relay) -> str:
        async with Client(server(relay)) as client:
            async def call(name: str, **args) -> dict:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content[0].text
                return result.structured_content

            await call("add_breakpoint", path=app, line=line_of(app, "# here"))
            paused = await call("launch", program=app)
            assert paused["state"] == "paused"
            failed = await client.call_tool("launch", {"program": broken})
            assert failed.is_error and failed.structured_content["error"]["code"] == "syntax_error"
            step = await call("next")
            assert step["state"] == "paused" and step["stop"]["reason"] == "step"
            assert Context(relay).session().id == paused["session"]["id"]  # the magics' default too
            end = await call("terminate")
            assert end["state"] == "terminated"
            return paused["session"]["id"]

    with Relay() as relay:
        first = anyio.run(session, relay)
        assert [(h.id == first, h.state) for h in relay.sessions] == [(True, "terminated"), (False, "failed")]
