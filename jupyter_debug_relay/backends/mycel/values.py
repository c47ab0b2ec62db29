"""Mycel's JSON values as neutral ``Variable``s: their names, CEL type names, and refs for their children."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ...errors import RelayError
from ...model import Variable, VariablePage

MAX_VALUE = 4096  # characters of a value's JSON shown
_TYPE_NAMES = (
    (bool, "bool"),
    (int, "int"),
    (float, "double"),
    (str, "string"),
    (list, "list"),
    (dict, "map"),
)


def type_name(value: Any) -> str:
    """The CEL name of a JSON value's type."""
    if value is None:
        return "null_type"
    return next((name for kind, name in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__)


def child_name(parent: str, key: str | int) -> str:
    """The CEL expression of a child: ``input.name``, ``input["odd key"]``, ``items[2]``."""
    if not parent:
        return ""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if key.isidentifier() else f"{parent}[{json.dumps(key)}]"


class ValueRefs:
    """The values behind variables references, each owned by a paused thread; a ref lives until it resumes."""

    def __init__(self, numbers: Iterator[int]) -> None:
        self._numbers = numbers
        self._refs: dict[int, tuple[int, Any, str]] = {}

    def ref(self, thread_id: int, value: Any, evaluate_name: str) -> int:
        ref = next(self._numbers)
        self._refs[ref] = (thread_id, value, evaluate_name)
        return ref

    def page(self, ref: int, start: int, count: int) -> VariablePage:
        """Children ``start`` to ``start + count`` of the value behind ``ref``."""
        if ref not in self._refs:
            raise RelayError(
                "invalid_request",
                f"Variables reference {ref} is gone: its thread resumed.",
                "Fetch the scopes of the current stop again.",
            )
        tid, value, parent = self._refs[ref]
        items: list[tuple[str | int, Any]] = []
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        page = [self.variable(tid, str(key), child, child_name(parent, key)) for key, child in
                items[start : start + count]]
        return VariablePage(page, start, len(items))

    def variable(self, thread_id: int, name: str, value: Any, evaluate_name: str) -> Variable:
        """A value as a ``Variable``; a non-empty map or list gets a ref for its children."""
        text = json.dumps(value, ensure_ascii=False, default=str)
        expandable = isinstance(value, (dict, list)) and bool(value)
        return Variable(
            name=name,
            value=text[:MAX_VALUE],
            type=type_name(value),
            ref=self.ref(thread_id, value, evaluate_name) if expandable else 0,
            named=len(value) if isinstance(value, dict) else 0,
            indexed=len(value) if isinstance(value, list) else 0,
            evaluate_name=evaluate_name,
            truncated=len(text) > MAX_VALUE,
        )

    def forget(self, thread_id: int | None = None) -> None:
        """Drop the refs of one thread (it resumed), or of every thread."""
        if thread_id is None:
            self._refs.clear()
            return
        for ref in [r for r, entry in self._refs.items() if entry[0] == thread_id]:
            del self._refs[ref]
