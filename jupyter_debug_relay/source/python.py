"""What a Python file says about breakpoints: its executable lines, and valid conditions."""

from __future__ import annotations

import re
import types

from ..errors import RelayError

HIT_CONDITION = re.compile(r"^\s*(==|>=|>|<=|<|%)?\s*\d+\s*$")


def executable_lines(source: str, path: str) -> set[int]:
    """Every line that starts a bytecode instruction, from the file's code objects."""
    lines: set[int] = set()
    todo = [compile(source, path, "exec", dont_inherit=True)]
    while todo:
        code = todo.pop()
        lines.update(line for _, _, line in code.co_lines() if line)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return lines


def nearest(lines: set[int], line: int) -> int | None:
    """The executable line closest to ``line``, the later one on a tie."""
    if not lines:
        return None
    return min(lines, key=lambda n: (abs(n - line), n < line))


def check_condition(condition: str) -> None:
    """A condition must compile as a Python expression; raise ``invalid_condition`` with the error."""
    try:
        compile(condition, "<condition>", "eval", dont_inherit=True)
    except SyntaxError as exc:
        raise RelayError(
            "invalid_condition",
            f"The condition {condition!r} is not a valid expression: {exc.msg}.",
            "Write a Python expression such as `i == 3`.",
            {"condition": condition, "offset": exc.offset},
        ) from None


def check_hit_condition(hit_condition: str) -> None:
    if not HIT_CONDITION.match(hit_condition):
        raise RelayError(
            "invalid_condition",
            f"The hit condition {hit_condition!r} is not a count.",
            "Use a number (5), a comparison (>= 2, == 3) or a modulo (% 10).",
            {"hit_condition": hit_condition},
        )
