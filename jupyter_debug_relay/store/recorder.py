"""The session store: every session's events recorded into the home, written off the relay loop.

On the loop, recording an event is one put on a queue; a writer thread masks, encodes, caps and appends it in
batches, and keeps ``session.json`` and ``index.json`` up to date. At each stop the store keeps a snapshot (the
stack, the top frame's variables) for replay: what was looked at during the stop, else what the store fetched
itself once the stop had lasted ``look_after`` seconds, so a quick step pays nothing for it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.events import STATE_EVENTS, Event
from ..model import as_dict
from ..redact import mask
from .recording import COMMANDS, ENDED, EVENTS, RETENTION, Home

if TYPE_CHECKING:
    from ..engine.session import Session

log = logging.getLogger(__name__)

DEFAULT_RECORD_CAP = 32 << 20  # bytes per recording
BATCH = 0.02  # seconds the writer gathers events before it writes them
SNAPSHOT_FRAMES, SNAPSHOT_VARIABLES = 20, 50
KEPT_PAST_CAP = ("session", "terminated", "exited")  # still written after twice the cap
MAX_QUEUED_OUTPUT = 4 << 20  # output text waiting for the writer at most; more is counted as dropped, not held


@dataclass
class _Recording:
    """What the writer thread knows of one session's recording."""

    uid: str
    folder: Path
    entry: dict[str, Any]
    file: Any = None
    size: int = 0
    dropped_events: int = 0
    dropped_bytes: int = 0
    seq: int = 0  # the seq of the last line written
    dirty: bool = True
    lines: list[bytes] = field(default_factory=list)


class SessionStore:
    """Records the sessions of one relay under ``home`` (``$JUPYTER_DEBUG_RELAY_HOME`` by default).

    ``runner(session_id, operation, args)`` is given by the facade: it runs the lines other processes append to
    a session's ``commands.jsonl`` (see ``commands.CommandWatcher``).
    """

    def __init__(self, root: Path | str | None = None, cap: int = DEFAULT_RECORD_CAP, retention: float = RETENTION,
                 redact: bool = True, look_after: float = 0.5) -> None:
        self.home = Home(root)
        self.cap, self.retention, self.redact, self.look_after = cap, retention, redact, look_after
        self.runner: Any = None
        self.known: Any = ()  # the operation names a command may use
        self.recordings: dict[str, tuple[str, Path]] = {}  # session id -> (uid, folder), on the loop
        self._queue: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._tapped = False
        self._looks: dict[str, asyncio.TimerHandle] = {}
        self._commands: Any = None  # commands.CommandWatchers, once a session is recorded
        self._writer = threading.Thread(target=self._write_loop, name="session store", daemon=True)
        self._pruned = False
        self._flushed: list[threading.Event] = []  # flush() callers to wake once the batch is written
        self._queued_output = 0  # characters of output text on the queue (the writer takes them off)
        self._queued_lock = threading.Lock()

    # -- the loop side ----------------------------------------------------------------------

    def open(self, session: Session) -> None:
        """Give ``session`` a uid and a folder, and start recording it and watching its commands."""
        uid, folder = self.home.make_folder()
        (folder / COMMANDS).touch(mode=0o600)
        session.uid = uid
        self.recordings[session.id] = (uid, folder)
        manager = session.manager
        if not self._tapped:
            self._tapped = True
            manager.bus.taps.append(self._on_event)
            self._writer.start()
        entry = {"uid": uid, "id": session.id, "name": session.name, "backend": session.backend.kind,
                 "target": session.backend.target, "pid": os.getpid(), "start": session.created_at,
                 "state": session.state}
        self._queue.put(("open", session.id, uid, folder, entry))
        if self.runner is not None:
            from .commands import CommandWatchers

            if self._commands is None:
                self._commands = CommandWatchers(folder.parent)
            self._commands.add(self, session, folder / COMMANDS)

    def _on_event(self, event: Event) -> None:
        size = len(event.body.get("text") or "") if event.event == "output" else 0
        with self._queued_lock:
            if size and self._queued_output + size > MAX_QUEUED_OUTPUT:  # a flood: the ring keeps it, we count it
                self._queue.put(("dropped", event.session, size))
                return
            self._queued_output += size
        self._queue.put(("event", event, size))

    def at_stop(self, session: Session) -> None:
        """A stop began: look at it ourselves if it lasts, unless someone else does."""
        loop = asyncio.get_running_loop()
        mark = session.stops
        self._looks[session.id] = loop.call_later(self.look_after, lambda: session.manager.spawn(
            self._look(session, mark)))

    async def _look(self, session: Session, mark: int) -> None:
        def here() -> bool:
            return session.state == "paused" and session.stops == mark

        try:
            if here() and "frames" not in session.seen:
                await session.stack(None, 0, SNAPSHOT_FRAMES)
            if here() and "scopes" not in session.seen and session.seen.get("frames"):
                await session.scopes(session.seen["frames"][0].id)
            scopes = session.seen.get("scopes")
            if here() and scopes and "variables" not in session.seen and not session.listing:  # never a 2nd repr
                await session.variables(scopes[0].ref, 0, SNAPSHOT_VARIABLES)
        except Exception as exc:  # a stop that cannot be looked at is recorded without its snapshot
            log.debug("no snapshot of %s: %r", session.id, exc)

    def left_stop(self, session: Session, stop_seq: int) -> None:
        """A stop ended: record what was seen of it, in its place in time (after the events of the stop)."""
        timer = self._looks.pop(session.id, None)
        if timer is not None:
            timer.cancel()
        seen = session.seen
        if not seen:
            return
        variables = [v for v in seen.get("variables") or [] if not v.group]
        data = {"stop": stop_seq, "frames": seen.get("frames", [])[:SNAPSHOT_FRAMES],
                "scope": seen["scopes"][0].name if seen.get("scopes") else None,
                "variables": variables[:SNAPSHOT_VARIABLES], "more": len(variables) > SNAPSHOT_VARIABLES}
        # made JSON-ready by the writer; ``stop`` names its stop, seq and ts say when it was taken
        self._queue.put(("snapshot", session.id, session.manager.bus.last_seq, time.time(), data))

    def flush(self, timeout: float = 5.0) -> None:
        """Wait (from any thread but the relay loop) until everything recorded so far is on disk."""
        if not self._tapped:
            return
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait(timeout)

    def close(self) -> None:
        """Record what is still queued, mark every recording ended and stop the writer (on the loop, at close)."""
        if self._commands is not None:
            self._commands.close()
        if not self._tapped:
            return
        self._queue.put(("close",))
        self._writer.join(10.0)

    # -- the writer thread ------------------------------------------------------------------

    def _write_loop(self) -> None:
        recordings: dict[str, _Recording] = {}
        while True:
            items = [self._queue.get()]
            time.sleep(BATCH)
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            closing = False
            for item in items:
                try:
                    closing = self._take(item, recordings) or closing
                except Exception:  # the recording of one event must not stop the others
                    log.exception("session store: %s not recorded", item[0])
            self._flush(recordings, closing)
            while self._flushed:
                self._flushed.pop().set()
            if closing:
                return

    def _take(self, item: tuple[Any, ...], recordings: dict[str, _Recording]) -> bool:
        kind = item[0]
        if kind == "open":
            _, session_id, uid, folder, entry = item
            rec = recordings[session_id] = _Recording(uid, folder, entry, open(folder / EVENTS, "ab", buffering=0))
            os.chmod(folder / EVENTS, 0o600)
            self.home.record(entry)
            rec.dirty = False
            self.home.point_current(uid)
            if not self._pruned:
                self._pruned = True
                self.home.prune(self.retention)
        elif kind == "event":
            event: Event = item[1]
            with self._queued_lock:
                self._queued_output -= item[2]
            targets = [recordings[event.session]] if event.session in recordings else (
                [r for r in recordings.values() if r.entry["state"] not in ENDED] if event.session == "" else [])
            body, capabilities = event.body, None
            if event.event == "session" and "info" in body:  # the capabilities go to session.json, once
                info = dict(body["info"])
                capabilities = info.pop("capabilities", None)
                body = {**body, "info": info}
            for rec in targets:
                if event.event == "session":
                    self._track(rec, event.body)
                    if capabilities and rec.entry.get("capabilities") != capabilities:
                        rec.entry["capabilities"], rec.dirty = capabilities, True
                self._add(rec, event.seq, event.ts, event.event, body)
        elif kind == "dropped":
            rec = recordings.get(item[1])
            if rec is not None:
                rec.dropped_events += 1
                rec.dropped_bytes += item[2]
        elif kind == "snapshot":
            _, session_id, seq, ts, data = item
            rec = recordings.get(session_id)
            if rec is not None:
                self._add(rec, seq, ts, "snapshot", as_dict(data))
        elif kind == "flush":
            self._flushed.append(item[1])
        return kind == "close"

    def _track(self, rec: _Recording, body: dict[str, Any]) -> None:
        """Keep the session's description; session.json and the index change when it starts and when it ends."""
        info = body.get("info") or {}
        before, state = rec.entry["state"], body.get("state", rec.entry["state"])
        state = "running" if state == "paused" else state  # the lifecycle: running covers paused
        rec.entry.update({key: info[key] for key in ("name", "backend", "target") if info.get(key) is not None})
        rec.entry["state"] = state
        if state in ENDED:
            rec.entry["ended"] = time.time()
        rec.dirty = rec.dirty or state in ENDED or before in ("created", "launching")

    def _add(self, rec: _Recording, seq: int, ts: float, name: str, body: dict[str, Any]) -> None:
        data = mask(body) if self.redact else body
        line = json.dumps({"seq": seq, "ts": ts, "type": name, "session": rec.uid, "data": data},
                          default=str).encode() + b"\n"
        over = rec.size + len(line) > self.cap
        if (over and name not in STATE_EVENTS and name != "snapshot") or (
                rec.size + len(line) > 2 * self.cap and name not in KEPT_PAST_CAP):
            rec.dropped_events += 1
            rec.dropped_bytes += len(line)
            return
        if rec.dropped_events:
            self._note_dropped(rec, seq, ts)
        rec.lines.append(line)
        rec.size += len(line)
        rec.seq = max(rec.seq, seq)

    def _note_dropped(self, rec: _Recording, seq: int, ts: float) -> None:
        line = json.dumps({"seq": seq, "ts": ts, "type": "dropped", "session": rec.uid,
                           "data": {"events": rec.dropped_events, "bytes": rec.dropped_bytes,
                                    "reason": "recording cap"}}).encode() + b"\n"
        rec.lines.append(line)
        rec.size += len(line)
        rec.dropped_events = rec.dropped_bytes = 0

    def _flush(self, recordings: dict[str, _Recording], closing: bool) -> None:
        for rec in recordings.values():
            if closing:
                if rec.dropped_events:
                    self._note_dropped(rec, rec.seq, time.time())  # after the last line, in seq as in time
                if rec.entry["state"] not in ENDED:
                    rec.entry.update(state="terminated", ended=time.time())
                    rec.dirty = True
            try:
                if rec.lines:
                    rec.file.write(b"".join(rec.lines))
                    rec.lines.clear()
                if rec.dirty:
                    rec.dirty = False
                    self.home.record(rec.entry)
            except OSError as exc:
                log.warning("session store: %s not written: %s", rec.uid, exc)
            if closing:
                rec.file.close()
