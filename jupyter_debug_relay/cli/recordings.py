"""The CLI over the session store: ``sessions``, ``watch``, ``replay`` and ``attach SESSION``."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import RelayError
from ..store.recording import Home, in_order, read_events
from ..text import short_path
from . import operations
from .render import Printer

_SPEED = re.compile(r"^(\d+(?:\.\d+)?)x?$")
SESSION = "a session's name, unique id, a unique prefix of one, or current (the default)"


def register(verbs: Any) -> None:
    """Add ``sessions``, ``watch`` and ``replay`` to the CLI's subparsers (``attach`` is cli/starting.py's)."""
    sessions = verbs.add_parser("sessions", help="list the most recent recorded sessions, live ones first")
    sessions.add_argument("--json", action="store_true", help="print them as JSON")
    sessions.add_argument("--limit", type=int, default=20, metavar="N",
                          help="at most the N most recent (default 20; 0 for all)")
    sessions.add_argument("--live", action="store_true", help="only sessions whose kernel is still running")
    sessions.add_argument("--name", help="only sessions of this name (e.g. s1)")
    sessions.set_defaults(run=_sessions)
    watch = verbs.add_parser("watch", help="print a session's events as they are recorded, until it ends")
    watch.add_argument("session", nargs="?", default="current", metavar="SESSION", help=SESSION)
    _filters(watch)
    watch.add_argument("--new", action="store_true", help="only events recorded from now on")
    watch.set_defaults(run=_watch)
    replay = verbs.add_parser("replay", help="print a recording's events again, at once or at their pace")
    replay.add_argument("source", metavar="FILE_OR_SESSION")
    replay.add_argument("--timed", action="store_true", help="wait between events as long as the session did")
    replay.add_argument("--speed", type=speed, default=1.0, metavar="X", help="with --timed: this many times "
                        "faster, e.g. 2x")
    _filters(replay)
    replay.set_defaults(run=_replay)


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--filter", type=lambda text: {t.strip() for t in text.split(",") if t.strip()},
                        metavar="TYPES", help="only these event types, comma-separated (e.g. stopped,output)")
    parser.add_argument("--json", action="store_true", help="print each event as a JSON line")


def speed(text: str) -> float:
    """``2x``, ``2`` or ``0.5x`` as a factor; anything else is refused by argparse."""
    match = _SPEED.match(text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a speed such as 2x or 0.5x")
    return float(match.group(1))


def _kept(events: Iterable[dict[str, Any]], types: set[str] | None) -> list[dict[str, Any]]:
    return [e for e in events if not types or e.get("type") in types]


# -- sessions ----------------------------------------------------------------------------------------

def chosen(entries: list[dict[str, Any]], limit: int = 20, live: bool = False,
           name: str | None = None) -> list[dict[str, Any]]:
    """The sessions ``sessions`` lists (oldest first given): the ``limit`` most recent kept, live ones first."""
    kept = [e for e in entries if (not live or e["live"]) and (name is None or e.get("name") == name)]
    recent = kept[-limit:] if limit > 0 else kept
    return sorted(reversed(recent), key=lambda e: not e["live"])


def _sessions(options: argparse.Namespace) -> int:
    entries = chosen(Home().sessions(), options.limit, options.live, options.name)
    printer = Printer(options.json)
    if options.json:
        printer.data({"sessions": entries})
        return 0
    rows = [(e["uid"], e.get("id", ""), e.get("name", ""), e.get("backend", ""),
             "live" if e["live"] else e.get("state", ""), e.get("pid", ""),
             time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.get("start") or 0)),
             short_path(str(e.get("target") or ""))) for e in entries]
    printer.table(("uid", "id", "name", "backend", "state", "owner", "started", "target"), rows,
                  "no recorded sessions")
    return 0


# -- watch -------------------------------------------------------------------------------------------

def _ended(home: Home, uid: str) -> Callable[[], bool]:
    def ended() -> bool:
        return not home.resolve(uid)["live"]
    return ended


def _watch(options: argparse.Namespace) -> int:
    home = Home()
    entry = home.resolve(options.session)
    path = home.folder(entry["uid"]) / "events.jsonl"
    printer = Printer(options.json)
    offset = path.stat().st_size if options.new else 0
    try:
        for batch in home.follow(path, offset, stop=_ended(home, entry["uid"])):
            for event in _kept(batch, options.filter):
                printer.event(event)
    except KeyboardInterrupt:
        return 130
    return 0


# -- replay ------------------------------------------------------------------------------------------

def replay(events: list[dict[str, Any]], show: Callable[[dict[str, Any]], None], timed: bool = False,
           speed: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> None:
    """Show ``events`` in order; ``timed``: after waiting the time between them, divided by ``speed``."""
    last = None
    for event in events:
        ts = event.get("ts")
        if timed and last is not None and isinstance(ts, (int, float)):
            sleep(max(0.0, ts - last) / speed)
        if isinstance(ts, (int, float)):
            last = ts if last is None else max(last, ts)
        show(event)


def _replay(options: argparse.Namespace) -> int:
    path = Home().events_file(options.source)
    events, _ = read_events(path)
    printer = Printer(options.json)
    try:
        replay(_kept(in_order(events), options.filter), printer.event, options.timed, options.speed)
    except KeyboardInterrupt:
        return 130
    return 0


# -- attach ------------------------------------------------------------------------------------------

def attach_session(options: argparse.Namespace) -> int:
    """The session's events above a prompt that takes the CLI's operation subcommands (history, completion)."""
    home = Home()
    entry = home.resolve(options.session)
    uid = entry["uid"]
    path = home.folder(uid) / "events.jsonl"
    printer = Printer()
    done = threading.Event()
    start = path.stat().st_size  # taken before the prompt can send a command: no event of its answer is missed

    def follow() -> None:
        for batch in home.follow(path, start, stop=lambda: done.is_set() or _ended(home, uid)()):
            for event in batch:
                if event.get("type") not in ("session", "snapshot", "command_response"):
                    printer.event(event)

    threading.Thread(target=follow, name="attach events", daemon=True).start()
    parser = argparse.ArgumentParser(prog="", add_help=False)
    operations.register(parser.add_subparsers(dest="verb", required=True))
    words = ["pause", "continue", "next", "step-in", "step-out", "inspect", "eval", "bp", "help", "quit"]
    printer.text(f"attached to {uid} ({entry.get('name')}); commands: {', '.join(words)}")
    try:
        for line in _lines(words, home.root / "attach_history"):
            text = line.strip()
            if text in ("quit", "exit"):
                break
            if not text:
                continue
            if text == "help":
                printer.text("commands: " + ", ".join(words[:-2]) + " (as the subcommands, without --session)")
                continue
            try:
                typed = shlex.split(text)
                if typed[0] not in words:
                    raise RelayError("invalid_request", f"{typed[0]!r} is not a command here.",
                                     "Type help for the commands.")
                given = parser.parse_args([*typed, "--session", uid])
                given.run(given)
            except RelayError as exc:
                printer.text(f"error: {exc.code}: {exc.message}", "bold red")
            except SystemExit:
                continue
            except ValueError as exc:
                printer.text(f"error: {exc}", "bold red")
    finally:
        done.set()
    return 0


def _lines(words: list[str], history: Any) -> Iterable[str]:
    """Lines typed at a prompt_toolkit prompt (history, completion) on a terminal; stdin's lines otherwise."""
    if not sys.stdin.isatty():
        yield from sys.stdin
        return
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import WordCompleter
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.patch_stdout import patch_stdout

    prompt = PromptSession(history=FileHistory(str(history)), completer=WordCompleter(words))
    with patch_stdout():
        while True:
            try:
                yield prompt.prompt("debug> ")
            except (EOFError, KeyboardInterrupt):
                return

