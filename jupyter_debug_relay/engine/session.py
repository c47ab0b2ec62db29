"""One debug session: the state machine over a backend, its stops, threads and output."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..backends.base import Backend, BackendEvents
from ..errors import RelayError
from ..model import (
    AsyncTasks,
    BreakpointResult,
    Frame,
    Scope,
    SessionInfo,
    SourceText,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
    as_dict,
)
from ..source.lines import file_line, line_of
from . import history as back_in_time
from .link import Link
from .output import OutputRing
from .output_watch import Hit, OutputWatch

if TYPE_CHECKING:
    from .breakpoints import BreakpointStore
    from .events import EventBus

log = logging.getLogger(__name__)

BackendFactory = Callable[[BackendEvents], Backend]


class SessionObserver(Protocol):
    """Who records the sessions (the session store): told when one opens, stops and leaves a stop, and at the end."""

    def open(self, session: Session) -> None: ...

    def at_stop(self, session: Session) -> None: ...

    def left_stop(self, session: Session, seq: int) -> None: ...

    def close(self) -> None: ...


class SessionHost(Protocol):
    """What a session needs of the manager that holds it."""

    bus: EventBus
    breakpoints: BreakpointStore
    store: SessionObserver | None
    max_value_length: int

    def spawn(self, coro: Any) -> None: ...

    async def start_child(self, parent: Session, factory: BackendFactory, name: str) -> None: ...
FINISHED_KEPT = 200  # finished threads remembered for the steps that ran them to their end


class Session(Link, BackendEvents):
    """A session's state (created → launching → running ⇄ paused → terminated | failed)."""

    def __init__(
        self,
        manager: SessionHost,
        session_id: str,
        name: str,
        factory: BackendFactory,
        output_cap: int,
        parent: str | None = None,
    ) -> None:
        self.manager = manager
        self.id = session_id
        self.name = name
        self.former_names: list[str] = []  # names it had before a rename: a name once shown keeps finding it
        self.factory = factory
        self.parent = parent
        self.state = "created"
        self.backend: Backend = factory(self)
        self.stop: StopInfo | None = None
        self.exit_code: int | None = None
        self.error: RelayError | None = None
        self.early_end: RelayError | None = None  # the error if the target exits with one before its first stop
        self.output = OutputRing(output_cap)  # the session's output budget: no output text is kept elsewhere
        manager.bus.rings[session_id] = self.output
        self.created_at = self.last_activity = time.time()
        self._stops = 0  # how many stops so far: a waiter waits for this to grow
        self.ends = 0  # how many threads finished their unit of work (a Mycel flow) so far
        self._finished: dict[int, tuple[int, dict[str, Any]]] = {}  # thread id -> (its end's number, its result)
        self._stop_seq = 0  # the seq of the stopped event of the current stop
        self.uid: str | None = None  # the session store's unique id, when the relay records
        self.seen: dict[str, Any] = {}  # what was looked at during this stop: the store's snapshot of it
        self.listing = 0  # variables requests under way (each may run the target's __repr__ code)
        self.waiters = 0  # callers waiting for a stop: while there are any, the session is not idle
        self.watches: list[str] = []  # expressions evaluated at every stop, returned with it
        self.started_with: dict[str, Any] | None = None  # {"operation", "args"} that started its target (export)
        self._changed = asyncio.Event()
        self._told_free_children = False  # the console says once that forked children run free
        self._watch = OutputWatch()
        self._output_hit: Hit | None = None  # an output breakpoint's match, pausing for it
        self.exceptions: str | None = None  # this session's own exception mode; None follows the relay's
        self.stopped_by_user = False  # ended by a terminate the user asked for
        self.pause_pending = False  # a pause was asked and the target has not stopped since
        self.ran = False  # its target ran (it was running or paused once): a session whose start failed never did
        self.history: back_in_time.History | None = None  # what its target records (record), and the state shown

    # -- state ------------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.state in ("terminated", "failed")

    def touch(self) -> None:
        self.last_activity = time.time()

    @property
    def stops(self) -> int:
        """How many stops so far."""
        return self._stops

    def _set_state(self, state: str) -> None:
        if state != self.state:
            if self.state == "paused" and self.manager.store is not None:
                self.manager.store.left_stop(self, self._stop_seq)
            self.state = state
            self.ran = self.ran or state in ("running", "paused")
            # a target that has just started or resumed cannot be blocked on its stdin yet: no need to look
            self.emit("session", {"state": state, "info": as_dict(self.info(look_at_stdin=False))})
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def emit(self, name: str, body: dict[str, Any]) -> None:
        self.manager.bus.publish(self.id, name, body)

    def info(self, look_at_stdin: bool = True) -> SessionInfo:
        """A snapshot; ``look_at_stdin`` asks the system whether a running target waits for input."""
        return SessionInfo(
            id=self.id, name=self.name, backend=self.backend.kind, state=self.state, target=self.backend.target,
            capabilities=self.backend.capabilities, created_at=self.created_at, last_activity=self.last_activity,
            exit_code=self.exit_code, error=self.error.to_dict() if self.error else None, stop=self.stop,
            pid=self.backend.pid, parent=self.parent, stopped_by_user=self.stopped_by_user,
            waiting_for_input=look_at_stdin and self.state == "running" and self.backend.waiting_for_input(),
            uid=self.uid,
            startup=self.backend.startup.durations(), warnings=list(self.backend.warnings),
        )

    def rename(self, name: str) -> None:
        """Call the session ``name`` from now on; its former name still finds it where no other session has it."""
        if name != self.name:
            self.former_names.append(self.name)
            self.name = name

    def require_paused(self) -> None:
        self.require_live()
        if self.state != "paused":
            raise RelayError("not_paused", f"Session {self.name} is {self.state}, not paused.")

    def require_live(self) -> None:
        self.check_link()
        if self.state == "terminated":
            how = "was stopped by the user" if self.stopped_by_user else f"has ended (exit code {self.exit_code})"
            raise RelayError("target_exited", f"Session {self.name} {how}.",
                             details={"exit_code": self.exit_code, "stopped_by_user": self.stopped_by_user})
        if self.state == "failed":
            error = self.error or RelayError("not_running", f"Session {self.name} failed.")
            raise RelayError(error.code, f"Session {self.name} failed: {error.message}", error.hint, error.details)

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the backend with the relay's breakpoints; a failure leaves the session ``failed``."""
        self._set_state("launching")
        store = self.manager.breakpoints
        store.refresh()  # a pending file that exists by now is sent with the rest, edited files' lines moved
        self.backend.stop_on_condition_error = store.stop_on_condition_error
        self.backend.exception_types = tuple(store.exception_types)
        try:
            await self.backend.start(*self.sendable())
        except BaseException as exc:
            error = exc if isinstance(exc, RelayError) else RelayError("adapter_failed", f"The start failed: {exc}")
            await self._fail(error)
            raise error from None
        self.took_breakpoints()
        if self.state == "launching":
            self._set_state("running")
        self.touch()  # idle time counts from when the target is up

    async def _fail(self, error: RelayError) -> None:
        self._mark_failed(error)
        await self.backend.close()

    def _mark_failed(self, error: RelayError) -> None:
        """Go to ``failed`` with ``error`` (one ``error`` event), unless the session already ended."""
        if self.ended:
            return
        self.error = error
        self.stop = None
        self.emit("error", error.to_dict())
        self._set_state("failed")

    async def restart(self) -> None:
        """End the target and start it again with the same options, as a fresh backend."""
        await self.backend.terminate()
        self.backend = self.factory(self)
        self.stop, self.exit_code, self.error, self.stopped_by_user = None, None, None, False
        self.history = None  # a new run records nothing until asked again
        self.on_output("console", f"--- {self.name} restarted ---\n")  # where the new run's output begins
        await self.start()

    async def terminate(self) -> None:
        if self.ended:
            await self.backend.close()
            return
        await self.backend.terminate()
        if not self.ended:
            self._set_state("terminated")
            self.emit("terminated", {"exit_code": self.exit_code})

    async def detach(self) -> None:
        self.require_live()
        await self.backend.detach()
        self._set_state("terminated")
        self.emit("terminated", {"detached": True})

    # -- waiting for stops ------------------------------------------------------------------

    async def wait_for_stop(self, timeout: float, after: int | None = None, thread: int | None = None,
                            ends: int = 0) -> StopInfo | None:
        """The current stop, or (``after`` given) the first stop after that many; raises at the end or timeout.

        With ``thread``: None once that thread finishes its unit of work (end number past ``ends``), e.g. a Mycel
        flow run to its end by a step.
        """
        self.waiters += 1
        try:
            return await self._with_peer_line(await self._wait_for_stop(timeout, after, thread, ends))
        finally:
            self.waiters -= 1
            self.touch()

    def finished_since(self, thread_id: int | None, ends: int) -> dict[str, Any] | None:
        """How ``thread_id`` finished its unit of work, if it did after end number ``ends``."""
        end = self._finished.get(thread_id) if thread_id is not None else None
        return end[1] if end is not None and end[0] > ends else None

    async def _wait_for_stop(self, timeout: float, after: int | None, thread: int | None = None,
                             ends: int = 0) -> StopInfo | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if self.state == "paused" and self.stop is not None and (after is None or self._stops > after):
                return self.stop
            if self.finished_since(thread, ends) is not None:
                return None
            if self.state == "failed":
                self.require_live()
            error = self._end_error() if self.state == "terminated" else None
            if error is not None:
                raise RelayError(error.code, error.message, error.hint, {**error.details, "exit_code": self.exit_code})
            if self.state == "terminated":
                raise RelayError("target_exited", f"The target exited with code {self.exit_code}.",
                                 "Launch it again to keep debugging.", {"exit_code": self.exit_code})
            left = deadline - loop.time()
            if left <= 0:
                note = self.running_note()
                raise RelayError("timeout", f"Session {self.name} is still running after {timeout:g} s"
                                 + (f": {note}." if note else "."), "Wait again, pause it, or set a breakpoint.",
                                 {"state": self.state, **({"note": note} if note else {})})
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except asyncio.TimeoutError:
                pass

    def running_note(self) -> str:
        """Why a running target has not stopped, when that can be told: it waits for input, or a pause waits on C."""
        if self.state != "running":
            return ""
        if self.backend.waiting_for_input():
            return "it waits for input on stdin (send it with input; eof ends the input)"
        if self.pause_pending:
            why = self.backend.why_not_paused()
            return f"the pause is pending: {why}" if why else ""
        return ""

    async def _with_peer_line(self, stop: StopInfo | None) -> StopInfo | None:
        """``stop`` with its source line asked of the peer, when its frame has no file here but a source."""
        frame = stop.frame if stop is not None else None
        if stop is None or stop.source_line or frame is None or not frame.source_ref or self.state != "paused":
            return stop
        try:
            stop.source_line = line_of(await self.backend.source(frame), frame.line)
        except RelayError:
            pass  # the peer has no source to give: the stop shows its place only
        return stop

    async def resume(self, action: str, thread_id: int | None, wait: bool, timeout: float) -> StopInfo | None:
        self.require_paused()
        assert self.stop is not None
        mark, ends = self._stops, self.ends
        previous = self.stop
        thread_id = thread_id if thread_id is not None else previous.thread_id
        self._live()
        self.stop = None
        self._set_state("running")
        # before the request: a fast step's stopped event can arrive before the request's answer
        self.emit("continued", {"thread_id": thread_id, "action": action})
        try:
            await self.backend.resume(action, thread_id)
        except RelayError as exc:
            await self._settle(1.0)  # a target that dies mid-step makes the step fail: report the end
            if self.ended:
                return await self.wait_for_stop(0, after=mark)
            if exc.code == "adapter_failed":
                await self._fail(exc)
                raise
            if self.state == "running" and self._stops == mark:
                self._paused_at(previous)
            raise
        return await self.wait_for_stop(timeout, after=mark, thread=thread_id, ends=ends) if wait else None

    async def _settle(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the session to end."""
        try:
            await asyncio.wait_for(self._until_ended(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _until_ended(self) -> None:
        while not self.ended:
            await self._changed.wait()

    async def pause(self, thread_id: int | None, wait: bool, timeout: float) -> StopInfo | None:
        self.require_live()
        if self.state == "paused":
            return self.stop
        mark = self._stops
        await self.backend.pause(thread_id)
        self.pause_pending = True
        return await self.wait_for_stop(timeout, after=mark) if wait else None

    # -- inspection -------------------------------------------------------------------------

    def _thread(self, thread_id: int | None) -> int:
        self.require_paused()
        assert self.stop is not None
        return thread_id if thread_id is not None else self.stop.thread_id

    async def _frame_id(self, frame_id: int | None) -> int | None:
        if frame_id is not None:
            return frame_id
        self.require_paused()
        assert self.stop is not None
        if self.stop.frame is not None:
            return self.stop.frame.id
        frames, _ = await self.backend.stack(self.stop.thread_id, 0, 1)
        return frames[0].id if frames else None

    @contextlib.asynccontextmanager
    async def _in_frame(self, frame_id: int | None) -> AsyncIterator[None]:
        """A request on frame ``frame_id``; if it fails and no thread of the stop holds that frame, the error names
        the frame instead."""
        try:
            yield
        except RelayError:
            if frame_id is None or self.state != "paused" or await self._holds_frame(frame_id):
                raise
            raise RelayError("invalid_request", f"Session {self.name} has no frame {frame_id} at this stop.",
                             "List the frames with stack and pass the id of one of them as frame_id.",
                             {"field": "frame_id", "frame_id": frame_id}) from None

    async def _holds_frame(self, frame_id: int) -> bool:
        """Whether a thread of the stop has frame ``frame_id`` (True when the backend cannot tell)."""
        if any(frame.id == frame_id for frame in self.seen.get("frames") or ()):
            return True  # listed at this stop: no need to ask
        try:
            threads = await self.backend.threads()
        except RelayError:
            return True
        for thread in threads:
            try:
                frames, _ = await self.backend.stack(thread.id, 0, None)
            except RelayError:
                continue  # a running thread has no frames
            if any(frame.id == frame_id for frame in frames):
                return True
        return False

    def _cut(self, var: Variable) -> Variable:
        limit = self.manager.max_value_length
        if len(var.value) > limit:
            var.value, var.truncated = var.value[:limit] + "…", True
        return var

    async def threads(self) -> list[Thread]:
        self.require_live()
        threads = await self.backend.threads()
        stopped = set(self.stop.stopped_threads) if self.stop else set()
        for thread in threads:
            thread.stopped = thread.stopped or thread.id in stopped
        return threads

    async def stack(self, thread_id: int | None, start: int, levels: int | None) -> tuple[list[Frame], int]:
        thread = self._thread(thread_id)
        recorded = back_in_time.shown(self.history)
        if recorded is not None and thread == self.stop.thread_id:  # type: ignore[union-attr]
            return back_in_time.stack(recorded)
        frames, total = await self.backend.stack(thread, max(0, start), levels)
        if start <= 0 and self.stop is not None and thread == self.stop.thread_id and frames:
            self.seen["frames"] = frames
        return frames, total

    async def scopes(self, frame_id: int | None) -> list[Scope]:
        recorded = back_in_time.shown(self.history)
        if recorded is not None and frame_id in (None, back_in_time.RECORDED_FRAME):
            self.require_paused()
            return back_in_time.scopes(recorded)
        frame = await self._frame_id(frame_id)
        async with self._in_frame(frame_id):
            scopes = await self.backend.scopes(frame) if frame is not None else []
        frames = self.seen.get("frames")
        top = frames[0].id if frames else self.stop.frame.id if self.stop and self.stop.frame else None
        if scopes and frame == top:
            self.seen["scopes"] = scopes
        return scopes

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        self.require_paused()
        recorded = back_in_time.shown(self.history)
        if recorded is not None and ref == back_in_time.RECORDED_LOCALS:
            return back_in_time.variables(recorded, max(0, start), max(1, count))
        self.listing += 1
        try:
            page = await self.backend.variables(ref, max(0, start), max(1, count))
        finally:
            self.listing -= 1
        page.items = [self._cut(v) for v in page.items]
        scopes = self.seen.get("scopes")
        if scopes and scopes[0].ref == ref and start <= 0:
            self.seen["variables"] = page.items
        return page

    async def ask_recorder(self, action: str, args: dict[str, Any], target: str = "") -> dict[str, Any]:
        """Ask the target's line recorder (``record``) at this stop; its refusal in the relay's words."""
        frame = await self._frame_id(None)
        if frame is None:
            raise RelayError("not_paused", f"Session {self.name} has no frame at this stop to ask the target from.")
        answer = await self.backend.recorder(action, args, frame)
        error = back_in_time.refused(answer, target, self.name)
        if error is not None:
            raise error
        return answer

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        if not expression.strip():
            raise RelayError("invalid_request", "There is nothing to evaluate.")
        recorded = back_in_time.shown(self.history)
        if recorded is not None and frame_id in (None, back_in_time.RECORDED_FRAME):
            self.require_paused()
            return self._cut(await back_in_time.evaluate(recorded, expression, self.ask_recorder,
                                                         self.state == "paused"))
        async with self._in_frame(frame_id):
            value = await self.backend.evaluate(expression, await self._frame_id(frame_id), context)
        return value if context == "clipboard" else self._cut(value)  # the clipboard gets the whole value

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        self.require_paused()
        return self._cut(await self.backend.set_variable(ref, name, value))

    async def set_expression(self, expression: str, value: str, frame_id: int | None) -> Variable:
        self.require_paused()
        async with self._in_frame(frame_id):
            return self._cut(await self.backend.set_expression(expression, value, await self._frame_id(frame_id)))

    async def completions(self, text: str, frame_id: int | None) -> list[str]:
        async with self._in_frame(frame_id):
            return await self.backend.completions(text, await self._frame_id(frame_id))

    async def tasks(self) -> AsyncTasks:
        """The target's asyncio tasks on every event loop, gathered in the stopped frame."""
        frame = await self._frame_id(None)
        if frame is None:
            raise RelayError("not_paused", f"Session {self.name} has no frame at this stop to look from.")
        return await self.backend.tasks(frame)

    async def source(self, frame: Frame | None) -> SourceText:
        """The frame's source text (the stop's by default), with a note when its file changed since it loaded."""
        if frame is None:
            self.require_paused()
            assert self.stop is not None
            frame = self.stop.frame
            if frame is None:
                raise RelayError("invalid_request", "The stop has no frame to show.")
        text = SourceText(await self.backend.source(frame))
        text.note = await self.backend.source_changed(frame)
        return text

    # -- BackendEvents ----------------------------------------------------------------------

    def on_stopped(self, stop: StopInfo) -> None:
        if self.ended:
            return
        hit, self._output_hit = self._output_hit, None
        if hit is not None and stop.reason == "pause":  # the pause an output breakpoint asked for
            bp, line = hit
            stop.reason, stop.breakpoint_ids, stop.output_line = "breakpoint", [bp.id], line
            stop.description = f"output breakpoint {bp.id} matched {line!r}; paused just after it"
        if not stop.source_line and stop.frame is not None:
            stop.source_line = file_line(stop.frame.path, stop.frame.line)
        self._stops += 1
        self.pause_pending = False
        self.seen = {}
        self._live()
        self._paused_at(stop)
        if self.manager.store is not None:
            self.manager.store.at_stop(self)

    def _paused_at(self, stop: StopInfo) -> None:
        """Hold ``stop``, publish it, and be paused."""
        self.stop = stop
        self._stop_seq = self.manager.bus.publish(self.id, "stopped", as_dict(stop)).seq
        self._set_state("paused")

    def _live(self) -> None:
        """Show the live program again, not a recorded state."""
        if self.history is not None:
            self.history.position = None

    def on_continued(self, thread_id: int | None) -> None:
        if self.state == "paused":
            self._live()
            self.stop = None
            self.emit("continued", {"thread_id": thread_id})
            self._set_state("running")

    def on_output(self, category: str, text: str) -> None:
        self.manager.bus.output(self.id, self.output, category, text)
        hit = self._watch.feed(category, text, self.manager.breakpoints.output_breakpoints(self.id))
        if hit is not None and self.state == "running" and self._output_hit is None and self.backend.can_pause:
            self._output_hit = hit
            self.manager.spawn(self._pause_for_output())

    async def _pause_for_output(self) -> None:
        """Pause for an output breakpoint; output is asynchronous, so the target stops just after the line."""
        try:
            await self.backend.pause(None)
        except RelayError as exc:
            self._output_hit = None
            log.info("session %s: an output breakpoint could not pause it: %s", self.id, exc)

    def on_thread(self, thread_id: int, reason: str) -> None:
        self.emit("thread", {"thread_id": thread_id, "reason": reason})

    def on_finished(self, thread_id: int, result: dict[str, Any]) -> None:
        self.ends += 1
        self._finished.pop(thread_id, None)
        self._finished[thread_id] = (self.ends, {"thread_id": thread_id, **result})
        while len(self._finished) > FINISHED_KEPT:
            del self._finished[next(iter(self._finished))]
        self._notify()

    def on_breakpoint(self, bp_id: int, result: BreakpointResult, tell: bool = True) -> None:
        """Record what the peer says of breakpoint ``bp_id``; a change is told unless ``tell`` is false (its caller
        tells it: ``sync_breakpoints`` says each change once, whatever the number of sessions)."""
        bp = self.manager.breakpoints.record(bp_id, result)
        if bp is not None and tell:
            self.emit("breakpoint", {"breakpoint": as_dict(bp)})

    def on_exited(self, exit_code: int | None) -> None:
        if self.ended:
            return
        self.exit_code = exit_code
        self.stop = None
        error = self._end_error()
        if error is not None:  # e.g. a module that did not compile: the session's error says where
            self.error = error
            self.emit("error", self.error.to_dict())
        self.emit("exited", {"exit_code": exit_code})
        self._set_state("terminated")
        self.emit("terminated", {"exit_code": exit_code})
        self.manager.spawn(self.backend.close())

    def _end_error(self) -> RelayError | None:
        """Why the target ended, when it ended on an error: the peer's word, else ``early_end`` if it exited with an
        error before its first stop."""
        if self.backend.end_error is not None:
            return self.backend.end_error
        if self.exit_code and not self._stops and not self.stopped_by_user:
            return self.early_end
        return None

    def on_raw(self, protocol: str, name: str, body: dict[str, Any]) -> None:
        self.emit("raw", {"protocol": protocol, "name": name, "body": body})

    def on_child(self, factory: BackendFactory, name: str) -> None:
        self.on_subprocess(None, True)
        self.manager.spawn(self.manager.start_child(self, factory, name))

    def on_subprocess(self, pid: int | None, debugged: bool) -> None:
        self.emit("subprocess", {"pid": pid, "debugged": debugged})
        if not debugged and not self._told_free_children:
            self._told_free_children = True
            self.on_output("console", f"Child process {pid} runs without the debugger: breakpoints apply to the "
                           "debugged process only (launch with subprocess=True to debug its children).\n")

    def on_lost(self, error: Exception) -> None:
        if self.ended:
            return
        self._mark_failed(error if isinstance(error, RelayError) else RelayError("adapter_failed", str(error)))
        self.manager.spawn(self.backend.close())  # failed at once: the call that met the error sees it
