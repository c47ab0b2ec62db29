"""The panel's worker thread: user actions in order, and refreshes coalesced at a capped rate."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from ..errors import RelayError

log = logging.getLogger(__name__)

Job = Callable[[], None]
# Errors of work the target outran (it moved on meanwhile); the event that says so brings a fresh refresh.
OUTRUN = ("not_paused", "target_exited", "not_running")


class Worker:
    """Runs posted jobs first, then each dirty refresh key at most once per its interval.

    Event callbacks on the relay loop only ``mark`` keys; every facade call happens here, so
    none blocks the relay loop (which would deadlock) or the kernel's main thread.
    """

    def __init__(
        self,
        intervals: dict[str, float],
        refresh: Callable[[str], None],
        on_error: Callable[[RelayError], None],
        name: str = "debugger panel",
    ) -> None:
        self._intervals = intervals  # the order of the keys is the order of refreshes
        self._refresh = refresh
        self._on_error = on_error
        self._cond = threading.Condition()
        self._jobs: deque[Job] = deque()
        self._dirty: set[str] = set()
        self._last: dict[str, float] = {}
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def post(self, job: Job) -> None:
        with self._cond:
            self._jobs.append(job)
            self._cond.notify()

    def mark(self, *keys: str) -> None:
        with self._cond:
            self._dirty.update(keys)
            self._cond.notify()

    def close(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._closed = True
            self._jobs.clear()
            self._cond.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _next(self) -> Job | str | None:
        """The next job or due key; None once closed."""
        with self._cond:
            while not self._closed:
                if self._jobs:
                    return self._jobs.popleft()
                now = time.monotonic()
                waits = []
                for key in self._intervals:
                    if key in self._dirty:
                        left = self._last.get(key, 0.0) + self._intervals[key] - now
                        if left <= 0:
                            self._dirty.discard(key)
                            self._last[key] = now
                            return key
                        waits.append(left)
                self._cond.wait(min(waits) if waits else None)
            return None

    def _run(self) -> None:
        while (work := self._next()) is not None:
            try:
                if isinstance(work, str):
                    self._refresh(work)
                else:
                    work()
            except RelayError as error:
                if not (isinstance(work, str) and error.code in OUTRUN):
                    self._on_error(error)
            except Exception as exc:  # a panel bug must not kill the thread that keeps it live
                log.exception("debugger panel update failed")
                self._on_error(RelayError("invalid_request", f"The panel could not update: {exc!r}.",
                                          "Close the panel and open a new one."))
