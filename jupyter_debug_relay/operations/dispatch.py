"""The one dispatcher: check an operation's arguments once, then run it on the relay loop in one hop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import RelayError
from .table import OPERATIONS, Context, Operation

_MISSING = object()


def invalid(op: str, error: ValidationError) -> RelayError:
    """``invalid_request`` naming each bad field, what it holds and what was expected."""
    first_per_field: dict[str, Any] = {}
    for problem in error.errors():
        first_per_field.setdefault(_where(problem["loc"]), problem)
    fields = list(first_per_field)
    message = " ".join(_sentence(op, where, problem) for where, problem in first_per_field.items())
    known = ", ".join(OPERATIONS[op].params.model_fields) if op in OPERATIONS else ""
    return RelayError("invalid_request", message, f"{op} takes: {known or 'no arguments'}.",
                      {"field": fields[0], "fields": fields, "operation": op})


def _where(loc: tuple) -> str:
    """``args.1`` or ``env.KEY``: the field's path, without the union member tags pydantic adds (``str``)."""
    parts = [str(part) for part in loc if isinstance(part, int) or not _UNION_TAG.fullmatch(str(part))]
    return ".".join(parts) or "arguments"


_UNION_TAG = re.compile(r"(str|int|float|bool|list|dict|none|literal)(\[.*\])?|[a-z-]+\[.*\]")


def _sentence(op: str, where: str, problem: Any) -> str:
    if problem["type"] == "missing":
        return f"{op} needs the argument {where!r}."
    if problem["type"] == "extra_forbidden":
        return f"{op} has no argument {where!r}."
    given = problem.get("input", _MISSING)
    shown = "" if given is _MISSING or isinstance(given, dict) else f", not {given!r}"
    return f"{op}: {where!r}: {problem['msg'][0].lower()}{problem['msg'][1:]}{shown}."


def operation(name: Any) -> Operation:
    """The operation called ``name``, or ``invalid_request`` listing them."""
    op = OPERATIONS.get(name) if isinstance(name, str) else None
    if op is None:
        raise RelayError("invalid_request", f"Unknown operation {name!r}.", "Operations: " + ", ".join(OPERATIONS))
    return op


def parse(name: str, args: Mapping[str, Any] | None = None) -> tuple[Operation, Any]:
    """The operation and its validated parameters; ``invalid_request`` naming the field otherwise."""
    op = operation(name)
    if args is not None and not isinstance(args, Mapping):
        raise RelayError("invalid_request", f"{name}: the arguments must be an object, not {type(args).__name__}.")
    try:
        return op, op.params.model_validate(dict(args or {}))
    except ValidationError as exc:
        raise invalid(name, exc) from None


class Dispatcher:
    """Runs operations against one relay: ``call`` waits (any thread), ``submit`` answers later (no thread held)."""

    def __init__(self, relay: Any) -> None:
        self._relay = relay

    def call(self, name: str, args: Mapping[str, Any] | None = None) -> Any:
        """Run an operation and wait for its result, within its time budget."""
        op, params = parse(name, args)
        return self._relay.call(op.run(self._context, params), op.budget(params, self._relay.request_timeout))

    def submit(self, name: str, args: Mapping[str, Any] | None = None) -> concurrent.futures.Future:
        """Start an operation on the relay loop; the future holds its result or its ``RelayError``."""
        op, params = parse(name, args)
        budget = op.budget(params, self._relay.request_timeout)
        return self._relay.submit(_within(op.run(self._context, params), budget, name))

    async def run(self, name: str, args: Mapping[str, Any] | None = None) -> Any:
        """Run an operation from any event loop: awaited in place on the relay loop, else submitted to it."""
        op, params = parse(name, args)
        coro = _within(op.run(self._context, params), op.budget(params, self._relay.request_timeout), name)
        if self._relay.on_loop():
            return await coro
        return await asyncio.wrap_future(self._relay.submit(coro))

    async def run_in(self, session: str, name: str, args: Mapping[str, Any]) -> Any:
        """Run an operation on ``session`` unless ``args`` name another (a command from outside)."""
        if operation(name).takes_session and args.get("session") is None:
            args = {**args, "session": session}
        return await self.run(name, args)

    @property
    def _context(self) -> Context:
        return self._relay


async def _within(coro: Any, seconds: float, name: str) -> Any:
    try:
        return await asyncio.wait_for(coro, seconds)
    except asyncio.TimeoutError:
        raise RelayError("timeout", f"{name} did not finish within {seconds:g} s.") from None
