"""The operations table: every verb once, with its parameters, what it returns, its errors and its capability.

Each operation's ``run`` is a coroutine executed on the relay loop against the session manager, so a
front end reaches the engine in one hop whatever the verb. A result is a dict of model objects or one model
object: the comm's and the HTTP API's body once passed through ``as_dict``. The core verbs are here; a group
of verbs of its own (``created``) lives in its own module and is added to ``OPERATIONS`` at the end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from ..backends import factory
from ..engine.breakpoints import applies
from ..engine.session import Session
from ..errors import RelayError
from ..model import (
    AsyncTasks,
    Breakpoint,
    Frame,
    OutputChunk,
    OutputPage,
    Scope,
    SessionInfo,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
    Watch,
)
from . import created, doctor, editors, keeping, mycel, ray, remote, snapshot, tools, watching
from . import params as P
from .base import PAUSED_ERRORS, SESSION_ERRORS, Context, Operation, Run, S, session_of, start_answer, waits
from .locations import located
from .spelling import misplaced

__all__ = ["OPERATIONS", "RESULT_TYPES", "Context", "Operation"]


# -- sessions --------------------------------------------------------------------------------------------

async def _sessions(ctx: Context, p: P.NoParams) -> dict[str, Any]:
    return {"sessions": [s.info() for s in ctx.manager.sessions.values()]}


async def _status(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    return {"session": session_of(ctx, p.session).info()}


async def _start(ctx: Context, make: Any, name: str | None, exceptions: str | None = None,
                 early_end: RelayError | None = None) -> dict[str, Any]:
    return start_answer(await ctx.manager.start(make, name, exceptions, early_end))


async def _launch(ctx: Context, p: P.LaunchParams) -> dict[str, Any]:
    if (p.program is None) == (p.module is None):
        raise RelayError("invalid_request", "launch needs a program or a module (one of them).",
                         "e.g. launch(\"app.py\") or launch(module=\"pytest\").")
    if p.on is not None:
        return await remote.start_on(ctx, p.on, "launch", p.model_dump(exclude={"on"}, exclude_defaults=True))
    options = p.model_dump(exclude={"name", "exceptions", "on"})
    return await _start(ctx, factory.launch(ctx.request_timeout, **options), p.name, p.exceptions, misplaced(p))


async def _attach(ctx: Context, p: P.AttachParams) -> dict[str, Any]:
    if (p.port is None) == (p.pid is None):
        raise RelayError("invalid_request", "attach needs a port or a pid (one of them).")
    if p.on is not None:
        return await remote.start_on(ctx, p.on, "attach", p.model_dump(exclude={"on"}, exclude_defaults=True))
    make = factory.attach(ctx.request_timeout, port=p.port, host=p.host, pid=p.pid, just_my_code=p.just_my_code,
                          path_mappings=p.path_mappings)
    return await _start(ctx, make, p.name)


async def _connect(ctx: Context, p: P.ConnectParams) -> dict[str, Any]:
    if p.kind == "mycel":
        if not p.url:
            raise RelayError("invalid_request", "connect mycel needs a url.", "e.g. ws://127.0.0.1:9090/debug")
        make = factory.mycel(ctx.request_timeout, p.url)
    elif p.kind == "ez":
        if not p.program:
            raise RelayError("invalid_request", "connect ez needs a program.", "e.g. prog.ez")
        make = factory.ez(ctx.request_timeout, p.program, p.ez, p.cwd)
    else:
        make = factory.dap(ctx.request_timeout, p.adapter, p.host, p.port, p.launch, p.attach, p.program, p.args,
                           p.cwd, p.env, p.stop_on_entry)
    return await _start(ctx, make, p.name)


# -- running ---------------------------------------------------------------------------------------------

def _moving(move: Callable[[Session, Any], Awaitable[StopInfo | None]]) -> Run:
    """An operation that sets the target moving (or waits on it) and answers with the state and the stop."""
    async def run(ctx: Context, p: Any) -> dict[str, Any]:
        session = session_of(ctx, p.session)
        stop = await move(session, p)
        return await watching.with_watches(session, {"state": session.state, "stop": stop})
    return run


def _resume(action: str) -> Run:
    """A step or continue; ``thread_end`` says how its thread finished when the step ran it to its end (Mycel)."""
    async def run(ctx: Context, p: Any) -> dict[str, Any]:
        session = session_of(ctx, p.session)
        stopped = session.stop
        thread = p.thread_id if p.thread_id is not None or stopped is None else stopped.thread_id
        ends = session.ends
        stop = await session.resume(action, p.thread_id, p.wait, p.timeout)
        return await watching.with_watches(
            session, {"state": session.state, "stop": stop,
                      "thread_end": session.finished_since(thread, ends) if p.wait else None})
    return run


_pause = _moving(lambda session, p: session.pause(p.thread_id, p.wait, p.timeout))
_wait = _moving(lambda session, p: session.wait_for_stop(p.timeout))


# -- looking ---------------------------------------------------------------------------------------------

async def _threads(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    return {"threads": await session_of(ctx, p.session).threads()}


async def _tasks(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    return {"async_tasks": await session_of(ctx, p.session).tasks()}


async def _stack(ctx: Context, p: P.StackParams) -> dict[str, Any]:
    frames, total = await session_of(ctx, p.session).stack(p.thread_id, p.start, p.levels)
    return {"frames": frames, "total": total}


async def _scopes(ctx: Context, p: P.FrameParams) -> dict[str, Any]:
    return {"scopes": await session_of(ctx, p.session).scopes(p.frame_id)}


async def _variables(ctx: Context, p: P.VariablesParams) -> VariablePage:
    return await session_of(ctx, p.session).variables(p.ref, p.start, p.count)


async def _evaluate(ctx: Context, p: P.EvaluateParams) -> dict[str, Any]:
    return {"variable": await session_of(ctx, p.session).evaluate(p.expression, p.frame_id, p.context)}


async def _set_variable(ctx: Context, p: P.SetVariableParams) -> dict[str, Any]:
    return {"variable": await session_of(ctx, p.session).set_variable(p.ref, p.name, p.value)}


async def _completions(ctx: Context, p: P.CompletionsParams) -> dict[str, Any]:
    return {"targets": await session_of(ctx, p.session).completions(p.text, p.frame_id)}


async def _source(ctx: Context, p: P.SourceParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    text = await session.source(await _frame(session, p.frame_id) if p.frame_id is not None else None)
    digest = hashlib.sha256(str(text).encode()).hexdigest()
    same = digest == p.known_hash  # the caller has this text already: it is not sent again
    return {"source": "" if same else str(text), "source_changed": text.changed, "source_note": text.note,
            "hash": digest, "same": same}


async def _frame(session: Session, frame_id: int) -> Frame:
    """Frame ``frame_id`` of the stop (``invalid_request`` when no thread of the stop holds it)."""
    session.require_paused()
    frames, _ = await session.stack(None, 0, None)
    for frame in frames:
        if frame.id == frame_id:
            return frame
    raise RelayError("invalid_request", f"Session {session.name} has no frame {frame_id} at this stop.",
                     "List the frames with stack and pass the id of one of them as frame_id.",
                     {"field": "frame_id", "frame_id": frame_id})


async def _output(ctx: Context, p: P.OutputParams) -> OutputPage:
    return session_of(ctx, p.session).output.read(p.since, p.limit)


async def _input(ctx: Context, p: P.InputParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    session.require_live()
    if not p.text and not p.eof:
        raise RelayError("invalid_request", "There is nothing to send: give text, or eof to end the input.",
                         "e.g. input(text=\"yes\\n\") or input(eof=true).")
    await session.backend.send_input(p.text, p.eof)
    return {}


# -- ending ----------------------------------------------------------------------------------------------

async def _terminate(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    if not session.ended:
        session.stopped_by_user = True  # its exit code is our kill: list and status say the user stopped it
    await ctx.manager.close_session(session)
    return {"state": session.state, "exit_code": session.exit_code}


async def _delete(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    await _terminate(ctx, p)
    ctx.manager.forget(session)
    return {"deleted": True}


async def _detach(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    await session.detach()
    return {"state": session.state}


async def _restart(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    backend = session.backend
    if backend.kind == "remote":
        raise RelayError("unsupported", f"Session {session.name} runs on a remote relay; restarting it from here is "
                         "not supported.", "Stop it, then launch it again with --on.")
    if factory.is_dap(backend) and not session.ended and backend.capabilities.get("supportsRestartRequest"):
        await backend.restart()
    else:
        await session.restart()
    return {"state": session.state}


async def _reconnect(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    if not factory.is_mycel(session.backend):
        raise RelayError("unsupported", f"Session {session.name} is a {session.backend.kind} session; only Mycel "
                         "sessions reconnect.", "Launch or attach it again instead.")
    await session.reconnect()
    return {"state": session.state}


# -- breakpoints -----------------------------------------------------------------------------------------

def _owner(ctx: Context, key: str | None) -> str | None:
    """The id of the session named ``key`` (``session_not_found`` when there is none), or None."""
    return None if key is None else ctx.manager.get(key).id


def _seen(ctx: Context, p: P.BreakpointIdParams) -> Breakpoint:
    """Breakpoint ``p.id``, which session ``p.session`` (if given) must see."""
    bp = ctx.manager.breakpoints.get(p.id)
    owner = _owner(ctx, p.session)
    if owner is not None and not applies(bp, owner):
        raise RelayError("invalid_request", f"Breakpoint {bp.id} belongs to session {bp.session}, not {owner}.",
                         f"List {owner}'s breakpoints with breakpoints(session={owner!r}).", {"field": "id"})
    return bp


async def _breakpoints(ctx: Context, p: P.BreakpointScope) -> dict[str, Any]:
    store = ctx.manager.breakpoints
    for moved in store.refresh():  # where their files' edits took them, even with no session to poll for them
        await ctx.manager.sync_breakpoints(moved)
    return {"breakpoints": store.list(_owner(ctx, p.session)), "exceptions": store.exceptions}


def _required(p: Any, kind: str, *names: str, hint: str | None = None) -> None:
    missing = [n for n in names if getattr(p, n) is None]
    if missing:
        raise RelayError("invalid_request", f"A {kind} breakpoint needs {' and '.join(missing)}.", hint)


async def _add_breakpoint(ctx: Context, p: P.ScopedBreakpointParams) -> dict[str, Any]:
    store = ctx.manager.breakpoints
    owner = _owner(ctx, p.session)
    p = located(p)
    if p.kind == "line":
        _required(p, "line", "path", *(() if p.content else ("line",)),
                  hint='Give line or content, or write the path as FILE:LINE or FILE:"TEXT OF THE LINE".')
        bp = store.add_line(p.path, p.line, p.condition, p.hit_condition, p.log_message, owner, p.content, p.task)
    elif p.task is not None:
        raise RelayError("invalid_request", f"A {p.kind} breakpoint cannot have a task; a line breakpoint can.",
                         "Give the task to a line breakpoint: path, line and task.", {"field": "task"})
    elif p.kind == "function":
        _required(p, "function", "name")
        bp = store.add_function(p.name, p.condition, owner)
    elif p.kind == "output":
        _required(p, "output", "pattern")
        bp = store.add_output(p.pattern, owner)
    else:
        _required(p, "stage", "flow", "stage")
        bp = store.add_stage(p.flow, p.stage, p.rule_index, p.condition, owner)
    await ctx.manager.sync_breakpoints(bp)
    return {"breakpoint": bp}


async def _remove_breakpoint(ctx: Context, p: P.BreakpointIdParams) -> dict[str, Any]:
    bp = ctx.manager.breakpoints.remove(_seen(ctx, p).id)
    await ctx.manager.sync_breakpoints(bp)
    return {"breakpoint": bp}


async def _update_breakpoint(ctx: Context, p: P.UpdateBreakpointParams) -> dict[str, Any]:
    bp = _seen(ctx, p)
    ctx.manager.breakpoints.update(bp.id, condition=p.condition, hit_condition=p.hit_condition,
                                   log_message=p.log_message)
    if p.enabled is not None:
        bp.enabled = p.enabled
    await ctx.manager.sync_breakpoints(bp)
    return {"breakpoint": bp}


async def _set_exceptions(ctx: Context, p: P.ExceptionsParams) -> dict[str, Any]:
    store = ctx.manager.breakpoints
    store.set_exceptions(p.mode, p.types)
    await ctx.manager.sync_exceptions()
    return {"exceptions": p.mode, "exception_types": store.exception_types}


async def _condition_errors(ctx: Context, p: P.ConditionErrorsParams) -> dict[str, Any]:
    ctx.manager.breakpoints.stop_on_condition_error = p.stop
    await ctx.manager.sync_condition_errors()
    return {"stop_on_error": p.stop}


# -- the table -------------------------------------------------------------------------------------------

_STEP_ALIAS = {"wait": False}  # comm v1: steps answer at once unless asked to wait
_START_ERRORS = ("invalid_request", "file_not_found", "syntax_error", "adapter_failed", "connection_failed",
                 "timeout")

OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    Operation("sessions", P.NoParams, _sessions, "List the sessions of this relay.", ("sessions",),
              when="Use it to find the session ids to pass as `session`.",
              http=("GET /sessions",)),
    Operation("status", P.SessionParams, _status, "A session's state, target, stop and exit code.", ("session",),
              SESSION_ERRORS,
              when="Use it to poll a running session or to see where a paused one stopped.",
              http=(f"GET {S}",)),
    Operation("launch", P.LaunchParams, _launch, "Start a Python script or module under the debugger.",
              ("session", "unverified", "warnings"), _START_ERRORS, budget=lambda p, t: 60.0,
              when="Use it first: set breakpoints, then launch; it waits for the first stop or the end.",
              http=(f"POST {S}/launch",),
              example={"program": "train.py", "args": ["--epochs", "10"], "env": {"CUDA_VISIBLE_DEVICES": "0"},
                       "timeout": 10}),
    Operation("attach", P.AttachParams, _attach, "Attach to a running Python process by port or pid.",
              ("session", "unverified", "warnings"), _START_ERRORS, budget=lambda p, t: 60.0,
              when="Use it for a process already running under `python -m debugpy --listen PORT`, or by pid.",
              http=(f"POST {S}/attach",),
              example={"port": 5678, "timeout": 10}),
    Operation("connect", P.ConnectParams, _connect, "Connect to a Mycel service, an EZ program or a DAP adapter.",
              ("session", "unverified", "warnings"), _START_ERRORS, budget=lambda p, t: 60.0,
              when="Use it for a Mycel service (kind mycel), an EZ program (kind ez) or another DAP adapter (kind "
                   "dap).",
              http=(f"POST {S}/connect",),
              example={"kind": "mycel", "url": "ws://127.0.0.1:9090/debug"}),
    Operation("continue", P.ResumeParams, _resume("continue"), "Run until the next stop or the end.",
              ("state", "stop", "thread_end"), PAUSED_ERRORS, aliases={"continue": _STEP_ALIAS}, budget=waits,
              when="Use it to run on to the next breakpoint or to the end.",
              http=(f"POST {S}/continue",),
              example={"timeout": 10}),
    Operation("next", P.ResumeParams, _resume("next"), "Step over one line.", ("state", "stop", "thread_end"),
              PAUSED_ERRORS, aliases={"next": _STEP_ALIAS}, budget=waits,
              when="Use it to execute the current line and stop at the next one in the same function.",
              http=(f"POST {S}/step-over",),
              example={"timeout": 10}),
    Operation("step_in", P.ResumeParams, _resume("stepIn"), "Step into the call on this line.",
              ("state", "stop", "thread_end"), PAUSED_ERRORS, aliases={"stepIn": _STEP_ALIAS}, budget=waits,
              when="Use it to follow the call on the current line into the called function.",
              http=(f"POST {S}/step-into",),
              example={}),
    Operation("step_out", P.ResumeParams, _resume("stepOut"), "Run until the current function returns.",
              ("state", "stop", "thread_end"), PAUSED_ERRORS, aliases={"stepOut": _STEP_ALIAS}, budget=waits,
              when="Use it to finish the current function and stop in its caller.",
              http=(f"POST {S}/step-out",),
              example={}),
    Operation("pause", P.ResumeParams, _pause, "Pause a running target.", ("state", "stop"), PAUSED_ERRORS,
              aliases={"pause": _STEP_ALIAS}, budget=waits,
              when="Use it on a running target that seems stuck (a loop, a wait) to see where it is.",
              http=(f"POST {S}/pause",),
              example={}),
    Operation("wait", P.WaitParams, _wait, "Wait for the next stop or the end.", ("state", "stop"), PAUSED_ERRORS,
              budget=waits,
              when="Use it after a call answered state running, to wait again for the stop or the end.",
              http=(f"POST {S}/wait",),
              example={"timeout": 30}),
    Operation("threads", P.SessionParams, _threads, "The target's threads.", ("threads",), PAUSED_ERRORS,
              when="Use it on multi-threaded targets to pick a thread_id.",
              http=(f"GET {S}/threads",)),
    Operation("tasks", P.SessionParams, _tasks,
              "The target's asyncio tasks on every event loop: state, where each waits, which tasks it awaits.",
              ("async_tasks",), (*PAUSED_ERRORS, "evaluation_failed", "unsupported"),
              when="Use it when paused in an asyncio program to see every task and what awaits what, as a tree.",
              http=(f"GET {S}/tasks",)),
    Operation("stack", P.StackParams, _stack, "The call stack of a stopped thread.", ("frames", "total"),
              PAUSED_ERRORS,
              when="Use it when paused to see how the target got here; frame ids feed scopes and evaluate.",
              http=(f"GET {S}/stacktrace",)),
    Operation("scopes", P.FrameParams, _scopes, "The variable scopes of a frame.", ("scopes",), PAUSED_ERRORS,
              when="Use it when paused to get the refs of a frame's locals and globals, then call variables.",
              http=(f"GET {S}/frames/{{frame_id}}/scopes",)),
    Operation("variables", P.VariablesParams, _variables, "A page of a value's children.", ("items", "start", "total"),
              PAUSED_ERRORS,
              when="Use it with a ref from scopes (or a variable's ref) to page through values lazily.",
              http=(f"GET {S}/variables/{{ref}}",)),
    Operation("evaluate", P.EvaluateParams, _evaluate, "Evaluate an expression in a frame.", ("variable",),
              (*PAUSED_ERRORS, "evaluation_failed"),
              when="Use it when paused to read any expression in the stopped frame (or frame_id).",
              http=(f"POST {S}/evaluate",),
              example={"expression": "len(items)"}),
    Operation("set_variable", P.SetVariableParams, _set_variable, "Give a variable a new value.", ("variable",),
              PAUSED_ERRORS, capability="supportsSetVariable", aliases={"setVariable": {}},
              when="Use it when paused to try a fix in place: a new value for a variable.",
              http=(f"POST {S}/variables/{{ref}}/set",),
              example={"name": "i", "value": "3"}),
    Operation("completions", P.CompletionsParams, _completions, "Completions of a text in a frame.",
              ("targets",), PAUSED_ERRORS, capability="supportsCompletionsRequest",
              when="Use it to discover names available in the stopped frame.",
              http=(f"POST {S}/completions",),
              example={"text": "pri"}),
    Operation("source", P.SourceParams, _source, "The source text of the stopped frame, with its SHA-256.",
              ("source", "source_changed", "source_note", "hash", "same"),
              PAUSED_ERRORS,
              when="Use it to read the code around the stop when you do not have the file.",
              http=(f"GET {S}/source",)),
    Operation("output", P.OutputParams, _output, "The target's output from a cursor.",
              ("chunks", "cursor", "dropped"), SESSION_ERRORS,
              when="Use it to read what the target printed; pass the returned cursor as since next time.",
              http=(f"GET {S}/output",)),
    Operation("input", P.InputParams, _input, "Send text to the target's stdin.", (), SESSION_ERRORS,
              when="Use it when the target waits on stdin (input()); end lines with a newline.",
              http=(f"POST {S}/input",),
              example={"text": "yes\n"}),
    Operation("terminate", P.SessionParams, _terminate, "Stop the target and end the session.",
              ("state", "exit_code"), SESSION_ERRORS, budget=lambda p, t: 15.0,
              when="Use it when done: it kills the target and ends the session (which stays listed, with its output).",
              http=(f"POST {S}/terminate",),
              example={}),
    Operation("delete", P.SessionParams, _delete, "End the session if it runs, and remove it from the relay.",
              ("deleted",), SESSION_ERRORS, budget=lambda p, t: 15.0,
              when="Use it to clean up a session you no longer need: afterwards its id is not found.",
              http=(f"DELETE {S}",)),
    Operation("detach", P.SessionParams, _detach, "Leave the target running and end the session.", ("state",),
              SESSION_ERRORS, budget=lambda p, t: 10.0,
              when="Use it to leave an attached process running and stop debugging it.",
              http=(f"POST {S}/detach",),
              example={}),
    Operation("restart", P.SessionParams, _restart, "Start the target again with the same options.", ("state",),
              _START_ERRORS, budget=lambda p, t: 60.0,
              when="Use it after editing the target's code to run it again with the same options.",
              http=(f"POST {S}/restart",),
              example={}),
    Operation("reconnect", P.SessionParams, _reconnect, "Open a Mycel session's dropped socket again.", ("state",),
              (*SESSION_ERRORS, "connection_failed", "unsupported"), budget=lambda p, t: 60.0,
              when="Use it when a Mycel session's connection dropped.",
              http=(f"POST {S}/reconnect",),
              example={}),
    Operation("breakpoints", P.BreakpointScope, _breakpoints, "The relay's breakpoints and exception mode.",
              ("breakpoints", "exceptions"), ("session_not_found",),
              when="Use it to see which breakpoints exist and whether they are verified.",
              http=(f"GET {S}/breakpoints", "GET /breakpoints")),
    Operation("add_breakpoint", P.ScopedBreakpointParams, _add_breakpoint,
              "Add a line, function, stage or output breakpoint (of one session, or of every session).",
              ("breakpoint",), ("invalid_request", "session_not_found", "file_not_found", "invalid_line",
                                "invalid_condition"),
              aliases={"setBreakpoint": {}},
              when="Use it before launch (or while running) to stop at a line; condition makes it conditional; session "
                   "makes it that session's only.",
              http=(f"POST {S}/breakpoints", "POST /breakpoints"),
              example={"path": "main.py", "line": 3, "condition": "i > 100"}),
    Operation("remove_breakpoint", P.BreakpointIdParams, _remove_breakpoint, "Remove a breakpoint.",
              ("breakpoint",), ("invalid_request", "session_not_found"), aliases={"removeBreakpoint": {}},
              when="Use it with a breakpoint id from add_breakpoint or breakpoints.",
              http=(f"DELETE {S}/breakpoints/{{id}}", "DELETE /breakpoints/{id}")),
    Operation("update_breakpoint", P.UpdateBreakpointParams, _update_breakpoint,
              "Change a breakpoint in place: enable or disable it, or its condition, hit condition or log message.",
              ("breakpoint",), ("invalid_request", "session_not_found", "invalid_condition"),
              aliases={"enableBreakpoint": {"enabled": True}},
              when="Use it to switch a breakpoint off (enabled false) without losing it, or to change its condition, "
                   "hit condition or log message on live sessions.",
              http=(f"PATCH {S}/breakpoints/{{id}}", "PATCH /breakpoints/{id}"),
              example={"enabled": False}),
    Operation("set_exceptions", P.ExceptionsParams, _set_exceptions,
              "Stop on raised, uncaught or no exceptions, of some types only if given.",
              ("exceptions", "exception_types"), ("invalid_request",),
              when="Use it to stop where an exception is raised (raised) or only when none catches it; types limits "
                   "it to some exception classes.",
              http=(f"POST {S}/exception-breakpoints",),
              example={"mode": "raised", "types": ["ValueError"]}),
    Operation("condition_errors", P.ConditionErrorsParams, _condition_errors,
              "Whether a breakpoint whose condition fails stops there.", ("stop_on_error",),
              when="Use it when a conditional breakpoint's condition fails (NameError, TypeError): stop there "
                   "(true, the default) or let the target run on (false).",
              http=(f"POST {S}/condition-errors",),
              example={"stop": False}),
)}

OPERATIONS.update({op.name: op for op in created.operations(OPERATIONS)})
OPERATIONS.update({op.name: op for op in tools.OPERATIONS})
OPERATIONS.update({op.name: op for op in doctor.OPERATIONS})
OPERATIONS.update({op.name: op for op in watching.OPERATIONS})
OPERATIONS.update({op.name: op for op in snapshot.OPERATIONS})
OPERATIONS.update({op.name: op for op in editors.OPERATIONS})
OPERATIONS.update({op.name: op for op in keeping.operations(OPERATIONS)})

# What each result key holds: the type the HTTP API's and MCP's result schemas are made from.
RESULT_TYPES: dict[str, Any] = {
    "session": SessionInfo, "sessions": list[SessionInfo], "state": str, "stop": StopInfo | None,
    "threads": list[Thread], "frames": list[Frame], "total": int, "scopes": list[Scope], "items": list[Variable],
    "start": int, "variable": Variable, "targets": list[str], "source": str, "chunks": list[OutputChunk],
    "cursor": int, "dropped": int, "exit_code": int | None, "breakpoints": list[Breakpoint],
    "breakpoint": Breakpoint, "exceptions": str, "exception_types": list[str], "stop_on_error": bool,
    "thread_end": dict[str, Any] | None, "source_changed": bool, "source_note": str, "hash": str, "same": bool,
    "watches": list[Watch], "async_tasks": AsyncTasks,
    "timeout_minutes": float | None, "profiles": list[str], "profile": keeping.NamedProfile,
    "export": keeping.SessionExport, "deleted": bool, "unverified": list[Breakpoint], "warnings": list[str],
}
RESULT_TYPES.update(tools.RESULT_TYPES)
RESULT_TYPES.update(doctor.RESULT_TYPES)
RESULT_TYPES.update(snapshot.RESULT_TYPES)
RESULT_TYPES.update(editors.RESULT_TYPES)

OPERATIONS.update({op.name: op for op in remote.OPERATIONS})
RESULT_TYPES.update(remote.RESULT_TYPES)

# Mycel's own verbs: a group of their own.
OPERATIONS.update({op.name: op for op in mycel.OPERATIONS})
RESULT_TYPES.update(mycel.RESULT_TYPES)
OPERATIONS.update({op.name: op for op in ray.OPERATIONS})
RESULT_TYPES.update(ray.RESULT_TYPES)
# Back in time: record, history, back, forward (operations/history.py).
from . import history  # noqa: E402 - kept in this block

OPERATIONS.update({op.name: op for op in history.OPERATIONS})
RESULT_TYPES.update(history.RESULT_TYPES)
