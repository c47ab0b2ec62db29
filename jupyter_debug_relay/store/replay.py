"""A recording opened read-only: its stops in order, each with the stack, variables and output as recorded.

This is what a replay front end reads (the magic's text, the replay panel): ``Recording.open(uid_or_file)``,
then ``recording.stops``. Nothing here talks to a target.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RelayError
from ..model import Frame, OutputChunk, StopInfo, Variable, from_json, stop_from_json
from ..text import short_path, stop_reason
from .profiles import read_json
from .recording import INFO, Home, in_order, read_events, settled


@dataclass
class ReplayStop:
    """One stop of a recording: where, why, and what the store saw of it."""

    index: int
    seq: int
    offset: float  # seconds since the recording began
    stop: StopInfo
    frames: list[Frame] = field(default_factory=list)
    scope: str | None = None
    variables: list[Variable] = field(default_factory=list)
    output: list[OutputChunk] = field(default_factory=list)  # printed between the previous stop and this one

    @property
    def frame(self) -> Frame | None:
        return self.frames[0] if self.frames else self.stop.frame

    @property
    def where(self) -> str:
        """``compute() at app.py:6``."""
        frame = self.frame
        return f"{frame.name}() at {short_path(frame.path or '')}:{frame.line}" if frame else "?"

    def describe(self) -> str:
        """``#2 +1.25s breakpoint 1 in compute() at app.py:6``."""
        return f"#{self.index} +{self.offset:.2f}s {stop_reason(self.stop)} in {self.where}"


@dataclass
class Recording:
    """A session's recording, read once: its description (session.json), its events and its stops."""

    path: Path
    info: dict[str, Any]
    events: list[dict[str, Any]]
    stops: list[ReplayStop]
    after: list[OutputChunk]  # printed after the last stop
    exit_code: int | None = None

    @classmethod
    def open(cls, source: str | os.PathLike[str], home: Home | None = None) -> Recording:
        """A recording by uid, unique prefix, ``current``, a session folder or an ``events.jsonl`` file."""
        home = home or Home()
        path = home.events_file(os.fspath(source))
        events, _ = read_events(path)
        if not events and not path.is_file():
            raise RelayError("file_not_found", f"There is no recording at {path}.",
                             "Name one from `jupyter-debug-relay sessions`, or an events.jsonl file.")
        info_path = path.parent / INFO
        info = settled(read_json(info_path)) if info_path.is_file() else {}
        return cls(path, info, *_stops(events))

    @property
    def uid(self) -> str:
        return self.info.get("uid") or self.path.parent.name

    @property
    def name(self) -> str:
        return self.info.get("name") or self.uid

    def output_until(self, index: int) -> list[OutputChunk]:
        """Everything printed up to stop ``index``."""
        return [chunk for stop in self.stops[:index + 1] for chunk in stop.output]

    def describe(self) -> str:
        """The recording's title and one line per stop."""
        end = "" if self.exit_code is None else f", exit code {self.exit_code}"
        head = f"replay of {self.uid} ({self.name}): {len(self.stops)} stop{'s' if len(self.stops) != 1 else ''}{end}"
        return "\n".join([head, *(stop.describe() for stop in self.stops)])


def _stops(events: list[dict[str, Any]]
           ) -> tuple[list[dict[str, Any]], list[ReplayStop], list[OutputChunk], int | None]:
    """The events in order, the stops with their snapshots and output, the output after the last stop, and the
    exit code if the target ended."""
    events = in_order(events)
    start = next((e["ts"] for e in events if isinstance(e.get("ts"), (int, float))), 0.0)
    stops: list[ReplayStop] = []
    by_seq: dict[int, ReplayStop] = {}
    pending: list[OutputChunk] = []
    exit_code = None
    for event in events:
        kind, data = event.get("type"), event.get("data") or {}
        if kind == "stopped":
            stop = ReplayStop(len(stops), event.get("seq", 0), event.get("ts", start) - start, stop_from_json(data),
                              output=pending)
            pending = []
            stops.append(stop)
            by_seq[stop.seq] = stop
        elif kind == "snapshot" and data.get("stop") in by_seq:
            stop = by_seq[data["stop"]]
            stop.frames = [from_json(Frame, f) for f in data.get("frames") or []]
            stop.scope = data.get("scope")
            stop.variables = [from_json(Variable, v) for v in data.get("variables") or []]
        elif kind == "output":
            pending.append(OutputChunk(data.get("cursor", 0), data.get("category", "stdout"), data.get("text", ""),
                                       event.get("ts", 0.0)))
        elif kind in ("exited", "terminated") and data.get("exit_code") is not None:
            exit_code = data["exit_code"]
    return events, stops, pending, exit_code
