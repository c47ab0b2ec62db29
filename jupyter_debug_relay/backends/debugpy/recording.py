"""``record`` on a Python target: ``_recorder.py`` installed in the target by an evaluate, its answers read as data.

The recorder's text (and its compiler's, ``_record_compiler.py``) is sent once, at the ``record`` request, and
becomes the target's module ``_jupyter_debug_relay_recorder``; later requests call that module. Their file names
start with ``<builtin``: pydevd never traces nor stops in them. Every answer is the repr of a JSON text
(``evaluate`` in clipboard context): read with ``ast.literal_eval`` (a string literal, nothing else), then
``json.loads``, then checked against the declared shape. Nothing the target answers is run in the kernel.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from ...protocols import recorder
from . import probe_answers

HERE = os.path.dirname(__file__)
NAME = "_jupyter_debug_relay_recorder"  # the recorder's module in the target
MODULES = (  # installed in this order: (file here, module in the target, its file name in the target's frames)
    ("_record_compiler.py", "_jupyter_debug_relay_record_compiler", "<builtin jupyter_debug_relay record compiler>"),
    ("_recorder.py", NAME, "<builtin jupyter_debug_relay recorder>"),
)
MAX_ANSWER = 8_000_000  # characters of an answer's text the relay reads


@functools.cache
def _source(file: str) -> str:
    with open(os.path.join(HERE, file), encoding="utf-8") as f:
        return f.read()


def _installed(file: str, module: str, shown_as: str) -> str:
    """An expression running a file's text as a new module ``module`` of the target (in ``sys.modules``)."""
    sys_, builtins = "__import__('sys')", "__import__('builtins')"
    return (f"(lambda m: ({builtins}.exec({builtins}.compile({_source(file)!r}, {shown_as!r}, 'exec'), m.__dict__), "
            f"{sys_}.modules.__setitem__({module!r}, m), m)[2])(type({sys_})({module!r}))")


def expression(action: str, args: dict[str, Any], install: bool = False) -> str:
    """What to evaluate in the stopped frame: the recorder's ``call(action, args)``; with ``install`` its text is
    run first as the module ``NAME`` (replacing an older one)."""
    sys_ = "__import__('sys')"
    if install:
        made = f"({', '.join(_installed(*part) for part in MODULES)})[-1]"
        module = (f"(lambda old: (old is not None and old.recorder is not None and old._off(), {made})[1])"
                  f"({sys_}.modules.get({NAME!r}))")
    else:
        module = f"{sys_}.modules.get({NAME!r})"
    args_text = json.dumps(args)
    return (f"(lambda m: m.call({action!r}, {args_text!r}) if m is not None else '{{\"error\": \"not_recording\"}}')"
            f"({module})")


def answer(value: str, what: str) -> dict[str, Any]:
    """An answer's JSON object, from the repr ``evaluate`` gave of its text."""
    try:
        data = probe_answers.json_answer(value, MAX_ANSWER)
    except ValueError as exc:
        raise recorder.unfit(what, str(exc)) from None
    if not isinstance(data, dict):
        raise recorder.unfit(what, "it is not a JSON object")
    return data
