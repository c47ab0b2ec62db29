"""A Mycel-like pipeline runtime that speaks the Mycel Studio debug protocol, to debug without a real service.

Run it with ``python -m jupyter_debug_relay.examples.mycel_demo --port 0`` (its URL is the first line
on stdout) or in-process::

    demo = RuntimeThread()
    url = demo.start()                      # ws://127.0.0.1:PORT/debug
    ...                                     # connect a debugger to url, set stage breakpoints
    demo.request("create_user", {"email": "Ann@Example.com", "name": "Ann"})
    demo.stop()

It listens on 127.0.0.1 only. Its flows: create_user (sanitize, validate_input, enrich, transform,
write), get_users (read), process_order (from the manual-consume queue orders_queue) and
record_reading (from the push connector sensors). Besides the Mycel methods it answers
``demo.request`` and ``demo.publish``, standing in for a REST client and a message broker.
Transform rules, breakpoint conditions and ``debug.evaluate`` go through a small interpreter of a
CEL subset: nothing a client sends is ever executed as Python.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import copy
import itertools
import json
import re
import secrets
import signal
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, ClassVar

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

# ---------------------------------------------------------------------------
# A CEL subset: literals, fields, indexes, calls, operators, ternary

MAX_EXPRESSION = 4000
MAX_DEPTH = 64

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+|\d+)
    | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,()\[\]{}])
    )""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}
_KEYWORDS = {"true": True, "false": False, "null": None}
_BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("||",),
    ("&&",),
    ("==", "!=", "<", "<=", ">", ">=", "in"),
    ("+", "-"),
    ("*", "/", "%"),
)


class CelError(Exception):
    """A CEL expression that does not parse or cannot be evaluated."""


def _unquote(text: str) -> str:
    out: list[str] = []
    chars = iter(text[1:-1])
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            if nxt not in _ESCAPES:
                raise CelError(f"unknown escape \\{nxt} in string literal")
            out.append(_ESCAPES[nxt])
        else:
            out.append(ch)
    return "".join(out)


def _tokenize(text: str) -> list[tuple[str, Any]]:
    if len(text) > MAX_EXPRESSION:
        raise CelError(f"expression longer than {MAX_EXPRESSION} characters")
    tokens: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].isspace():
            break
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise CelError(f"unexpected character {text[pos:].lstrip()[:1]!r} at offset {pos}")
        pos = match.end()
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "num":
            tokens.append(("lit", float(value) if any(c in value for c in ".eE") else int(value)))
        elif kind == "str":
            tokens.append(("lit", _unquote(value)))
        elif kind == "name" and value in _KEYWORDS:
            tokens.append(("lit", _KEYWORDS[value]))
        elif kind == "name" and value == "in":
            tokens.append(("op", "in"))
        else:
            tokens.append((kind, value))
    tokens.append(("end", None))
    return tokens


def _describe(tok: tuple[str, Any]) -> str:
    return "end of expression" if tok[0] == "end" else repr(tok[1])


class _Parser:
    """Recursive descent over the tokens, building nested tuples."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.pos = 0
        self.depth = 0

    def peek(self) -> tuple[str, Any]:
        return self.tokens[self.pos]

    def take(self, op: str | None = None) -> tuple[str, Any]:
        tok = self.tokens[self.pos]
        if op is not None and tok != ("op", op):
            raise CelError(f"expected {op!r}, found {_describe(tok)}")
        self.pos += 1
        return tok

    def accept(self, op: str) -> bool:
        if self.peek() == ("op", op):
            self.pos += 1
            return True
        return False

    def parse(self) -> tuple:
        node = self.expr()
        if self.peek()[0] != "end":
            raise CelError(f"unexpected {self.peek()[1]!r} after the expression")
        return node

    def expr(self) -> tuple:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise CelError("expression nested too deeply")
        node = self.binary(0)
        if self.accept("?"):
            yes = self.expr()
            self.take(":")
            node = ("cond", node, yes, self.expr())
        self.depth -= 1
        return node

    def binary(self, level: int) -> tuple:
        if level == len(_BINARY_LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in _BINARY_LEVELS[level]:
            op = self.take()[1]
            node = ("bin", op, node, self.binary(level + 1))
        return node

    def unary(self) -> tuple:
        if self.accept("!"):
            return ("not", self.unary())
        if self.accept("-"):
            return ("neg", self.unary())
        return self.postfix(self.primary())

    def args(self, close: str) -> list[tuple]:
        items: list[tuple] = []
        while not self.accept(close):
            if items:
                self.take(",")
            items.append(self.expr())
        return items

    def postfix(self, node: tuple) -> tuple:
        while True:
            if self.accept("."):
                tok = self.take()
                if tok[0] != "name":
                    raise CelError(f"expected a field name after '.', found {_describe(tok)}")
                name = tok[1]
                node = ("call", name, [node, *self.args(")")]) if self.accept("(") else ("get", node, name)
            elif self.accept("["):
                node = ("index", node, self.expr())
                self.take("]")
            else:
                return node

    def primary(self) -> tuple:
        kind, value = self.take()
        if kind == "lit":
            return ("lit", value)
        if kind == "name":
            return ("call", value, self.args(")")) if self.accept("(") else ("var", value)
        if (kind, value) == ("op", "("):
            node = self.expr()
            self.take(")")
            return node
        if (kind, value) == ("op", "["):
            return ("list", self.args("]"))
        if (kind, value) == ("op", "{"):
            pairs: list[tuple[tuple, tuple]] = []
            while not self.accept("}"):
                if pairs:
                    self.take(",")
                key = self.expr()
                self.take(":")
                pairs.append((key, self.expr()))
            return ("map", pairs)
        raise CelError(f"unexpected {_describe((kind, value))}")


def cel_type(value: Any) -> str:
    """The CEL type name of a JSON value."""
    if value is None:
        return "null_type"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def _num(value: Any, what: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CelError(f"{what} needs a number, got {cel_type(value)}")
    return value


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise CelError(f"{what} needs a string, got {cel_type(value)}")
    return value


def _list(value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise CelError(f"{what} needs a list, got {cel_type(value)}")
    return value


def _size(value: Any) -> int:
    if isinstance(value, (str, list, dict)):
        return len(value)
    raise CelError(f"size() needs a string, list or map, got {cel_type(value)}")


def _contains(container: Any, part: Any) -> bool:
    if isinstance(container, list):
        return part in container
    return _str(part, "contains()") in _str(container, "contains()")


def _flatten(value: Any) -> list:
    out: list = []
    for item in _list(value, "flatten()"):
        out.extend(item if isinstance(item, list) else [item])
    return out


def _unique(value: Any) -> list:
    out: list = []
    for item in _list(value, "unique()"):
        if item not in out:
            out.append(item)
    return out


def _sort_key(item: Any, field: str) -> tuple[int, Any]:
    value = item.get(field) if isinstance(item, dict) else None
    return (0, value) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else (1, 0)


def _numbers(value: Any, what: str) -> list[float | int]:
    return [_num(v, what) for v in _list(value, what)]


def _to_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise CelError(f"int() cannot convert {value!r}") from exc


def _to_double(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise CelError(f"double() cannot convert {value!r}") from exc


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def _avg(value: Any) -> float:
    nums = _numbers(value, "avg()")
    if not nums:
        raise CelError("avg() of an empty list")
    return sum(nums) / len(nums)


def _extreme(pick: Callable[[list], Any], what: str) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        nums = _numbers(value, what)
        if not nums:
            raise CelError(f"{what} of an empty list")
        return pick(nums)

    return run


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lower": lambda s: _str(s, "lower()").lower(),
    "upper": lambda s: _str(s, "upper()").upper(),
    "trim": lambda s: _str(s, "trim()").strip(),
    "split": lambda s, sep: _str(s, "split()").split(_str(sep, "split()")),
    "join": lambda items, sep="": _str(sep, "join()").join(_to_string(i) for i in _list(items, "join()")),
    "replace": lambda s, old, new: _str(s, "replace()").replace(
        _str(old, "replace()"), _str(new, "replace()")
    ),
    "contains": _contains,
    "startsWith": lambda s, p: _str(s, "startsWith()").startswith(_str(p, "startsWith()")),
    "endsWith": lambda s, p: _str(s, "endsWith()").endswith(_str(p, "endsWith()")),
    "size": _size,
    "first": lambda items: (_list(items, "first()") or [None])[0],
    "last": lambda items: (_list(items, "last()") or [None])[-1],
    "unique": _unique,
    "reverse": lambda items: list(reversed(_list(items, "reverse()"))),
    "flatten": _flatten,
    "pluck": lambda items, f: [i.get(f) if isinstance(i, dict) else None for i in _list(items, "pluck()")],
    "sort_by": lambda items, f: sorted(_list(items, "sort_by()"), key=lambda i: _sort_key(i, f)),
    "sum": lambda items: sum(_numbers(items, "sum()")),
    "avg": _avg,
    "min_val": _extreme(min, "min_val()"),
    "max_val": _extreme(max, "max_val()"),
    "type": cel_type,
    "has_field": lambda m, f: isinstance(m, dict) and f in m,
    "default": lambda value, fallback: fallback if value is None else value,
    "coalesce": lambda *values: next((v for v in values if v is not None), None),
    "string": _to_string,
    "int": _to_int,
    "double": _to_double,
    "uuid": lambda: str(uuid.uuid4()),
    "now": lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "now_unix": lambda: int(time.time()),
}


def _arith(op: str, left: Any, right: Any) -> Any:
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    if op == "+" and isinstance(left, list) and isinstance(right, list):
        return left + right
    a, b = _num(left, f"'{op}'"), _num(right, f"'{op}'")
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise CelError("division by zero")
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return quotient if op == "/" else a - b * quotient
    return a / b if op == "/" else a % b


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "==":
        if isinstance(left, bool) or isinstance(right, bool):
            return type(left) is type(right) and left == right
        return left == right
    if op == "!=":
        return not _compare("==", left, right)
    if op == "in":
        if isinstance(right, list) or (isinstance(right, dict) and isinstance(left, (str, int, float))):
            return left in right
        raise CelError(f"'in' needs a list, or a map and a scalar key, got {cel_type(right)}")
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
    if not numeric and not (isinstance(left, str) and isinstance(right, str)):
        raise CelError(f"cannot compare {cel_type(left)} with {cel_type(right)}")
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise CelError(f"{what} needs a bool, got {cel_type(value)}")
    return value


def _eval(node: tuple, env: dict[str, Any]) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "var":
        if node[1] not in env:
            raise CelError(f"undeclared reference to '{node[1]}'")
        return env[node[1]]
    if kind == "get":
        target = _eval(node[1], env)
        if not isinstance(target, dict):
            raise CelError(f"cannot select field '{node[2]}' from {cel_type(target)}")
        if node[2] not in target:
            raise CelError(f"no such key: {node[2]}")
        return target[node[2]]
    if kind == "index":
        target, key = _eval(node[1], env), _eval(node[2], env)
        try:
            if isinstance(target, list) and isinstance(key, int) and not isinstance(key, bool):
                return target[key]
            if isinstance(target, dict):
                return target[key]
        except (IndexError, KeyError, TypeError) as exc:
            raise CelError(f"no such key or index: {key!r}") from exc
        raise CelError(f"cannot index {cel_type(target)} with {cel_type(key)}")
    if kind == "call":
        fn = FUNCTIONS.get(node[1])
        if fn is None:
            raise CelError(f"undeclared function '{node[1]}'")
        args = [_eval(arg, env) for arg in node[2]]
        try:
            return fn(*args)
        except TypeError as exc:
            raise CelError(f"no matching overload for {node[1]}() with {len(args)} argument(s)") from exc
    if kind == "list":
        return [_eval(item, env) for item in node[1]]
    if kind == "map":
        out: dict[Any, Any] = {}
        for key_node, value_node in node[1]:
            key = _eval(key_node, env)
            if not isinstance(key, (str, int)):
                raise CelError(f"a map key must be a string, int or bool, got {cel_type(key)}")
            out[key] = _eval(value_node, env)
        return out
    if kind == "not":
        return not _bool(_eval(node[1], env), "'!'")
    if kind == "neg":
        return -_num(_eval(node[1], env), "'-'")
    if kind == "cond":
        return _eval(node[2] if _bool(_eval(node[1], env), "'?:'") else node[3], env)
    op, left = node[1], _eval(node[2], env)
    if op == "&&":
        return _bool(left, "'&&'") and _bool(_eval(node[3], env), "'&&'")
    if op == "||":
        return _bool(left, "'||'") or _bool(_eval(node[3], env), "'||'")
    right = _eval(node[3], env)
    if op in ("+", "-", "*", "/", "%"):
        return _arith(op, left, right)
    return _compare(op, left, right)


def compile_cel(expression: str) -> tuple:
    """Parse an expression into a tree; raises ``CelError`` when it is not valid."""
    if not isinstance(expression, str) or not expression.strip():
        raise CelError("empty expression")
    return _Parser(expression).parse()


def evaluate_cel(expression: str, activation: dict[str, Any]) -> Any:
    """Evaluate ``expression`` against the variables of ``activation``."""
    try:
        return _eval(compile_cel(expression), activation)
    except RecursionError as exc:
        raise CelError("expression nested too deeply") from exc


# ---------------------------------------------------------------------------
# The pipeline runtime: flows, connectors, types, in-memory tables


@dataclass(frozen=True)
class Rule:
    """One CEL transform rule: ``target`` gets the value of ``expression``."""

    target: str
    expression: str


@dataclass(frozen=True)
class Lookup:
    """An enrich or step stage: rows of ``table`` whose ``field`` equals the CEL ``key``."""

    name: str
    table: str
    field: str
    key: str


@dataclass(frozen=True)
class Flow:
    """A flow: where it reads from, where it writes to, and its stages in order."""

    name: str
    source: tuple[str, str]
    target: tuple[str, str]
    stages: tuple[str, ...]
    rules: tuple[Rule, ...] = ()
    validate: str | None = None
    enrich: Lookup | None = None
    step: Lookup | None = None

    def info(self) -> dict[str, Any]:
        """The flow as the FlowInfo of ``inspect.flows``."""
        return {
            "name": self.name,
            "from": {"connector": self.source[0], "operation": self.source[1]},
            "to": {"connector": self.target[0], "operation": self.target[1]},
            "hasSteps": self.step is not None,
            "stepCount": int(self.step is not None),
            "transform": {r.target: r.expression for r in self.rules} or None,
            "response": None,
            "validate": {"input": self.validate, "output": ""} if self.validate else None,
            "hasCache": False,
            "hasRetry": False,
        }


@dataclass(frozen=True)
class Connector:
    """A connector; ``manual`` queue connectors are pulled one message at a time by ``debug.consume``."""

    name: str
    type: str
    driver: str = ""
    source: str = ""
    manual: bool = False


DEMO_FLOWS: tuple[Flow, ...] = (
    Flow(
        "create_user",
        ("api", "POST /users"),
        ("postgres", "users"),
        ("sanitize", "validate_input", "enrich", "transform", "write"),
        rules=(
            Rule("email", "lower(trim(input.email))"),
            Rule("name", "input.name"),
            Rule("domain", 'split(lower(trim(input.email)), "@")[1]'),
            Rule("is_new", "enriched.existing_user == null"),
        ),
        validate="user",
        enrich=Lookup("existing_user", "users", "email", "lower(trim(input.email))"),
    ),
    Flow("get_users", ("api", "GET /users"), ("postgres", "users"), ("read",)),
    Flow(
        "process_order",
        ("orders_queue", "orders"),
        ("postgres", "orders"),
        ("sanitize", "validate_input", "step", "transform", "write"),
        rules=(
            Rule("orderId", "input.orderId"),
            Rule("total", "double(input.amount)"),
            Rule("email", "lower(input.customer)"),
            Rule("known_customer", "steps.customer.count > 0"),
            Rule("status", '"processing"'),
        ),
        validate="order",
        step=Lookup("customer", "users", "email", "lower(input.customer)"),
    ),
    Flow(
        "record_reading",
        ("sensors", "sensors/#"),
        ("postgres", "readings"),
        ("transform", "write"),
        rules=(
            Rule("sensor", "input.sensor"),
            Rule("celsius", "(double(input.fahrenheit) - 32.0) * 5.0 / 9.0"),
        ),
    ),
)
DEMO_CONNECTORS: tuple[Connector, ...] = (
    Connector("api", "rest", source="POST /users, GET /users"),
    Connector("postgres", "database", "postgres"),
    Connector("orders_queue", "rabbitmq", "amqp", "orders", manual=True),
    Connector("sensors", "mqtt", "paho", "sensors/#"),
)
DEMO_TYPES: dict[str, list[dict[str, Any]]] = {
    "user": [
        {"name": "email", "type": "string", "required": True},
        {"name": "name", "type": "string", "required": True},
        {"name": "age", "type": "number", "required": False},
    ],
    "order": [
        {"name": "orderId", "type": "string", "required": True},
        {"name": "amount", "type": "number", "required": True},
        {"name": "customer", "type": "string", "required": True},
    ],
}
DEMO_TRANSFORMS: dict[str, dict[str, str]] = {"normalize_email": {"email": "lower(trim(input.email))"}}
DEMO_QUEUED: dict[str, tuple[dict[str, Any], ...]] = {
    "orders_queue": (
        {"orderId": "ORD-1", "amount": 99.99, "customer": "Bob@Example.com"},
        {"orderId": "ORD-2", "amount": 15, "customer": "carol@example.com"},
        {"orderId": "ORD-3", "amount": 42.5, "customer": "bob@example.com"},
    )
}
_FIELD_TYPES = {"string": (str,), "number": (int, float), "bool": (bool,)}


class StageFailed(Exception):
    """A stage failed; the flow ends with this error."""


# ---------------------------------------------------------------------------
# The debug server: JSON-RPC 2.0 over WebSocket at /debug

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SESSION_NOT_FOUND = -32000
THREAD_NOT_FOUND = -32001
FLOW_NOT_FOUND = -32002
EVAL_ERROR = -32003
EVENT_BACKLOG = 256
HOST = "127.0.0.1"


class RpcError(Exception):
    """A JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ClientSession:
    """One attached client: its breakpoints per flow and its event backlog (full: events are dropped)."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.breakpoints: dict[str, list[dict[str, Any]]] = {}
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(EVENT_BACKLOG)


class Connection:
    """One WebSocket client; ``session`` is set by ``debug.attach``."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.session: ClientSession | None = None
        self.forwarder: asyncio.Task | None = None


class DebugThread:
    """One request going through a flow while a debugger is attached."""

    def __init__(self, flow: str, session: ClientSession) -> None:
        self.id = "t" + secrets.token_hex(8)
        self.flow = flow
        self.session: ClientSession | None = session
        self.stage = "input"
        self.name = ""
        self.activation: dict[str, Any] = {}
        self.rule: dict[str, Any] | None = None
        self.step_into = False
        self.step_next = False
        self.resume: asyncio.Future[str] | None = None

    @property
    def paused(self) -> bool:
        return self.resume is not None and not self.resume.done()

    def info(self) -> dict[str, Any]:
        """The thread as the ThreadInfo of ``debug.threads``."""
        return {
            "id": self.id,
            "flowName": self.flow,
            "stage": self.stage,
            "name": self.name,
            "paused": self.paused,
        }

    def variables(self) -> dict[str, Any]:
        """What ``debug.variables`` answers: the activation, plus the current rule inside a transform."""
        out = {k: v for k, v in self.activation.items() if k in ("input", "output", "enriched", "steps")}
        if self.rule is not None:
            out["rule"] = dict(self.rule)
        return out


class MycelRuntime:
    """A Mycel-like pipeline runtime with its Studio debug server (in-memory tables, no real brokers)."""

    def __init__(
        self,
        flows: tuple[Flow, ...] = DEMO_FLOWS,
        connectors: tuple[Connector, ...] = DEMO_CONNECTORS,
        types: dict[str, list[dict[str, Any]]] | None = None,
        transforms: dict[str, dict[str, str]] | None = None,
        queued: dict[str, tuple[dict[str, Any], ...]] | None = None,
    ) -> None:
        self.flows = {f.name: f for f in flows}
        self.connectors = {c.name: c for c in connectors}
        self.types = DEMO_TYPES if types is None else types
        self.transforms = DEMO_TRANSFORMS if transforms is None else transforms
        self.tables: dict[str, list[dict[str, Any]]] = {
            "users": [{"id": 1, "email": "bob@example.com", "name": "Bob"}]
        }
        queued = DEMO_QUEUED if queued is None else queued
        self.queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        for conn in connectors:
            if conn.manual:
                self.queues[conn.name] = asyncio.Queue()
                for message in queued.get(conn.name, ()):
                    self.queues[conn.name].put_nowait(dict(message))
        self.sessions: dict[str, ClientSession] = {}
        self.threads: dict[str, DebugThread] = {}
        self.ready = False
        self.url = ""
        self._session_ids = itertools.count(1)
        self._tasks: set[asyncio.Task] = set()
        self._server: Server | None = None
        self._methods: dict[str, Callable[[Connection, dict[str, Any]], Awaitable[Any]]] = {
            "debug.attach": self._attach,
            "debug.detach": self._detach,
            "debug.setBreakpoints": self._set_breakpoints,
            "debug.continue": lambda conn, p: self._resume(conn, p, "continue"),
            "debug.next": lambda conn, p: self._resume(conn, p, "next"),
            "debug.stepInto": lambda conn, p: self._resume(conn, p, "stepInto"),
            "debug.evaluate": self._evaluate,
            "debug.variables": self._variables,
            "debug.threads": self._threads,
            "debug.ready": self._ready,
            "debug.consume": self._consume,
            "inspect.flows": self._inspect_flows,
            "inspect.flow": self._inspect_flow,
            "inspect.connectors": self._inspect_connectors,
            "inspect.types": self._inspect_types,
            "inspect.transforms": self._inspect_transforms,
            "demo.request": self._demo_request,
            "demo.publish": self._demo_publish,
        }

    # -- lifecycle ----------------------------------------------------------

    async def serve(self, port: int = 0) -> str:
        """Listen on 127.0.0.1:``port`` (0 picks one) and return the ``ws://.../debug`` URL."""
        self._server = await serve(self._serve_connection, HOST, port, process_request=self._check_path)
        bound = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://{HOST}:{bound}/debug"
        return self.url

    async def close(self) -> None:
        """Stop listening, drop every client and end every request in flight."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @staticmethod
    def _check_path(conn: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?")[0] != "/debug":
            return conn.respond(HTTPStatus.NOT_FOUND, "The Mycel debug endpoint is /debug.\n")
        return None

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- requests through flows ---------------------------------------------

    def submit(self, flow: str, data: dict[str, Any]) -> tuple[str, asyncio.Task]:
        """Start one request through ``flow``; returns its debug thread id ("" with no debugger) and task.

        The task's result is ``{"output": ..., "error": ""}``.
        """
        if flow not in self.flows:
            raise RpcError(FLOW_NOT_FOUND, "flow not found")
        session = next(iter(self.sessions.values()), None)
        thread = DebugThread(flow, session) if session is not None else None
        if thread is not None:
            self.threads[thread.id] = thread
        return (thread.id if thread else ""), self._spawn(self._run_flow(self.flows[flow], data, thread))

    def publish(self, connector: str, message: dict[str, Any]) -> str:
        """Deliver a message: queued for manual consume, else run at once; returns the thread id."""
        conn = self.connectors.get(connector)
        if conn is None:
            raise RpcError(INTERNAL_ERROR, f"connector {json.dumps(connector)} not found")
        if conn.manual:
            self.queues[connector].put_nowait(message)
            return ""
        return self.submit(self._flow_of(connector).name, message)[0]

    def _flow_of(self, connector: str) -> Flow:
        flow = next((f for f in self.flows.values() if f.source[0] == connector), None)
        if flow is None:
            raise RpcError(INTERNAL_ERROR, f"connector {json.dumps(connector)} feeds no flow")
        return flow

    def _emit(self, thread: DebugThread | None, event: str, **body: Any) -> None:
        if thread is not None:
            self._broadcast(event, {"threadId": thread.id, "flowName": thread.flow, **body})

    def _broadcast(self, event: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "method": event, "params": params}
        for session in self.sessions.values():
            with contextlib.suppress(asyncio.QueueFull):
                session.events.put_nowait(message)

    async def _run_flow(self, flow: Flow, data: dict[str, Any], thread: DebugThread | None) -> dict[str, Any]:
        started = time.perf_counter()
        env: dict[str, Any] = {"input": copy.deepcopy(data), "output": {}, "ctx": {}}
        if thread is not None:
            thread.activation = env
        self._emit(thread, "event.flowStart", input=env["input"])
        error = ""
        try:
            for stage in flow.stages:
                await self._run_stage(flow, stage, env, thread)
        except StageFailed as exc:
            error = str(exc)
        finally:
            if thread is not None:
                self.threads.pop(thread.id, None)
        self._emit(thread, "event.flowEnd", output=env["output"], durationUs=_since(started), error=error)
        return {"output": env["output"], "error": error}

    async def _run_stage(
        self, flow: Flow, stage: str, env: dict[str, Any], thread: DebugThread | None
    ) -> None:
        lookup = {"enrich": flow.enrich, "step": flow.step}.get(stage)
        sub = lookup.name if lookup is not None else ""
        if thread is not None:
            thread.stage, thread.name = stage, sub
        self._emit(thread, "event.stageEnter", stage=stage, name=sub, input=env["input"])
        reason = self._stage_stop(thread, stage)
        if thread is not None and reason:
            await self._pause(thread, reason)
        started = time.perf_counter()
        result, error = None, ""
        try:
            if stage == "transform":
                result = await self._transform(flow, env, thread)
            else:
                result = self._STAGES[stage](self, flow, env)
        except StageFailed as exc:
            error = str(exc)
            raise
        finally:
            exit_body = {"output": result, "durationUs": _since(started), "error": error}
            self._emit(thread, "event.stageExit", stage=stage, name=sub, **exit_body)

    def _sanitize(self, flow: Flow, env: dict[str, Any]) -> Any:
        env["input"] = {
            k: v.replace("<", "").replace(">", "") if isinstance(v, str) else v
            for k, v in env["input"].items()
        }
        return env["input"]

    def _validate_input(self, flow: Flow, env: dict[str, Any]) -> Any:
        for field in self.types.get(flow.validate or "", []):
            value = env["input"].get(field["name"])
            if value is None:
                if field["required"]:
                    raise StageFailed(f"validation failed: field {field['name']!r} is required")
            elif not isinstance(value, _FIELD_TYPES[field["type"]]) or (
                isinstance(value, bool) and field["type"] != "bool"
            ):
                raise StageFailed(f"validation failed: field {field['name']!r} must be a {field['type']}")
        return env["input"]

    def _lookup(self, lookup: Lookup, env: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            key = evaluate_cel(lookup.key, env)
        except CelError as exc:
            raise StageFailed(f"{lookup.name}: {exc}") from exc
        return [dict(row) for row in self.tables.get(lookup.table, []) if row.get(lookup.field) == key]

    def _enrich(self, flow: Flow, env: dict[str, Any]) -> Any:
        assert flow.enrich is not None
        rows = self._lookup(flow.enrich, env)
        env.setdefault("enriched", {})[flow.enrich.name] = rows[0] if rows else None
        return env["enriched"]

    def _step(self, flow: Flow, env: dict[str, Any]) -> Any:
        assert flow.step is not None
        rows = self._lookup(flow.step, env)
        env.setdefault("steps", {})[flow.step.name] = {"count": len(rows), "rows": rows}
        return env["steps"][flow.step.name]

    def _write(self, flow: Flow, env: dict[str, Any]) -> Any:
        table = self.tables.setdefault(flow.target[1], [])
        row = {"id": len(table) + 1, **env["output"]}
        table.append(row)
        env["output"] = dict(row)
        return env["output"]

    def _read(self, flow: Flow, env: dict[str, Any]) -> Any:
        rows = [dict(row) for row in self.tables.get(flow.target[1], [])]
        env["output"] = {flow.target[1]: rows, "count": len(rows)}
        return env["output"]

    _STAGES: ClassVar[dict[str, Callable[[MycelRuntime, Flow, dict[str, Any]], Any]]] = {
        "sanitize": _sanitize,
        "validate_input": _validate_input,
        "enrich": _enrich,
        "step": _step,
        "write": _write,
        "read": _read,
    }

    async def _transform(self, flow: Flow, env: dict[str, Any], thread: DebugThread | None) -> Any:
        output: dict[str, Any] = {}
        env["output"] = output
        for index, rule in enumerate(flow.rules):
            info = {"index": index, "target": rule.target, "expression": rule.expression}
            if thread is not None:
                thread.rule = dict(info)
                reason = self._rule_stop(thread, index)
                if reason:
                    await self._pause(thread, reason, rule=info)
            try:
                value = evaluate_cel(rule.expression, env)
            except CelError as exc:
                self._emit(
                    thread,
                    "event.ruleEval",
                    stage="transform",
                    ruleIndex=index,
                    target=rule.target,
                    expression=rule.expression,
                    result=None,
                    error=str(exc),
                )
                raise StageFailed(f"failed to evaluate expression for {rule.target!r}: {exc}") from exc
            self._emit(
                thread,
                "event.ruleEval",
                stage="transform",
                ruleIndex=index,
                target=rule.target,
                expression=rule.expression,
                result=value,
                error="",
            )
            if thread is not None and thread.rule is not None:
                thread.rule["result"] = value
            _set_nested(output, rule.target, value)
        if thread is not None:
            thread.rule = None
        return output

    # -- breakpoints and pausing ----------------------------------------------

    def _matching(self, thread: DebugThread, stage: str, rule_index: int | None) -> bool:
        if thread.session is None:
            return False
        for bp in thread.session.breakpoints.get(thread.flow, []):
            if bp["stage"] != stage:
                continue
            if rule_index is None and stage == "transform" and bp["ruleIndex"] >= 0:
                continue
            if rule_index is not None and bp["ruleIndex"] != rule_index:
                continue
            if self._condition_holds(bp.get("condition", ""), thread.activation):
                return True
        return False

    @staticmethod
    def _condition_holds(condition: str, env: dict[str, Any]) -> bool:
        if not condition:
            return True
        try:
            return evaluate_cel(condition, env) is True
        except CelError:
            return False

    def _stage_stop(self, thread: DebugThread | None, stage: str) -> str:
        if thread is None or thread.session is None:
            return ""
        if self._matching(thread, stage, None):
            return "breakpoint"
        return "step" if thread.step_next or thread.step_into else ""

    def _rule_stop(self, thread: DebugThread, index: int) -> str:
        if thread.session is None:
            return ""
        if self._matching(thread, "transform", index):
            return "breakpoint"
        return "stepInto" if thread.step_into else ""

    async def _pause(self, thread: DebugThread, reason: str, rule: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"stage": thread.stage, "name": thread.name, "reason": reason}
        if rule is not None:
            body["rule"] = rule
        thread.resume = asyncio.get_running_loop().create_future()
        self._emit(thread, "event.stopped", **body)
        action = await thread.resume
        thread.resume = None
        self._broadcast("event.continued", {"threadId": thread.id})
        thread.step_into = action == "stepInto"
        thread.step_next = action == "next"

    # -- the WebSocket side ---------------------------------------------------

    async def _serve_connection(self, ws: ServerConnection) -> None:
        conn = Connection(ws)
        handlers: set[asyncio.Task] = set()
        try:
            async for text in ws:
                task = asyncio.ensure_future(self._handle(conn, text))
                handlers.add(task)
                task.add_done_callback(handlers.discard)
        except ConnectionClosed:
            pass
        finally:
            for task in handlers:
                task.cancel()
            self._end_session(conn)

    async def _forward(self, conn: Connection, session: ClientSession) -> None:
        try:
            while True:
                await conn.ws.send(json.dumps(await session.events.get()))
        except ConnectionClosed:
            pass

    async def respond(self, conn: Connection, message: dict[str, Any]) -> None:
        """Send one JSON-RPC response (tests override this to inject faults)."""
        with contextlib.suppress(ConnectionClosed):
            await conn.ws.send(json.dumps(message))

    async def _handle(self, conn: Connection, text: str | bytes) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            await self.respond(conn, _error_reply(None, PARSE_ERROR, "parse error"))
            return
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            req_id = msg.get("id") if isinstance(msg, dict) else None
            await self.respond(conn, _error_reply(req_id, INVALID_REQUEST, "invalid request"))
            return
        params = msg.get("params", {})
        try:
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            handler = self._methods.get(msg["method"])
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"unknown method: {msg['method']}")
            if conn.session is None and msg["method"] != "debug.attach":
                raise RpcError(SESSION_NOT_FOUND, "session not found: call debug.attach first")
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": msg.get("id"),
                "result": await handler(conn, params),
            }
        except RpcError as exc:
            reply = _error_reply(msg.get("id"), exc.code, exc.message)
        if "id" in msg:
            await self.respond(conn, reply)

    def _end_session(self, conn: Connection) -> None:
        session, conn.session = conn.session, None
        if session is None:
            return
        self.sessions.pop(session.id, None)
        if conn.forwarder is not None:
            conn.forwarder.cancel()
        for thread in list(self.threads.values()):
            if thread.session is session:
                thread.session = None
                if thread.paused:
                    assert thread.resume is not None
                    thread.resume.set_result("continue")
        if not self.sessions:
            self.ready = False

    # -- methods ------------------------------------------------------------------

    async def _attach(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        self._end_session(conn)
        session = ClientSession(f"s{next(self._session_ids)}")
        self.sessions[session.id] = session
        conn.session = session
        conn.forwarder = self._spawn(self._forward(conn, session))
        return {"sessionId": session.id, "flows": list(self.flows)}

    async def _detach(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        self._end_session(conn)
        return {"ok": True}

    async def _set_breakpoints(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        flow, specs = params.get("flow"), params.get("breakpoints", [])
        if not isinstance(flow, str) or not flow:
            raise RpcError(INVALID_PARAMS, "flow is required")
        if flow not in self.flows:
            raise RpcError(FLOW_NOT_FOUND, "flow not found")
        if not isinstance(specs, list):
            raise RpcError(INVALID_PARAMS, "breakpoints must be an array")
        clean: list[dict[str, Any]] = []
        for spec in specs:
            if not isinstance(spec, dict) or not isinstance(spec.get("stage"), str):
                raise RpcError(INVALID_PARAMS, "each breakpoint needs a stage")
            rule_index = spec.get("ruleIndex", -1)
            condition = spec.get("condition", "")
            if (
                not isinstance(rule_index, int)
                or isinstance(rule_index, bool)
                or not isinstance(condition, str)
            ):
                raise RpcError(INVALID_PARAMS, "ruleIndex must be an integer and condition a string")
            item: dict[str, Any] = {"stage": spec["stage"], "ruleIndex": rule_index}
            if condition:
                item["condition"] = condition
            clean.append(item)
        assert conn.session is not None
        conn.session.breakpoints[flow] = clean
        return {"breakpoints": clean}

    def _thread(self, conn: Connection, params: dict[str, Any], paused: bool = True) -> DebugThread:
        thread_id = params.get("threadId")
        if not isinstance(thread_id, str) or not thread_id:
            raise RpcError(INVALID_PARAMS, "threadId is required")
        thread = self.threads.get(thread_id)
        if thread is None or thread.session is not conn.session:
            raise RpcError(THREAD_NOT_FOUND, f"thread not found: {thread_id}")
        if paused and not thread.paused:
            raise RpcError(INVALID_PARAMS, "thread not paused")
        return thread

    async def _resume(self, conn: Connection, params: dict[str, Any], action: str) -> dict[str, Any]:
        thread = self._thread(conn, params)
        assert thread.resume is not None
        thread.resume.set_result(action)
        return {"ok": True}

    async def _evaluate(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = self._thread(conn, params)
        expression = params.get("expression")
        if not isinstance(expression, str):
            raise RpcError(INVALID_PARAMS, "expression is required")
        try:
            value = evaluate_cel(expression, thread.activation)
        except CelError as exc:
            raise RpcError(EVAL_ERROR, f"eval error: {exc}") from exc
        return {"result": value, "type": cel_type(value)}

    async def _variables(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(self._thread(conn, params).variables())

    async def _threads(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"threads": [t.info() for t in self.threads.values() if t.session is conn.session]}

    async def _ready(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        self.ready = True
        sources = [self.connectors[name] for name in dict.fromkeys(f.source[0] for f in self.flows.values())]
        return {
            "ok": True,
            "sources": [
                {"connector": c.name, "type": c.type, "source": c.source, "manualConsume": c.manual}
                for c in sources
            ],
        }

    async def _consume(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("connector")
        if not isinstance(name, str) or not name:
            raise RpcError(INVALID_PARAMS, "connector is required")
        connector = self.connectors.get(name)
        if connector is None:
            raise RpcError(INTERNAL_ERROR, f"connector {json.dumps(name)} not found")
        if not connector.manual:
            raise RpcError(INTERNAL_ERROR, f"connector {json.dumps(name)} does not support manual consume")
        if not self.ready:
            raise RpcError(
                INTERNAL_ERROR, f"connector {json.dumps(name)} is suspended: send debug.ready first"
            )
        message = await self.queues[name].get()
        result = await self.submit(self._flow_of(name).name, message)[1]
        if result["error"]:
            raise RpcError(INTERNAL_ERROR, result["error"])
        return {"ok": True}

    async def _inspect_flows(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [f.info() for f in self.flows.values()]

    async def _inspect_flow(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise RpcError(INVALID_PARAMS, "name is required")
        if name not in self.flows:
            raise RpcError(FLOW_NOT_FOUND, "flow not found")
        return self.flows[name].info()

    async def _inspect_connectors(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": c.name, "type": c.type, "driver": c.driver} for c in self.connectors.values()]

    async def _inspect_types(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": name, "fields": fields} for name, fields in self.types.items()]

    async def _inspect_transforms(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": name, "mappings": mappings} for name, mappings in self.transforms.items()]

    async def _demo_request(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        """Not part of Mycel: stands in for a REST request (``curl``) so a client can start a thread."""
        flow, data = params.get("flow"), params.get("input", {})
        if not isinstance(flow, str) or not isinstance(data, dict):
            raise RpcError(INVALID_PARAMS, "flow (string) and input (object) are required")
        return {"ok": True, "threadId": self.submit(flow, data)[0]}

    async def _demo_publish(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        """Not part of Mycel: puts a message on a connector, as a broker would."""
        connector, message = params.get("connector"), params.get("message")
        if not isinstance(connector, str) or not isinstance(message, dict):
            raise RpcError(INVALID_PARAMS, "connector (string) and message (object) are required")
        return {"ok": True, "threadId": self.publish(connector, message)}


def _error_reply(req_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}


def _since(started: float) -> int:
    return int((time.perf_counter() - started) * 1_000_000)


def _set_nested(target: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[leaf] = value


# ---------------------------------------------------------------------------
# Running it: in a background thread (notebooks, tests) or as a program


class RuntimeThread:
    """A runtime serving on its own event loop in a daemon thread; ``url`` is set once it listens."""

    def __init__(self, runtime: MycelRuntime | None = None, port: int = 0) -> None:
        self.runtime = runtime if runtime is not None else MycelRuntime()
        self.port = port
        self.url = ""
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="mycel-demo", daemon=True)

    def start(self, timeout: float = 10.0) -> str:
        """Start the loop and the server; returns the URL."""
        self._thread.start()
        self.url = self.call(self.runtime.serve(self.port), timeout)
        return self.url

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 10.0) -> Any:
        """Run a coroutine on the runtime's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def request(self, flow: str, data: dict[str, Any]) -> concurrent.futures.Future[dict[str, Any]]:
        """Send one request through ``flow`` (as the REST connector would); the future holds its result."""

        async def run() -> dict[str, Any]:
            return await self.runtime.submit(flow, data)[1]

        return asyncio.run_coroutine_threadsafe(run(), self.loop)

    def publish(self, connector: str, message: dict[str, Any], timeout: float = 10.0) -> str:
        """Put a message on a connector; returns the thread id when it started a flow at once."""

        async def run() -> str:
            return self.runtime.publish(connector, message)

        return self.call(run(), timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Close the runtime and its loop; safe to call twice."""
        if self.loop.is_closed():
            return
        if self._thread.is_alive():
            self.call(self.runtime.close(), timeout)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
        self.loop.close()

    def __enter__(self) -> RuntimeThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def build_parser(prog: str) -> argparse.ArgumentParser:
    """The command line of the demo runtime."""
    parser = argparse.ArgumentParser(
        prog=prog, description="A Mycel-like runtime to debug over ws://.../debug."
    )
    parser.add_argument("--port", type=int, default=9090, help="port on 127.0.0.1 (0 picks a free one)")
    return parser


async def serve_forever(runtime: MycelRuntime, port: int) -> None:
    """Serve until SIGINT or SIGTERM; the URL is the first line on stdout."""
    print(await runtime.serve(port), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runtime.close()


def main(argv: list[str] | None = None) -> None:
    """``python -m jupyter_debug_relay.examples.mycel_demo --port 0``."""
    args = build_parser("python -m jupyter_debug_relay.examples.mycel_demo").parse_args(argv)
    asyncio.run(serve_forever(MycelRuntime(), args.port))


if __name__ == "__main__":
    main()
