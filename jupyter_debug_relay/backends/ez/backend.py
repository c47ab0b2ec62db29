"""The EZ backend: `ez debugserver PROGRAM.ez`, line-delimited JSON over its stdio.

Commands carry no ids and are answered in order (``linejson.PendingAnswers``); a command that timed out
keeps its place, so its late answer is dropped rather than taken for the next one. The real `ez
debugserver` is looser than its protocol document; docs/backends.md lists each difference and what this
backend does about it (entry stop at its hold, stops matched by line, breakpoints moved to statements,
the stopped place put first in the stack, ``ez check`` for the line of a parse error, the end after
``terminate`` ours).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from ...errors import RelayError
from ...model import Breakpoint, BreakpointResult, Frame, Scope, StopInfo, Thread, Variable, VariablePage
from ...protocols import linejson
from ...protocols.timeouts import clamp_timeout
from ...transports import process
from ...transports.streams import forward_text
from ..base import Backend, BackendEvents
from . import messages as wire
from . import program as program_text

T = TypeVar("T")
THREAD_ID = 1  # an EZ program has one thread
ENTRY_GRACE = 1.0  # how long a peer may take to show it runs loose (the real EZ does within milliseconds)
NOT_PARSED = ("Parse errors in file", "Type check errors in file")  # all the real EZ says of a bad program
NOT_IMPLEMENTED = "not yet implemented"
CALL_SITE_NAMES = ("", "<function>")  # what the real EZ names every frame
NO_LOCALS = Variable(
    name="(note)", type="",
    value="EZ's debugserver keeps no variables for main or top-level code; step into a function to see its own.",
)


def _message(data: dict[str, Any]) -> str:
    return data.get("message") or "unknown error"


class EzBackend(Backend):
    """Drives `ez debugserver PROGRAM.ez`: one thread; a frame's id is its EZ index + 1, its one scope too."""

    kind = "ez"

    def __init__(
        self,
        events: BackendEvents,
        program: str,
        *,
        ez: str = "ez",
        cwd: str | None = None,
        request_timeout: float = 30.0,
        entry_grace: float = ENTRY_GRACE,
    ) -> None:
        super().__init__(events)
        self.program = program
        self.entry_grace = entry_grace  # a peer that shows nothing by then waits for `start`
        self.ez = ez
        self.cwd = cwd
        self.workdir = os.path.abspath(cwd) if cwd else os.getcwd()
        self.request_timeout = clamp_timeout(request_timeout)
        self.target = program
        self.capabilities = dict(wire.CAPABILITIES)
        self._proc: asyncio.subprocess.Process | None = None
        self._stdout_task: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._pending = linejson.PendingAnswers()
        self._started = False
        self._stopping = False
        self._paused = False
        self._ended: RelayError | None = None  # set once the peer is gone: why no request can be made
        self._exit_code: int | None = None
        self._last_words = ""  # the peer's last error message or stderr line, to explain an end
        self._stop_frame: Frame | None = None
        self._holding_back = True  # until start() knows how the peer runs, stops are kept, not reported
        self._early: list[wire.Stopped] = []  # the stops kept
        self._early_seen = asyncio.Event()
        self._passed: set[tuple[str, int]] = set()  # lines the program ran before it could be stopped
        self._texts = program_text.ProgramTexts()
        self._envless: int | None = None  # the frame EZ keeps no variables for, once the stack is known
        self._set_lines: dict[str, dict[int, int]] = {}  # path -> requested line -> line the peer set
        self._hits: dict[str, dict[int, list[int]]] = {}  # path -> line the peer set -> the relay's ids

    def _abs(self, path: str) -> str:
        return os.path.realpath(os.path.join(self.workdir, path))

    # -- starting -----------------------------------------------------------------------------

    async def start(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise RelayError("file_not_found", f"The working directory {self.cwd!r} does not exist.",
                             details={"path": self.cwd})
        program = self._abs(self.program)
        if not os.path.isfile(program):
            raise RelayError("file_not_found", f"The EZ program {self.program!r} does not exist ({program}).",
                             details={"path": program})
        argv = [self.ez, "debugserver", program]
        self._proc = await process.spawn(argv, cwd=self.cwd, what="EZ debugserver")
        self.pid, self.target = self._proc.pid, program
        self._stderr_task = self.spawn(self._read_stderr())
        self._stdout_task = self.spawn(self._read_stdout())
        try:
            await self._query("initialize", {"file": program, "workingDir": self.workdir}, "initialized")
            loose = await self._runs_loose()
            if not loose:
                self._holding_back = False  # it waits for `start`: its entry stop is reported as it comes
            await self.apply_breakpoints(breakpoints, exceptions)
            if not loose:
                await self._query("start", {}, "started")
            self._started = True
            if self._ended is not None:
                raise self._ended
        except BaseException as exc:
            await self.close()
            if isinstance(exc, RelayError) and exc.code == "target_exited" and self._last_words in NOT_PARSED:
                raise await program_text.syntax_error(self.ez, program, self.cwd, self.request_timeout,
                                                      self._last_words) from None
            raise
        if loose:
            self._holding_back = False
            self._report_stop(self._early[-1], entry=True)

    async def _runs_loose(self) -> bool:
        """Whether the peer runs before `start` (as the real EZ does); if so, wait until it holds.

        The real EZ's first stop passes by itself and it holds at the next statement: that hold is
        the entry. The lines of the stops that passed are remembered, for breakpoints set on them.
        """
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._early_seen.wait(), self.entry_grace)
        if not self._early:
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.request_timeout
        while len(self._early) < 2 and self._ended is None:
            self._early_seen.clear()
            await self._within(self._early_seen.wait(), "the first stop", max(deadline - loop.time(), 0.01))
        if self._ended is not None:
            raise self._ended
        for data in self._early[:-1]:
            frame = self._location_frame(data.get("location"))
            if frame is not None and frame.path is not None:
                self._passed.add((frame.path, frame.line))
        return True

    # -- the wire -----------------------------------------------------------------------------

    async def _within(self, work: Awaitable[T], command: str, timeout: float | None = None) -> T:
        limit = timeout or self.request_timeout
        try:
            return await asyncio.wait_for(work, limit)
        except asyncio.TimeoutError:
            raise RelayError(
                "timeout", f"The EZ debugserver did not answer {command!r} within {limit:g} s.",
                "It may be hung: terminate the session and connect again, or raise request_timeout.",
                {"command": command},
            ) from None

    async def _send(self, command: str, params: dict[str, Any]) -> None:
        if self._ended is not None:
            raise self._ended
        assert self._proc is not None and self._proc.stdin is not None
        with contextlib.suppress(ConnectionError):  # the reader sees the end and fails what waits with it
            await linejson.write(self._proc.stdin, {"type": "command", "command": command, "params": params})

    async def _request(
        self, command: str, params: dict[str, Any], answer: str, timeout: float | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Send ``command`` and return the event that answers it: ``answer`` or ``error``."""
        request = self._pending.expect(command, answer)

        async def send_and_wait() -> tuple[str, dict[str, Any]]:
            await self._send(command, params)
            return await request.future

        try:
            return await self._within(send_and_wait(), command, timeout)
        finally:
            request.future.cancel()  # a no-op once answered; else the late answer is dropped

    async def _query(
        self, command: str, params: dict[str, Any], answer: str, timeout: float | None = None
    ) -> dict[str, Any]:
        """Like ``_request``, with an ``error`` answer raised as ``invalid_request``."""
        name, data = await self._request(command, params, answer, timeout)
        if name == "error":
            raise RelayError("invalid_request", f"The EZ debugserver refused {command!r}: {_message(data)}.",
                             details={"command": command})
        return data

    # -- what the peer says -------------------------------------------------------------------

    async def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        reader = linejson.LineReader(self._proc.stdout)
        try:
            while (line := await reader.read()) is not None:
                self._dispatch(line)
        except RelayError as exc:
            self._lose(exc)
            await process.reap(self._proc)
            return
        if self._stderr_task is not None:
            await asyncio.wait({self._stderr_task}, timeout=1.0)  # for its last words
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._proc.wait(), 2.0)
        code = await process.reap(self._proc)
        if code is not None and code < 0 and not self._stopping:
            self._lose(RelayError(
                "adapter_failed", f"The EZ debugserver was killed by signal {-code}{self._why()}.",
                "Connect again; run `ez debugserver PROGRAM` by hand to see why it dies.", {"signal": -code},
            ))
        else:
            self._end(code)

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        await forward_text(self._proc.stderr, self._on_stderr)

    def _on_stderr(self, text: str) -> None:
        if text.strip():
            self._last_words = text.strip().splitlines()[-1]
        self.events.on_output("stderr", text)

    def _dispatch(self, line: linejson.Line) -> None:
        message = line.message
        data = (message.get("data") or {}) if message is not None else None
        if (
            message is None or message.get("type") != "event"
            or not isinstance(message.get("event"), str) or not isinstance(data, dict)
        ):
            self.events.on_output("stdout", line.text)  # the program's own print
            return
        name = message["event"]
        if name in wire.EVENTS:
            data = wire.EVENTS[name].check("The EZ debugserver", data)  # a misfit ends the reading: the peer is lost
        # a runtime error of the running program carries a location; a refusal need not
        if self._pending.offer(name, data, unnamed_error_answers=self._paused or "location" not in data):
            return
        handler = getattr(self, f"_event_{name}", None)
        if handler is not None:
            handler(data)
        else:
            self.events.on_raw("ez", name, data)

    def _frame(self, index: int, name: str, where: wire.Location | wire.StackFrame) -> Frame:
        file = where.get("file")
        line, column = where.get("line"), where.get("column")
        return Frame(id=index + 1, name=name, path=self._abs(file) if file else None,
                     line=0 if line is None else line, column=1 if column is None else column)

    def _location_frame(self, location: wire.Location | None) -> Frame | None:
        if location is None:
            return None
        frame = self._frame(0, "", location)
        return replace(frame, name=self._function_at(frame))

    def _event_stopped(self, data: wire.Stopped) -> None:
        if self._holding_back:
            self._early.append(data)
            self._early_seen.set()
            return
        self._report_stop(data)

    def _report_stop(self, data: wire.Stopped, entry: bool = False) -> None:
        self._paused = True
        frame = self._location_frame(data.get("location"))
        self._stop_frame, self._envless = frame, None
        reason = "entry" if entry else data.get("reason") or "pause"
        ids: list[int] = []
        where = ""
        if frame is not None and frame.path is not None:
            where = f" at {os.path.basename(frame.path)}:{frame.line}"
            if reason == "breakpoint":  # EZ says id 1 for every breakpoint: go by the line
                ids = list(self._hits.get(frame.path, {}).get(frame.line, []))
        if entry and self._passed:
            ran = ", ".join(str(line) for _, line in sorted(self._passed))
            where += f" (EZ ran line {ran} before it could be stopped)"
        self.events.on_stopped(StopInfo(
            reason=reason if reason in wire.STOP_REASONS else "pause",
            thread_id=THREAD_ID,
            frame=frame,
            breakpoint_ids=ids,
            description=reason + where,
            stopped_threads=[THREAD_ID],
        ))

    def _event_output(self, data: wire.Output) -> None:
        text = data["text"]
        if text:
            self.events.on_output("stderr" if data.get("category") == "stderr" else "stdout", text)

    def _event_error(self, data: wire.Error) -> None:
        """An error that answers no command: a runtime error of the program, or a refused step."""
        self._last_words = _message(data)
        location = data.get("location")
        frame = self._frame(0, "", location) if location is not None else None
        where = f" ({os.path.basename(frame.path)}:{frame.line})" if frame and frame.path else ""
        self.events.on_output("stderr" if frame else "console", f"EZ error: {self._last_words}{where}\n")
        self.events.on_raw("ez", "error", data)

    def _event_exited(self, data: wire.Exited) -> None:
        self._exit_code = data.get("exitCode") or 0
        self._end(self._exit_code)

    # -- the end ------------------------------------------------------------------------------

    def _why(self) -> str:
        return f": {self._last_words}" if self._last_words else ""

    def _finish(self, error: RelayError, report: Callable[[], None] | None) -> None:
        """The peer is gone: fail every waiting request and report once (``start()`` raises instead)."""
        if self._ended is not None:
            return
        self._ended = error
        self._paused = False
        self._pending.fail_all(error)
        if self._started and report is not None:
            report()

    def _end(self, code: int | None) -> None:
        if self._exit_code is not None:
            code = self._exit_code
        error = RelayError("target_exited", f"The EZ program ended with exit code {code}{self._why()}.",
                           details={"exit_code": code})
        self._finish(error, lambda: self.events.on_exited(code))

    def _lose(self, error: RelayError) -> None:
        self._finish(error, lambda: self.events.on_lost(error))

    violated = _lose

    async def terminate(self) -> None:
        """Ask EZ to terminate, then end it: it answers but neither exits nor runs on. The user stopped it."""
        if self._proc is None:
            return
        self._stopping = True
        if self._ended is None:
            with contextlib.suppress(RelayError):
                await self._query("terminate", {}, "terminated", timeout=min(self.request_timeout, 5.0))
            self._finish(RelayError("not_running", "The EZ session was stopped by the user."), None)
        await self._shutdown()

    async def close(self) -> None:
        self._finish(RelayError("not_running", "The EZ session is closed."), None)
        if self._proc is not None:
            await self._shutdown()

    async def _shutdown(self) -> None:
        assert self._proc is not None
        await process.reap(self._proc)
        tasks = {t for t in (self._stdout_task, self._stderr_task) if t is not None}
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=2.0)
            for task in late:
                task.cancel()

    # -- breakpoints --------------------------------------------------------------------------

    async def set_breakpoints(self, path: str, bps: list[Breakpoint]) -> list[BreakpointResult]:
        if not path.endswith(".ez"):
            raise self.unsupported(f"breakpoints in {os.path.basename(path)} (it debugs .ez programs)")
        path = self._abs(path)
        old = self._set_lines.get(path, {})
        lines: dict[int, int] = {}
        hits: dict[int, list[int]] = {}
        results = []
        for bp in bps:
            result = await self._set_line(path, bp, old, lines)
            if result.verified and result.line is not None:
                hits.setdefault(result.line, []).append(bp.id)
            results.append(result)
        for requested, line in old.items():
            if requested not in lines and line not in hits:
                await self._request("clearBreakpoint", {"file": path, "line": line}, "breakpointCleared")
        self._set_lines[path], self._hits[path] = lines, hits
        return results

    async def _set_line(
        self, path: str, bp: Breakpoint, old: dict[int, int], lines: dict[int, int]
    ) -> BreakpointResult:
        requested = bp.line or 0
        asked = (("a condition", bp.condition), ("a hit condition", bp.hit_condition),
                 ("a log message", bp.log_message), ("an asyncio task", bp.task))
        extras = [what for what, value in asked if value]
        if extras:
            return BreakpointResult(False, requested, f"EZ breakpoints cannot have {' or '.join(extras)}; "
                                                      "remove it to stop on every pass.", refused=True)
        text = self._texts.get(path)
        target = requested if text is None else text.statement_from(requested)
        if target is None:
            return BreakpointResult(False, requested, f"Line {requested} of {os.path.basename(path)} holds no "
                                                      "statement and none follows it.", refused=True)
        line = lines.get(requested) or old.get(requested)
        if line is None:
            params = {"file": path, "line": target}
            name, data = await self._request("setBreakpoint", params, "breakpointSet")
            if name == "error":
                return BreakpointResult(False, requested, _message(data))
            line = data.get("line")
            line = target if line is None else line
        lines[requested] = line
        notes = []
        if line != requested:  # EZ takes any line, and one without a statement never fires: we moved it
            notes.append(f"moved from line {requested}, which holds no statement, to line {line}, the next one")
        if (path, line) in self._passed:
            notes.append(f"EZ ran line {line} before it could be stopped, so this fires only if it runs again")
        message = "; ".join(notes)
        return BreakpointResult(True, line, message[:1].upper() + message[1:] + ("." if notes else ""))

    async def set_function_breakpoints(self, bps: list[Breakpoint]) -> list[BreakpointResult]:
        message = ("The EZ backend has no function breakpoints; set a line breakpoint on the function's "
                   "first statement instead.")
        return [BreakpointResult(False, None, message, refused=True) for _ in bps]

    def _function_at(self, frame: Frame) -> str:
        return self._texts.function_at(frame.path, frame.line) if frame.path else "?"

    # -- execution and inspection -------------------------------------------------------------

    async def resume(self, action: str, thread_id: int | None) -> None:
        command = wire.RESUME_COMMANDS[action]
        self._paused, self._envless = False, None
        await self._within(self._send(command, {}), command)

    async def threads(self) -> list[Thread]:
        return [Thread(THREAD_ID, "main", stopped=self._paused)]

    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        """Frame 0 where the program stopped; then each caller at its call site. Frame ids are EZ's indexes + 1.

        The real EZ lists call sites only (innermost first, none for ``main``): the stopped place goes
        first, and the outermost frame (``main``'s) has no variables in EZ.
        """
        data = await self._query("getStackTrace", {}, "stackTrace")
        frames = [self._frame(index, item.get("function") or "", item)
                  for index, item in enumerate(data.get("frames") or [])]
        stop = self._stop_frame
        self._envless = None
        if stop is not None and (not frames or (frames[0].path, frames[0].line) != (stop.path, stop.line)):
            frames = [stop, *frames]
            self._envless = len(frames) - 1
        frames = [replace(frame, id=index + 1, name=self._function_at(frame) if frame.name in CALL_SITE_NAMES
                          else frame.name) for index, frame in enumerate(frames)]
        return frames[start:start + levels if levels else None], len(frames)

    @staticmethod
    def _index(frame_id: int | None) -> int:
        """The EZ ``frameIndex`` of a frame id."""
        if frame_id is None:
            return 0
        if frame_id < 1:
            raise RelayError("invalid_request", f"There is no frame {frame_id}.",
                             "Take frame ids from the stack.")
        return frame_id - 1

    async def scopes(self, frame_id: int) -> list[Scope]:
        return [Scope("Locals", self._index(frame_id) + 1)]

    @staticmethod
    def _variable(name: str, value: str | None, type_: str | None) -> Variable:
        return Variable(name=name, value=value or "", type=type_ or "", evaluate_name=name)

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        """A frame's own variables, by name (EZ adds the program's functions: they are left out)."""
        index = self._index(ref)
        data = await self._query("getVariables", {"frameIndex": index}, "variables")
        items = sorted((self._variable(v["name"], v.get("value"), v.get("type")) for v in data.get("variables") or []
                        if v.get("type") != "FUNCTION"), key=lambda v: v.name)
        if not items:
            if self._envless is None and self._paused:
                await self.stack(THREAD_ID, 0, None)  # to learn which frame EZ keeps no variables for
            if index == self._envless:
                items = [NO_LOCALS]
        return VariablePage(items[start:start + count], start, len(items))

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        params = {"expression": expression, "frameIndex": self._index(frame_id)}
        name, data = await self._request("evaluate", params, "evaluateResult")
        if name == "error" and NOT_IMPLEMENTED in _message(data):
            raise RelayError("unsupported", f"The EZ debugserver cannot evaluate expressions: {_message(data)}.",
                             "Read the values in the variables of each frame, or print them from the program.",
                             {"expression": expression})
        if name == "error":
            raise RelayError("invalid_request", f"EZ cannot evaluate {expression!r}: {_message(data)}.",
                             "Check the expression against the variables of the paused frame.",
                             {"expression": expression})
        return self._variable(expression, data.get("result"), data.get("type"))

    async def source(self, frame: Frame) -> str:
        if not frame.path or not os.path.isfile(frame.path):
            raise RelayError("file_not_found", f"The source of frame {frame.name!r} is not a file here.")
        with open(frame.path, encoding="utf-8", errors="replace") as f:
            return f.read()
