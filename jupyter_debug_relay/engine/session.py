"""One debug session: the state machine over a backend, its stops, threads and output."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..backends.base import Backend, BackendEvents
from ..errors import RelayError
from ..model import BreakpointResult, Frame, Scope, SessionInfo, StopInfo, Thread, Variable, VariablePage, as_dict
from .output import OutputRing

if TYPE_CHECKING:
    from .manager import SessionManager

log = logging.getLogger(__name__)

BackendFactory = Callable[[BackendEvents], Backend]


class Session(BackendEvents):
    """A session's state (created → launching → running ⇄ paused → terminated | failed)."""

    def __init__(
        self,
        manager: SessionManager,
        session_id: str,
        name: str,
        factory: BackendFactory,
        output_cap: int,
        parent: str | None = None,
    ) -> None:
        self.manager = manager
        self.id = session_id
        self.name = name
        self.factory = factory
        self.parent = parent
        self.state = "created"
        self.backend: Backend = factory(self)
        self.stop: StopInfo | None = None
        self.exit_code: int | None = None
        self.error: RelayError | None = None
        self.output = OutputRing(output_cap)  # the session's output budget: no output text is kept elsewhere
        manager.bus.rings[session_id] = self.output
        self.created_at = self.last_activity = time.time()
        self._stops = 0  # how many stops so far: a waiter waits for this to grow
        self.waiters = 0  # callers waiting for a stop: while there are any, the session is not idle
        self.watches: list[str] = []  # expressions evaluated at every stop, returned with it
        self.started_with: dict[str, Any] | None = None  # {"operation", "args"} that started its target (export)
        self._changed = asyncio.Event()
        self._told_free_children = False  # the console says once that forked children run free

    # -- state ------------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.state in ("terminated", "failed")

    def touch(self) -> None:
        self.last_activity = time.time()

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.emit("session", {"state": state, "info": as_dict(self.info())})
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def emit(self, name: str, body: dict[str, Any]) -> None:
        self.manager.bus.publish(self.id, name, body)

    def info(self) -> SessionInfo:
        return SessionInfo(
            id=self.id, name=self.name, backend=self.backend.kind, state=self.state, target=self.backend.target,
            capabilities=self.backend.capabilities, created_at=self.created_at, last_activity=self.last_activity,
            exit_code=self.exit_code, error=self.error.to_dict() if self.error else None, stop=self.stop,
            pid=self.backend.pid, parent=self.parent,
        )

    def require_paused(self) -> None:
        self.require_live()
        if self.state != "paused":
            raise RelayError("not_paused", f"Session {self.name} is {self.state}, not paused.")

    def require_live(self) -> None:
        if self.state == "terminated":
            raise RelayError("target_exited", f"Session {self.name} has ended (exit code {self.exit_code}).",
                             details={"exit_code": self.exit_code})
        if self.state == "failed":
            error = self.error or RelayError("not_running", f"Session {self.name} failed.")
            raise RelayError(error.code, f"Session {self.name} failed: {error.message}", error.hint, error.details)

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the backend with the relay's breakpoints; a failure leaves the session ``failed``."""
        self._set_state("launching")
        store = self.manager.breakpoints
        store.appeared()  # a pending file that exists by now is sent with the rest
        self.backend.stop_on_condition_error = store.stop_on_condition_error
        try:
            await self.backend.start([bp for bp in store.list(self.id) if store.sendable(bp)], store.exceptions)
        except BaseException as exc:
            error = exc if isinstance(exc, RelayError) else RelayError("adapter_failed", f"The start failed: {exc}")
            await self._fail(error)
            raise error from None
        for bp_id, result in self.backend.breakpoint_results.items():
            self.on_breakpoint(bp_id, result)
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
        self.stop, self.exit_code, self.error = None, None, None
        self.on_output("console", f"--- {self.name} restarted ---\n")  # where the new run's output begins
        await self.start()

    async def reconnect(self) -> None:
        """Open the same backend's connection again (after it dropped), with the relay's breakpoints as they are."""
        await self.backend.close()
        self.stop, self.error = None, None
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

    async def wait_for_stop(self, timeout: float, after: int | None = None) -> StopInfo:
        """The current stop, or (``after`` given) the first stop after that many; raises at the end or timeout."""
        self.waiters += 1
        try:
            return await self._wait_for_stop(timeout, after)
        finally:
            self.waiters -= 1
            self.touch()

    async def _wait_for_stop(self, timeout: float, after: int | None) -> StopInfo:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if self.state == "paused" and self.stop is not None and (after is None or self._stops > after):
                return self.stop
            if self.state == "failed":
                self.require_live()
            if self.state == "terminated":
                raise RelayError("target_exited", f"The target exited with code {self.exit_code}.",
                                 "Launch it again to keep debugging.", {"exit_code": self.exit_code})
            left = deadline - loop.time()
            if left <= 0:
                raise RelayError("timeout", f"Session {self.name} is still running after {timeout:g} s.",
                                 "Wait again, pause it, or set a breakpoint.", {"state": self.state})
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def resume(self, action: str, thread_id: int | None, wait: bool, timeout: float) -> StopInfo | None:
        self.require_paused()
        assert self.stop is not None
        mark = self._stops
        previous = self.stop
        thread_id = thread_id if thread_id is not None else previous.thread_id
        self.stop = None
        self._set_state("running")
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
                self.stop = previous
                self._set_state("paused")
            raise
        if not self.ended and self._stops == mark:
            self.emit("continued", {"thread_id": thread_id, "action": action})
        return await self.wait_for_stop(timeout, after=mark) if wait else None

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
        return await self.backend.stack(self._thread(thread_id), max(0, start), levels)

    async def scopes(self, frame_id: int | None) -> list[Scope]:
        frame = await self._frame_id(frame_id)
        return await self.backend.scopes(frame) if frame is not None else []

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        self.require_paused()
        page = await self.backend.variables(ref, max(0, start), max(1, count))
        page.items = [self._cut(v) for v in page.items]
        return page

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        if not expression.strip():
            raise RelayError("invalid_request", "There is nothing to evaluate.")
        value = await self.backend.evaluate(expression, await self._frame_id(frame_id), context)
        return value if context == "clipboard" else self._cut(value)  # the clipboard gets the whole value

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        self.require_paused()
        return self._cut(await self.backend.set_variable(ref, name, value))

    async def completions(self, text: str, frame_id: int | None) -> list[str]:
        return await self.backend.completions(text, await self._frame_id(frame_id))

    async def source(self, frame: Frame | None) -> str:
        if frame is None:
            self.require_paused()
            assert self.stop is not None
            frame = self.stop.frame
            if frame is None:
                raise RelayError("invalid_request", "The stop has no frame to show.")
        return await self.backend.source(frame)

    # -- BackendEvents ----------------------------------------------------------------------

    def on_stopped(self, stop: StopInfo) -> None:
        if self.ended:
            return
        self.stop = stop
        self._stops += 1
        self.emit("stopped", as_dict(stop))
        self._set_state("paused")

    def on_continued(self, thread_id: int | None) -> None:
        if self.state == "paused":
            self.stop = None
            self.emit("continued", {"thread_id": thread_id})
            self._set_state("running")

    def on_output(self, category: str, text: str) -> None:
        self.manager.bus.output(self.id, self.output, category, text)

    def on_thread(self, thread_id: int, reason: str) -> None:
        self.emit("thread", {"thread_id": thread_id, "reason": reason})

    def on_breakpoint(self, bp_id: int, result: BreakpointResult) -> None:
        bp = self.manager.breakpoints.record(bp_id, result)
        if bp is not None:
            self.emit("breakpoint", {"breakpoint": as_dict(bp)})

    def on_exited(self, exit_code: int | None) -> None:
        if self.ended:
            return
        self.exit_code = exit_code
        self.stop = None
        self.emit("exited", {"exit_code": exit_code})
        self._set_state("terminated")
        self.emit("terminated", {"exit_code": exit_code})
        self.manager.spawn(self.backend.close())

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
