"""MCP tools over a ``Relay``: one tool per operation, same names and parameters, on stdio or streamable HTTP."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from ..errors import RelayError
from ..model import Watch
from ..operations import OPERATIONS, Operation
from ..text import watch_lines
from ..version import __version__
from . import calls
from .routes import STARTS, request_model, start_options


def describe(op: Operation) -> str:
    """A tool description for a model: what it does, when to use it, what comes back, what can go wrong."""
    returns = ", ".join(op.returns) or "nothing"
    errors = f" Errors: {', '.join(op.errors)}." if op.errors else ""
    return f"{op.summary} {op.when} Returns: {returns}.{errors}"


def input_schema(op: Operation) -> dict[str, Any]:
    """The tool's arguments: the operation's parameters (plus wait/timeout for the ones that start a target)."""
    return request_model(op, starts=op.name in STARTS).model_json_schema()


def tools() -> list[types.Tool]:
    return [types.Tool(name=op.name, description=describe(op), input_schema=input_schema(op))
            for op in OPERATIONS.values()]


async def call(relay: Any, name: str, args: dict[str, Any], redact: bool = True) -> dict[str, Any]:
    """The JSON result of tool ``name``: a stop or an end for the waiting ones, as the HTTP API answers."""
    op = OPERATIONS.get(name)
    if op is None:
        raise RelayError("invalid_request", f"There is no tool {name!r}.", "Tools: " + ", ".join(OPERATIONS))
    if name in STARTS:
        start = start_options(name, args)
        return await calls.run_start(relay, name, args, start.wait, start.timeout, redact)
    if "stop" in op.returns:
        return await calls.run_waiting(relay, name, args, redact)
    out = await calls.run(relay, name, args, redact)
    return out if isinstance(out, dict) else {"result": out}


def summary(result: dict[str, Any]) -> str:
    """A line or two a model can read at a glance; the structured content holds the rest."""
    if "state" in result and "stop" in result:
        stop = result["stop"]
        if stop:
            frame = stop.get("frame") or {}
            where = f" at {frame.get('path')}:{frame.get('line')} in {frame.get('name')}" if frame else ""
            line = f"\n    {result['line_text'].strip()}" if result.get("line_text") else ""
            watches = watch_lines([Watch(**w) for w in result.get("watches") or []])
            return f"paused ({stop['reason']}){where}{line}{watches}"
        if result["state"] == "terminated":
            return f"terminated, exit code {result.get('exit_code')}"
        return f"{result['state']}"
    if "variable" in result:
        var = result["variable"]
        return f"{var['name']} = {var['value']}" + (f"  ({var['type']})" if var.get("type") else "")
    if "chunks" in result:
        text = "".join(c["text"] for c in result["chunks"])
        return (text[-2000:] or "(no output)") + f"\n[cursor {result['cursor']}]"
    if "session" in result and isinstance(result["session"], dict):
        s = result["session"]
        return f"session {s['id']} ({s['name']}): {s['state']} {s['target']}".rstrip()
    text = json.dumps(result)
    return text if len(text) <= 1500 else text[:1500] + " ..."


def server(relay: Any, redact: bool = True) -> Server:
    """An MCP server whose tools are the relay's operations."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await call(relay, params.name, dict(params.arguments or {}), redact)
        except RelayError as exc:
            text = f"error {exc.code}: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")
            return types.CallToolResult(content=[types.TextContent(text=text)], structured_content={
                "error": exc.to_dict()}, is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=summary(result))], structured_content=result)

    return Server("jupyter-debug-relay", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                  instructions="Debug Python (and Mycel, EZ, DAP) programs: add_breakpoint, launch, then inspect "
                               "with stack, scopes, variables and evaluate; step with next, step_in, step_out; "
                               "continue; read output; terminate when done.")


def http_app(relay: Any, config: Any) -> tuple[Any, StreamableHTTPSessionManager]:
    """MCP over streamable HTTP, to mount at ``/mcp`` behind the server's own Host and token checks."""
    manager = StreamableHTTPSessionManager(
        app=server(relay, config.redact), json_response=True,
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    return StreamableHTTPASGIApp(manager), manager


async def serve_stdio(relay: Any, redact: bool = True) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    mcp = server(relay, redact)
    async with stdio_server() as (read, write):
        await mcp.run(read, write, mcp.create_initialization_options())
