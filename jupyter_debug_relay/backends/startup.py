"""When each phase of a session's start ended, so a slow launch can say where its time went."""

from __future__ import annotations

import time


class StartupClock:
    """The end of each phase of one start, on the wall clock (a target's own marks compare with the relay's)."""

    def __init__(self) -> None:
        self.begun = time.time()
        self.marks: dict[str, float] = {}
        self._shown: dict[str, float] | None = None  # the durations since the last mark (every info() asks)

    def mark(self, phase: str, at: float | None = None) -> None:
        """Note that ``phase`` ended now (or ``at``); a phase ends once."""
        if phase not in self.marks:
            self.marks[phase] = time.time() if at is None else at
            self._shown = None

    def durations(self) -> dict[str, float]:
        """Milliseconds per phase, in the order the phases ended, each from the end of the one before."""
        if self._shown is None:
            self._shown = {}
            last = self.begun
            for phase, at in sorted(self.marks.items(), key=lambda item: item[1]):
                self._shown[phase] = round(max(at - last, 0.0) * 1000, 2)
                last = max(at, last)
        return dict(self._shown)
