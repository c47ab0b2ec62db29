"""What the relay can say of a CEL condition (a Mycel stage breakpoint's) before sending it: whether it parses.

The check uses cel-python (``celpy``) when it is installed (the ``demo`` extra); without it a condition goes
to the runtime unchecked, and the breakpoint says so.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from ..errors import RelayError

UNCHECKED = "its CEL condition was not checked here (cel-python is not installed); the runtime judges it"


@functools.cache
def _celpy() -> Any:
    """cel-python, imported at the first condition: it is large, and a kernel that checks none never loads it."""
    try:
        import celpy
    except ImportError:
        return None
    return celpy


@functools.cache
def _environment() -> Any:
    limit = sys.getrecursionlimit()
    environment = _celpy().Environment()
    sys.setrecursionlimit(max(limit, sys.getrecursionlimit()))  # celpy raises it; never lower a higher one
    return environment


def check_condition(condition: str) -> bool:
    """Raise ``invalid_condition`` when ``condition`` does not parse as CEL; False when it could not be checked."""
    celpy = _celpy()
    if celpy is None:
        return False
    try:
        _environment().compile(condition)
    except celpy.CELParseError as exc:
        where = f" at line {exc.line}, column {exc.column}" if getattr(exc, "line", None) else ""
        raise RelayError(
            "invalid_condition",
            f"The condition {condition!r} is not valid CEL: a syntax error{where}.",
            'Write a CEL expression such as `input.amount > 100` or `input.email != ""`.',
            {"condition": condition, "line": getattr(exc, "line", None), "column": getattr(exc, "column", None)},
        ) from None
    except RecursionError:
        raise RelayError("invalid_condition", f"The condition {condition[:80]!r}… is nested too deeply.",
                         "Write a shorter CEL expression.", {"condition": condition}) from None
    return True
