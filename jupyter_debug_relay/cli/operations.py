"""The operations as CLI subcommands: each appends a command to a session's ``commands.jsonl`` and prints the answer.

The subcommands' options are generated from the operations' parameter models (``OPERATIONS[name].params``),
as the magics' are; only the positional words are chosen here.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..errors import RelayError
from ..kernel.grammar import field_arg
from ..model import Breakpoint, from_json, stop_from_json
from ..operations import OPERATIONS, parse, snapshot
from ..operations.spelling import flag, pairs
from ..store.recording import COMMANDS, EVENTS, Home
from ..text import (
    history_lines,
    recorded_state_lines,
    recording_line,
    replay_hint,
    short_path,
    status_text,
    stop_reason,
    tasks_lines,
    unbound_lines,
    warnings_line,
)
from .render import Printer, place

REQUEST_TIMEOUT = 30.0  # the owning relay's default request timeout: what an answer may take beyond a wait


@dataclass(frozen=True)
class Verb:
    """A CLI word: the operation it sends, the fields it takes by position and the fields it fills itself."""

    word: str
    operation: str
    positional: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()


VERBS = (Verb("pause", "pause"), Verb("continue", "continue"), Verb("next", "next"), Verb("step-in", "step_in"),
         Verb("step-out", "step_out"), Verb("eval", "evaluate", ("expression",)),
         Verb("snapshot", "snapshot"), Verb("tasks", "tasks"), Verb("record", "record", ("target",)),
         Verb("history", "history"), Verb("back", "back", ("steps",)), Verb("forward", "forward", ("steps",)),
         Verb("dap", "expose"))
BP_VERBS = (Verb("add", "add_breakpoint", hidden=("kind", "path", "line", "name", "flow", "stage", "rule_index")),
            Verb("list", "breakpoints"), Verb("rm", "remove_breakpoint", ("id",)))
REMOTE_VERBS = (Verb("add", "remote_add", ("name", "url")), Verb("list", "remote_list"),
                Verb("remove", "remote_remove", ("name",)))
INSPECT = ("stack", "variables", "threads", "all")
MOVES = ("pause", "continue", "next", "step_in", "step_out", "wait")  # their answer is a state and a stop
STARTS = ("launch", "attach")  # their answer is the session, its state and its stop (cli/starting.py)


def add_fields(parser: argparse.ArgumentParser, verb: Verb, model: type[BaseModel] | None = None) -> None:
    """The options (and positionals) of ``verb``, from its operation's parameter model (or ``model``)."""
    for name, info in (model or OPERATIONS[verb.operation].params).model_fields.items():
        if name == "session" or name in verb.hidden:
            continue
        arg = field_arg(name, info, name in verb.positional)
        text = arg.help.replace("%", "%%")
        if arg.positional:
            parser.add_argument(name, nargs="+" if arg.kind == "str" else None,
                                type=int if arg.kind == "int" else str, help=text)
        elif arg.kind in ("list", "pairs"):
            parser.add_argument(flag(name), dest=name, action="append", default=None, metavar=arg.metavar,
                                help=f"{text} (repeatable)")
        elif arg.kind == "on":
            parser.add_argument(flag(name), dest=name, action="store_true", default=None, help=text)
        elif arg.kind == "off":
            parser.add_argument(flag(name, off=True), dest=name, action="store_false", default=None,
                                help=text or None)
        else:
            kind = {"int": int, "float": float}.get(arg.kind, str)
            parser.add_argument(flag(name), dest=name, type=kind, default=None, choices=arg.choices or None,
                                metavar=arg.metavar, help=text)


def fields_of(options: argparse.Namespace, verb: Verb, model: type[BaseModel] | None = None) -> dict[str, Any]:
    """The operation's arguments (or ``model``'s fields) from the parsed options (given ones only)."""
    fields = (model or OPERATIONS[verb.operation].params).model_fields
    args = {name: getattr(options, name) for name in fields
            if name != "session" and name not in verb.hidden and getattr(options, name, None) is not None}
    for name in verb.positional:
        if isinstance(args.get(name), list):
            args[name] = " ".join(args[name])
    for name in args:
        if field_arg(name, fields[name], False).kind == "pairs":
            args[name] = pairs(flag(name), args[name])
    return args


def local_place(place: str) -> str:
    """``FILE:LINE`` or ``FILE:"TEXT"`` with FILE made absolute from here (not normalized: TEXT stays as typed), for a
    relay whose working directory is another."""
    return os.path.join(os.getcwd(), os.path.expanduser(place))


def register(verbs: Any) -> None:
    """Add the operation subcommands (and ``inspect``, ``bp``) to the CLI's subparsers."""
    for verb in VERBS:
        op = OPERATIONS[verb.operation]
        parser = verbs.add_parser(verb.word, help=op.summary[0].lower() + op.summary[1:].rstrip("."))
        add_fields(parser, verb)
        _common(parser)
        parser.set_defaults(run=lambda o, v=verb: _send_one(o, v.operation, fields_of(o, v)))
    inspect = verbs.add_parser("inspect", help="show the stopped target's stack, top frame's variables or threads")
    inspect.add_argument("what", nargs="?", choices=INSPECT, default="all")
    _common(inspect)
    inspect.set_defaults(run=_inspect)
    bp = verbs.add_parser("bp", help="add, list or remove breakpoints of the session's relay")
    bp_verbs = bp.add_subparsers(dest="bp_verb", required=True)
    for verb in BP_VERBS:
        parser = bp_verbs.add_parser(verb.word, help=OPERATIONS[verb.operation].summary)
        if verb.word == "add":
            parser.add_argument("place", metavar="FILE:LINE", help='FILE:LINE, FILE:"TEXT", or FILE with --content')
        add_fields(parser, verb)
        _common(parser)
        parser.set_defaults(run=lambda o, v=verb: _send_one(o, v.operation, _bp_args(o, v)))
    remote = verbs.add_parser("remote", help="add, list or remove the remote relays of the session's relay")
    remote_verbs = remote.add_subparsers(dest="remote_verb", required=True)
    for verb in REMOTE_VERBS:
        parser = remote_verbs.add_parser(verb.word, help=OPERATIONS[verb.operation].summary)
        add_fields(parser, verb)
        _common(parser)
        parser.set_defaults(run=lambda o, v=verb: _send_one(o, v.operation, _remote_args(o, v)))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", default="current", metavar="SESSION",
                        help="a session's name, unique id, a unique prefix of one, or current (the default)")
    parser.add_argument("--json", action="store_true", help="print the response as JSON")


def _bp_args(options: argparse.Namespace, verb: Verb) -> dict[str, Any]:
    args = fields_of(options, verb)
    if verb.word == "add":  # FILE:LINE, FILE:"TEXT" or FILE (with --content): the operation reads the place
        args.update(path=local_place(options.place))
    return args


def _remote_args(options: argparse.Namespace, verb: Verb) -> dict[str, Any]:
    args = fields_of(options, verb)
    if "token_file" in args:  # read by the relay that owns the session, from its own folder
        args["token_file"] = os.path.abspath(os.path.expanduser(args["token_file"]))
    return args


# -- sending -----------------------------------------------------------------------------------------

def send(home: Home, key: str, operation: str, args: dict[str, Any]) -> Any:
    """Append one command to the session's commands file and wait for its answer; its result, or its error."""
    _, params = parse(operation, args)  # refused here, before it is sent, when it could not run
    limit = OPERATIONS[operation].budget(params, REQUEST_TIMEOUT) + 5.0
    entry = home.resolve(key)
    if not entry["live"]:
        raise RelayError("not_running", f"Session {entry['uid']} ({entry.get('name')}) has ended; it takes no "
                         "commands.", replay_hint(entry["uid"]))
    folder = home.folder(entry["uid"])
    offset = (folder / EVENTS).stat().st_size
    command_id = uuid.uuid4().hex[:12]
    line = json.dumps({"id": command_id, "type": operation, "args": args}) + "\n"
    fd = os.open(folder / COMMANDS, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    deadline = time.monotonic() + limit
    for batch in home.follow(folder / EVENTS, offset, stop=lambda: time.monotonic() > deadline):
        for event in batch:
            data = event.get("data") or {}
            if data.get("command_id") != command_id:
                continue
            if event.get("type") == "command_response" and data.get("ok"):
                return data.get("result")
            error = data.get("error") or data
            raise RelayError(error.get("code", "invalid_request"), error.get("message", ""), error.get("hint"),
                             error.get("details"))
    raise RelayError("timeout", f"No answer to {operation} within {limit:g} s.",
                     "Check that the kernel owning the session is alive and not busy; see `sessions`.")


def _send_one(options: argparse.Namespace, operation: str, args: dict[str, Any]) -> int:
    try:
        result = send(Home(), options.session, operation, args)
    except RelayError as exc:
        if operation not in MOVES or exc.code != "target_exited":
            raise
        result = {"state": "terminated", "stop": None, "exit_code": exc.details.get("exit_code")}
    if operation == "expose" and result.get("connection_file"):  # the recording masks the token; its file does not
        with open(result["connection_file"]) as f:
            result["token"] = json.load(f)["token"]
    show(Printer(options.json), operation, result)
    return 0


def _inspect(options: argparse.Namespace) -> int:
    home, printer = Home(), Printer(options.json)
    what = INSPECT[:3] if options.what == "all" else (options.what,)
    found: dict[str, Any] = {}
    for part in what:
        if part == "variables":
            scopes = send(home, options.session, "scopes", {})["scopes"]
            if not scopes:
                found[part] = {"items": []}
                continue
            found[part] = send(home, options.session, "variables", {"ref": scopes[0]["ref"]})
            found[part]["scope"] = scopes[0]["name"]
        else:
            found[part] = send(home, options.session, part, {})
    if options.json:
        printer.data(found)
        return 0
    for part, result in found.items():
        show(printer, part, result)
    return 0


# -- showing -----------------------------------------------------------------------------------------

def stop_line(result: dict[str, Any]) -> str:
    """``paused: breakpoint 1 in compute() at app.py:6``, or the state when there is no stop."""
    stop, state = result.get("stop"), result.get("state")
    if not stop:
        return f"{state}: exit code {result['exit_code']}" if result.get("exit_code") is not None else str(state)
    return f"{state}: {stop_reason(stop_from_json(stop))} in {place(stop.get('frame'))}"


def show(printer: Printer, operation: str, result: Any) -> None:
    """Print an operation's result: a line, or a table."""
    if printer.as_json:
        printer.data(result)
    elif operation in MOVES:
        printer.text(stop_line(result))
    elif operation in STARTS:  # and each breakpoint it will not stop at, with why
        printer.text(stop_line(result) + unbound_lines([from_json(Breakpoint, b) for b in result["unverified"]]))
    elif operation == "snapshot":
        printer.text(snapshot.render(result, short_path))
    elif operation == "tasks":
        printer.text("\n".join(tasks_lines(result["async_tasks"], short_path)))
    elif operation in ("back", "forward"):
        printer.text("\n".join(recorded_state_lines(result, short_path)))
    elif operation == "history":
        printer.text("\n".join(history_lines(result, short_path)))
    elif operation == "record":
        printer.text(recording_line(result["recording"], short_path))
    elif operation == "expose":
        printer.text(f"{result['url']} token {result['token']}" + (" (read-only)" if result.get("read_only") else ""))
    elif operation == "evaluate":
        var = result["variable"]
        printer.text(f"{var.get('value')}" + (f"  ({var['type']})" if var.get("type") else ""))
    elif operation == "stack":
        printer.table(("#", "function", "place"), [(i, f.get("name"), f"{short_path(f.get('path') or '')}:"
                                                    f"{f.get('line')}") for i, f in enumerate(result["frames"])],
                      "no frames")
    elif operation == "threads":
        printer.table(("id", "thread"), [(t["id"], t["name"]) for t in result["threads"]], "no threads")
    elif operation == "variables":
        printer.table(("name", "type", "value"), [(v["name"], v.get("type") or "", v.get("value"))
                                                  for v in result["items"]], "no variables")
    elif operation in ("breakpoints", "add_breakpoint", "remove_breakpoint"):
        bps = result.get("breakpoints") or [result["breakpoint"]]
        printer.table(("id", "place", "condition", "status"), [
            (b["id"], f"{short_path(b.get('path') or '')}:{b.get('line')}" if b.get("path")
             else b.get("name") or b.get("kind"), " ".join(filter(None, (
                 b.get("condition"), b.get("task") and f"--task {b['task']}"))),
             status_text(from_json(Breakpoint, b))) for b in bps],
            "no breakpoints")
    else:
        printer.data(result)
    told = result.get("warnings") if operation in STARTS else None  # the features off in the target, and why
    if operation == "status":
        told = (result.get("session") or {}).get("warnings")
    if told and not printer.as_json:
        printer.text(warnings_line(told))

