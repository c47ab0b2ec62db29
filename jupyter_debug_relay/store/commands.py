"""Commands from outside: the lines other processes append to a live session's ``commands.jsonl``.

Each line ``{"id", "type": OPERATION, "args": {...}}`` is run by the relay that owns the session and answered
by a ``command_response`` event (``command_id``, ``ok``, ``result`` or ``error``). A line that is not such an
object gets an ``error`` event and nothing else happens. One ``watchfiles`` watch (inotify) covers the commands
files of every session of the relay: a watch wakes to check for its end, so one per session would cost the
process a wake-up per session every few milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import RelayError
from ..model import as_dict
from .recording import COMMANDS

if TYPE_CHECKING:
    from ..engine.session import Session

log = logging.getLogger(__name__)


class SessionStore(Protocol):
    """What runs a command (``recorder.SessionStore``): the operations it may name, and the runner the facade gave."""

    known: Any
    runner: Any

MAX_LINE = 64 * 1024  # a longer line is refused unread


class CommandWatchers:
    """One watch over the sessions folder of the home, for the commands files of the relay's live sessions."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.watching: dict[Path, CommandWatcher] = {}
        self._stop = asyncio.Event()
        self._started = False

    def add(self, store: SessionStore, session: Session, path: Path) -> None:
        """Answer the lines appended to ``path`` from now on, while ``session`` lives."""
        self.watching[path] = CommandWatcher(store, session, path)
        if not self._started:
            self._started = True
            session.manager.spawn(self._watch())

    def close(self) -> None:
        self._stop.set()

    async def _watch(self) -> None:
        from watchfiles import awatch

        def commands_file(_change: Any, path: str) -> bool:
            return path.endswith(COMMANDS)

        async for changes in awatch(self.folder, watch_filter=commands_file, stop_event=self._stop, debounce=30,
                                    step=30, rust_timeout=500, yield_on_timeout=True, raise_interrupt=False):
            for changed in {Path(path) for _, path in changes}:
                if changed in self.watching:
                    self.watching[changed].read()
            for path, watcher in list(self.watching.items()):
                if watcher.session.ended:  # a command sent just before the end is still answered
                    watcher.read()
                    del self.watching[path]


class CommandWatcher:
    """Reads one session's commands file from where it was, and runs each whole line."""

    def __init__(self, store: SessionStore, session: Session, path: Path) -> None:
        self.store, self.session, self.path = store, session, path
        self.offset = path.stat().st_size
        self._partial = b""
        self._running: set[asyncio.Task[Any]] = set()

    def read(self) -> None:
        """Run the whole lines appended since the last read."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError as exc:
            log.warning("commands of %s not readable: %s", self.session.id, exc)
            return
        self.offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        if len(self._partial) > MAX_LINE:
            self._refuse(self._partial[:200], f"A command line is longer than {MAX_LINE} bytes.")
            self._partial = b""
        for line in lines:
            if line.strip():
                self._take(line)

    def _refuse(self, line: bytes, message: str, command_id: Any = None) -> None:
        error = RelayError("invalid_request", message,
                           'Append one JSON object per line: {"id": "1", "type": "next", "args": {}}.')
        body = {**error.to_dict(), "line": line[:200].decode("utf-8", "replace")}
        if command_id is not None:
            body["command_id"] = command_id
        self.session.emit("error", body)

    def _take(self, line: bytes) -> None:
        try:
            command = json.loads(line)
        except ValueError:
            return self._refuse(line, "A line of commands.jsonl is not JSON.")
        if not isinstance(command, dict) or not isinstance(command.get("type"), str):
            return self._refuse(line, "A command must be a JSON object with a string type (an operation name).")
        command_id, args = command.get("id"), command.get("args", {})
        if not isinstance(args, dict):
            return self._refuse(line, "A command's args must be a JSON object.", command_id)
        if command["type"] not in self.store.known:
            return self._refuse(line, f"Unknown operation {command['type']!r}.", command_id)
        task = asyncio.get_running_loop().create_task(self._run(command_id, command["type"], args))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, command_id: Any, name: str, args: dict[str, Any]) -> None:
        try:
            result = await self.store.runner(self.session.id, name, args)
        except RelayError as exc:
            body: dict[str, Any] = {"command_id": command_id, "ok": False, "error": exc.to_dict()}
        except Exception as exc:  # a bug of ours is an answer, never silence
            log.exception("command %r failed", name)
            body = {"command_id": command_id, "ok": False,
                    "error": RelayError("invalid_request", f"The command failed: {exc!r}").to_dict()}
        else:
            body = {"command_id": command_id, "ok": True, "result": as_dict(result)}
        self.session.emit("command_response", body)
