"""How front ends with options spell an operation's fields (``--stop-on-entry``, ``--no-just-my-code``), and a
launch whose program was handed one of them: written after the script, an option goes to the program."""

from __future__ import annotations

import shlex
from typing import Any

from ..errors import RelayError
from . import params as P

NOT_OPTIONS = ("program", "module", "args")  # a launch's script and its arguments: words, never options


def flag(name: str, off: bool = False) -> str:
    """The option that sets field ``name``: ``--name-with-dashes``, or ``--no-...`` for a flag on by default."""
    stem = name.replace("_", "-")
    return f"--no-{stem}" if off else f"--{stem}"


def script(words: list[str], module: bool) -> dict[str, Any]:
    """A launch's fields from the words after its options: the script (or ``module``), then the program's own
    arguments, as on Python's command line (a ``--`` right after the script is optional)."""
    rest = words[2:] if words[1:2] == ["--"] else words[1:]
    return {"module" if module else "program": words[0], **({"args": rest} if rest else {})}


def pairs(option: str, words: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` words (an option given several times) as a dict; ``invalid_request`` names a word without =."""
    found = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise RelayError("invalid_request", f"{option} takes KEY=VALUE, not {word!r}.", f"e.g. {option} MODE=fast")
        found[key] = value
    return found


def options(params: type[P.Params]) -> dict[str, str]:
    """Every option of an operation's parameters, as spelled, and the field it sets."""
    return {flag(name, info.default is True): name for name, info in params.model_fields.items()
            if name not in NOT_OPTIONS}


def misplaced(p: P.LaunchParams) -> RelayError | None:
    """What to tell if the target exits with an error before its first stop while its first argument is one of
    launch's options (``launch app.py --no-just-my-code``); None when it is not one."""
    first = (p.args or [""])[0]
    name = options(P.LaunchParams).get(first.split("=", 1)[0])
    if name is None:
        return None
    takes_value = not isinstance(P.LaunchParams.model_fields[name].default, bool)
    moved = p.args[:2] if takes_value and "=" not in first else p.args[:1]
    script = [p.program] if p.program is not None else ["-m", p.module or ""]
    example = shlex.join(["launch", *moved, *script, *p.args[len(moved):]])
    note = (f"{first} went to the program as its first argument; launch's options go before the script: "
            f"{example}")
    return RelayError("target_exited", f"The target exited with an error before it stopped, and its first "
                      f"argument {first} is launch's option {name}: written after the script, it went to the program.",
                      f"Give it before the script ({example}); over HTTP, MCP or the Python API, set the field {name} "
                      "instead of putting it in args.", {"note": note})
