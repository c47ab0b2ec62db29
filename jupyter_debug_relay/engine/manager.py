"""The session manager: creates, finds, applies breakpoints to, idles out and closes sessions."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import Any

from ..errors import RelayError, Unsupported
from ..model import Breakpoint, BreakpointResult, as_dict
from .breakpoints import BreakpointStore, applies
from .events import EventBus
from .output import DEFAULT_CAP
from .session import BackendFactory, Session, SessionObserver

log = logging.getLogger(__name__)


class SessionManager:
    """Every session of one relay, on the relay loop."""

    def __init__(
        self, output_cap: int = DEFAULT_CAP, idle_timeout: float = 3600.0, max_value_length: int = 1000,
        store: SessionObserver | None = None,
    ) -> None:
        self.store = store
        self.max_value_length = max_value_length
        self.sessions: dict[str, Session] = {}
        self.breakpoints = BreakpointStore()
        self.bus = EventBus()
        self.output_cap = output_cap
        self.idle_timeout = idle_timeout
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._idle_task: asyncio.Task[None] | None = None

    def spawn(self, coro: Any) -> None:
        """Run a coroutine on the loop, keeping a reference until it ends."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background task failed: %r", task.exception())

    # -- sessions ---------------------------------------------------------------------------

    def create(self, factory: BackendFactory, name: str | None = None, parent: str | None = None,
               exceptions: str | None = None) -> Session:
        session_id = f"s{next(self._ids)}"
        if name and any(s.name == name and not s.ended for s in self.sessions.values()):
            raise RelayError("invalid_request", f"A live session is already named {name!r}.",
                             "Pick another name, or stop that session first.")
        session = Session(self, session_id, name or session_id, factory, self.output_cap, parent)
        session.exceptions = exceptions
        self.sessions[session_id] = session
        if self.store is not None:
            self.store.open(session)
        if self._idle_task is None:
            self._idle_task = asyncio.get_running_loop().create_task(self._housekeeping())
        return session

    async def start(self, factory: BackendFactory, name: str | None = None, exceptions: str | None = None,
                    early_end: RelayError | None = None) -> Session:
        """Create a session and start its target; ``exceptions`` is its own exception mode (default: the relay's),
        ``early_end`` its error if the target exits with an error before its first stop."""
        session = self.create(factory, name, exceptions=exceptions)
        session.early_end = early_end
        await session.start()
        return session

    async def start_child(self, parent: Session, factory: BackendFactory, name: str) -> None:
        child = self.create(factory, None, parent=parent.id)
        child.name = f"{parent.name}/{name}"
        try:
            await child.start()
        except RelayError as exc:
            log.warning("child session %s did not start: %s", child.id, exc)

    def get(self, key: str) -> Session:
        session = self.sessions.get(key)
        if session is None:
            matches = [s for s in self.sessions.values() if s.name == key] or [
                s for s in self.sessions.values() if key in s.former_names]  # a name given before a rename
            live = [s for s in matches if not s.ended]
            session = (live or matches or [None])[-1]
        if session is None:
            known = ", ".join(f"{s.id} ({s.name})" if s.name != s.id else s.id for s in self.sessions.values())
            raise RelayError("session_not_found", f"There is no session {key!r}.",
                             f"Known sessions: {known or 'none yet; launch one first'}.")
        session.touch()
        return session

    async def close_session(self, session: Session) -> None:
        try:
            await session.terminate()
        except Exception as exc:  # closing must always reap, whatever the peer says
            log.warning("terminate of %s failed: %r", session.id, exc)
            await session.backend.close()

    def forget(self, session: Session) -> None:
        """Remove an ended ``session``: its id and name are no longer found."""
        self.sessions.pop(session.id, None)

    async def close(self) -> None:
        await asyncio.gather(*(self.close_session(s) for s in self.sessions.values()), return_exceptions=True)
        if self.store is not None:
            self.store.close()
        if self._idle_task is not None:
            self._idle_task.cancel()
        for task in list(self._tasks):
            task.cancel()
        for sub in list(self.bus.subscribers):
            sub.close()

    async def _housekeeping(self) -> None:
        """Once a second: send breakpoints whose file appeared or moved with its edits, stop idle sessions."""
        while True:
            await asyncio.sleep(min(1.0, max(self.idle_timeout / 4, 0.05)))
            for bp in self.breakpoints.refresh():
                await self.sync_breakpoints(bp)
            now = time.time()
            for session in list(self.sessions.values()):
                if (session.state in ("running", "paused") and not session.waiters
                        and now - session.last_activity > self.idle_timeout):
                    log.info("session %s idle for %.0f s: stopping it", session.id, now - session.last_activity)
                    session.error = RelayError(  # info() says why the target was ended
                        "timeout", f"Session {session.name} was idle for {self.idle_timeout:g} s and was stopped.",
                        "Raise idle_timeout on the Relay to keep idle sessions longer; any call on the session, "
                        "info() included, counts as activity.", {"idle_timeout": self.idle_timeout})
                    session.emit("error", session.error.to_dict())
                    await self.close_session(session)

    # -- breakpoints ------------------------------------------------------------------------

    def live(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.state in ("running", "paused")]

    async def sync_breakpoints(self, changed: Breakpoint) -> None:
        """Send the breakpoints of ``changed``'s kind (and file) to every live session it applies to."""
        store = self.breakpoints
        for session in self.live():
            if not applies(changed, session.id):
                continue
            backend = session.backend
            every = [bp for bp in store.list(session.id) if store.sendable(bp, backend.binds_pending)]
            try:
                if changed.kind == "line" and changed.path:
                    group = [bp for bp in every if bp.kind == "line" and bp.path == changed.path]
                    results = await backend.set_breakpoints(changed.path, group)
                elif changed.kind == "function":
                    group = [bp for bp in every if bp.kind == "function"]
                    results = await backend.set_function_breakpoints(group)
                elif changed.kind == "stage":
                    group = [bp for bp in every if bp.kind == "stage"]
                    results = await backend.set_stage_breakpoints(group)
                elif changed.kind == "output":
                    if not backend.can_pause:
                        raise Unsupported(backend.kind, "pause")
                    group = [bp for bp in every if bp is changed]
                    results = [BreakpointResult(True) for _ in group]  # the relay itself watches the output
                else:
                    continue
            except RelayError as exc:
                if exc.code != "unsupported":
                    log.warning("breakpoints not applied to %s: %s", session.id, exc)
                elif changed in every:  # say on the breakpoint that this backend has none of its kind
                    for bp_id, result in backend.lacking(changed.kind, [changed]).items():
                        session.on_breakpoint(bp_id, result, tell=bp_id != changed.id)
                continue
            for bp, result in zip(group, results, strict=False):  # the others of the group: told if they changed
                session.on_breakpoint(bp.id, result, tell=bp is not changed)
        # ``changed`` is told once, here, as every session left it: one event per change for every subscriber
        self.bus.publish(changed.session or "", "breakpoint", {"breakpoint": as_dict(changed)})

    async def sync_condition_errors(self) -> None:
        for session in self.live():
            session.backend.stop_on_condition_error = self.breakpoints.stop_on_condition_error
            await session.backend.apply_condition_errors()

    async def sync_exceptions(self) -> None:
        """The relay's exception mode to every live session that was not started with a mode of its own."""
        for session in self.live():
            if session.exceptions is not None:
                continue
            session.backend.exception_types = tuple(self.breakpoints.exception_types)
            try:
                await session.backend.set_exception_breakpoints(self.breakpoints.exceptions)
            except RelayError as exc:
                if exc.code != "unsupported":
                    raise
