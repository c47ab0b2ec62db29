"""The EZ backend: `ez debugserver PROGRAM.ez`, line-delimited JSON over its stdio.

EZ commands carry no ids and are answered by events, in order; so each command
sent waits in a queue for the first event of its answer's name (or an ``error``)
and a command that timed out keeps its place, so that its late answer is dropped
rather than taken for the next one. Real servers are loose and this copes:
stops before ``initialize`` is answered, every breakpoint answered with id 1
(stops are matched to the relay's breakpoints by line), failed evaluations
answered by an ``error`` naming no command, no stack frames at top level, the
program's prints as raw lines among the JSON, and an exit with no ``exited``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from ..errors import RelayError
from ..model import Breakpoint, BreakpointResult, Frame, Scope, StopInfo, Thread, Variable, VariablePage
from ..protocols import linejson
from ..protocols.timeouts import clamp_timeout
from ..transports import process
from ..transports.streams import forward_text
from . import ez_messages as wire
from .base import Backend, BackendEvents

T = TypeVar("T")
THREAD_ID = 1  # an EZ program has one thread
RESUME_COMMANDS = {"continue": "continue", "next": "stepOver", "stepIn": "stepInto", "stepOut": "stepOut"}
STOP_REASONS = ("entry", "step", "breakpoint")
CAPABILITIES = {
    "supportsConditionalBreakpoints": False,
    "supportsHitConditionalBreakpoints": False,
    "supportsLogPoints": False,
    "supportsFunctionBreakpoints": False,
    "supportsSetVariable": False,
    "supportsCompletionsRequest": False,
    "supportsTerminateRequest": True,
}


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
    ) -> None:
        super().__init__(events)
        self.program = program
        self.ez = ez
        self.cwd = cwd
        self.workdir = os.path.abspath(cwd) if cwd else os.getcwd()
        self.request_timeout = clamp_timeout(request_timeout)
        self.target = program
        self.capabilities = dict(CAPABILITIES)
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
            await self.apply_breakpoints(breakpoints, exceptions)
            await self._query("start", {}, "started")
            self._started = True
            if self._ended is not None:
                raise self._ended
        except BaseException:
            await self.close()
            raise

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

    def _event_stopped(self, data: wire.Stopped) -> None:
        self._paused = True
        location = data.get("location")
        frame = self._frame(0, "", location) if location is not None else None
        self._stop_frame = frame
        reason = data.get("reason") or "pause"
        ids: list[int] = []
        where = ""
        if frame is not None and frame.path is not None:
            where = f" at {os.path.basename(frame.path)}:{frame.line}"
            if reason == "breakpoint":  # EZ says id 1 for every breakpoint: go by the line
                ids = list(self._hits.get(frame.path, {}).get(frame.line, []))
        self.events.on_stopped(StopInfo(
            reason=reason if reason in STOP_REASONS else "pause",
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
        if self._proc is None:
            return
        self._stopping = True
        if self._ended is None:
            with contextlib.suppress(RelayError):
                await self._query("terminate", {}, "terminated", timeout=min(self.request_timeout, 5.0))
                await self._within(self._proc.wait(), "terminate", 2.0)  # it exits by itself once it answered
        await self._shutdown()
        self._end(self._proc.returncode)

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
                 ("a log message", bp.log_message))
        extras = [what for what, value in asked if value]
        if extras:
            return BreakpointResult(False, requested, f"EZ breakpoints cannot have {' or '.join(extras)}; "
                                                      "remove it to stop on every pass.")
        line = lines.get(requested) or old.get(requested)
        if line is None:
            params = {"file": path, "line": requested}
            name, data = await self._request("setBreakpoint", params, "breakpointSet")
            if name == "error":
                return BreakpointResult(False, requested, _message(data))
            line = data.get("line")
            line = requested if line is None else line
        lines[requested] = line
        return BreakpointResult(True, line)

    # -- execution and inspection -------------------------------------------------------------

    async def resume(self, action: str, thread_id: int | None) -> None:
        command = RESUME_COMMANDS[action]
        self._paused = False
        await self._within(self._send(command, {}), command)

    async def threads(self) -> list[Thread]:
        return [Thread(THREAD_ID, "main", stopped=self._paused)]

    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        data = await self._query("getStackTrace", {}, "stackTrace")
        frames = [self._frame(index, item.get("function") or "?", item)
                  for index, item in enumerate(data.get("frames") or [])]
        if not frames and self._stop_frame is not None:
            frames = [replace(self._stop_frame, name="main")]  # EZ lists no frame at top level
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
        data = await self._query("getVariables", {"frameIndex": self._index(ref)}, "variables")
        items = [self._variable(v["name"], v.get("value"), v.get("type")) for v in data.get("variables") or []]
        return VariablePage(items[start:start + count], start, len(items))

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        params = {"expression": expression, "frameIndex": self._index(frame_id)}
        name, data = await self._request("evaluate", params, "evaluateResult")
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
