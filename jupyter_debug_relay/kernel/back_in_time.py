"""``%debug_session record FUNC | FILE:LINE-LINE | record off``, ``history``, ``back [N]``, ``forward [N]``."""

from __future__ import annotations

from .context import Words
from .grammar import Command
from .results import HistoryResult, RecordedStateResult, RecordingResult


class HistoryWords(Words):
    """The words that record lines in the target and move through them."""

    def do_record(self, command: Command) -> RecordingResult:
        return RecordingResult(self.context.run(command, self.context.session(command.session))["recording"])

    def do_history(self, command: Command) -> HistoryResult:
        return HistoryResult(self.context.run(command, self.context.session(command.session)))

    def _move(self, command: Command) -> RecordedStateResult:
        handle = self.context.session(command.session)
        found = self.context.run(command, handle)
        self.context.selected.pop(handle.id, None)  # a frame chosen at the live stop is not the state shown
        return RecordedStateResult(found)

    do_back = do_forward = _move
