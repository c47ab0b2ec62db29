"""What an EZ program says without running it: which lines hold statements, which function holds a line,
and, when it does not parse, where (``ez check`` names the line; ``ez debugserver`` does not)."""

from __future__ import annotations

import asyncio
import os
import re

from ...errors import RelayError
from ...transports import process

DECLARATION = re.compile(r"\s*do\s+([A-Za-z_]\w*)\s*\(")
NOT_STATEMENTS = ("}", "import ", "using ", "do ", "//")
STRINGS = re.compile(r'"(?:\\.|[^"\\])*"')
CHECK_ERROR = re.compile(r"error(?:\[\w+\])?: (?P<message>.+)\n\s*--> (?P<path>.+?):(?P<line>\d+):(?P<column>\d+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ProgramText:
    """What the relay reads from an EZ program's text: the lines that hold statements, and the functions' lines."""

    def __init__(self, source: str) -> None:
        self.statements: list[int] = []
        self.functions: list[tuple[str, int, int]] = []  # name, first line, last line
        open_functions: list[tuple[str, int, int]] = []  # name, first line, depth it opened at
        depth, in_comment = 0, False
        for number, raw in enumerate(source.splitlines(), 1):
            text = raw.strip()
            if in_comment or text.startswith("/*"):
                in_comment = "*/" not in text
                continue
            if text and not text.startswith(NOT_STATEMENTS):
                self.statements.append(number)
            if (match := DECLARATION.match(raw)) is not None:
                open_functions.append((match[1], number, depth))
            code = STRINGS.sub('""', text).split("//")[0]
            depth += code.count("{") - code.count("}")
            while open_functions and depth <= open_functions[-1][2]:
                name, first, _ = open_functions.pop()
                self.functions.append((name, first, number))

    def function_at(self, line: int) -> str:
        """The name of the innermost function whose text holds ``line``."""
        holding = [(first, name) for name, first, last in self.functions if first <= line <= last]
        return max(holding)[1] if holding else "(top level)"

    def statement_from(self, line: int) -> int | None:
        """``line`` if it holds a statement, else the next line that does (None: none follows)."""
        return next((n for n in self.statements if n >= line), None)


class ProgramTexts:
    """Program texts by path, each read once (None when it cannot be read)."""

    def __init__(self) -> None:
        self._texts: dict[str, ProgramText | None] = {}

    def get(self, path: str) -> ProgramText | None:
        if path not in self._texts:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    self._texts[path] = ProgramText(f.read())
            except OSError:
                self._texts[path] = None
        return self._texts[path]

    def function_at(self, path: str, line: int) -> str:
        text = self.get(path)
        return text.function_at(line) if text is not None else "?"


async def syntax_error(ez: str, program: str, cwd: str | None, timeout: float, last_words: str) -> RelayError:
    """The error of a program EZ would not run, with the line `ez check` names (``last_words``: EZ's own)."""
    checker = await process.spawn([ez, "check", program], cwd=cwd, what="ez check")
    try:
        out, err = await asyncio.wait_for(checker.communicate(), timeout)
    except asyncio.TimeoutError:
        out = err = b""
    finally:
        await process.reap(checker)
    text = ANSI.sub("", (out + err).decode(errors="replace"))
    match = CHECK_ERROR.search(text)
    if match is None:
        return RelayError("syntax_error", f"EZ cannot run {os.path.basename(program)}: {last_words}.",
                          f"Run `ez check {program}` to see where.", {"path": program})
    line = int(match["line"])
    return RelayError(
        "syntax_error", f"EZ cannot run {os.path.basename(program)}: {match['message']} (line {line}).",
        details={"path": program, "line": line, "column": int(match["column"])},
    )
