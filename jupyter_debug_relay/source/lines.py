"""Source text as the relay reads it: one line of a text or a local file, a whole file, and what tells it changed."""

from __future__ import annotations

import os
import stat
from functools import lru_cache


def line_of(source: str, line: int) -> str:
    """Line ``line`` (1-based) of ``source`` without its line end; empty when there is no such line."""
    return _nth(source.splitlines(), line)


def _nth(lines: list[str] | tuple[str, ...], line: int) -> str:
    return lines[line - 1] if 0 < line <= len(lines) else ""


CACHED_FILE_SIZE = 1 << 20  # files up to this size are kept as lines, a stop then costs one stat


def file_line(path: str | None, line: int) -> str:
    """Line ``line`` of the file at ``path``; empty when it is not a readable file here or has no such line."""
    if not path:
        return ""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return ""
        if st.st_size <= CACHED_FILE_SIZE:
            return _nth(_lines(path, st.st_mtime_ns, st.st_size), line)
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, text in enumerate(f, 1):
                if number == line:
                    return text.rstrip("\r\n")
    except OSError:
        return ""
    return ""


@lru_cache(maxsize=64)
def _lines(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    """The lines of a file as it was at ``mtime_ns`` and ``size`` (both part of the key, so an edit reads anew)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return tuple(text.rstrip("\r\n") for text in f)


def stamp(path: str) -> tuple[int, int] | None:
    """What tells that a file changed (modification time, size); None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def file_text(path: str) -> str:
    """The whole text of a local file (undecodable bytes replaced); empty when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""
