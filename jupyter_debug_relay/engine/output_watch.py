"""Output breakpoints: a session's output, line by line, matched against the relay's output breakpoints."""

from __future__ import annotations

import re

from ..model import Breakpoint

MAX_PARTIAL = 64 * 1024  # of a line not ended yet, only this much (its end) is kept for the match
WATCHED = ("stdout", "stderr")  # the target's own output; console lines are the debugger's
Hit = tuple[Breakpoint, str]  # an output breakpoint and the line it matched


class OutputWatch:
    """The lines of one session's output so far; ``feed`` says which breakpoint a new line matched first."""

    def __init__(self) -> None:
        self._partial = dict.fromkeys(WATCHED, "")

    def feed(self, category: str, text: str, bps: list[Breakpoint]) -> Hit | None:
        """The first breakpoint (and its line) that a line completed by ``text`` matches with ``re.search``."""
        if category not in self._partial:
            return None
        if not bps:
            self._partial[category] = ""  # nothing to match: nothing to keep
            return None
        *lines, rest = (self._partial[category] + text).split("\n")
        self._partial[category] = rest[-MAX_PARTIAL:]
        for line in lines:
            line = line.rstrip("\r")
            for bp in bps:
                if bp.pattern is not None and re.search(bp.pattern, line):
                    return bp, line
        return None
