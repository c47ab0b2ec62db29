"""Finding a breakpoint's line again: the line holding a text, and where each line went when a file was edited."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

WEAK_CUTOFF = 0.6  # how alike a line must be to a text (difflib ratio) to be its weak match


@dataclass(frozen=True)
class Anchor:
    """The line a text was found on (None: not found) and a warning when the match is weak or ambiguous."""

    line: int | None
    warning: str = ""


def find(text: str, content: str, near: int | None = None) -> Anchor:
    """The line of ``text`` holding ``content`` (whitespace around it ignored); ``near`` picks among several."""
    wanted = content.strip()
    lines = text.splitlines()
    exact = [n for n, line in enumerate(lines, 1) if wanted and wanted in line]
    if len(exact) == 1:
        return Anchor(exact[0])
    if exact:
        chosen = min(exact, key=lambda n: (abs(n - near), n)) if near else exact[0]
        others = ", ".join(str(n) for n in exact if n != chosen)
        return Anchor(chosen, f"{len(exact)} lines hold {wanted!r}: chose line {chosen} (also {others}); "
                              "give more of the line to pick one")
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(wanted, [s for s in stripped if s], n=1, cutoff=WEAK_CUTOFF)
    if not close:
        return Anchor(None, f"no line holds {wanted!r}")
    candidates = [n for n, line in enumerate(stripped, 1) if line == close[0]]
    chosen = min(candidates, key=lambda n: (abs(n - near), n)) if near else candidates[0]
    return Anchor(chosen, f"weak match: no line holds {wanted!r}; the closest is line {chosen} ({close[0]!r})")


def follow(old: str, new: str, line: int) -> Anchor:
    """Where ``line`` of ``old`` is in ``new``: the same line moved by the lines added or removed above it."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    index = line - 1
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if not i1 <= index < i2:
            continue
        if tag == "equal":
            return Anchor(j1 + index - i1 + 1)
        if tag == "replace":
            moved = j1 + min(index - i1, j2 - j1 - 1) + 1
            return Anchor(moved, f"line {line} was edited; the breakpoint is on line {moved} now")
        moved = min(j1 + 1, max(len(new_lines), 1))  # deleted: the line that came after it
        return Anchor(moved, f"line {line} was deleted; the breakpoint is on line {moved} now")
    return Anchor(min(line, max(len(new_lines), 1)))  # past the end of the old text
