"""What the sidebar uses of ipykernel's insides, declared once and checked once before it touches anything.

The sidebar answers JupyterLab's ``debug_request``s in place of ipykernel's debugger. It does so through a few names
of ipykernel's (the control handler that awaits ``do_debug_request``, the debug event publisher, the debugger's hash
settings); each is declared here with what it is used for. ``problems()`` checks them the first time the sidebar is
turned on; on an ipykernel where one differs, ``sidebar`` answers ``unsupported`` naming it, and ipykernel's own
debugger is left as it is.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..source.editor_paths import SEED, murmur2

PROVEN = "7.0 to 7.4"  # the ipykernel versions the sidebar is tested on


@dataclass(frozen=True)
class Name:
    """One name of ipykernel's the sidebar uses: where it is, what for, and how it must look."""

    module: str
    attribute: str  # dotted, inside the module
    use: str
    check: Callable[[Any], bool] = callable
    expect: str = "callable"


def _awaited(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn)


def _takes_message(fn: Any) -> bool:
    return _awaited(fn) and list(inspect.signature(fn).parameters)[:2] == ["self", "msg"]


def _same_hash(fn: Any) -> bool:
    return all(fn(text, SEED) == murmur2(text, SEED) for text in ("", "i = 0", "def f():\n    return 'é'\n"))


NAMES = (
    Name("ipykernel.kernelbase", "Kernel.debug_request",
         "the control channel's debug_request handler: awaits kernel.do_debug_request(content), sends its answer "
         "as the debug_reply", _awaited, "a coroutine function"),
    Name("ipykernel.ipkernel", "IPythonKernel.do_debug_request",
         "ipykernel's own debugger's answer; the sidebar shadows it on the kernel object while on",
         _takes_message, "a coroutine function (self, msg)"),
    Name("ipykernel.kernelbase", "Kernel._publish_debug_event",
         "sends a debug_event on IOPub (the sidebar's stopped, continued, output, terminated)"),
    Name("ipykernel.compiler", "get_tmp_directory", "the folder of the names of cells (tmpFilePrefix)"),
    Name("ipykernel.compiler", "get_tmp_hash_seed", "the hash seed JupyterLab is told (hashSeed)",
         lambda fn: callable(fn) and fn() == SEED, f"a function answering {SEED:#x}"),
    Name("ipykernel.compiler", "murmur2_x86", "how cells are named (hashMethod Murmur2): the sidebar hashes alike",
         _same_hash, "murmur2 as JupyterLab computes it"),
)


def _find(name: Name) -> Any:
    value: Any = importlib.import_module(name.module)
    for part in name.attribute.split("."):
        value = getattr(value, part)
    return value


def check(names: tuple[Name, ...] = NAMES) -> list[str]:
    """A sentence for each declared name that is missing or differs (none: the sidebar can be used)."""
    found = []
    for name in names:
        where = f"{name.module}.{name.attribute}"
        try:
            value = _find(name)
        except (ImportError, AttributeError):
            found.append(f"{where} is missing (used for {name.use})")
            continue
        try:
            right = name.check(value)
        except Exception:  # a check of a changed name may fail in any way: it differs
            right = False
        if not right:
            found.append(f"{where} is not {name.expect} (used for {name.use})")
    return found


_checked: list[str] | None = None


def problems(again: bool = False) -> list[str]:
    """``check()`` of the declared names, done once per process (``again`` checks anew)."""
    global _checked
    if _checked is None or again:
        _checked = check()
    return _checked


def version() -> str:
    """The installed ipykernel's version."""
    try:
        return str(importlib.import_module("ipykernel").__version__)
    except (ImportError, AttributeError):
        return "unknown"
