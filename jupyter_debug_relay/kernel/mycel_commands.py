"""The ``%debug_session`` words of Mycel's own verbs: inspect, ready, consume, timeline."""

from __future__ import annotations

from .context import Words
from .grammar import Command
from .mycel_results import ConsumeResult, InspectResult, SourcesResult, TimelineResult


class MycelWords(Words):
    """Mycel's own words: ``inspect``, ``ready``, ``consume``, ``timeline``."""

    def do_inspect(self, command: Command) -> InspectResult:
        found = self.context.run(command, self.context.session(command.session))
        return InspectResult(found["what"], found["inspection"])

    def do_ready(self, command: Command) -> SourcesResult:
        return SourcesResult(self.context.run(command, self.context.session(command.session))["sources"])

    def do_consume(self, command: Command) -> ConsumeResult:
        handle = self.context.session(command.session)
        consumed = self.context.run(command, handle)
        stop = handle.stop
        stopped = stop is not None and stop.thread_id == consumed["thread_id"] and not consumed["done"]
        return ConsumeResult(consumed, self.context.stop_result(handle, stop, prefix="") if stopped else None)

    def do_timeline(self, command: Command) -> TimelineResult:
        found = self.context.run(command, self.context.session(command.session))
        return TimelineResult(found["thread_id"], found["events"])
