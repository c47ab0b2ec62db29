"""``record`` on a Python target: ``_recorder.py`` installed in the target by an evaluate, its answers read as data.

The recorder's text is sent once, at the ``record`` request, and becomes the target's module
``_jupyter_debug_relay_recorder``; later requests call that module. Every answer is the repr of a JSON text
(``evaluate`` in clipboard context): read with ``ast.literal_eval`` (a string literal, nothing else), then
``json.loads``, then checked against the declared shape. Nothing the target answers is run in the kernel.
"""

from __future__ import annotations

import ast
import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ...errors import RelayError

RECORDER = os.path.join(os.path.dirname(__file__), "_recorder.py")
NAME = "_jupyter_debug_relay_recorder"  # the recorder's module in the target
FILE = "<jupyter_debug_relay recorder>"  # its file name in the target's frames
CAP = 4_000_000  # bytes of recorded text the target keeps (the ring's cap); the relay keeps as much
MAX_CHARS = 200  # characters of one recorded value's repr
BATCH = 1_000_000  # bytes of events asked for in one answer
MAX_ANSWER = 8_000_000  # characters of an answer's text the relay reads


@dataclass
class Code:
    """A recorded code object of the target: its qualified name, file, first line and the lines recorded."""

    name: str
    path: str
    first: int
    range: list[int] | None = None


Event = tuple[int, int, int, str, int, list[tuple[str, str | None]], str | None]  # seq, call, code, kind, line, ...


@dataclass
class Batch:
    """The target's answer to ``record``, ``since`` or ``off``: its codes, ring figures and events after a number."""

    codes: list[Code]
    tool: int
    cap: int
    bytes: int
    dropped: int
    first: int
    last: int
    events: list[Event] = field(default_factory=list)
    more: bool = False


_BATCH = TypeAdapter(Batch)


@functools.cache
def _source() -> str:
    with open(RECORDER, encoding="utf-8") as f:
        return f.read()


def expression(action: str, args: dict[str, Any], install: bool = False) -> str:
    """What to evaluate in the stopped frame: the recorder's ``call(action, args)``; with ``install`` its text is
    run first as the module ``NAME`` (replacing an older one)."""
    sys_, builtins = "__import__('sys')", "__import__('builtins')"
    if install:
        made = (f"(lambda m: ({builtins}.exec({builtins}.compile({_source()!r}, {FILE!r}, 'exec'), m.__dict__), "
                f"{sys_}.modules.__setitem__({NAME!r}, m), m)[2])(type({sys_})({NAME!r}))")
        module = (f"(lambda old: (old is not None and old.recorder is not None and old._off(), {made})[1])"
                  f"({sys_}.modules.get({NAME!r}))")
    else:
        module = f"{sys_}.modules.get({NAME!r})"
    args_text = json.dumps(args)
    return (f"(lambda m: m.call({action!r}, {args_text!r}) if m is not None else '{{\"error\": \"not_recording\"}}')"
            f"({module})")


def answer(value: str, what: str) -> dict[str, Any]:
    """An answer's JSON object, from the repr ``evaluate`` gave of its text."""
    if len(value) > MAX_ANSWER:
        raise unfit(what, f"it is {len(value):,} characters long, over the {MAX_ANSWER:,} the relay reads")
    try:
        text = ast.literal_eval(value) if value[:1] in ("'", '"') else None
        if not isinstance(text, str):
            raise ValueError("it is not the text of a JSON document")
        data = json.loads(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise unfit(what, f"{type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise unfit(what, "it is not a JSON object")
    return data


def batch(data: dict[str, Any], what: str) -> Batch:
    """An answer read as a ``Batch``."""
    try:
        return _BATCH.validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the answer"
        raise unfit(what, f"{where}: {error['msg']}") from None


def unfit(what: str, why: str) -> RelayError:
    return RelayError("protocol_error", f"The target's answer to {what} is not what the relay asked for: {why}.",
                      "The session is unchanged; the program may have replaced json or sys.monitoring. Record again "
                      "with record, or turn it off with record off.")


def failed(what: str, said: str) -> RelayError:
    """``evaluation_failed`` saying what the recorder raised in the target."""
    said = said[:300]
    return RelayError("evaluation_failed", f"{what[:1].upper()}{what[1:]} failed in the target: {said}",
                      "The program may have replaced part of sys.monitoring; record off, then record again.",
                      {"adapter_message": said})
