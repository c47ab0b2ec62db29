"""Where each operation lives in the HTTP API (seed 004's endpoints), and how a request becomes its arguments."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..errors import RelayError
from ..operations import OPERATIONS, Operation
from ..operations.dispatch import invalid
from ..operations.params import StartOptions


@dataclass(frozen=True)
class Route:
    """One endpoint: method, path (``{session}`` and other fields of the operation in braces) and its operation."""

    method: str
    path: str
    op_name: str
    starts: bool = False  # launch/attach/connect: waits for the first stop or the end, like a step

    @property
    def op(self) -> Operation:
        return OPERATIONS[self.op_name]

    @cached_property
    def path_fields(self) -> tuple[str, ...]:
        return tuple(re.findall(r"{(\w+)}", self.path))

    @property
    def waits(self) -> bool:
        """Whether the answer is a stop or the end (a wait past its time is "still running", not an error)."""
        return self.starts or "stop" in self.op.returns

    @property
    def in_query(self) -> bool:
        return self.method in ("GET", "DELETE")

    @cached_property
    def body_model(self) -> type[BaseModel]:
        """The request's fields: the operation's parameters less the path's, plus ``wait``/``timeout`` for starts."""
        return request_model(self.op, exclude=self.path_fields, starts=self.starts)

    @cached_property
    def _raw_string_fields(self) -> frozenset[str]:
        """Fields a query or path value fills as text as it is (the others are read as JSON: 5, true)."""
        props = self.op.params.model_json_schema()["properties"]
        return frozenset(name for name, schema in props.items() if _takes_string(schema))

    def arguments(self, path: dict[str, str], query: dict[str, str], body: Any) -> dict[str, Any]:
        """The operation's arguments from the path, the query (GET, DELETE) and the JSON body."""
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise RelayError("invalid_request", f"The request body must be a JSON object, not {type(body).__name__}.",
                             "Send {} for no arguments.")
        args = dict(body)
        for name, text in (*query.items(), *path.items()):
            args[name] = text if name in self._raw_string_fields else _json_or_text(text)
        for name in self.path_fields:
            if name in body:
                raise RelayError("invalid_request", f"{name} is in the path; leave it out of the body.",
                                 details={"field": name})
        return args


def request_model(op: Operation, exclude: tuple[str, ...] = (), starts: bool = False) -> type[BaseModel]:
    """``op``'s parameters less ``exclude``, plus ``StartOptions`` when it starts a target and waits."""
    fields: dict[str, Any] = {
        name: (info.annotation, info) for name, info in op.params.model_fields.items() if name not in exclude
    }
    if starts:
        fields.update({name: (info.annotation, info) for name, info in StartOptions.model_fields.items()})
    return create_model(f"{_camel(op.name)}Request", __config__=ConfigDict(extra="forbid", strict=True),
                        __doc__=op.params.__doc__, **fields)


STARTS = ("launch", "attach", "connect")


def start_options(op_name: str, args: dict[str, Any]) -> StartOptions:
    """Take ``wait`` and ``timeout`` out of ``args`` (a start's); ``invalid_request`` naming a bad one."""
    try:
        return StartOptions.model_validate({k: args.pop(k) for k in ("wait", "timeout") if k in args})
    except ValidationError as exc:
        raise invalid(op_name, exc) from None


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _takes_string(schema: dict[str, Any]) -> bool:
    kinds = [schema.get("type")] + [s.get("type") for s in schema.get("anyOf", [])]
    return "string" in kinds


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


ROUTES: tuple[Route, ...] = tuple(
    Route(method, path, op.name, starts=op.name in STARTS)
    for op in OPERATIONS.values() for method, path in (endpoint.split(" ", 1) for endpoint in op.http)
)
