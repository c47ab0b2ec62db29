"""DAP requests answered through the operations, and relay events told as DAP events (the server's translation)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..errors import RelayError
from ..facade.events import Event
from ..model import Breakpoint, Variable, as_dict

Run = Callable[[str, dict[str, Any]], Awaitable[Any]]  # runs one operation on the exposed session

CAPABILITIES = {
    "supportsConfigurationDoneRequest": True, "supportsConditionalBreakpoints": True,
    "supportsHitConditionalBreakpoints": True, "supportsLogPoints": True, "supportsFunctionBreakpoints": True,
    "supportsSetVariable": True, "supportsCompletionsRequest": True, "supportsTerminateRequest": True,
    "supportsExceptionInfoRequest": True, "supportTerminateDebuggee": False,
    "supportsStepBack": True,  # stepBack and reverseContinue walk the states ``record`` kept (back in time)
    "exceptionBreakpointFilters": [
        {"filter": "raised", "label": "Raised Exceptions", "default": False},
        {"filter": "uncaught", "label": "Uncaught Exceptions", "default": True},
    ],
}
# Requests that change the session or the target: refused on a read-only connection.
CHANGING = frozenset({"continue", "next", "stepIn", "stepOut", "pause", "setVariable", "setExpression", "evaluate",
                      "completions", "setBreakpoints", "setFunctionBreakpoints", "setExceptionBreakpoints",
                      "terminate", "restart", "goto", "stepBack", "reverseContinue", "restartFrame"})
_STEPS = {"continue": "continue", "next": "next", "stepIn": "step_in", "stepOut": "step_out", "pause": "pause"}


def variable(v: Variable) -> dict[str, Any]:
    return {"name": v.name, "value": v.value, "type": v.type, "variablesReference": v.ref,
            "namedVariables": v.named, "indexedVariables": v.indexed, "evaluateName": v.evaluate_name}


class Paths(Protocol):
    """How a client names files: ``inward`` its name to the target's path (None: no file), ``outward`` back."""

    def inward(self, path: str) -> str | None: ...

    def outward(self, path: str | None) -> str | None: ...


class SamePaths:
    """A client that names files by their paths (an editor on the same machine)."""

    def inward(self, path: str) -> str | None:
        return path

    def outward(self, path: str | None) -> str | None:
        return path


def breakpoint_body(bp: Breakpoint, shift: int = 0, paths: Paths = SamePaths()) -> dict[str, Any]:
    """A DAP ``Breakpoint``; ``shift`` is -1 for a client counting lines from 0; its path as the client names it."""
    body: dict[str, Any] = {"id": bp.id, "verified": bp.verified}
    if bp.line:
        body["line"] = bp.line + shift
    message = "; ".join(text for text in (bp.message, bp.warning) if text)
    if message:
        body["message"] = message
    if bp.path:
        body["source"] = {"path": paths.outward(bp.path)}
    return body


class Requests:
    """One client's requests: each an operation on the exposed session; its own breakpoints kept apart."""

    def __init__(self, run: Run, paths: Paths | None = None) -> None:
        self._run = run
        self.paths: Paths = paths or SamePaths()
        self._frames: dict[str, int] = {}  # a path as last shown in a stack -> a frame there (for source)
        self._lines: dict[str, list[int]] = {}  # path -> the ids of this client's line breakpoints there
        self._functions: list[int] = []
        self.shift = 0  # added to the relay's 1-based lines: -1 for a client counting lines from 0
        self.column_shift = 0
        self.in_history = False  # a recorded state is shown: next and stepIn move forward through the history

    def initialize(self, args: dict[str, Any]) -> None:
        """Take the client's way of counting lines and columns."""
        self.shift = 0 if args.get("linesStartAt1", True) is not False else -1
        self.column_shift = 0 if args.get("columnsStartAt1", True) is not False else -1

    async def answer(self, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """The body of the response to ``command``; a ``RelayError`` is the failed response."""
        if command in ("next", "stepIn") and self.in_history:
            return await self._moved("forward", 1)
        if command in _STEPS:
            self.in_history = False
            await self._run(_STEPS[command], {"thread_id": args.get("threadId"), "wait": False})
            return {"allThreadsContinued": True} if command == "continue" else {}
        handler = getattr(self, f"_{command}", None)
        if handler is None:
            raise RelayError("unsupported", f"This server does not answer {command!r}.")
        return await handler(args) or {}

    async def _configurationDone(self, args: dict[str, Any]) -> None:
        return None

    async def _moved(self, operation: str, steps: int) -> dict[str, Any]:
        """Back or forward through the recorded states; the session's ``history`` event is told as ``stopped``."""
        found = await self._run(operation, {"steps": steps})
        self.in_history = found["recording"].position is not None
        return {}

    async def _stepBack(self, args: dict[str, Any]) -> dict[str, Any]:
        return await self._moved("back", 1)

    async def _reverseContinue(self, args: dict[str, Any]) -> dict[str, Any]:
        """Back to the first recorded state (there is no breakpoint to stop at in a recording)."""
        found = await self._run("history", {"count": 1})
        position, total = found["recording"].position, found["total"]
        return await self._moved("back", (position if position is not None else total + 1) - 1)

    async def _threads(self, args: dict[str, Any]) -> dict[str, Any]:
        result = await self._run("threads", {})
        return {"threads": [{"id": t.id, "name": t.name} for t in result["threads"]]}

    async def _stackTrace(self, args: dict[str, Any]) -> dict[str, Any]:
        result = await self._run("stack", {"thread_id": args.get("threadId"), "start": args.get("startFrame") or 0,
                                           "levels": args.get("levels") or None})
        frames, shown_at = [], {}
        for f in result["frames"]:
            frame: dict[str, Any] = {"id": f.id, "name": f.name, "line": f.line + self.shift,
                                     "column": f.column + self.column_shift}
            shown = self.paths.outward(f.path)
            if shown:
                frame["source"] = {"path": shown, "name": (f.path or shown).rsplit("/", 1)[-1]}
                shown_at.setdefault(shown, f.id)
            frames.append(frame)
        self._frames = {**self._frames, **shown_at} if args.get("startFrame") else shown_at
        return {"stackFrames": frames, "totalFrames": result["total"]}

    async def _scopes(self, args: dict[str, Any]) -> dict[str, Any]:
        result = await self._run("scopes", {"frame_id": args.get("frameId")})
        return {"scopes": [{"name": s.name, "variablesReference": s.ref, "expensive": s.expensive}
                           for s in result["scopes"]]}

    async def _variables(self, args: dict[str, Any]) -> dict[str, Any]:
        page = await self._run("variables", {"ref": args.get("variablesReference"), "start": args.get("start") or 0,
                                             **({"count": args["count"]} if args.get("count") else {})})
        return {"variables": [variable(v) for v in page.items]}

    async def _evaluate(self, args: dict[str, Any]) -> dict[str, Any]:
        context = args.get("context") if args.get("context") in ("watch", "repl", "hover") else "repl"
        result = await self._run("evaluate", {"expression": args.get("expression"), "frame_id": args.get("frameId"),
                                              "context": context})
        v = result["variable"]
        return {"result": v.value, "type": v.type, "variablesReference": v.ref}

    async def _setVariable(self, args: dict[str, Any]) -> dict[str, Any]:
        result = await self._run("set_variable", {"ref": args.get("variablesReference"), "name": args.get("name"),
                                                  "value": args.get("value")})
        v = result["variable"]
        return {"value": v.value, "type": v.type, "variablesReference": v.ref}

    async def _completions(self, args: dict[str, Any]) -> dict[str, Any]:
        result = await self._run("completions", {"text": args.get("text"), "frame_id": args.get("frameId")})
        return {"targets": [{"label": label} for label in result["targets"]]}

    async def _exceptionInfo(self, args: dict[str, Any]) -> dict[str, Any]:
        stop = (await self._run("status", {}))["session"].stop
        if stop is None or stop.exception is None:
            raise RelayError("invalid_request", "The session is not stopped on an exception.")
        return {"exceptionId": stop.exception.type, "description": stop.exception.message, "breakMode": "always",
                "details": {"typeName": stop.exception.type, "message": stop.exception.message,
                            "stackTrace": stop.exception.traceback}}

    async def _setBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        path = (args.get("source") or {}).get("path")
        if not path or not isinstance(path, str):
            raise RelayError("invalid_request", "setBreakpoints needs source.path (this server has no source refs).")
        specs = args.get("breakpoints") or []
        if not isinstance(specs, list) or not all(isinstance(spec, dict) for spec in specs):
            raise RelayError("invalid_request", "setBreakpoints: breakpoints must be a list of objects.",
                             'e.g. {"source": {"path": "app.py"}, "breakpoints": [{"line": 3}]}')
        real = self.paths.inward(path)
        if real is None:  # a name of text no file has: unverified, said why
            message = (f"No file of the target's has the text of {path} (JupyterLab names an editor's text by its "
                       "hash); save the file, or open the script the target runs.")
            return {"breakpoints": [{"verified": False, "line": spec.get("line"), "message": message,
                                     "source": {"path": path}} for spec in specs]}
        mine = []
        for spec in specs:
            bp = (await self._run("add_breakpoint", {
                "path": real, "line": _minus(spec.get("line"), self.shift), "condition": spec.get("condition"),
                "hit_condition": spec.get("hitCondition"), "log_message": spec.get("logMessage")}))["breakpoint"]
            mine.append(bp)
        await self._drop(self._lines.get(path, []), {bp.id for bp in mine})
        self._lines[path] = [bp.id for bp in mine]
        return {"breakpoints": [{**breakpoint_body(bp, self.shift, self.paths), "source": {"path": path}}
                                for bp in mine]}

    async def _source(self, args: dict[str, Any]) -> dict[str, Any]:
        """The text of a file a stack showed: read through the session (the stop's frame in it), never run."""
        path = (args.get("source") or {}).get("path")
        frame_id = self._frames.get(path) if isinstance(path, str) else None
        if frame_id is None:
            raise RelayError("file_not_found", f"No frame of the stop is in {path!r}: its source is not available.",
                             "Ask stackTrace first; source answers for the files of the stop's frames.")
        return {"content": (await self._run("source", {"frame_id": frame_id}))["source"]}

    async def _setFunctionBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        mine = [(await self._run("add_breakpoint", {"kind": "function", "name": spec.get("name"),
                                                    "condition": spec.get("condition")}))["breakpoint"]
                for spec in args.get("breakpoints") or []]
        await self._drop(self._functions, {bp.id for bp in mine})
        self._functions = [bp.id for bp in mine]
        return {"breakpoints": [breakpoint_body(bp) for bp in mine]}

    async def _setExceptionBreakpoints(self, args: dict[str, Any]) -> None:
        filters = args.get("filters") or []
        mode = "raised" if "raised" in filters else "uncaught" if "uncaught" in filters else "none"
        await self._run("set_exceptions", {"mode": mode})

    async def _terminate(self, args: dict[str, Any]) -> None:
        await self._run("terminate", {})

    async def _drop(self, before: list[int], kept: set[int]) -> None:
        """Remove this client's breakpoints it no longer lists (another front end's stay)."""
        for bp_id in before:
            if bp_id not in kept:
                try:
                    await self._run("remove_breakpoint", {"id": bp_id})
                except RelayError as exc:  # removed meanwhile by another front end
                    if exc.code != "invalid_request":
                        raise

    async def forget(self) -> None:
        """The client left: its breakpoints go with it."""
        await self._drop([i for ids in self._lines.values() for i in ids] + self._functions, set())


def _minus(line: Any, shift: int) -> Any:
    return line - shift if isinstance(line, int) else line


def events(event: Event, shift: int = 0, paths: Paths = SamePaths()) -> list[dict[str, Any]]:
    """The DAP events a relay event is told as (none for those an editor has no use for), lines shifted, files named
    as the client names them."""
    body = event.body
    if event.event == "stopped":
        stop: dict[str, Any] = {"reason": body.get("reason"), "threadId": body.get("thread_id"),
                                "allThreadsStopped": True, "description": body.get("description") or None}
        if body.get("breakpoint_ids"):
            stop["hitBreakpointIds"] = body["breakpoint_ids"]
        if body.get("exception"):
            stop["text"] = body["exception"].get("message")
        return [_event("stopped", {k: v for k, v in stop.items() if v is not None})]
    if event.event == "history":  # a recorded state shown (back, forward): the editor asks for its stack again
        state = body.get("recorded")
        description = f"recorded state {state['index']}" if state else "the live stop"
        return [_event("stopped", {"reason": "step", "threadId": body.get("thread_id"), "allThreadsStopped": True,
                                   "description": description})]
    if event.event == "continued":
        return [_event("continued", {"threadId": body.get("thread_id"), "allThreadsContinued": True})]
    if event.event == "output":
        return [_event("output", {"category": body.get("category", "stdout"), "output": body.get("text", "")})]
    if event.event == "thread":
        return [_event("thread", {"reason": body.get("reason"), "threadId": body.get("thread_id")})]
    if event.event == "exited":
        return [_event("exited", {"exitCode": body.get("exit_code") or 0})]
    if event.event == "terminated":
        return [_event("terminated", {})]
    if event.event == "breakpoint" and body.get("breakpoint"):
        bp = Breakpoint(**body["breakpoint"])
        reason = "removed" if bp.status == "removed" else "changed"
        told = {"reason": reason, "breakpoint": breakpoint_body(bp, shift, paths)}
        return [_event("breakpoint", told)] if bp.kind in ("line", "function") else []
    return []


def response(request: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The successful DAP response to ``request``."""
    return {"type": "response", "request_seq": request.get("seq", 0), "command": request.get("command", ""),
            "success": True, "body": body}


def refusal(request: dict[str, Any], error: RelayError) -> dict[str, Any]:
    """The failed DAP response to ``request``: the error's sentence and hint, its code in ``body.error``."""
    text = error.message + (f" {error.hint}" if error.hint else "")
    return {"type": "response", "request_seq": request.get("seq", 0), "command": request.get("command", ""),
            "success": False, "message": text,
            "body": {"error": {"id": 1, "format": text, "showUser": True, "code": error.code}}}


def _event(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "event", "event": name, "body": body}


def stopped_now(session_info: Any) -> list[dict[str, Any]]:
    """The ``stopped`` event of a session paused before the client joined (none when it runs)."""
    stop = session_info.stop
    if session_info.state != "paused" or stop is None:
        return []
    return events(Event(session=session_info.id, event="stopped", body=as_dict(stop)))
