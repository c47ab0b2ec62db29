"""One line of source, as a stop shows it: from a text, or from a local file."""

from __future__ import annotations

import os


def line_of(source: str, line: int) -> str:
    """Line ``line`` (1-based) of ``source`` without its line end; empty when there is no such line."""
    lines = source.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def file_line(path: str | None, line: int) -> str:
    """Line ``line`` of the file at ``path``; empty when it is not a readable file here or has no such line."""
    if not path or not os.path.isfile(path):
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, text in enumerate(f, 1):
                if number == line:
                    return text.rstrip("\r\n")
    except OSError:
        return ""
    return ""
