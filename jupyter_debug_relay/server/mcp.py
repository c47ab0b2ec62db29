"""MCP tools over a ``Relay``: the operations as tools (a lean set by default, or all), on stdio or streamable HTTP.

The lean set holds the operations of a whole debugging task, with one-line descriptions; ``operation`` runs any
other operation by name, so none is out of reach. ``--tools all`` lists every operation as its own tool.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from ..errors import RelayError
from ..model import Breakpoint, Watch, from_json, stop_from_json
from ..operations import OPERATIONS, Operation, snapshot
from ..operations import params as P
from ..text import (
    breakpoint_text,
    history_lines,
    recorded_state_lines,
    recording_line,
    stop_reason,
    tasks_lines,
    unbound_lines,
    warnings_line,
    watch_lines,
)
from ..version import __version__
from . import calls
from .mcp_resources import Resources, listing
from .routes import STARTS, request_model, start_options

# The tools of a whole task (start, breakpoints, moving, looking, output, end), listed by default.
LEAN = ("sessions", "launch", "attach", "connect", "add_breakpoint", "remove_breakpoint", "set_exceptions",
        "continue", "next", "step_in", "step_out", "pause", "wait", "snapshot", "evaluate", "variables", "output",
        "input", "terminate")
MAX_CHARS = 4000  # the text of a lean tool's answer, unless the call gives max_chars
LISTING_CHARS = 40_000  # the text of operation() without a name (every operation, one a line), unless max_chars
_BOUND = {"max_chars": {"type": "integer", "minimum": 100, "description": "Cut the answer's text to this many "
                        "characters (default 4000)."}}
_FILTER = {"filter": {"type": "string", "description": "Only variables whose name matches: a substring or a glob."}}
# Fixed text: it names no operation beyond an example, so the lean list keeps its size as operations are added.
_OPERATION = types.Tool(name="operation", description="Run any other operation by name. Without a name: every "
                        "operation with its parameters (also the debug://operations resource).",
                        input_schema={"type": "object", "properties": {
                            "name": {"type": "string", "description": "The operation, e.g. add_watch."},
                            "arguments": {"type": "object", "description": "Its arguments."}, **_BOUND}})


def describe(op: Operation) -> str:
    """A tool description for a model: what it does, when to use it, what comes back, what can go wrong."""
    returns = ", ".join(op.returns) or "nothing"
    errors = f" Errors: {', '.join(op.errors)}." if op.errors else ""
    return f"{op.summary} {op.when} Returns: {returns}.{errors}"


def input_schema(op: Operation) -> dict[str, Any]:
    """The tool's arguments: the operation's parameters (plus wait/timeout for the ones that start a target)."""
    return request_model(op, starts=op.name in STARTS).model_json_schema()


def _lean_schema(op: Operation) -> dict[str, Any]:
    """An input schema without what a model does not need: titles, the model's own description (the tool's says
    it), and pydantic's definitions inlined once."""
    schema = _untitled(input_schema(op))
    schema.pop("description", None)
    schema["properties"].update(_BOUND, **(_FILTER if op.name == "variables" else {}))
    return schema


def _untitled(node: Any) -> Any:
    """A schema without titles, ``default: null`` and the ``null`` member of optional fields (absent means none)."""
    if isinstance(node, list):
        return [_untitled(v) for v in node]
    if not isinstance(node, dict):
        return node
    members = node.get("anyOf")
    if members and {"type": "null"} in members and len(members) == 2:
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        node = {**next(m for m in members if m != {"type": "null"}), **rest}
    return {k: _untitled(v) for k, v in node.items()
            if not (k == "title" and isinstance(v, str)) and not (k == "default" and v is None)
            and k != "additionalProperties" or k == "additionalProperties" and isinstance(v, dict)}


def tools(mode: str = "lean") -> list[types.Tool]:
    """The tools ``tools/list`` shows: the lean set and ``operation`` (default), or every operation (``all``)."""
    if mode == "all":
        return [types.Tool(name=op.name, description=describe(op), input_schema=input_schema(op))
                for op in OPERATIONS.values()]
    return [types.Tool(name=name, description=OPERATIONS[name].summary, input_schema=_lean_schema(OPERATIONS[name]))
            for name in LEAN] + [_OPERATION]


async def call(relay: Any, name: str, args: dict[str, Any], redact: bool = True) -> dict[str, Any]:
    """The JSON result of tool ``name``: a stop or an end for the waiting ones, as the HTTP API answers."""
    if name == "operation":
        inner = args.get("name")
        if inner is None:
            return {"operations": listing()}
        if inner == "operation" or not isinstance(inner, str):
            raise RelayError("invalid_request", "operation needs the name of another operation.",
                             "e.g. operation(name=\"add_watch\", arguments={\"expression\": \"x\"}); "
                             "operation() without a name lists them.")
        return await call(relay, inner, dict(args.get("arguments") or {}), redact)
    op = OPERATIONS.get(name)
    if op is None:
        raise RelayError("invalid_request", f"There is no tool {name!r}.", "Tools: " + ", ".join(OPERATIONS))
    name_filter = args.pop("filter", None) if name == "variables" else None
    if name_filter is not None:
        out = await calls.run(relay, name, {**args, "count": args.get("count", P.MAX_PAGE)}, redact)
        out["items"] = [v for v in out["items"] if snapshot.matches(v["name"], str(name_filter))]
        return out
    if name in STARTS:
        start = start_options(name, args)
        return await calls.run_start(relay, name, args, start.wait, start.timeout, redact)
    if "stop" in op.returns:
        return await calls.run_waiting(relay, name, args, redact)
    out = await calls.run(relay, name, args, redact)
    return out if isinstance(out, dict) else {"result": out}


def summary(result: dict[str, Any], limit: int = MAX_CHARS) -> str:
    """A few lines a model can read at a glance, at most ``limit`` characters; the structured content holds the rest."""
    text = _summary(result)
    return text if len(text) <= limit else text[:limit - 30] + f" ... [{len(text) - limit + 30} more characters]"


def _summary(result: dict[str, Any]) -> str:
    unbound = unbound_lines([from_json(Breakpoint, bp) for bp in result.get("unverified") or []])  # a start's
    warned = warnings_line(result.get("warnings") or [])  # a start's: how its target runs less well, and why
    return _told(result) + unbound + (f"\n{warned}" if warned else "")


def _told(result: dict[str, Any]) -> str:
    if isinstance(result.get("operations"), str):  # operation() without a name: the listing
        return result["operations"]
    if "snapshot" in result:
        return snapshot.render(result)
    if "async_tasks" in result:
        return "\n".join(tasks_lines(result["async_tasks"]))
    if "recorded" in result and "recording" in result:  # back, forward
        return "\n".join(recorded_state_lines(result))
    if "steps" in result and "recording" in result:  # history
        return "\n".join(history_lines(result))
    if "recording" in result:  # record
        return recording_line(result["recording"])
    if "items" in result and "total" in result:
        lines = [f"{v['name']} = {v['value']}" + (f"  ({v['type']})" if v.get("type") else "")
                 for v in result["items"]]
        return "\n".join(lines) or "(no variables)"
    if "state" in result and "stop" in result:
        stop = result["stop"]
        if stop:
            frame = stop.get("frame") or {}
            where = f" at {frame.get('path')}:{frame.get('line')} in {frame.get('name')}" if frame else ""
            line = f"\n    {result['line_text'].strip()}" if result.get("line_text") else ""
            watches = watch_lines([Watch(**w) for w in result.get("watches") or []])
            return f"paused ({stop_reason(stop_from_json(stop))}){where}{line}{watches}"
        if result["state"] == "terminated":
            return f"terminated, exit code {result.get('exit_code')}"
        return f"{result['state']}"
    if "breakpoint" in result:
        return breakpoint_text(from_json(Breakpoint, result["breakpoint"]))
    if "variable" in result:
        var = result["variable"]
        if not var["value"] and not var.get("type"):  # a statement (import os, x = 5) or None: nothing to show
            return f"{var['name']}: ran, no value to show"
        return f"{var['name']} = {var['value']}" + (f"  ({var['type']})" if var.get("type") else "")
    if "chunks" in result:
        text = "".join(c["text"] for c in result["chunks"])
        return (text[-2000:] or "(no output)") + f"\n[cursor {result['cursor']}]"
    if "session" in result and isinstance(result["session"], dict):
        return _session_line(result["session"])
    if isinstance(result.get("sessions"), list):
        return "\n".join(_session_line(s) for s in result["sessions"]) or "no sessions (start one with launch)"
    if result.keys() == {"state", "exit_code"}:  # terminate
        return result["state"] + (f", exit code {result['exit_code']}" if result["exit_code"] is not None else "")
    return json.dumps(result)


def _session_line(s: dict[str, Any]) -> str:
    """``session s1 (calc): paused (breakpoint 1) /tmp/calc.py``: a session as ``sessions`` and ``status`` list it."""
    why = f" ({stop_reason(stop_from_json(s['stop']))})" if s["state"] == "paused" and s.get("stop") else ""
    failed = f" ({s['error'].get('code')})" if s["state"] == "failed" and s.get("error") else ""
    return f"session {s['id']} ({s['name']}): {s['state']}{why}{failed} {s['target']}".rstrip()


def server(relay: Any, redact: bool = True, mode: str = "lean") -> Server:
    """An MCP server whose tools are the relay's operations (``mode`` lean or all) and whose resources its sessions."""
    listed = tools(mode)
    resources = Resources(relay)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        listing_asked = params.name == "operation" and args.get("name") is None
        limit = args.pop("max_chars", LISTING_CHARS if listing_asked else MAX_CHARS)
        await resources.start()
        try:
            if not isinstance(limit, int) or limit < 100:
                raise RelayError("invalid_request", f"max_chars must be a number of at least 100, not {limit!r}.")
            result = await call(relay, params.name, args, redact)
        except RelayError as exc:
            text = f"error {exc.code}: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")
            return types.CallToolResult(content=[types.TextContent(text=text)], structured_content={
                "error": exc.to_dict()}, is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=summary(result, limit))],
                                    structured_content=result)

    return Server("jupyter-debug-relay", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                  **resources.handlers(),
                  instructions="Debug Python (and Mycel, EZ, DAP) programs: add_breakpoint, launch, then snapshot "
                               "at each stop (source, stack, locals, watches, output in one call); evaluate; step "
                               "with next, step_in, step_out; continue; terminate when done. Subscribe to "
                               "debug://sessions/{id}/output to be told of new output.")


def http_app(relay: Any, config: Any) -> tuple[Any, StreamableHTTPSessionManager]:
    """MCP over streamable HTTP, to mount at ``/mcp`` behind the server's own Host and token checks."""
    manager = StreamableHTTPSessionManager(
        app=server(relay, config.redact, config.mcp_tools), json_response=True,
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    return StreamableHTTPASGIApp(manager), manager


async def serve_stdio(relay: Any, redact: bool = True, mode: str = "lean") -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    mcp = server(relay, redact, mode)
    async with stdio_server() as (read, write):
        await mcp.run(read, write, mcp.create_initialization_options())
