"""The session store's files, as a contract: the home, a folder per session, the index, and reading them.

``HOME/sessions/<uid>/events.jsonl`` (one event per line: ``seq``, ``ts``, ``type``, ``session``, ``data``),
``commands.jsonl`` (lines ``{"id", "type", "args"}`` for the owning relay) and ``session.json``;
``HOME/current`` links to the newest session's folder; ``HOME/index.json`` lists them all. Every reader goes
through ``Home``, which treats a session whose owner process is gone as ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import RelayError
from ..transports import procfs
from .profiles import home, locked, read_json, write_json

EVENTS, COMMANDS, INFO, INDEX, CURRENT = "events.jsonl", "commands.jsonl", "session.json", "index.json", "current"
ENDED = ("terminated", "failed", "ended")
RETENTION = 7 * 24 * 3600.0  # seconds an ended recording is kept


def new_uid(now: float | None = None) -> str:
    """A session's unique id: ``YYYYMMDD-HHMMSS-xxxx`` (local time, four random hex digits)."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + "-" + secrets.token_hex(2)


def settled(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` (from the index or a session.json) with ``live``; a live state whose owner is gone reads ended."""
    entry = dict(entry)
    live = entry.get("state") not in ENDED and procfs.alive(entry.get("pid"))
    if not live and entry.get("state") not in ENDED:
        entry["state"] = "ended"
    entry["live"] = live
    return entry


def _by_name(sessions: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The sessions called ``name`` that ``resolve`` may pick from: the live ones, or else the latest one."""
    named = [e for e in sessions if e.get("name") == name]
    return [e for e in named if e["live"]] or named[-1:]


def read_events(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The whole lines of ``path`` from byte ``offset`` as events (a line that is not JSON is skipped) and the
    offset after the last whole line."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    events = []
    for line in data[:end].splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    return events, offset + end


def in_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A recording's events in the order they happened: by seq, a stop's snapshot after the events of its stop."""
    return sorted(events, key=lambda e: seq if isinstance(seq := e.get("seq"), int) else 0)


class Home:
    """The store's folder: sessions by uid, the index, the ``current`` link; shared by every kernel of a user."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root else home()

    def folder(self, uid: str) -> Path:
        return self.root / "sessions" / uid

    def make_folder(self) -> tuple[str, Path]:
        """A new uid and its folder, made (``0700``) so no other kernel can take the same one."""
        (self.root / "sessions").mkdir(parents=True, exist_ok=True, mode=0o700)
        while True:
            uid = new_uid()
            try:
                self.folder(uid).mkdir(mode=0o700)
            except FileExistsError:
                continue
            return uid, self.folder(uid)

    def point_current(self, uid: str) -> None:
        """Make ``current`` link to ``uid``'s folder (a new link renamed over the old one)."""
        link = self.root / CURRENT
        temp = self.root / f".{CURRENT}.{os.getpid()}.{secrets.token_hex(4)}"
        os.symlink(Path("sessions") / uid, temp)
        os.replace(temp, link)

    # -- the index --------------------------------------------------------------------------

    def _read_index(self) -> list[dict[str, Any]]:
        path = self.root / INDEX
        if not path.is_file():
            return []
        try:
            data = read_json(path)
        except RelayError:
            return []
        return [e for e in data.get("sessions", []) if isinstance(e, dict) and isinstance(e.get("uid"), str)]

    def record(self, entry: dict[str, Any]) -> None:
        """Put ``entry`` (by its uid) in its session.json, and in the index without its capabilities (the index is
        rewritten whole at every start and end: with them it was 1.6 KB a session, 27 ms to write 350), under the
        home's lock."""
        with locked(self.root):
            entries = [e for e in self._read_index() if e["uid"] != entry["uid"]]
            entries.append({key: value for key, value in entry.items() if key != "capabilities"})
            write_json(self.folder(entry["uid"]) / INFO, entry)
            write_json(self.root / INDEX, {"sessions": entries}, indent=None)

    def prune(self, retention: float = RETENTION, now: float | None = None) -> list[str]:
        """Remove the sessions ended longer than ``retention`` seconds ago (and index entries without a folder)."""
        now = time.time() if now is None else now
        removed = []
        with locked(self.root):
            kept = []
            for entry in self._read_index():
                folder = self.folder(entry["uid"])
                if not folder.is_dir():
                    removed.append(entry["uid"])
                    continue
                if not settled(entry)["live"]:
                    with contextlib.suppress(OSError):
                        if now - (folder / EVENTS).stat().st_mtime > retention:
                            shutil.rmtree(folder, ignore_errors=True)
                            removed.append(entry["uid"])
                            continue
                kept.append(entry)
            if removed:
                write_json(self.root / INDEX, {"sessions": kept}, indent=None)
        return removed

    def sessions(self) -> list[dict[str, Any]]:
        """Every recorded session, oldest first, with ``live`` and a state that says ended once the owner is gone."""
        return sorted((settled(e) for e in self._read_index()), key=lambda e: (e.get("start") or 0, e["uid"]))

    # -- finding one ------------------------------------------------------------------------

    def resolve(self, key: str | None) -> dict[str, Any]:
        """The session named by ``key``: a uid, a unique prefix of one, a name, or ``current`` (the default).

        A name is the live session of that name, or else the latest one; names repeat across kernels and days.
        """
        sessions = self.sessions()
        if key in (None, "", CURRENT):
            link = self.root / CURRENT
            target = os.path.basename(os.readlink(link)) if link.is_symlink() else None
            found = [e for e in sessions if e["uid"] == target]
            if not found:
                raise RelayError("session_not_found", f"There is no current session in {self.root}.",
                                 "Start one in a kernel (%debug_session launch ...) or name one from "
                                 "`jupyter-debug-relay sessions`.")
            return found[0]
        found = ([e for e in sessions if e["uid"] == key] or [e for e in sessions if e["uid"].startswith(key)]
                 or _by_name(sessions, key))
        if len(found) != 1:
            what = "No session matches" if not found else f"{len(found)} sessions match"
            raise RelayError("session_not_found", f"{what} {key!r} in {self.root}.",
                             "Give a name, a unique id or prefix from `jupyter-debug-relay sessions`, or `current`.")
        return found[0]

    def events_file(self, key: str) -> Path:
        """The events file of a session (``key`` as in ``resolve``) or ``key`` itself when it names a file."""
        path = Path(key).expanduser()
        if path.is_dir() and (path / EVENTS).is_file():
            return path / EVENTS
        if path.is_file():
            return path
        return self.folder(self.resolve(key)["uid"]) / EVENTS

    def follow(self, path: Path, offset: int = 0, stop: Any = None) -> Iterator[list[dict[str, Any]]]:
        """The events in ``path`` from byte ``offset``, then each batch appended to it, until ``stop()`` is true."""
        from watchfiles import watch

        events, offset = read_events(path, offset)
        yield events
        for _ in watch(path, debounce=50, step=10, rust_timeout=500, yield_on_timeout=True,
                       raise_interrupt=False):
            events, offset = read_events(path, offset)
            if events:
                yield events
            if stop is not None and stop():
                events, offset = read_events(path, offset)
                if events:
                    yield events
                return
