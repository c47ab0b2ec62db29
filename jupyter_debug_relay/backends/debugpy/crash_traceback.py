"""pydevd's traceback text (``exceptionInfo``'s ``stackTrace``) put in the order Python prints a traceback in."""

from __future__ import annotations

FRAME_START = '  File "'
HEADER = "Traceback (most recent call last):\n"


def _segments(text: str) -> list[tuple[list[str], str]]:
    """Each exception of the chain: its frames (a ``File`` line with the lines under it) and the text after them."""
    segments: list[tuple[list[str], str]] = []
    frames: list[str] = []
    tail = ""
    for line in text.splitlines(keepends=True):
        if line.startswith(FRAME_START):
            if tail:  # the next exception of the chain begins
                segments.append((frames, tail))
                frames, tail = [], ""
            frames.append(line)
        elif frames and not tail and line.startswith("    "):
            frames[-1] += line  # the frame's source line and its markers
        else:
            tail += line
    if frames or tail:
        segments.append((frames, tail))
    return segments


def python_order(text: str) -> str:
    """The traceback as ``python`` prints it: a header per exception, frames outermost first.

    pydevd lists the exception it stopped on innermost frame first (it walks the stack) and the
    exceptions chained before it outermost first (it walks their tracebacks).
    """
    segments = _segments(text)
    out = []
    for index, (frames, tail) in enumerate(segments):
        if index == len(segments) - 1:
            frames = frames[::-1]
        out.append((HEADER if frames else "") + "".join(frames) + tail)
    return "".join(out)
