"""CEL for the Mycel demo: cel-python's interpreter (no Python eval) with Mycel's extension functions, compiled once."""

from __future__ import annotations

import functools
import json
import re
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from ...errors import RelayError

try:
    import celpy
    from celpy import celtypes
except ImportError:  # the [demo] extra is not installed: require_cel() says so when CEL is first needed
    celpy = None

MAX_EXPRESSION = 4000
# The macros celpy expands itself, beside the functions of its base library and ours.
MACROS = frozenset({"has", "dyn", "map", "filter", "all", "exists", "exists_one", "reduce", "min"})
_OPERATORS = {
    "addition_add": "+",
    "addition_sub": "-",
    "multiplication_mul": "*",
    "multiplication_div": "/",
    "multiplication_mod": "%",
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_in": "in",
    "unary_not": "!",
    "unary_neg": "-",
    "_?_:_": "?:",
}
_OVERLOAD = re.compile(r"found no matching overload for (?:Token\('RULE', '(\w+)'\)|(\S+)) applied to '\((.*)\)'")
_SELECTION = re.compile(r".* with type: '<class '(?:celpy\.celtypes\.)?(\w+)'>' does not support field selection$")
_CLASS = re.compile(r"<class '(?:celpy\.celtypes\.)?(\w+)'>")


class CelError(Exception):
    """A CEL expression that cannot be evaluated; the message is what a client is told."""


class CelCompileError(CelError):
    """A CEL expression that does not compile: bad syntax, or a function CEL and Mycel do not have."""


def require_cel() -> None:
    """Raise a ``RelayError`` with the install hint when cel-python is missing."""
    if celpy is None:
        raise RelayError(
            "unsupported",
            "The Mycel demo runtime needs cel-python (the celpy module) to evaluate CEL, and it is not installed.",
            "Install the demo extra: pip install 'jupyter_debug_relay[demo]'.",
        )


def cel_type(value: Any) -> str:
    """The CEL type name of a value, a celpy one or plain JSON."""
    if value is None or isinstance(value, celtypes.NullType):
        return "null_type"
    for kind, name in (
        ((bool, celtypes.BoolType), "bool"),
        (celtypes.UintType, "uint"),
        (int, "int"),
        (float, "double"),
        (str, "string"),
        (bytes, "bytes"),
        (list, "list"),
        (dict, "map"),
        (celtypes.TimestampType, "google.protobuf.Timestamp"),
        (celtypes.DurationType, "google.protobuf.Duration"),
    ):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def to_json(value: Any) -> Any:
    """A celpy value as plain JSON data (timestamps, durations and types as their text)."""
    if value is None or isinstance(value, celtypes.NullType):
        return None
    if isinstance(value, (bool, celtypes.BoolType)):
        return bool(value)
    for kind in (int, float, str):
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {to_json(key): to_json(item) for key, item in value.items()}
    return str(value)


# -- Mycel's extension functions (its list: string, array, type, ID and null-handling functions) --------


def _extension(function: Callable[..., Any]) -> Callable[..., Any]:
    """A CelError raised by ``function`` becomes a CEL error value, as celpy's own functions return."""

    @functools.wraps(function)
    def run(*args: Any) -> Any:
        try:
            return function(*args)
        except CelError as exc:
            return celpy.CELEvalError(str(exc))

    return run


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise CelError(f"{what}() needs a string, got {cel_type(value)}")
    return value


def _list(value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise CelError(f"{what}() needs a list, got {cel_type(value)}")
    return value


def _numbers(value: Any, what: str) -> list:
    numbers = _list(value, what)
    for item in numbers:
        if isinstance(item, celtypes.BoolType) or not isinstance(item, (int, float)):
            raise CelError(f"{what}() needs a list of numbers, got a {cel_type(item)} in it")
    return numbers


def _nonempty_numbers(value: Any, what: str) -> list:
    numbers = _numbers(value, what)
    if not numbers:
        raise CelError(f"{what}() of an empty list")
    return numbers


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(to_json(value), separators=(",", ":"))


def _field(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, dict) and name in item else None


def _sort_key(item: Any, field: str) -> tuple[int, Any]:
    value = _field(item, field)
    if isinstance(value, (int, float)) and not isinstance(value, celtypes.BoolType):
        return (0, float(value))
    return (1, str(value)) if isinstance(value, str) else (2, "")


def _is_null(value: Any) -> bool:
    return value is None or isinstance(value, celtypes.NullType)


def _string(value: str) -> Any:
    return celtypes.StringType(value)


def _lower(s: Any) -> Any:
    return _string(_str(s, "lower").lower())


def _upper(s: Any) -> Any:
    return _string(_str(s, "upper").upper())


def _trim(s: Any) -> Any:
    return _string(_str(s, "trim").strip())


def _split(s: Any, sep: Any) -> Any:
    return celtypes.ListType(_string(part) for part in _str(s, "split").split(_str(sep, "split")))


def _join(items: Any, sep: Any = "") -> Any:
    return _string(_str(sep, "join").join(_text(item) for item in _list(items, "join")))


def _replace(s: Any, old: Any, new: Any) -> Any:
    return _string(_str(s, "replace").replace(_str(old, "replace"), _str(new, "replace")))


def _first(items: Any) -> Any:
    return (_list(items, "first") or [None])[0]


def _last(items: Any) -> Any:
    return (_list(items, "last") or [None])[-1]


def _unique(items: Any) -> Any:
    out = celtypes.ListType()
    for item in _list(items, "unique"):
        if item not in out:
            out.append(item)
    return out


def _reverse(items: Any) -> Any:
    return celtypes.ListType(reversed(_list(items, "reverse")))


def _flatten(items: Any) -> Any:
    out = celtypes.ListType()
    for item in _list(items, "flatten"):
        out.extend(item if isinstance(item, list) else [item])
    return out


def _pluck(items: Any, field: Any) -> Any:
    name = _str(field, "pluck")
    return celtypes.ListType(_field(item, name) for item in _list(items, "pluck"))


def _sort_by(items: Any, field: Any) -> Any:
    name = _str(field, "sort_by")
    return celtypes.ListType(sorted(_list(items, "sort_by"), key=lambda item: _sort_key(item, name)))


def _sum(items: Any) -> Any:
    numbers = _numbers(items, "sum")
    if all(isinstance(n, int) for n in numbers):
        return celtypes.IntType(sum(int(n) for n in numbers))
    return celtypes.DoubleType(sum(float(n) for n in numbers))


def _avg(items: Any) -> Any:
    numbers = _nonempty_numbers(items, "avg")
    return celtypes.DoubleType(sum(float(n) for n in numbers) / len(numbers))


def _min_val(items: Any) -> Any:
    return min(_nonempty_numbers(items, "min_val"), key=float)


def _max_val(items: Any) -> Any:
    return max(_nonempty_numbers(items, "max_val"), key=float)


def _type(value: Any) -> Any:
    return _string(cel_type(value))


def _has_field(value: Any, field: Any) -> Any:
    return celtypes.BoolType(isinstance(value, dict) and _str(field, "has_field") in value)


def _default(value: Any, fallback: Any) -> Any:
    return fallback if _is_null(value) else value


def _coalesce(*values: Any) -> Any:
    return next((value for value in values if not _is_null(value)), None)


def _uuid() -> Any:
    return _string(str(uuid.uuid4()))


def _now() -> Any:
    return _string(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def _now_unix() -> Any:
    return celtypes.IntType(int(time.time()))


EXTENSIONS: dict[str, Callable[..., Any]] = {
    name: _extension(function)
    for name, function in {
        "lower": _lower,
        "upper": _upper,
        "trim": _trim,
        "split": _split,
        "join": _join,
        "replace": _replace,
        "first": _first,
        "last": _last,
        "unique": _unique,
        "reverse": _reverse,
        "flatten": _flatten,
        "pluck": _pluck,
        "sort_by": _sort_by,
        "sum": _sum,
        "avg": _avg,
        "min_val": _min_val,
        "max_val": _max_val,
        "type": _type,
        "has_field": _has_field,
        "default": _default,
        "coalesce": _coalesce,
        "uuid": _uuid,
        "now": _now,
        "now_unix": _now_unix,
    }.items()
}


# -- compiling and evaluating ---------------------------------------------------------------------------


@functools.cache
def _environment() -> celpy.Environment:
    require_cel()
    limit = sys.getrecursionlimit()
    environment = celpy.Environment()
    # celpy raises the recursion limit to 2500 for deep expressions; never lower one the host set higher.
    sys.setrecursionlimit(max(limit, sys.getrecursionlimit()))
    return environment


@functools.cache
def _known_functions() -> frozenset[str]:
    return frozenset(celpy.base_functions) | EXTENSIONS.keys() | MACROS


def _undeclared_function(ast: Any) -> str:
    known = _known_functions()
    for tree in ast.iter_subtrees():
        if tree.data in ("ident_arg", "dot_ident_arg"):
            name = tree.children[0]
        elif tree.data == "member_dot_arg":
            name = tree.children[1]
        else:
            continue
        if name not in known:
            return str(name)
    return ""


@functools.lru_cache(maxsize=1024)
def compile_cel(expression: str) -> Any:
    """Compile ``expression`` once into a celpy program; raises ``CelCompileError`` when it is not valid CEL."""
    if not expression.strip():
        raise CelCompileError("empty expression")
    if len(expression) > MAX_EXPRESSION:
        raise CelCompileError(f"expression longer than {MAX_EXPRESSION} characters")
    environment = _environment()
    try:
        ast = environment.compile(expression)
    except celpy.CELParseError as exc:
        raise CelCompileError(_syntax_error(exc)) from None
    except RecursionError:
        raise CelCompileError("expression nested too deeply") from None
    unknown = _undeclared_function(ast)
    if unknown:
        raise CelCompileError(f"undeclared function '{unknown}'")
    return environment.program(ast, functions=EXTENSIONS)


def _syntax_error(error: Any) -> str:
    # lark, under celpy, places an unexpected end at the last token; say "end" instead.
    if getattr(getattr(error.__context__, "token", None), "type", "") == "$END":
        return "syntax error: unexpected end of expression"
    return f"syntax error at line {error.line}, column {error.column}"


def _message(error: Any) -> str:
    """celpy's error text, worded as cel-go (and so Mycel) words it, without celpy's internals."""
    text = str(error.args[0]) if error.args else "evaluation failed"
    text = text.split(" (in activation ", 1)[0]
    if len(error.args) > 1 and error.args[1] is IndexError:
        return "index out of range"
    text = re.sub(r"^no such member in mapping: ", "no such key: ", text)
    selection = _SELECTION.match(text)
    if selection:
        return f"cannot select a field from {_cel_name(selection.group(1))}"
    overload = _OVERLOAD.match(text)
    if overload:
        name = overload.group(1) or overload.group(2)
        operands = ", ".join(_cel_name(kind) for kind in _CLASS.findall(overload.group(3)))
        operator = _OPERATORS.get(name, name)
        return f"no such overload for '{operator}' applied to ({operands})"
    if text == "no such overload" and error.token is not None:
        return f"no such overload for {error.token}()"
    return text


def _cel_name(class_name: str) -> str:
    return "null_type" if class_name == "NoneType" else class_name.removesuffix("Type").lower()


def _run(expression: str, activation: dict[str, Any]) -> Any:
    program = compile_cel(expression)
    context = {name: celpy.json_to_cel(value) for name, value in activation.items()}
    try:
        value = program.evaluate(context)
    except celpy.CELEvalError as exc:
        raise CelError(_message(exc)) from None
    except RecursionError:
        raise CelError("expression nested too deeply") from None
    except Exception as exc:  # whatever else celpy raises on a client's expression is an evaluation error too
        raise CelError(f"{type(exc).__name__}: {exc}") from None
    if isinstance(value, celpy.CELEvalError):
        raise CelError(_message(value))
    return value


def evaluate_typed(expression: str, activation: dict[str, Any]) -> tuple[Any, str]:
    """Evaluate ``expression`` against the JSON variables of ``activation``: its JSON value and CEL type."""
    value = _run(expression, activation)
    return to_json(value), cel_type(value)


def evaluate_cel(expression: str, activation: dict[str, Any]) -> Any:
    """Evaluate ``expression`` against the JSON variables of ``activation``; its value as JSON."""
    return evaluate_typed(expression, activation)[0]


def condition_holds(condition: str, activation: dict[str, Any]) -> bool:
    """Whether a breakpoint condition is true; one that fails or is not a bool never is (as in Mycel)."""
    try:
        value = _run(condition, activation)
    except CelError:
        return False
    return isinstance(value, celtypes.BoolType) and bool(value)
