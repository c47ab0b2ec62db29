"""A pydevd inspection that takes long: the session stays paused, and a timeout names the slow value.

When making the values of a listing takes 3 s, pydevd resumes the other threads (a getter may
wait on one of them: ``PYDEVD_UNBLOCK_THREADS_ON_VARIABLES_TIMEOUT``) and suspends them again
when it is done, with a ``continued`` and then a ``stopped`` event for the stopped thread. That
thread never moved: the session stays paused through both. The boot names the value whose text
takes long (``relaySlowValue``), so a request that runs out of time says which value held it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable
from typing import Any, TypeVar

from ...errors import RelayError

T = TypeVar("T")
# How deep in inspections the running task is: an inspection's inner ones (a listing's len) leave the naming to
# the outer one. Per task, so an inspection another caller runs meanwhile (the store's snapshot) is not "inner".
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("inspection_depth", default=0)


class SlowInspection:
    """Part of ``DebugpyBackend``: inspections that may run the target's slow code, and pydevd's unblocking."""

    request_timeout: float
    _paused = False  # a stop was reported and no resume was asked since
    _inspected = False  # an inspection ran in this stop: pydevd may resume the other threads around it
    _unblocked = False  # pydevd resumed them: its next stop of the stopped thread is them suspended again
    _stopped_thread: int | None = None
    _slow_value: str | None = None  # the value the boot said is slow to show, in the current inspection

    async def _inspect(self, what: str, details: dict[str, Any], call: Awaitable[T]) -> T:
        """Run an inspection; a ``timeout`` names the slow value (else ``what``) and leaves the session paused."""
        if self._paused:  # one sent after a resume (a panel's late look at the old stop) unblocks nothing
            self._inspected = True
        depth = _DEPTH.get()
        if depth == 0:
            self._slow_value = None
        token = _DEPTH.set(depth + 1)
        try:
            return await call
        except RelayError as exc:
            if exc.code != "timeout" or depth > 0:
                raise
            slow = self._slow_value
            named = f"the value of {slow!r}" if slow else what
            raise RelayError(
                "timeout", f"Showing {named} took longer than {self.request_timeout:g} s: its __repr__ (or a "
                "property it reads) is slow. The target stays paused.",
                "Look at other values, or evaluate something cheaper (type(x), len(x)); a Relay with a larger "
                "request_timeout waits longer.", {**details, "slow_value": slow}) from None
        finally:
            _DEPTH.reset(token)

    def _event_relaySlowValue(self, body: dict[str, Any]) -> None:
        """The boot's word that a value's text has taken a second so far."""
        name = body.get("expression") or body.get("name")
        self._slow_value = name if isinstance(name, str) else None

    def _event_continued(self, body: Any) -> None:
        if self._inspected:
            self._unblocked = True  # the other threads run while the stopped one makes a value's text
            return
        super()._event_continued(body)  # type: ignore[misc]

    def _event_stopped(self, body: Any) -> None:
        if self._unblocked and body.get("threadId") == self._stopped_thread:
            self._unblocked = False  # the same stop, the other threads suspended again
            return
        self._stopped_thread = body.get("threadId")
        self._paused = True
        super()._event_stopped(body)  # type: ignore[misc]

    async def resume(self, action: str, thread_id: int | None) -> None:
        self._paused = self._inspected = self._unblocked = False
        await super().resume(action, thread_id)  # type: ignore[misc]
