"""Parsing the magics' lines: shell quoting for options, raw text for expressions and conditions."""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field

from ..errors import RelayError
from ..model import Breakpoint

HELP = """\
%debug_session (alias %dbg) — debug another program from this kernel.

Start or join a target:
  %debug_session launch [--name N] [--cwd D] [--env K=V]... [--python P] [--stop-on-entry]
                        [--exceptions raised|uncaught|none] [--no-just-my-code] [--subprocess]
                        [--timeout S] [--no-wait] (SCRIPT | -m MODULE) [-- ARGS...]
  %debug_session attach (--port P [--host H] | --pid PID) [--name N]
  %debug_session connect mycel URL [--name N]
  %debug_session connect ez PROGRAM [--ez PATH] [--name N]
  %debug_session connect dap [PROGRAM] [--adapter "CMD ARGS" | NAME] [--host H --port P]
                        [--launch JSON | --attach JSON] [--stop-on-entry] [--cwd D] [--name N] [-- ARGS...]
Sessions:    list | use NAME | status | threads | help
Run:         continue | next | step | out | pause   [--thread T] [--timeout S] [--no-wait]
             wait [--timeout S]
Look:        where [--levels N] | frame N | vars [NAME_OR_REF] [--scope NAME] [--start S] [--count C]
             eval EXPRESSION | set NAME = VALUE | pull NAME [--as LOCAL] [--max-bytes B]
Output:      output [--since CURSOR] [--tail N] | input TEXT
End:         stop | detach | restart          Mycel: reconnect          Panel: panel
Every command takes --session NAME to address another session than the current one.

%bp FILE:LINE [if CONDITION] [hit HIT_CONDITION] [log MESSAGE]
%bp func NAME [if CONDITION]
%bp exceptions raised|uncaught|none
%bp stage FLOW STAGE [rule N] [if CONDITION]          (Mycel)
%bp list | rm ID... | clear [FILE] | disable ID | enable ID

Examples:
  %bp app.py:12 if order["total"] == 0
  %bp app.py:15 hit >=2
  %bp app.py:20 log total is {total}
  %debug_session launch "my app.py" -- --input data.csv
  %debug_session launch -m pytest -- -x tests/test_a.py::test_one
  %debug_session next
  %debug_session vars totals
  %debug_session eval sum(totals.values())
  %debug_session pull df --as frame
"""

SESSION_COMMANDS = (
    "launch", "attach", "connect", "list", "use", "status", "threads", "help", "continue", "next", "step", "out",
    "pause", "wait", "where", "frame", "vars", "eval", "set", "pull", "output", "input", "stop", "detach",
    "restart", "reconnect", "panel",
)
BP_COMMANDS = ("func", "exceptions", "stage", "list", "rm", "clear", "disable", "enable")
RAW_COMMANDS = ("eval", "set", "input", "pull")  # the rest of the line is an expression or text, not shell words


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises ``invalid_request`` instead of printing and exiting."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog=prog, add_help=False, allow_abbrev=False)

    def error(self, message: str):  # noqa: D401 - argparse's hook
        usage = " ".join(self.format_usage().split()[1:])
        raise RelayError("invalid_request", f"{self.prog}: {message}.", f"Usage: {usage}")


def _parser(command: str, *options: tuple) -> _Parser:
    parser = _Parser(f"%debug_session {command}")
    parser.add_argument("--session")
    for flags, kwargs in options:
        parser.add_argument(*flags, **kwargs)
    return parser


_WAIT = (("--timeout",), {"type": float, "default": 10.0}), (("--no-wait",), {"action": "store_true"})
_RUN = ((("--thread",), {"type": int}), *_WAIT)
_NAME = (("--name",), {})

PARSERS: dict[str, _Parser] = {
    "launch": _parser(
        "launch", _NAME, (("--cwd",), {}), (("--env",), {"action": "append", "default": []}),
        (("--python",), {}), (("--stop-on-entry",), {"action": "store_true"}),
        (("--exceptions",), {"choices": ("raised", "uncaught", "none")}),
        (("--no-just-my-code",), {"action": "store_true"}), (("--subprocess",), {"action": "store_true"}),
        (("-m",), {"dest": "module"}), (("script",), {"nargs": "?"}), *_WAIT,
    ),
    "attach": _parser("attach", _NAME, (("--port",), {"type": int}), (("--host",), {"default": "127.0.0.1"}),
                      (("--pid",), {"type": int}), (("--no-just-my-code",), {"action": "store_true"})),
    "connect": _parser("connect", _NAME, (("kind",), {"choices": ("mycel", "ez", "dap")}),
                       (("target",), {"nargs": "?"}), (("--ez",), {"default": "ez"}), (("--adapter",), {}),
                       (("--launch",), {}), (("--attach",), {}), (("--cwd",), {}), (("--host",), {}),
                       (("--port",), {"type": int}), (("--stop-on-entry",), {"action": "store_true"}), *_WAIT),
    "use": _parser("use", (("name",), {})),
    "where": _parser("where", (("--levels",), {"type": int}), (("--thread",), {"type": int})),
    "frame": _parser("frame", (("index",), {"type": int})),
    "vars": _parser("vars", (("target",), {"nargs": "?"}), (("--scope",), {}),
                    (("--start",), {"type": int, "default": 0}), (("--count",), {"type": int, "default": 100})),
    "output": _parser("output", (("--since",), {"type": int, "default": 0}), (("--tail",), {"type": int})),
    "wait": _parser("wait", _WAIT[0]),
    **{verb: _parser(verb, *_RUN) for verb in ("continue", "next", "step", "out", "pause")},
    **{verb: _parser(verb) for verb in ("list", "status", "threads", "help", "stop", "detach", "restart", "reconnect",
                                          "panel")},
}


@dataclass
class Command:
    """A parsed ``%debug_session`` line: the verb, its options, and for raw verbs the text."""

    verb: str
    options: argparse.Namespace
    text: str = ""
    target_args: list[str] = field(default_factory=list)


def split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise RelayError("invalid_request", f"Cannot read the line: {exc}.",
                         "Close the quote, or escape it with a backslash.") from None


_RAW_SESSION = re.compile(r"^\s*--session(?:\s+|=)(\S+)\s*")
_PULL_OPTION = re.compile(r"\s+--(as|max-bytes)(?:\s+|=)(\S+)\s*$")


def parse_session_line(line: str) -> Command:
    """Parse a ``%debug_session`` line; raises ``invalid_request`` with the usage on a mistake."""
    stripped = line.strip()
    verb, _, rest = stripped.partition(" ")
    verb = verb or "help"
    if verb not in SESSION_COMMANDS:
        raise RelayError("invalid_request", f"Unknown command {verb!r}.",
                         "Commands: " + ", ".join(SESSION_COMMANDS) + ". See `%debug_session help`.")
    if verb in RAW_COMMANDS:
        return _parse_raw(verb, rest)
    words = split(rest)
    target_args: list[str] = []
    if "--" in words:
        cut = words.index("--")
        words, target_args = words[:cut], words[cut + 1:]
    options = PARSERS[verb].parse_args(words)
    return Command(verb, options, target_args=target_args)


def _parse_raw(verb: str, rest: str) -> Command:
    options = argparse.Namespace(session=None, as_name=None, max_bytes=None)
    match = _RAW_SESSION.match(rest)
    if match:
        options.session, rest = match.group(1), rest[match.end():]
    if verb == "pull":
        while (match := _PULL_OPTION.search(rest)) is not None:
            key, value = match.groups()
            rest = rest[:match.start()]
            if key == "as":
                options.as_name = value
            else:
                try:
                    options.max_bytes = int(value)
                except ValueError:
                    raise RelayError("invalid_request", f"--max-bytes takes a number of bytes, not {value!r}.") \
                        from None
    text = rest.strip()
    if not text and verb != "input":
        usage = {"eval": "eval EXPRESSION", "set": "set NAME = VALUE", "pull": "pull NAME [--as LOCAL]"}[verb]
        raise RelayError("invalid_request", f"`{verb}` needs an argument.", f"Usage: %debug_session {usage}")
    return Command(verb, options, text=text)


# -- %bp -------------------------------------------------------------------------------------

@dataclass
class BpCommand:
    """A parsed ``%bp`` line: the verb, the breakpoint it describes (id 0, not yet added), the ids it names."""

    verb: str  # line | func | exceptions | stage | list | rm | clear | disable | enable
    spec: Breakpoint = field(default_factory=lambda: Breakpoint(id=0, kind="line"))
    ids: list[int] = field(default_factory=list)


_LINE_CLAUSES = re.compile(r"(if|hit|log)(?=\s)")
_STAGE_CLAUSES = re.compile(r"(if|rule)(?=\s)")


def _clauses(text: str, keywords: re.Pattern[str]) -> tuple[str, dict[str, str]]:
    """Split ``head [if C] [hit H] [log M]`` at keywords outside quotes; ``log`` takes the rest."""
    starts: list[tuple[int, int, str]] = []
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        else:
            match = keywords.match(text, i)
            if match and (i == 0 or text[i - 1].isspace()) and match.group(1) not in {k for _, _, k in starts}:
                starts.append((match.start(), match.end(), match.group(1)))
                if match.group(1) == "log":
                    break
                i = match.end()
                continue
        i += 1
    head = text[:starts[0][0]] if starts else text
    clauses = {}
    for n, (_, end, key) in enumerate(starts):
        stop = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        clauses[key] = text[end:stop].strip()
    return head.strip(), clauses


def _ids(words: list[str], verb: str) -> list[int]:
    if not words:
        raise RelayError("invalid_request", f"`%bp {verb}` needs a breakpoint id.", "See the ids with `%bp list`.")
    try:
        return [int(w) for w in words]
    except ValueError:
        raise RelayError("invalid_request", f"Breakpoint ids are numbers, not {' '.join(words)!r}.",
                         "See the ids with `%bp list`.") from None


def parse_bp_line(line: str) -> BpCommand:
    """Parse a ``%bp`` line; conditions and log messages are kept verbatim."""
    text = line.strip()
    if not text:
        return BpCommand("list")
    first, _, rest = text.partition(" ")
    if first in ("list", "rm", "clear", "disable", "enable"):
        words = split(rest)
        if first == "list":
            return BpCommand("list")
        if first == "clear":
            return BpCommand("clear", Breakpoint(id=0, kind="line", path=words[0] if words else None))
        ids = _ids(words, first)
        if first != "rm" and len(ids) != 1:
            raise RelayError("invalid_request", f"`%bp {first}` takes one breakpoint id.")
        return BpCommand(first, ids=ids)
    if first == "exceptions":
        words = split(rest)
        if len(words) != 1 or words[0] not in ("raised", "uncaught", "none"):
            raise RelayError("invalid_request", "Usage: %bp exceptions raised|uncaught|none.")
        return BpCommand("exceptions", Breakpoint(id=0, kind="exception", name=words[0]))
    head, clauses = _clauses(text, _STAGE_CLAUSES if first == "stage" else _LINE_CLAUSES)
    condition = clauses.get("if") or None
    if "if" in clauses and not condition:
        raise RelayError("invalid_condition", "`if` needs a condition after it.", "e.g. %bp app.py:12 if i == 3")
    if first == "func":
        words = split(head)[1:]
        if len(words) != 1:
            raise RelayError("invalid_request", "Usage: %bp func NAME [if CONDITION].")
        return BpCommand("func", Breakpoint(id=0, kind="function", name=words[0], condition=condition))
    if first == "stage":
        words = split(head)[1:]
        if len(words) != 2:
            raise RelayError("invalid_request", "Usage: %bp stage FLOW STAGE [rule N] [if CONDITION].")
        rule = clauses.get("rule")
        try:
            rule_index = int(rule) if rule is not None else None
        except ValueError:
            raise RelayError("invalid_request", f"`rule` takes a rule index, not {rule!r}.") from None
        return BpCommand("stage", Breakpoint(id=0, kind="stage", flow=words[0], stage=words[1], rule_index=rule_index,
                                             condition=condition))
    words = split(head)
    if len(words) != 1 or ":" not in words[0]:
        raise RelayError("invalid_request", f"Cannot read {head!r} as FILE:LINE.",
                         'Usage: %bp FILE:LINE [if CONDITION] [hit HIT] [log MESSAGE]; quote a path with spaces.')
    path, _, number = words[0].rpartition(":")
    try:
        line_number = int(number)
    except ValueError:
        raise RelayError("invalid_line", f"{number!r} is not a line number.", "Write FILE:LINE, e.g. app.py:12.") \
            from None
    return BpCommand("line", Breakpoint(id=0, kind="line", path=path, line=line_number, condition=condition,
                                        hit_condition=clauses.get("hit") or None,
                                        log_message=clauses.get("log") or None))
