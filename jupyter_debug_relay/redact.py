"""Secrets masked in what agents see and in command lines shown anywhere: names, flags and reprs like secrets."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

REDACTED = "<redacted>"

_SECRET = r"(?:password|passwd|secret|token|api[_-]?key|private[_-]?key|credential)"
_NAME = re.compile(rf"(?i){_SECRET}|_KEY\b|_KEY$")
# In a repr: 'password': 'x'  "API_KEY": "x"  password='x'  token=x
_IN_REPR = re.compile(
    rf"""(?P<key>['"]?[\w.-]*(?:(?i:{_SECRET})|_KEY)[\w.-]*['"]?\s*[:=]\s*)(?P<value>'[^']*'|"[^"]*"|[^\s,)}}\]]+)"""
)
_TEXTS = frozenset(("value", "target", "description"))  # keys whose text may hold a secret-named value
_FLAG = re.compile(rf"(?i)^--?[\w-]*(?:{_SECRET}|[_-]key)[\w-]*$")


@lru_cache(maxsize=4096)  # the same few keys come back in every result
def secret_name(name: str) -> bool:
    """Whether a variable, key or flag name looks like it holds a secret."""
    return bool(_NAME.search(name.strip("'\"[]")))


def mask_text(text: str) -> str:
    """``text`` with the values of secret-named keys and flags (``password='x'``, ``--token x``) masked."""
    text = _IN_REPR.sub(lambda m: m["key"] + REDACTED, text)
    words = text.split(" ")
    for i in range(len(words) - 1):
        if _FLAG.match(words[i]):
            words[i + 1] = REDACTED
    return " ".join(words)


def mask_args(args: list[Any]) -> list[Any]:
    """A command line with the value after a secret-named flag masked."""
    out = list(args)
    for i, arg in enumerate(out):
        if isinstance(arg, str):
            if "=" in arg and _FLAG.match(arg.split("=", 1)[0]):
                out[i] = arg.split("=", 1)[0] + "=" + REDACTED
            elif _FLAG.match(arg) and i + 1 < len(out):
                out[i + 1] = REDACTED
    return out


def mask(obj: Any) -> Any:
    """A JSON-ready result with every secret-looking value masked (variables, env, args, targets, reprs)."""
    if isinstance(obj, list):
        return [mask(x) for x in obj]
    if not isinstance(obj, dict):
        return obj
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if isinstance(value, str):
            out[key] = REDACTED if secret_name(key) else mask_text(value) if key in _TEXTS else value
        elif key == "args" and isinstance(value, list):
            out[key] = mask_args(value)
        elif isinstance(value, (dict, list)):
            out[key] = mask(value)
        else:
            out[key] = value
    name = obj.get("name")
    if isinstance(name, str) and isinstance(obj.get("value"), str) and secret_name(name):
        out["value"] = REDACTED
    return out
