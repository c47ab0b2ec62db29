"""Declared shapes of what peers send, checked where a message enters a backend.

A shape is a ``TypedDict`` validated strictly by pydantic (about a microsecond for an event):
the check returns a plain dict holding only the declared keys, with their types guaranteed,
so a backend reads it without further ``isinstance``. A message that does not fit is a
``protocol_error`` whose sentence names the peer, the message, the field and what was expected.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Generic, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError
from typing_extensions import get_type_hints, is_typeddict

from ..errors import RelayError

T = TypeVar("T")
STRICT = ConfigDict(strict=True)  # every shape's __pydantic_config__: no "1" taken for 1, no 1 for True
OPEN = ConfigDict(strict=True, extra="allow")  # the same, keeping undeclared keys (for objects passed on whole)
_NAMES = ((bool, "true or false"), (int, "an integer"), (float, "a number"), (str, "a string"),
          (list, "an array"), (dict, "an object"))


def _unwrap(hint: Any) -> tuple[Any, ...]:
    """The members of a union (``X | None``), else the hint alone."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _describe(hint: Any) -> str:
    names = []
    for member in _unwrap(hint):
        if member is type(None):
            continue  # null stands for absent: not worth a mention
        origin = typing.get_origin(member) or member
        if is_typeddict(origin):
            origin = dict
        names.append(next((name for kind, name in _NAMES if origin is kind), "a value"))
    return " or ".join(names)


def _field_hint(root: Any, loc: tuple[Any, ...]) -> Any:
    """The declared type at ``loc`` (keys and list indexes) inside ``root``."""
    hint = root
    for step in loc:
        members = [m for m in _unwrap(hint) if m is not type(None)]
        hint = members[0] if members else Any
        if is_typeddict(hint):
            hint = get_type_hints(hint).get(step, Any)
        elif typing.get_origin(hint) in (list, dict):
            hint = typing.get_args(hint)[-1]
        else:
            return Any
    return hint


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for step in loc:
        out += f"[{step}]" if isinstance(step, int) else f".{step}" if out else str(step)
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Shape(Generic[T]):
    """One kind of message (``what``: "a stopped event") and the ``TypedDict`` it must fit."""

    def __init__(self, what: str, shape: type[T]) -> None:
        self.what = what
        self.shape = shape
        self._adapter: TypeAdapter[T] = TypeAdapter(shape)

    def check(self, peer: str, value: Any) -> T:
        """``value`` as a dict of the declared keys; raises ``protocol_error`` when it does not fit."""
        try:
            return self._adapter.validate_python(value)
        except ValidationError as exc:
            raise self.violation(peer, exc) from None

    def violation(self, peer: str, exc: ValidationError) -> RelayError:
        """The ``protocol_error`` for the first thing wrong in the message."""
        error = exc.errors(include_url=False)[0]
        loc = tuple(step for step in error["loc"] if isinstance(step, (str, int)))
        expected = _describe(_field_hint(self.shape, loc))
        field = _path(loc)
        if not loc:
            problem = f"that is {_shown(error['input'])}, not {expected}"
        elif error["type"] == "missing":
            problem = f"without {field} ({expected})"
        else:
            problem = f"whose {field} is {_shown(error['input'])}, not {expected}"
        return RelayError(
            "protocol_error", f"{peer} sent {self.what} {problem}.",
            details={"peer": peer, "message": self.what, "field": field or None, "expected": expected},
        )


def shapes(kind: str, table: dict[str, type]) -> dict[str, Shape[Any]]:
    """A ``Shape`` per message name, each called "a NAME KIND" (``kind``: event, response ...)."""
    return {name: Shape(f"a{'n' if name[0] in 'aeiou' else ''} {name} {kind}", shape) for name, shape in table.items()}
