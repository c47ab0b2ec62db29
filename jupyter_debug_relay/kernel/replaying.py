"""``%debug_session replay``: a recording's stops as a result, and its replay panel."""

from __future__ import annotations

from typing import Any

from ..store.replay import Recording
from ..text import stop_reason
from .results import Result, _e, _table


class ReplayResult(Result):
    """A recording opened read-only: the text lists its stops; ``panel()`` scrubs through them."""

    def __init__(self, recording: Recording) -> None:
        super().__init__(recording.describe())
        self.recording, self.stops = recording, recording.stops

    @classmethod
    def of(cls, source: str) -> ReplayResult:
        return cls(Recording.open(source))

    def panel(self) -> Any:
        """The replay panel of this recording: its timeline moves back and forth through the stops."""
        from ..widgets.replay import ReplayPanel

        return ReplayPanel(self.recording)

    def _repr_html_(self) -> str:
        head = self.text.splitlines()[0]
        rows = [(s.index, f"+{s.offset:.2f}s", stop_reason(s.stop), s.where) for s in self.stops]
        return f"<b>{_e(head)}</b>" + _table(("#", "at", "reason", "where"), rows)
