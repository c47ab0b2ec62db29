"""The ``%debug_session`` words of Mycel's own verbs: inspect, ready, consume, timeline."""

from __future__ import annotations

from typing import Any

from .grammar import Command
from .mycel_results import ConsumeResult, InspectResult, SourcesResult, TimelineResult


class MycelCommands:
    """Mixed into ``Commands`` (which provides ``session``, ``_run`` and ``_stop_result``)."""

    session: Any
    _run: Any
    _stop_result: Any

    def do_inspect(self, command: Command) -> InspectResult:
        found = self._run(command, self.session(command.session))
        return InspectResult(found["what"], found["inspection"])

    def do_ready(self, command: Command) -> SourcesResult:
        return SourcesResult(self._run(command, self.session(command.session))["sources"])

    def do_consume(self, command: Command) -> ConsumeResult:
        handle = self.session(command.session)
        consumed = self._run(command, handle)
        stop = handle.stop
        stopped = stop is not None and stop.thread_id == consumed["thread_id"] and not consumed["done"]
        return ConsumeResult(consumed, self._stop_result(handle, stop, prefix="") if stopped else None)

    def do_timeline(self, command: Command) -> TimelineResult:
        found = self._run(command, self.session(command.session))
        return TimelineResult(found["thread_id"], found["events"])
