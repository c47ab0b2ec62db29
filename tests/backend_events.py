"""A ``BackendEvents`` for tests that drive a backend alone: it records what the backend reports, lets a test await
it with a timeout, and fails on reports a backend must never make."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from jupyter_debug_relay.model import BreakpointResult, StopInfo

WAIT = 5.0


class Recorder:
    """Every report of a backend, in lists; ``forbid`` maps a report (``"exited"``, ``"child"`` ...) that must not
    come to the reason it must not."""

    def __init__(self, forbid: dict[str, str] | None = None) -> None:
        self.forbid = forbid or {}
        self.stops: list[StopInfo] = []
        self.continued: list[int | None] = []
        self.output: list[tuple[str, str]] = []
        self.threads: list[tuple[int, str]] = []
        self.finished: list[tuple[int, dict[str, Any]]] = []
        self.breakpoints: list[tuple[int, BreakpointResult]] = []
        self.exits: list[int | None] = []
        self.raw: list[tuple[str, str, dict[str, Any]]] = []
        self.children: list[tuple[Any, str]] = []
        self.lost: list[Exception] = []
        self.started = False  # set by a test once start() returned
        self.early_stops = 0  # stops reported before that
        self._taken = 0
        self._changed = asyncio.Event()

    def _record(self, kind: str, into: list[Any], item: Any) -> None:
        if kind in self.forbid:
            raise AssertionError(self.forbid[kind])
        into.append(item)
        self._changed.set()

    def on_stopped(self, stop: StopInfo) -> None:
        self.early_stops += not self.started
        self._record("stopped", self.stops, stop)

    def on_continued(self, thread_id: int | None) -> None:
        self._record("continued", self.continued, thread_id)

    def on_output(self, category: str, text: str) -> None:
        self._record("output", self.output, (category, text))

    def on_thread(self, thread_id: int, reason: str) -> None:
        self._record("thread", self.threads, (thread_id, reason))

    def on_finished(self, thread_id: int, result: dict[str, Any]) -> None:
        self._record("finished", self.finished, (thread_id, result))

    def on_breakpoint(self, bp_id: int, result: BreakpointResult) -> None:
        self._record("breakpoint", self.breakpoints, (bp_id, result))

    def on_exited(self, exit_code: int | None) -> None:
        self._record("exited", self.exits, exit_code)

    def on_raw(self, protocol: str, name: str, body: dict[str, Any]) -> None:
        self._record("raw", self.raw, (protocol, name, body))

    def on_child(self, factory: Any, name: str) -> None:
        self._record("child", self.children, (factory, name))

    def on_lost(self, error: Exception) -> None:
        self._record("lost", self.lost, error)

    @property
    def ended(self) -> bool:
        """Whether the target exited or a thread of it ended."""
        return bool(self.exits) or any(reason == "exited" for _, reason in self.threads)

    def text(self, category: str) -> str:
        return "".join(text for cat, text in self.output if cat == category)

    async def until(self, what: Callable[[], Any], timeout: float = WAIT, or_lost: bool = False) -> Any:
        """Wait until ``what()`` is true (or, with ``or_lost``, the backend lost its peer) and return it; fail after
        ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (result := what()) and not (or_lost and self.lost):
            if loop.time() >= deadline:
                raise AssertionError(f"still waiting after {timeout:g} s; output {self.output}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), deadline - loop.time())
            except asyncio.TimeoutError:
                pass
        return result

    def untaken(self) -> list[StopInfo]:
        """The stops ``next_stop`` has not returned yet."""
        return self.stops[self._taken:]

    async def next_stop(self, timeout: float = WAIT) -> StopInfo:
        """The first stop not taken yet, waiting for it."""
        await self.until(lambda: len(self.stops) > self._taken, timeout)
        self._taken += 1
        return self.stops[self._taken - 1]
