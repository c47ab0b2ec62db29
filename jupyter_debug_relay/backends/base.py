"""The interface between the engine and a backend.

A backend runs on the relay's asyncio loop. The engine calls its coroutines
(commands flow down); the backend reports what the peer does through the
``BackendEvents`` it was given (events flow up). A backend never knows about
Jupyter, sessions' names or other sessions.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ..errors import RelayError, Unsupported
from ..model import (
    AsyncTasks,
    Breakpoint,
    BreakpointResult,
    Frame,
    Scope,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
)
from ..protocols import tasks
from .messages import Shape
from .startup import StartupClock

log = logging.getLogger(__name__)


class BackendEvents(Protocol):
    """What a backend reports upwards; the engine's Session implements it."""

    def on_stopped(self, stop: StopInfo) -> None:
        """The target stopped (breakpoint, step, exception, pause, entry ...)."""

    def on_continued(self, thread_id: int | None) -> None:
        """The target resumed; ``None`` means every thread."""

    def on_output(self, category: str, text: str) -> None:
        """Target output: category is stdout, stderr or console."""

    def on_thread(self, thread_id: int, reason: str) -> None:
        """A thread ``started`` or ``exited``."""

    def on_finished(self, thread_id: int, result: dict[str, Any]) -> None:
        """A thread's unit of work (a Mycel flow) ended with ``result`` (output, error); a step on it ends too."""

    def on_breakpoint(self, bp_id: int, result: BreakpointResult) -> None:
        """The peer changed what it says of the relay's breakpoint ``bp_id`` (e.g. verified later)."""

    def on_exited(self, exit_code: int | None) -> None:
        """The target ended; the backend is done."""

    def on_raw(self, protocol: str, name: str, body: dict[str, Any]) -> None:
        """A peer's own event, passed on as it came."""

    def on_child(self, factory: Callable[[BackendEvents], Backend], name: str) -> None:
        """The target started a child process; ``factory(events)`` makes the backend of its own session."""

    def on_subprocess(self, pid: int | None, debugged: bool) -> None:
        """The target started a child process; ``debugged`` when it gets a session of its own."""

    def on_lost(self, error: Exception) -> None:
        """The connection to the peer broke or the adapter died."""

    def on_disconnected(self) -> None:
        """The link to the peer is down for now; the backend brings it back by itself (a remote relay's)."""

    def on_reconnected(self) -> None:
        """The link is back: the missed events follow; the breakpoints are to be sent again."""


class Backend(abc.ABC):
    """One debug peer behind the neutral model. Unimplemented verbs raise ``Unsupported``."""

    kind: str = "backend"  # debugpy | dap | mycel | ez
    stop_on_condition_error: bool = True  # whether a breakpoint whose condition fails stops (where it can say)
    exception_types: tuple[str, ...] = ()  # the exception mode applies to these types only (empty: every type)
    binds_pending: bool = False  # takes line breakpoints in files that do not exist yet, bound when they load

    def __init__(self, events: BackendEvents) -> None:
        self.events = events
        self.capabilities: dict[str, Any] = {}
        self.pid: int | None = None
        self.target: str = ""
        self.breakpoint_results: dict[int, BreakpointResult] = {}
        self.end_error: RelayError | None = None  # why the target ended, when it ended on an error the peer named
        self.startup = StartupClock()  # a backend is made to start once (restart makes another)
        self.warnings: list[str] = []  # what the user should know of how the target runs (a speed-up off, and why)
        self._tasks: set[asyncio.Task[Any]] = set()

    def breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None:
        """Tell the relay of a breakpoint's newer state; kept in ``breakpoint_results`` too, so that the start's
        answers, recorded when the start returns, do not bring back an older one (the target runs meanwhile)."""
        if bp_id in self.breakpoint_results:
            self.breakpoint_results[bp_id] = result
        self.events.on_breakpoint(bp_id, result)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background: a ``protocol_error`` it raises fails the session, anything else is logged."""
        return tasks.spawn(coro, self._tasks, self._task_failed)

    def _task_failed(self, error: BaseException) -> None:
        if isinstance(error, RelayError) and error.code == "protocol_error":
            self.violated(error)
        else:
            log.warning("%s backend: a background task failed: %s", self.kind, error, exc_info=error)

    def violated(self, error: RelayError) -> None:
        """The peer broke its protocol: the session cannot trust it any more and fails with ``error``."""
        self.events.on_lost(error)

    @property
    def peer_name(self) -> str:
        """How error messages name the peer."""
        return self.kind

    def checked(self, shape: Shape[Any], body: Any) -> Any:
        """``body`` checked against ``shape``; a misfit fails the session and is raised."""
        try:
            return shape.check(self.peer_name, body)
        except RelayError as exc:
            self.violated(exc)
            raise

    async def apply_breakpoints(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        """Send every enabled breakpoint the peer can take; ``start()`` calls it at its configuration point.

        Results land in ``breakpoint_results`` by breakpoint id; kinds the peer lacks are skipped.
        """
        enabled = [bp for bp in breakpoints if bp.enabled]
        by_path: dict[str, list[Breakpoint]] = {}
        for bp in enabled:
            if bp.kind == "line" and bp.path:
                by_path.setdefault(bp.path, []).append(bp)
        batches: list[tuple[list[Breakpoint], Any]] = [
            (bps, lambda bps=bps, path=path: self.set_breakpoints(path, bps)) for path, bps in by_path.items()
        ]
        for kind, setter in (("function", self.set_function_breakpoints), ("stage", self.set_stage_breakpoints)):
            bps = [bp for bp in enabled if bp.kind == kind]
            if bps:
                batches.append((bps, lambda bps=bps, setter=setter: setter(bps)))
        for bps, send in batches:
            try:
                results = await send()
            except Unsupported:
                self.breakpoint_results.update(self.lacking(bps[0].kind, bps))
                continue
            self.breakpoint_results.update({bp.id: r for bp, r in zip(bps, results, strict=False)})
        outputs = [bp for bp in enabled if bp.kind == "output"]
        self.breakpoint_results.update(
            {bp.id: BreakpointResult(True) for bp in outputs} if self.can_pause else self.lacking("output", outputs))
        try:
            await self.set_exception_breakpoints(exceptions)
        except Unsupported:
            pass

    async def apply_condition_errors(self) -> None:
        """Tell the peer whether a failing condition stops (``stop_on_condition_error``), where it has a say."""
        return None  # most peers judge conditions their own way

    def unsupported(self, feature: str) -> Unsupported:
        return Unsupported(self.kind, feature)

    @property
    def can_pause(self) -> bool:
        """Whether the peer can pause a running target (what an output breakpoint needs)."""
        return type(self).pause is not Backend.pause and self.capabilities.get("supportsPause", True) is not False

    def lacking(self, kind: str, bps: list[Breakpoint]) -> dict[int, BreakpointResult]:
        """What to say of breakpoints of a ``kind`` this peer has none of; one no other session verified only."""
        if kind == "output":
            message = f"{self.kind} sessions cannot pause, so output breakpoints do not apply to them"
        else:
            message = f"{self.kind} sessions have no {kind} breakpoints"
        return {bp.id: BreakpointResult(False, message=message) for bp in bps if not bp.verified}  # others may take it

    @abc.abstractmethod
    async def start(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        """Launch, attach or connect, apply ``breakpoints`` (``apply_breakpoints``), and let the target run.

        Returns once the target runs (or is stopped on entry); stops arrive
        through ``events``. Raises ``RelayError`` when the target cannot start.
        """

    async def set_breakpoints(self, path: str, bps: list[Breakpoint]) -> list[BreakpointResult]:
        """Replace the line breakpoints of one file; one result per breakpoint, in order."""
        raise self.unsupported("line breakpoints")

    async def set_function_breakpoints(self, bps: list[Breakpoint]) -> list[BreakpointResult]:
        raise self.unsupported("function breakpoints")

    async def set_exception_breakpoints(self, mode: str) -> None:
        """``mode`` is raised, uncaught or none."""
        raise self.unsupported("exception breakpoints")

    async def set_stage_breakpoints(self, bps: list[Breakpoint]) -> list[BreakpointResult]:
        raise self.unsupported("stage breakpoints")

    async def resume(self, action: str, thread_id: int | None) -> None:
        """``action`` is continue, next, stepIn or stepOut; returns once the peer accepted it."""
        raise self.unsupported(action)

    async def pause(self, thread_id: int | None) -> None:
        raise self.unsupported("pause")

    async def threads(self) -> list[Thread]:
        raise self.unsupported("threads")

    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        """Frames from ``start`` (at most ``levels``) and the total depth."""
        raise self.unsupported("stack traces")

    async def scopes(self, frame_id: int) -> list[Scope]:
        raise self.unsupported("scopes")

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        raise self.unsupported("variables")

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        raise self.unsupported("evaluate")

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        raise self.unsupported("setting variables")

    async def set_expression(self, expression: str, value: str, frame_id: int | None) -> Variable:
        """Assign ``value`` to an assignable ``expression`` (``p.x``, ``d['k']``) in a frame; its new value."""
        raise self.unsupported("setting expressions")

    async def completions(self, text: str, frame_id: int | None) -> list[str]:
        raise self.unsupported("completions")

    async def tasks(self, frame_id: int) -> AsyncTasks:
        """The target's asyncio tasks on every event loop, gathered in frame ``frame_id`` of the stop."""
        raise self.unsupported("asyncio tasks")

    async def recorder(self, action: str, args: dict[str, Any], frame_id: int) -> dict[str, Any]:
        """A request to the target's line recorder (record, since, value, off), run in frame ``frame_id``: its
        answer as data (``backends/debugpy/recording.py``)."""
        raise self.unsupported("recording lines (record, back, forward)")

    async def source(self, frame: Frame) -> str:
        """The source text of a frame, also when it has no file."""
        raise self.unsupported("source")

    async def source_changed(self, frame: Frame) -> str:
        """A sentence when the frame's file changed on disk since the target loaded it ("" when not known to)."""
        return ""

    async def send_input(self, text: str, eof: bool = False) -> None:
        """Write ``text`` to the target's stdin; ``eof`` closes it after (the target's reads see end of file)."""
        raise self.unsupported("stdin input")

    def waiting_for_input(self) -> bool:
        """Whether the target is blocked reading the stdin the relay holds (False when it cannot tell)."""
        return False

    def why_not_paused(self) -> str:
        """Why a pause the peer accepted has not stopped the target yet, when the backend can tell ("" if not)."""
        return ""

    async def custom_request(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        raise self.unsupported(f"the request {command!r}")

    async def detach(self) -> None:
        raise self.unsupported("detach")

    @abc.abstractmethod
    async def terminate(self) -> None:
        """End the target (politely, then by force) and release everything."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release every process and connection now; safe to call twice."""
