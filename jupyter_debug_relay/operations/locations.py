"""A line breakpoint's place written as one text, ``FILE:LINE`` or ``FILE:"TEXT"``, read once for every front end."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..errors import RelayError
from . import params as P

_CONTENT = re.compile(r"""(.+?):(["'])(.*)\2""", re.DOTALL)  # FILE:"text of the line"
_LINE = re.compile(r"(.+):(-?[0-9]+)", re.DOTALL)  # FILE:LINE (a line below 1 is refused where lines are checked)


@dataclass(frozen=True)
class Location:
    """A file and its line, or the text of its line."""

    path: str
    line: int | None = None
    content: str | None = None


def location(text: str) -> Location | None:
    """``FILE:"TEXT"`` (single or double quotes; a backslash escapes the quote inside) or ``FILE:LINE``; None when
    ``text`` is neither."""
    quoted = _CONTENT.fullmatch(text)
    if quoted:
        quote = quoted.group(2)
        return Location(quoted.group(1), content=quoted.group(3).replace("\\" + quote, quote))
    numbered = _LINE.fullmatch(text)
    return Location(numbered.group(1), line=int(numbered.group(2))) if numbered else None


def located(p: P.ScopedBreakpointParams) -> P.ScopedBreakpointParams:
    """``p`` with a path written ``FILE:LINE`` or ``FILE:"TEXT"`` split into its file and its line or content, unless
    a file has that very name; a line or content also given apart must agree with the path's."""
    if p.kind != "line" or p.path is None or os.path.isfile(os.path.expanduser(p.path)):
        return p
    spot = location(p.path)
    if spot is None:
        return p
    found = {"line": spot.line, "content": spot.content}
    for name, written in found.items():
        given = getattr(p, name)
        if None not in (given, written) and given != written:
            raise RelayError("invalid_request", f"The path {p.path!r} gives {name} {written!r}, and {name} gives "
                             f"{given!r}.", f"Give the {name} once: in the path or in {name}.", {"field": name})
    return p.model_copy(update={"path": spot.path, **{k: v for k, v in found.items() if v is not None}})
