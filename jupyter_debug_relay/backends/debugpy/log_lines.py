"""A launched target's log-point lines, written by the boot into the program's own stdout between two marks, taken
out of that stdout again: each line comes in the order the program ran, between what it printed before and after.

The marks carry a token the relay made for this target alone, so text the program prints (data it read, say) cannot
pass for a log line. The boot writes a line only to the stdout the relay reads (``boot/compiled_breakpoints.py``);
where it cannot, the line goes as a debugger message, as pydevd sends it.
"""

from __future__ import annotations

from collections.abc import Callable

LIMIT = 1 << 20  # characters of a log line held for its end mark; past them it is passed on as it is


def marks(token: str) -> tuple[str, str]:
    """The start and end marks of a log line for ``token``."""
    return f"\x00{token}\x02", f"\x03{token}\x00"


class LogLines:
    """Splits a target's stdout, given in pieces as read, into the program's text and the boot's log lines."""

    def __init__(self, token: str, on_output: Callable[[str, str], None]) -> None:
        self.start, self.end = marks(token)
        self.on_output = on_output  # (category, text): "stdout" for the program's, "console" for a log line
        self._held = ""  # text not yet passed on: what may begin a mark, or a log line waiting for its end
        self._in_line = False

    def feed(self, text: str) -> None:
        text, self._held = self._held + text, ""
        while text:
            mark = self.end if self._in_line else self.start
            at = text.find(mark)
            if at >= 0:
                self._pass(text[:at])
                text = text[at + len(mark):]
                self._in_line = not self._in_line
            elif self._in_line and len(text) < LIMIT:
                self._held = text
                return
            else:
                cut = len(text) - _mark_begun(text, mark)
                self._pass(text[:cut])
                self._held = text[cut:]
                return

    def flush(self) -> None:
        """Pass on what is held: the stream ended."""
        self._pass(self._held)
        self._held = ""

    def _pass(self, text: str) -> None:
        if text:
            self.on_output("console" if self._in_line else "stdout", text)


def _mark_begun(text: str, mark: str) -> int:
    """How many characters at the end of ``text`` begin ``mark``."""
    for size in range(min(len(mark) - 1, len(text)), 0, -1):
        if text.endswith(mark[:size]):
            return size
    return 0
