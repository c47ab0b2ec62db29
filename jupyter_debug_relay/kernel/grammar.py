"""The ``%debug_session`` grammar and help, generated from the operations' parameter models.

A ``Magic`` says which operation a word runs, which fields it takes by position and which options only the magic
has. The options (``--field-name``, their types, choices, flags) and the help lines are derived from the model's
fields, so a field added to an operation appears in ``%debug_session help`` without a second edit. The values are
checked by the operation itself: the grammar only splits the line and turns number-looking words into numbers.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from ..errors import RelayError
from ..operations import OPERATIONS, Operation
from ..operations.spelling import flag, pairs, script

PREFIX = "%debug_session"
SPELLINGS = {"thread_id": "--thread", "frame_id": "--frame", "path_mappings": "--map"}  # the magic's own, beside
# the derived --thread-id, --frame-id and --path-mappings
METAVARS = {
    "name": "N", "cwd": "D", "env": "K=V", "python": "P", "timeout": "S", "thread_id": "T", "frame_id": "F",
    "levels": "N", "start": "S", "count": "C", "since": "CURSOR", "limit": "N", "port": "P", "host": "H",
    "pid": "PID", "ez": "PATH", "adapter": '"CMD ARGS"|NAME', "launch": "JSON", "attach": "JSON", "session": "NAME",
    "path_mappings": "REMOTE=LOCAL", "on": "NAME", "token_file": "F", "fingerprint": "SHA256",
    "timeout_minutes": "M", "pythons": "PATH", "debugpy": "FOLDER",
}


@dataclass(frozen=True)
class Extra:
    """An option or positional only the magic has: it is not a field of the operation."""

    name: str
    kind: type = str  # str, int, float or bool
    metavar: str = ""
    choices: tuple[str, ...] = ()
    positional: bool = False
    help: str = ""


@dataclass(frozen=True)
class Magic:
    """One ``%debug_session`` word: the operation it runs and how its line maps onto that operation's fields."""

    word: str
    group: str
    operation: str | None = None
    summary: str = ""  # for a word without an operation
    positional: tuple[str, ...] = ()  # fields taken by position
    script: bool = False  # ``(SCRIPT | -m MODULE) [ARGS...]``: program or module, then the target's arguments
    remainder: str | None = None  # the field the words after ``--`` go to
    raw: str | None = None  # the rest of the line, verbatim (after leading options): a field or an extra
    hidden: tuple[str, ...] = ()  # fields the magic fills itself
    extras: tuple[Extra, ...] = ()
    addresses_session: bool = True  # a word without an operation takes --session unless it concerns no session

    @property
    def op(self) -> Operation | None:
        return OPERATIONS[self.operation] if self.operation else None

    @property
    def text(self) -> str:
        return self.op.summary if self.op else self.summary


@dataclass(frozen=True)
class Arg:
    """One argument of a magic's line, derived from a field or an extra."""

    dest: str
    kind: str  # str | int | float | on | off | list | pairs | json | words
    metavar: str
    choices: tuple[str, ...] = ()
    positional: bool = False
    extra: bool = False
    help: str = ""
    default: Any = None

    @property
    def flags(self) -> tuple[str, ...]:
        if self.positional:
            return ()
        main = flag(self.dest, self.kind == "off")
        short = SPELLINGS.get(self.dest)
        return (short, main) if short else (main,)

    @property
    def takes_value(self) -> bool:
        return self.kind not in ("on", "off")

    def usage(self) -> str:
        shown = "|".join(self.choices) if self.choices else self.metavar
        if self.positional:
            return shown
        if not self.takes_value:
            return f"[{self.flags[-1]}]"
        repeat = "..." if self.kind in ("list", "pairs") else ""
        return f"[{self.flags[0]} {shown}]{repeat}"


_WAIT_EXTRAS = (Extra("timeout", float, "S", help="Seconds to wait for the first stop (default 10)."),
                Extra("no_wait", bool, help="Answer at once; the stop shows later with `wait`."))

MAGICS: dict[str, Magic] = {m.word: m for m in (
    Magic("launch", "Start or join a target", "launch", script=True, extras=_WAIT_EXTRAS),
    Magic("attach", "Start or join a target", "attach",
          extras=(Extra("list", bool, help="List the local Python processes to attach to (pid, command line, "
                        "the port debugpy listens on) instead of attaching."),)),
    Magic("connect", "Start or join a target", "connect", positional=("kind", "target"), remainder="args",
          hidden=("url", "program"),
          extras=(Extra("target", metavar="[URL|PROGRAM]", positional=True,
                        help="A Mycel URL, an EZ program, or the program a DAP adapter runs."), *_WAIT_EXTRAS)),
    Magic("create", "Sessions", "create"),
    Magic("update", "Sessions", "update_session"),
    Magic("export", "Sessions", "export", positional=("file",),
          extras=(Extra("file", metavar="[FILE]", positional=True,
                        help="Write the JSON there; default: show it."),)),
    Magic("import", "Start or join a target", "import", positional=("file",),
          hidden=("version", "start", "breakpoints", "exceptions"),
          extras=(Extra("file", metavar="FILE", positional=True, help="An export's JSON file."),)),
    Magic("list", "Sessions", "sessions"),
    Magic("doctor", "Sessions", "doctor", addresses_session=False),
    Magic("use", "Sessions", summary="Make a session the current one.", positional=("name",),
          extras=(Extra("name", metavar="NAME", positional=True),)),
    Magic("status", "Sessions", "status"),
    Magic("threads", "Sessions", "threads"),
    Magic("help", "Sessions", summary="This help; `help WORD` details one command.", positional=("word",),
          extras=(Extra("word", metavar="[WORD]", positional=True),)),
    Magic("continue", "Run", "continue"),
    Magic("next", "Run", "next"),
    Magic("step", "Run", "step_in"),
    Magic("out", "Run", "step_out"),
    Magic("pause", "Run", "pause"),
    Magic("wait", "Run", "wait"),
    Magic("where", "Look", "stack"),
    Magic("snapshot", "Look", "snapshot"),
    Magic("tasks", "Look", "tasks"),
    Magic("record", "Back in time", "record", positional=("target",)),
    Magic("history", "Back in time", "history"),
    Magic("back", "Back in time", "back", positional=("steps",)),
    Magic("forward", "Back in time", "forward", positional=("steps",)),
    Magic("frame", "Look", summary="Select frame N of the stop for vars, eval, set and pull.", positional=("index",),
          extras=(Extra("index", int, "N", positional=True),)),
    Magic("vars", "Look", "variables", positional=("target",), hidden=("ref",),
          extras=(Extra("target", metavar="[NAME_OR_REF]", positional=True,
                        help="A variable of the frame or a ref; default: the first scope."),
                  Extra("scope", metavar="NAME", help="The scope to list (its name or the start of it)."))),
    Magic("scopes", "Look", "scopes"),
    Magic("source", "Look", "source"),
    Magic("eval", "Look", "evaluate", raw="expression"),
    Magic("complete", "Look", "completions", raw="text"),
    Magic("hover", "Look", "hover", raw="expression"),
    Magic("watch", "Look", "add_watch", raw="expression",
          extras=(Extra("expression", metavar="EXPR | list | rm N", positional=True,
                        help="An expression to show under every stop; `list` shows them, `rm N` removes one."),)),
    Magic("set", "Look", "set_variable", raw="assignment", hidden=("ref", "name", "value"),
          extras=(Extra("assignment", metavar="NAME = VALUE", positional=True),)),
    Magic("pull", "Look", summary="Copy a value of the paused target into the notebook, in a data format.",
          raw="expression", extras=(Extra("expression", metavar="NAME", positional=True),
                                    Extra("as", metavar="LOCAL", help="The notebook name to store it under."),
                                    Extra("max_bytes", int, "B", help="Refuse a value that encodes to more."))),
    Magic("output", "Output", "output",
          extras=(Extra("tail", int, "N", help="Only the last N lines."),
                  Extra("clear", bool, help="Forget the output kept so far; it is not counted as dropped (the "
                        "cursor goes on)."))),
    Magic("input", "Output", "input", raw="text"),
    Magic("inspect", "Mycel", "inspect", positional=("what", "name")),
    Magic("ready", "Mycel", "ready"),
    Magic("consume", "Mycel", "consume", positional=("connector",)),
    Magic("timeline", "Mycel", "timeline", positional=("thread_id",)),
    Magic("ray", "Ray", "ray_attach", positional=("what", "id"), addresses_session=False,
          summary="List a Ray cluster's paused tasks (`ray [ADDRESS]`), or attach to them (`ray attach ID|--all`); "
                  "`--join` also attaches to its workers as they start, for the notebook's breakpoints.",
          extras=(Extra("what", metavar="[ADDRESS|attach]", positional=True,
                        help="A cluster address to list (default auto), or attach."),)),
    Magic("stop", "End", "terminate"),
    Magic("delete", "End", "delete"),
    Magic("detach", "End", "detach"),
    Magic("restart", "End", "restart"),
    Magic("reconnect", "End", "reconnect"),
    Magic("panel", "End", summary="Show the debugger panel: a live widget."),
    Magic("replay", "Sessions", summary="Open a recording read-only: its stops (`.panel()` scrubs through them).",
          positional=("source",), addresses_session=False,
          extras=(Extra("source", metavar="UID_OR_FILE", positional=True,
                        help="A recording's uid (or a unique prefix, or current), its folder or its events.jsonl."),)),
    Magic("expose", "Agents", "expose", positional=("session",)),
    Magic("sidebar", "Agents", "sidebar",
          extras=(Extra("session", metavar="[NAME|off]", positional=True,
                        help="The session JupyterLab's debugger drives (default: the newest, following new ones); "
                             "`off` gives it back to the notebook's cells."),)),
    Magic("remote", "Beyond one machine", "remote_add", positional=("action", "name", "url"),
          addresses_session=False,
          extras=(Extra("action", metavar="add|list|remove", positional=True,
                        help="add NAME URL --token-file F [--fingerprint SHA256], list, or remove NAME."),)),
    Magic("serve", "Agents", summary="Serve this kernel's sessions over HTTP (MCP at /mcp) for an agent, on a thread; "
          "`serve stop` ends it.", positional=("action",), addresses_session=False,
          extras=(Extra("action", metavar="[stop]", positional=True,
                        help="End serving and free the port."),
                  Extra("port", int, "P", help="The port on 127.0.0.1 (default 0: a free one)."),
                  Extra("token", str, "T", help="The bearer token (default: $JUPYTER_DEBUG_RELAY_TOKEN, else a random "
                        "one written with the URL to a 0600 file in the Jupyter runtime dir)."))),
)}

SESSION_COMMANDS = tuple(MAGICS)


def _strip(annotation: Any) -> tuple[Any, bool]:
    """The type under ``Optional``/``Annotated`` and whether ``None`` was allowed."""
    optional = False
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        optional = len(members) < len(get_args(annotation))
        annotation = members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007 - built at runtime
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation, optional


def field_arg(name: str, info: FieldInfo, positional: bool) -> Arg:
    """The argument a field of an operation's parameters makes (its kind, metavar, choices and default)."""
    annotation, _ = _strip(info.annotation)
    origin = get_origin(annotation)
    choices: tuple[str, ...] = ()
    if annotation is bool:
        kind = "off" if info.default is True else "on"
    elif annotation is int or annotation is float:
        kind = annotation.__name__
    elif origin is Literal:
        kind, choices = "str", tuple(get_args(annotation))
    elif origin is list:
        kind = "list"
    elif origin is dict:
        kind = "pairs" if get_args(annotation) else "json"
    elif annotation is dict:
        kind = "json"
    elif origin in (Union, types.UnionType):  # a command as one string or a list of words
        kind = "words"
    else:
        kind = "str"
    default = None if info.is_required() else info.default
    text = info.description or ""
    if kind == "off" and text:  # the flag is --no-NAME: say that it turns off what the field describes
        text = f"Turn off what is on by default: {text[0].lower()}{text[1:]}"
    return Arg(name, kind, METAVARS.get(name, name.upper()), choices, positional, False, text, default)


def args_of(magic: Magic) -> list[Arg]:
    """Every argument of a magic's line: the operation's fields (``name`` first), then the magic's own."""
    found: list[Arg] = []
    fields = magic.op.params.model_fields if magic.op else {}
    for name, info in fields.items():
        if name in magic.hidden or name == magic.raw or (magic.script and name in ("program", "module", "args")):
            continue
        if name == magic.remainder:
            continue
        found.append(field_arg(name, info, name in magic.positional))
    for extra in magic.extras:
        if extra.name == magic.raw and not extra.positional:
            continue
        kind = "on" if extra.kind is bool else extra.kind.__name__
        found.append(Arg(extra.name, kind, extra.metavar or extra.name.upper(), extra.choices, extra.positional,
                         True, extra.help))
    if magic.op is None and magic.addresses_session:  # a word of the magic's own still addresses a session
        found.append(Arg("session", "str", METAVARS["session"], extra=True))
    order = {name: i for i, name in enumerate(magic.positional)}
    found.sort(key=lambda a: (not a.positional, order.get(a.dest, 0), a.dest not in ("name", "kind")))
    return found


# -- parsing -------------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """An argument parser that raises ``invalid_request`` with the magic's usage instead of printing and exiting."""

    def __init__(self, magic: Magic) -> None:
        super().__init__(prog=f"{PREFIX} {magic.word}", add_help=False, allow_abbrev=False)
        self.magic = magic

    def error(self, message: str):  # noqa: D401 - argparse's hook
        raise RelayError("invalid_request", f"{self.prog}: {message}.", f"Usage: {usage(self.magic)}")


def _parser(magic: Magic) -> _Parser:
    parser = _Parser(magic)
    for arg in args_of(magic):
        if arg.positional:
            parser.add_argument(arg.dest, nargs="?", default=argparse.SUPPRESS)
        elif arg.kind in ("list", "pairs"):
            parser.add_argument(*arg.flags, dest=arg.dest, action="append", default=argparse.SUPPRESS)
        elif arg.kind == "on":
            parser.add_argument(*arg.flags, dest=arg.dest, action="store_true", default=argparse.SUPPRESS)
        elif arg.kind == "off":
            parser.add_argument(*arg.flags, dest=arg.dest, action="store_false", default=argparse.SUPPRESS)
        else:
            parser.add_argument(*arg.flags, dest=arg.dest, default=argparse.SUPPRESS)  # the operation checks it
    if magic.script:
        parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, default=argparse.SUPPRESS)
        parser.add_argument("program", nargs=argparse.REMAINDER)
    return parser


PARSERS: dict[str, _Parser] = {word: _parser(magic) for word, magic in MAGICS.items()}
_ARGS: dict[str, dict[str, Arg]] = {word: {a.dest: a for a in args_of(magic)} for word, magic in MAGICS.items()}


@dataclass
class Command:
    """A parsed ``%debug_session`` line: the operation's arguments as given, the magic's own, the raw text."""

    verb: str
    args: dict[str, Any]
    extras: dict[str, Any]
    text: str = ""

    @property
    def magic(self) -> Magic:
        return MAGICS[self.verb]

    @property
    def session(self) -> str | None:
        return self.args.get("session") or self.extras.get("session")


def split(line: str) -> list[str]:
    """Shell words; an open quote is ``invalid_request``."""
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise RelayError("invalid_request", f"Cannot read the line: {exc}.",
                         "Close the quote, or escape it with a backslash.") from None


def parse_session_line(line: str) -> Command:
    """Parse a ``%debug_session`` line into a command; ``invalid_request`` with the usage on a mistake."""
    verb, _, rest = line.strip().partition(" ")
    verb = verb or "help"
    magic = MAGICS.get(verb)
    if magic is None:
        raise RelayError("invalid_request", f"Unknown command {verb!r}.",
                         "Commands: " + ", ".join(SESSION_COMMANDS) + ". See `%debug_session help`.")
    if magic.raw:
        values, text = _leading_options(magic, rest)
        text = _trailing_options(magic, text, values)
    else:
        words, text = split(rest), ""
        after: list[str] | None = None
        if magic.remainder and "--" in words:
            cut = words.index("--")
            words, after = words[:cut], words[cut + 1:]
        values = vars(PARSERS[verb].parse_args(words)) if words or magic.script else {}
        if after is not None:
            values[magic.remainder] = after
        if magic.script:
            _script(magic, values)
    return _command(verb, values, text)


def _script(magic: Magic, values: dict[str, Any]) -> None:
    """``SCRIPT [ARGS...]`` or ``-m MODULE [ARGS...]``: everything after the script is the target's (``--`` too)."""
    module = values.pop("module", None)
    words = (module or []) + values.pop("program")
    if not words:
        raise RelayError("invalid_request", "Launch needs a SCRIPT or -m MODULE (one of them).",
                         "e.g. `%debug_session launch app.py` or `%debug_session launch -m pytest -x`.")
    if words[0].startswith("-"):
        raise RelayError("invalid_request", f"{PREFIX} {magic.word}: unrecognized arguments: {words[0]}.",
                         f"Usage: {usage(magic)}")
    values.update(script(words, module is not None))


def _leading_options(magic: Magic, rest: str) -> tuple[dict[str, Any], str]:
    """Options at the start of a raw line (``--session s2 x + 1``); the first other word starts the text."""
    known = {flag: arg for arg in _ARGS[magic.word].values() for flag in arg.flags}
    values: dict[str, Any] = {}
    while True:
        text = rest.lstrip()
        word, _, after = text.partition(" ")
        flag, eq, inline = word.partition("=")
        arg = known.get(flag)
        if arg is None:
            return values, text.strip()
        if not arg.takes_value:
            values[arg.dest], rest = arg.kind == "on", after
            continue
        if eq:
            values[arg.dest], rest = inline, after
            continue
        value, _, rest = after.lstrip().partition(" ")
        if not value:
            raise RelayError("invalid_request", f"{PREFIX} {magic.word}: argument {flag}: expected one argument.",
                             f"Usage: {usage(magic)}")
        values[arg.dest] = value


def _trailing_options(magic: Magic, text: str, values: dict[str, Any]) -> str:
    """The magic's own options at the end of a raw line (``pull df --as frame``)."""
    flags = "|".join(re.escape(a.flags[-1]) for a in _ARGS[magic.word].values() if a.extra and a.takes_value
                     and not a.positional and a.dest != "session")
    if not flags:
        return text
    pattern = re.compile(rf"\s+({flags})(?:\s+|=)(\S+)\s*$")
    while (match := pattern.search(text)) is not None:
        flag, value = match.groups()
        values[flag[2:].replace("-", "_")] = value
        text = text[:match.start()]
    return text


def _command(verb: str, values: dict[str, Any], text: str) -> Command:
    magic = MAGICS[verb]
    table = _ARGS[verb]
    fields = magic.op.params.model_fields if magic.op else {}
    args: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for dest, value in values.items():
        arg = table.get(dest)
        converted = _convert(magic, arg, value) if arg is not None else value
        (args if dest in fields and not (arg and arg.extra) else extras)[dest] = converted
    if magic.raw:
        if not text and verb != "input":
            raise RelayError("invalid_request", f"`{verb}` needs an argument.", f"Usage: {usage(magic)}")
        if magic.raw in fields:
            args[magic.raw] = text
    return Command(verb, args, extras, text)


def _convert(magic: Magic, arg: Arg, value: Any) -> Any:
    """Words into the field's type where they read as one; anything else goes on as given, for the check."""
    if arg.kind in ("int", "float"):
        try:
            return int(value) if arg.kind == "int" else float(value)
        except ValueError:
            if arg.extra:
                named = arg.metavar if arg.positional else arg.flags[-1]
                raise RelayError("invalid_request", f"{PREFIX} {magic.word}: {named} takes a number, not "
                                 f"{value!r}.", f"Usage: {usage(magic)}") from None
            return value
    if arg.kind == "pairs":
        return pairs(f"--{arg.dest}", value)
    if arg.kind == "json":
        return _json(value, arg.flags[-1])
    if arg.kind == "words":
        words = split(value)
        return words[0] if len(words) == 1 else words
    return value


def _json(text: str, flag: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RelayError("invalid_request", f"{flag} is not valid JSON: {exc}.",
                         f"Quote it for the shell: {flag} '{{\"program\": \"./a.out\"}}'.") from None
    if not isinstance(value, dict):
        raise RelayError("invalid_request", f"{flag} must be a JSON object.")
    return value


def options(word: str) -> list[str]:
    """The flags a word takes (for tab completion); none for an unknown word."""
    return sorted(flag for arg in _ARGS.get(word, {}).values() for flag in arg.flags)


def usage_parts(magic: Magic) -> list[str]:
    """The words of a magic's usage line: the prefix, its word, its positionals, then its options."""
    parts = [PREFIX, magic.word]
    parts += [a.usage() for a in args_of(magic) if a.positional and a.dest != magic.raw]
    parts += [a.usage() for a in args_of(magic) if not a.positional and a.dest != "session"]
    if magic.raw:  # after the options: the rest of the line is the text
        raw = next((e for e in magic.extras if e.name == magic.raw), None)
        parts.append(raw.metavar if raw else magic.raw.upper())
    if magic.script:
        parts.append("(SCRIPT | -m MODULE) [ARGS...]")
    if magic.remainder:
        parts.append(f"[-- {magic.remainder.upper()}...]")
    return parts


def usage(magic: Magic) -> str:
    """One magic's grammar, e.g. ``%debug_session next [--timeout S] [--thread T] [--no-wait]``."""
    return " ".join(usage_parts(magic))
