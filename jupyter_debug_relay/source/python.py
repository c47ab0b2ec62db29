"""What Python text says: a file's executable lines, valid conditions, a statement that adds no name where it runs."""

from __future__ import annotations

import ast
import re
import textwrap
import types

from ..errors import RelayError

HIT_CONDITION = re.compile(r"^\s*(==|>=|>|<=|<|%)?\s*\d+\s*$")
# A statement put in place of ``pass`` leaves, however it ends, no name that was not there before it ran (builtins
# are reached through their module: the frame may have a ``map`` of its own).
ADDING_NO_NAMES = """
_relay_before = (__import__("builtins"), {*__import__("builtins").vars()})
try:
    pass
finally:
    [*_relay_before[0].map(_relay_before[0].vars().pop, _relay_before[0].vars().keys() - _relay_before[1])]
"""


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


def adding_no_names(text: str) -> str | None:
    """The statement ``text`` made to add no name to the frame it runs in; None for an expression or no Python.

    pydevd runs a statement on a copy of the frame's names, then writes each one it changed or added back into the
    frame: the rewrite takes the names that were not there before out of the copy, however the statement ends, so
    ``import os`` leaves nothing behind while ``x = 5`` still changes an ``x`` that was there.
    """
    try:
        statements = ast.parse(textwrap.dedent(text)).body
    except SyntaxError:
        return None
    if not statements or (len(statements) == 1 and isinstance(statements[0], ast.Expr)):
        return None
    tree = ast.parse(ADDING_NO_NAMES)
    tree.body[1].body = statements
    return ast.unparse(tree)
