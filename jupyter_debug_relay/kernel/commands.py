"""The words of ``%debug_session`` and ``%bp``, gathered in one table: ``Commands`` runs a magic line by its word."""

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
from ..model import Variable, as_dict
from ..operations import snapshot
from ..pull import DEFAULT_MAX_BYTES, pull
from ..source.lines import file_line
from ..text import short_path, stop_with_line, unbound_lines, warnings_line
from .back_in_time import HistoryWords
from .context import Context, Words
from .editing import EditingWords
from .grammar import Command, parse_session_line, usage
from .help import HELP, word_help
from .keeping import KeepingWords
from .mycel_commands import MycelWords
from .parsing import BpCommand, parse_bp_line
from .ray_commands import RayWords
from .remotes import RemoteWords
from .replaying import ReplayResult
from .results import (
    BreakpointsResult,
    DoctorResult,
    ErrorResult,
    OutputResult,
    ProcessesResult,
    Result,
    SessionsResult,
    StackResult,
    StatusResult,
    StopResult,
    TasksResult,
    ThreadsResult,
    ValueResult,
    VariablesResult,
)
from .serving import ServeWords
from .watching import WatchWords

log = logging.getLogger(__name__)


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


class Commands:
    """Runs magic lines against one ``Relay``: each word is a method of one group of words over one ``Context``."""

    def __init__(self, relay: Relay, namespace: dict[str, Any] | None = None) -> None:
        self.relay = relay
        self.context = Context(relay, namespace)
        self.serving = ServeWords(self.context)
        groups: tuple[Words, ...] = (SessionWords(self.context), BreakpointWords(self.context),
                                     EditingWords(self.context), WatchWords(self.context),
                                     KeepingWords(self.context), MycelWords(self.context), RayWords(self.context),
                                     RemoteWords(self.context), HistoryWords(self.context),
                                     self.serving)
        self.words: dict[str, Callable[[Any], Result]] = {}  # do_WORD / bp_WORD -> the bound method
        for group in groups:
            for name in dir(type(group)):
                if name.startswith(("do_", "bp_")):
                    if name in self.words:
                        raise TypeError(f"{name} is defined by two groups of words")
                    self.words[name] = getattr(group, name)

    @property
    def current(self) -> str | None:
        """The current session's id."""
        return self.context.current

    @guarded
    def run_session(self, line: str) -> Any:
        command = parse_session_line(line)
        return self.words["do_" + command.verb](command)

    @guarded
    def run_bp(self, line: str) -> Any:
        command = parse_bp_line(line)
        return self.words["bp_" + command.verb](command)


class SessionWords(Words):
    """Starting, running, looking at and ending sessions."""

    def do_launch(self, command: Command) -> StopResult:
        handle, started = self.context.start(command)
        return _told(self._started(handle, command), started)

    def _started(self, handle: SessionHandle, command: Command) -> StopResult:
        prefix = f"{handle.name}: "
        if command.extras.get("no_wait"):
            return self.context.stop_result(handle, None, prefix=prefix)
        return self.context.wait(handle, command.extras.get("timeout"), prefix)

    def do_attach(self, command: Command) -> Result:
        if command.extras.get("list"):
            return ProcessesResult(self.relay.operations.call("processes")["processes"])
        handle, started = self.context.start(command)
        return _told(self.context.stop_result(handle, handle.stop, prefix=f"{handle.name}: "), started)

    def do_connect(self, command: Command) -> StopResult:
        kind, target = command.args.get("kind"), command.extras.get("target")
        if kind in ("mycel", "ez") and not target:
            what = "URL" if kind == "mycel" else "PROGRAM"
            raise RelayError("invalid_request", f"connect {kind} needs a {what}.", "See `%debug_session help`.")
        where = {} if target is None else {"url" if kind == "mycel" else "program": target}
        handle, started = self.context.start(command, **where)
        if kind == "dap" and "attach" not in command.args:
            return _told(self._started(handle, command), started)
        return _told(self.context.stop_result(handle, handle.stop, prefix=f"{handle.name}: "), started)

    # -- sessions ---------------------------------------------------------------------------

    def do_help(self, command: Command) -> Result:
        word = command.extras.get("word")
        return Result(word_help(word) if word else HELP.rstrip())

    def do_list(self, command: Command) -> SessionsResult:
        return SessionsResult(self.context.run(command)["sessions"], self.context.current)

    def do_doctor(self, command: Command) -> DoctorResult:
        return DoctorResult(self.context.run(command)["doctor"])

    def do_use(self, command: Command) -> Result:
        name = command.extras.get("name")
        if not name:
            raise RelayError("invalid_request", "`use` needs a session id or name.", f"Usage: {usage(command.magic)}")
        handle = self.context.adopt(self.relay.get(name))
        return Result(f"current session: {handle.name} ({handle.id}, {handle.state})")

    def do_create(self, command: Command) -> StatusResult:
        info = self.context.run(command)["session"]
        self.context.adopt(self.relay.get(info.id))
        return StatusResult(info)

    def do_status(self, command: Command) -> StatusResult:
        return StatusResult(self.context.run(command, self.context.session(command.session))["session"])

    def do_threads(self, command: Command) -> ThreadsResult:
        handle = self.context.session(command.session)
        stop = handle.stop
        return ThreadsResult(self.context.run(command, handle)["threads"], stop.thread_id if stop else None)

    # -- running ----------------------------------------------------------------------------

    def _step(self, command: Command) -> StopResult:
        handle = self.context.session(command.session)
        if handle.state in ("terminated", "failed"):
            return self.context.run(command, handle)  # raises target_exited (or the failure) with its hint
        return self.context.stepped(handle, command.magic.operation, {**command.args, "session": handle.id})

    do_continue = do_next = do_step = do_out = do_pause = _step

    def do_wait(self, command: Command) -> StopResult:
        return self.context.wait(self.context.session(command.session), command.args.get("timeout"))

    # -- looking ----------------------------------------------------------------------------

    def do_where(self, command: Command) -> StackResult:
        handle = self.context.session(command.session)
        stack = self.context.run(command, handle)
        chosen = self.context.selected.get(handle.id)
        selected = chosen[1] if chosen and handle.stop is not None and chosen[0] == id(handle.stop) else 0
        frames = stack["frames"]
        stop = handle.stop
        lines = [stop.source_line if stop is not None and stop.frame is not None and f.id == stop.frame.id
                 else file_line(f.path, f.line) for f in frames]
        return StackResult(frames, selected, command.args.get("start", 0), stack["total"], lines)

    def do_frame(self, command: Command) -> StopResult:
        handle = self.context.session(command.session)
        index = command.extras.get("index")
        if index is None:
            raise RelayError("invalid_request", "`frame` needs a frame number.", f"Usage: {usage(command.magic)}")
        frames = handle.stack()
        if not 0 <= index < len(frames):
            raise RelayError("invalid_request", f"There is no frame {index}; the stack has {len(frames)}.",
                             "See the frames with `%debug_session where`.")
        stop = handle.stop
        assert stop is not None  # stack() succeeded, so the session is paused
        self.context.selected[handle.id] = (id(stop), index, frames[index].id)
        frame = frames[index]
        result = self.context.stop_result(handle, dataclasses.replace(stop, frame=frame, source_line=""))
        assert result.stop is not None
        head = f"frame #{index}: {frame.name}() at {short_path(frame.path)}:{frame.line}"
        result.text = stop_with_line(result.stop, head)
        return result

    def do_vars(self, command: Command) -> VariablesResult:
        handle = self.context.session(command.session)
        target, scope_name = command.extras.get("target"), command.extras.get("scope")
        frame_id = self.context.frame_id(handle)
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
        page = self.context.run(command, handle, ref=ref)
        return VariablesResult(title, page.items, page.start, page.total)

    @staticmethod
    def _lookup(handle: SessionHandle, frame_id: int | None, name: str) -> Variable:
        for scope in handle.scopes(frame_id)[:1]:
            for var in handle.variables(scope.ref, 0, 1000).items:
                if var.name == name:
                    return var
        return handle.evaluate(name, frame_id, context="watch")

    def do_scopes(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        frame = {} if "frame_id" in command.args else {"frame_id": self.context.frame_id(handle)}
        scopes = self.context.run(command, handle, **frame)["scopes"]
        result = Result("\n".join(f"{s.name}  (ref {s.ref})" for s in scopes) or "no scopes")
        result.scopes = scopes
        return result

    def do_source(self, command: Command) -> Result:
        found = self.context.run(command, self.context.session(command.session))
        note = f"# note: {found['source_note']}\n" if found["source_note"] else ""
        result = Result(note + found["source"])
        result.source, result.note = found["source"], found["source_note"]
        return result

    def do_snapshot(self, command: Command) -> Result:
        found = self.context.run(command, self.context.session(command.session))
        result = Result(snapshot.render(as_dict(found), short_path))
        result.snapshot = found["snapshot"]
        return result

    def do_tasks(self, command: Command) -> TasksResult:
        return TasksResult(self.context.run(command, self.context.session(command.session))["async_tasks"])

    def do_complete(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        frame = {} if "frame_id" in command.args else {"frame_id": self.context.frame_id(handle)}
        targets = self.context.run(command, handle, **frame)["targets"]
        result = Result("\n".join(targets) or "no completions")
        result.targets = targets
        return result

    def do_eval(self, command: Command) -> ValueResult:
        handle = self.context.session(command.session)
        frame = {} if "frame_id" in command.args else {"frame_id": self.context.frame_id(handle)}
        return ValueResult(self.context.run(command, handle, **frame)["variable"])

    do_hover = do_eval  # the same line, evaluated in hover context and cut short

    def do_pull(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        expression = command.text
        local = command.extras.get("as") or expression
        if not local.isidentifier():
            raise RelayError("invalid_request", f"{expression!r} is not a name to store the value under.",
                             f"Add --as NAME, e.g. `%debug_session pull {expression} --as value`.")
        value = pull(handle, expression, self.context.frame_id(handle),
                     command.extras.get("max_bytes") or DEFAULT_MAX_BYTES)
        self.context.namespace[local] = value
        result = Result(f"pulled {expression} into {local} ({type(value).__name__})")
        result.value, result.name = value, local
        return result

    # -- output -----------------------------------------------------------------------------

    def do_output(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        if command.extras.get("clear"):
            cursor = self.relay.operations.call("clear_output", {"session": handle.id})["cursor"]
            result = Result(f"cleared the output of {handle.name}; new output starts at cursor {cursor}")
            result.cursor = cursor
            return result
        return OutputResult(self.context.run(command, handle), command.extras.get("tail"))

    def do_input(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        eof = bool(command.args.get("eof"))
        text = command.text + "\n" if command.text or not eof else ""
        self.context.run(command, handle, text=text)
        return Result(f"sent {len(text)} characters to {handle.name}" + (" and end of file" if eof else ""))

    def do_panel(self, command: Command) -> Any:
        from ..widgets import DebuggerPanel

        name = command.session or self.context.current
        return DebuggerPanel(self.relay.get(name) if name else self.relay)

    def do_replay(self, command: Command) -> ReplayResult:
        self.relay.flush_recordings()  # a session of this kernel that just ended is on disk whole
        return ReplayResult.of(command.extras.get("source") or "current")

    # -- ending -----------------------------------------------------------------------------

    def do_stop(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        if handle.state in ("terminated", "failed"):
            code = handle.exit_code
            self.context.run(command, handle)  # closes what is left of it
            return Result(f"{handle.name} had already ended" + (f" (exit code {code})" if code is not None else ""))
        self.context.run(command, handle)  # the code of a killed target means nothing to the user: it is not shown
        return Result(f"{handle.name} stopped")

    def do_delete(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        self.context.run(command, handle)
        self.context.forget(handle)
        return Result(f"deleted {handle.name}")

    def do_detach(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        self.context.run(command, handle)
        return Result(f"detached from {handle.name}; the target keeps running")

    def do_restart(self, command: Command) -> StopResult:
        handle = self.context.session(command.session)
        self.context.run(command, handle)
        return self.context.wait(handle, None, prefix=f"{handle.name} restarted: ")

    def do_reconnect(self, command: Command) -> StopResult:
        handle = self.context.session(command.session)
        self.context.run(command, handle)
        return self.context.stop_result(handle, handle.stop, prefix=f"{handle.name} reconnected: ")


class BreakpointWords(Words):
    """``%bp``: breakpoints of every kind, listed, removed, enabled."""

    # -- %bp --------------------------------------------------------------------------------

    def bp_line(self, command: BpCommand) -> BreakpointsResult:
        path = os.path.expanduser(command.spec.path or "")
        return BreakpointsResult([self.relay.breakpoints.add(
            path, command.spec.line, condition=command.spec.condition, hit_condition=command.spec.hit_condition,
            log_message=command.spec.log_message, content=command.spec.content, task=command.spec.task)])

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


def _told(result: StopResult, started: dict[str, Any]) -> StopResult:
    """``result`` of a start with a line for each breakpoint it could not bind, and why, and a line of warnings."""
    result.text += unbound_lines(started["unverified"])
    if started.get("warnings"):
        result.text += "\n" + warnings_line(started["warnings"])
    return result
