"""The verbs behind ``%debug_session`` and ``%bp``: the current session, the selected frame, result objects."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Callable
from typing import Any

from ..errors import RelayError
from ..facade.handles import SessionHandle
from ..facade.relay import Relay
from ..model import StopInfo, Variable
from ..operations import OPERATIONS, parse
from ..pull import DEFAULT_MAX_BYTES, pull
from ..source.lines import file_line
from ..text import short_path, stop_with_line
from .editing import EditingCommands
from .grammar import Command, parse_session_line, usage
from .help import HELP, word_help
from .keeping import KeepingCommands
from .mycel_commands import MycelCommands
from .parsing import BpCommand, parse_bp_line
from .remotes import RemoteCommands
from .replaying import ReplayResult
from .results import (
    BreakpointsResult,
    ErrorResult,
    OutputResult,
    ProcessesResult,
    Result,
    SessionsResult,
    StackResult,
    StatusResult,
    StopResult,
    ThreadsResult,
    ValueResult,
    VariablesResult,
)
from .serving import ServeCommands
from .watching import WatchCommands

log = logging.getLogger(__name__)

_SOURCE, _SESSIONS = OPERATIONS["source"], OPERATIONS["sessions"]


def guarded(run: Callable[[Any, str], Result]) -> Callable[[Any, str], Any]:
    """Turn every failure into an ``ErrorResult``: the user sees one line, never our traceback."""

    @functools.wraps(run)
    def wrapper(self: Any, line: str) -> Any:
        try:
            return run(self, line)
        except RelayError as exc:
            return ErrorResult(exc)
        except Exception as exc:  # a bug of ours still reaches the user as one line
            log.exception("debug magic failed: %s", line)
            return ErrorResult(RelayError("invalid_request", f"The command failed: {type(exc).__name__}: {exc}",
                                          "This is a bug in jupyter_debug_relay; the session is unchanged."))

    return wrapper


class Commands(MycelCommands, EditingCommands, WatchCommands, KeepingCommands, ServeCommands, RemoteCommands):
    """Runs magic lines against one ``Relay``; remembers the current session and the selected frame."""

    def __init__(self, relay: Relay, namespace: dict[str, Any] | None = None) -> None:
        self.relay = relay
        self.namespace = namespace if namespace is not None else {}
        self.current: str | None = None
        self._current: SessionHandle | None = None
        self._selected: dict[str, tuple[int, int, int]] = {}  # session id -> (id of the stop, index, frame id)
        self.server: Any = None  # the RelayServer of `serve`, while it runs

    # -- entry points -----------------------------------------------------------------------

    @guarded
    def run_session(self, line: str) -> Any:
        command = parse_session_line(line)
        return getattr(self, "do_" + command.verb)(command)

    @guarded
    def run_bp(self, line: str) -> Any:
        command = parse_bp_line(line)
        return getattr(self, "bp_" + command.verb)(command)

    # -- helpers ----------------------------------------------------------------------------

    def session(self, name: str | None = None) -> SessionHandle:
        """The named session, or the current one."""
        if name is None and self._current is not None:
            return self._current  # ids are never reused: no hop to look it up again
        key = name or self.current
        if key is None:
            started = self.relay.sessions  # e.g. by a comm request: the latest one is current
            if started:
                return self._adopt(started[-1])
            raise RelayError("session_not_found", "No debug session is running in this kernel.",
                             "Start one with `%debug_session launch SCRIPT` (see `%debug_session help`).")
        return self.relay.get(key)

    def _adopt(self, handle: SessionHandle) -> SessionHandle:
        self.current, self._current = handle.id, handle
        return handle

    def _run(self, command: Command, handle: SessionHandle | None = None, **args: Any) -> Any:
        """Run the command's operation with its arguments (and ``args``) on ``handle``'s session."""
        given = {**command.args, **args}
        if handle is not None:
            given["session"] = handle.id
        return self.relay.operations.call(command.magic.operation, given)

    def _start(self, command: Command, **args: Any) -> SessionHandle:
        return self._adopt(self.relay.get(self._run(command, **args)["session"].id))

    def _prefix(self, handle: SessionHandle) -> str:
        live = [h for h in self.relay.sessions if h.state not in ("terminated", "failed")]
        return f"[{handle.name}] " if len(live) > 1 else ""

    def _stop_result(self, handle: SessionHandle, stop: StopInfo | None, waited: float | None = None,
                     prefix: str | None = None) -> StopResult:
        source = None
        if stop is not None and stop.frame is not None:
            try:
                source = handle.source(stop.frame)
            except RelayError:
                source = None
        prefix = self._prefix(handle) if prefix is None else prefix
        return StopResult(handle.name, handle.state, stop, handle.exit_code, source, waited, prefix)

    def _wait(self, handle: SessionHandle, timeout: Any, prefix: str | None = None) -> StopResult:
        args = {"session": handle.id} if timeout is None else {"session": handle.id, "timeout": timeout}
        return self._stepped(handle, "wait", args, prefix)

    def _stepped(self, handle: SessionHandle, name: str, args: dict[str, Any], prefix: str | None = None
                 ) -> StopResult:
        """Run a step or a wait and gather what its result shows (source, live sessions) in the same hop.

        The stop it waits for, or "still running" past the timeout, or the end of the target.
        """
        op, params = parse(name, args)
        session = {"session": handle.id}

        note = ""

        async def step_and_look() -> tuple[StopInfo | None, float | None, str | None, list[Any], Any, list[Any]]:
            nonlocal note
            stop, waited, source, end, watches = None, None, None, None, []
            try:
                result = await op.run(self.relay, params)
                stop, end, watches = result["stop"], result.get("thread_end"), result.get("watches", [])
            except RelayError as exc:
                if exc.code not in ("timeout", "target_exited"):
                    raise
                waited = params.timeout if exc.code == "timeout" else None
                note = exc.details.get("note") or ""
            if stop is not None and stop.frame is not None:
                try:
                    source = (await _SOURCE.run(self.relay, _SOURCE.params(**session)))["source"]
                except RelayError:
                    source = None
            return stop, waited, source, (await _SESSIONS.run(self.relay, _SESSIONS.params()))["sessions"], end, watches

        budget = op.budget(params, self.relay.request_timeout)
        stop, waited, source, infos, end, watches = self.relay.call(step_and_look(), budget)
        if prefix is None:
            live = [i for i in infos if i.state not in ("terminated", "failed")]
            prefix = f"[{handle.name}] " if len(live) > 1 else ""
        return StopResult(handle.name, handle.state, stop, handle.exit_code, source, waited, prefix, end, note,
                          watches)

    def _frame_id(self, handle: SessionHandle) -> int | None:
        stop = handle.stop
        chosen = self._selected.get(handle.id)
        if stop is not None and chosen is not None and chosen[0] == id(stop):
            return chosen[2]
        return None

    # -- starting ---------------------------------------------------------------------------

    def do_launch(self, command: Command) -> StopResult:
        return self._started(self._start(command), command)

    def _started(self, handle: SessionHandle, command: Command) -> StopResult:
        prefix = f"{handle.name}: "
        if command.extras.get("no_wait"):
            return self._stop_result(handle, None, prefix=prefix)
        return self._wait(handle, command.extras.get("timeout"), prefix)

    def do_attach(self, command: Command) -> Result:
        if command.extras.get("list"):
            return ProcessesResult(self.relay.operations.call("processes")["processes"])
        handle = self._start(command)
        return self._stop_result(handle, handle.stop, prefix=f"{handle.name}: ")

    def do_connect(self, command: Command) -> StopResult:
        kind, target = command.args.get("kind"), command.extras.get("target")
        if kind in ("mycel", "ez") and not target:
            what = "URL" if kind == "mycel" else "PROGRAM"
            raise RelayError("invalid_request", f"connect {kind} needs a {what}.", "See `%debug_session help`.")
        handle = self._start(command, **({} if target is None else {"url" if kind == "mycel" else "program": target}))
        if kind == "dap" and "attach" not in command.args:
            return self._started(handle, command)
        return self._stop_result(handle, handle.stop, prefix=f"{handle.name}: ")

    # -- sessions ---------------------------------------------------------------------------

    def do_help(self, command: Command) -> Result:
        word = command.extras.get("word")
        return Result(word_help(word) if word else HELP.rstrip())

    def do_list(self, command: Command) -> SessionsResult:
        return SessionsResult(self._run(command)["sessions"], self.current)

    def do_use(self, command: Command) -> Result:
        name = command.extras.get("name")
        if not name:
            raise RelayError("invalid_request", "`use` needs a session id or name.", f"Usage: {usage(command.magic)}")
        handle = self._adopt(self.relay.get(name))
        return Result(f"current session: {handle.name} ({handle.id}, {handle.state})")

    def do_create(self, command: Command) -> StatusResult:
        info = self._run(command)["session"]
        self.current = info.id
        return StatusResult(info)

    def do_status(self, command: Command) -> StatusResult:
        return StatusResult(self._run(command, self.session(command.session))["session"])

    def do_threads(self, command: Command) -> ThreadsResult:
        handle = self.session(command.session)
        stop = handle.stop
        return ThreadsResult(self._run(command, handle)["threads"], stop.thread_id if stop else None)

    # -- running ----------------------------------------------------------------------------

    def _step(self, command: Command) -> StopResult:
        handle = self.session(command.session)
        if handle.state in ("terminated", "failed"):
            return self._run(command, handle)  # raises target_exited (or the failure) with its hint
        return self._stepped(handle, command.magic.operation, {**command.args, "session": handle.id})

    do_continue = do_next = do_step = do_out = do_pause = _step

    def do_wait(self, command: Command) -> StopResult:
        return self._wait(self.session(command.session), command.args.get("timeout"))

    # -- looking ----------------------------------------------------------------------------

    def do_where(self, command: Command) -> StackResult:
        handle = self.session(command.session)
        stack = self._run(command, handle)
        chosen = self._selected.get(handle.id)
        selected = chosen[1] if chosen and handle.stop is not None and chosen[0] == id(handle.stop) else 0
        frames = stack["frames"]
        stop = handle.stop
        lines = [stop.source_line if stop is not None and stop.frame is not None and f.id == stop.frame.id
                 else file_line(f.path, f.line) for f in frames]
        return StackResult(frames, selected, command.args.get("start", 0), stack["total"], lines)

    def do_frame(self, command: Command) -> StopResult:
        handle = self.session(command.session)
        index = command.extras.get("index")
        if index is None:
            raise RelayError("invalid_request", "`frame` needs a frame number.", f"Usage: {usage(command.magic)}")
        frames = handle.stack()
        if not 0 <= index < len(frames):
            raise RelayError("invalid_request", f"There is no frame {index}; the stack has {len(frames)}.",
                             "See the frames with `%debug_session where`.")
        stop = handle.stop
        assert stop is not None  # stack() succeeded, so the session is paused
        self._selected[handle.id] = (id(stop), index, frames[index].id)
        frame = frames[index]
        result = self._stop_result(handle, dataclasses.replace(stop, frame=frame, source_line=""))
        assert result.stop is not None
        head = f"frame #{index}: {frame.name}() at {short_path(frame.path)}:{frame.line}"
        result.text = stop_with_line(result.stop, head)
        return result

    def do_vars(self, command: Command) -> VariablesResult:
        handle = self.session(command.session)
        target, scope_name = command.extras.get("target"), command.extras.get("scope")
        frame_id = self._frame_id(handle)
        if target is None or scope_name:
            scopes = handle.scopes(frame_id)
            if not scopes:
                raise RelayError("not_paused", "This frame has no variables to show.")
            scope = _pick_scope(scopes, scope_name)
            ref, title = scope.ref, scope.name
        elif target.isdigit():
            ref, title = int(target), f"ref {target}"
        else:
            value = self._lookup(handle, frame_id, target)
            if not value.ref:
                return VariablesResult(target, [value])
            ref, title = value.ref, f"{target} ({value.type})" if value.type else target
        page = self._run(command, handle, ref=ref)
        return VariablesResult(title, page.items, page.start, page.total)

    @staticmethod
    def _lookup(handle: SessionHandle, frame_id: int | None, name: str) -> Variable:
        for scope in handle.scopes(frame_id)[:1]:
            for var in handle.variables(scope.ref, 0, 1000).items:
                if var.name == name:
                    return var
        return handle.evaluate(name, frame_id, context="watch")

    def do_scopes(self, command: Command) -> Result:
        handle = self.session(command.session)
        frame = {} if "frame_id" in command.args else {"frame_id": self._frame_id(handle)}
        scopes = self._run(command, handle, **frame)["scopes"]
        result = Result("\n".join(f"{s.name}  (ref {s.ref})" for s in scopes) or "no scopes")
        result.scopes = scopes
        return result

    def do_source(self, command: Command) -> Result:
        found = self._run(command, self.session(command.session))
        note = f"# note: {found['source_note']}\n" if found["source_note"] else ""
        result = Result(note + found["source"])
        result.source, result.note = found["source"], found["source_note"]
        return result

    def do_complete(self, command: Command) -> Result:
        handle = self.session(command.session)
        frame = {} if "frame_id" in command.args else {"frame_id": self._frame_id(handle)}
        targets = self._run(command, handle, **frame)["targets"]
        result = Result("\n".join(targets) or "no completions")
        result.targets = targets
        return result

    def do_eval(self, command: Command) -> ValueResult:
        handle = self.session(command.session)
        frame = {} if "frame_id" in command.args else {"frame_id": self._frame_id(handle)}
        return ValueResult(self._run(command, handle, **frame)["variable"])

    do_hover = do_eval  # the same line, evaluated in hover context and cut short

    def do_pull(self, command: Command) -> Result:
        handle = self.session(command.session)
        expression = command.text
        local = command.extras.get("as") or expression
        if not local.isidentifier():
            raise RelayError("invalid_request", f"{expression!r} is not a name to store the value under.",
                             f"Add --as NAME, e.g. `%debug_session pull {expression} --as value`.")
        value = pull(handle, expression, self._frame_id(handle), command.extras.get("max_bytes") or DEFAULT_MAX_BYTES)
        self.namespace[local] = value
        result = Result(f"pulled {expression} into {local} ({type(value).__name__})")
        result.value, result.name = value, local
        return result

    # -- output -----------------------------------------------------------------------------

    def do_output(self, command: Command) -> Result:
        handle = self.session(command.session)
        if command.extras.get("clear"):
            return self._clear_output(handle)
        return OutputResult(self._run(command, handle), command.extras.get("tail"))

    def do_input(self, command: Command) -> Result:
        handle = self.session(command.session)
        eof = bool(command.args.get("eof"))
        text = command.text + "\n" if command.text or not eof else ""
        self._run(command, handle, text=text)
        return Result(f"sent {len(text)} characters to {handle.name}" + (" and end of file" if eof else ""))

    def do_panel(self, command: Command) -> Any:
        from ..widgets import DebuggerPanel

        name = command.session or self.current
        return DebuggerPanel(self.relay.get(name) if name else self.relay)

    def do_replay(self, command: Command) -> ReplayResult:
        self.relay.flush_recordings()  # a session of this kernel that just ended is on disk whole
        return ReplayResult.of(command.extras.get("source") or "current")

    # -- ending -----------------------------------------------------------------------------

    def do_stop(self, command: Command) -> Result:
        handle = self.session(command.session)
        if handle.state in ("terminated", "failed"):
            code = handle.exit_code
            self._run(command, handle)  # closes what is left of it
            return Result(f"{handle.name} had already ended" + (f" (exit code {code})" if code is not None else ""))
        self._run(command, handle)  # the code of a killed target means nothing to the user: it is not shown
        return Result(f"{handle.name} stopped")

    def do_detach(self, command: Command) -> Result:
        handle = self.session(command.session)
        self._run(command, handle)
        return Result(f"detached from {handle.name}; the target keeps running")

    def do_restart(self, command: Command) -> StopResult:
        handle = self.session(command.session)
        self._run(command, handle)
        return self._wait(handle, None, prefix=f"{handle.name} restarted: ")

    def do_reconnect(self, command: Command) -> StopResult:
        handle = self.session(command.session)
        self._run(command, handle)
        return self._stop_result(handle, handle.stop, prefix=f"{handle.name} reconnected: ")

    # -- %bp --------------------------------------------------------------------------------

    def bp_line(self, command: BpCommand) -> BreakpointsResult:
        path = os.path.expanduser(command.spec.path or "")
        return BreakpointsResult([self.relay.breakpoints.add(
            path, command.spec.line, condition=command.spec.condition, hit_condition=command.spec.hit_condition,
            log_message=command.spec.log_message)])

    def bp_func(self, command: BpCommand) -> BreakpointsResult:
        return BreakpointsResult([self.relay.breakpoints.add_function(command.spec.name, command.spec.condition)])

    def bp_stage(self, command: BpCommand) -> BreakpointsResult:
        return BreakpointsResult([self.relay.breakpoints.add_stage(
            command.spec.flow, command.spec.stage, command.spec.rule_index, command.spec.condition)])

    def bp_output(self, command: BpCommand) -> BreakpointsResult:
        return BreakpointsResult([self.relay.breakpoints.add_output(command.spec.pattern or "")])

    def bp_exceptions(self, command: BpCommand) -> Result:
        mode = self.relay.breakpoints.exceptions(command.spec.name, command.types or None)
        only = f" ({', '.join(command.types)} only)" if command.types else ""
        result = Result(f"stop on exceptions: {mode}{only}")
        result.exceptions, result.types = mode, command.types
        return result

    def bp_condition_errors(self, command: BpCommand) -> Result:
        stop = self.relay.breakpoints.condition_errors(command.spec.name == "stop")
        result = Result("a breakpoint whose condition fails " + ("stops there" if stop else "lets the target run on"))
        result.stop_on_error = stop
        return result

    def bp_list(self, command: BpCommand) -> BreakpointsResult:
        return BreakpointsResult(self.relay.breakpoints.list(),
                                 "no breakpoints (add one with `%bp FILE:LINE`)")

    def bp_rm(self, command: BpCommand) -> Result:
        for bp_id in command.ids:
            self.relay.breakpoints.get(bp_id)  # every id must exist before any is removed
        result = Result("removed breakpoint " + ", ".join(str(i) for i in command.ids))
        result.breakpoints = [self.relay.breakpoints.remove(bp_id) for bp_id in command.ids]
        return result

    def bp_clear(self, command: BpCommand) -> Result:
        gone = self.relay.breakpoints.clear(command.spec.path)
        return Result(f"removed {len(gone)} breakpoint{'s' if len(gone) != 1 else ''}")

    def bp_disable(self, command: BpCommand) -> BreakpointsResult:
        return BreakpointsResult([self.relay.breakpoints.enable(command.ids[0], False)])

    def bp_enable(self, command: BpCommand) -> BreakpointsResult:
        return BreakpointsResult([self.relay.breakpoints.enable(command.ids[0], True)])


def _pick_scope(scopes: list, name: str | None):
    if not name:
        return scopes[0]
    for scope in scopes:
        if scope.name.lower().startswith(name.lower()):
            return scope
    raise RelayError("invalid_request", f"There is no scope {name!r}.",
                     "Scopes here: " + ", ".join(s.name for s in scopes) + ".")

