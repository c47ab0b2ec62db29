"""``snapshot``: the whole stop in one answer (source around it, stack, bounded locals, watches, last output)."""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

from pydantic import Field, StrictInt, StrictStr

from ..engine.session import Session
from ..errors import RelayError
from ..model import Variable, Watch, stop_from_json
from ..source.lines import file_line
from ..text import stop_reason
from . import params as P
from . import watching
from .base import SESSION_ERRORS, Context, Operation, S, session_of


def _bounded(low: int, high: int, text: str) -> Any:
    return Annotated[StrictInt, Field(ge=low, le=high, description=text)]


class SnapshotParams(P.SessionParams):
    """What a snapshot holds, each part bounded."""

    context: _bounded(0, 50, "Source lines shown on each side of the stopped line.") = 3
    frames: _bounded(1, 100, "How many frames of the stack, from the top.") = 5
    locals: _bounded(0, 500, "How many of the top frame's locals, at most.") = 20
    filter: StrictStr | None = Field(None, description="Only locals whose name matches: a substring or a glob (x*).")
    output: _bounded(0, 200, "How many of the last output lines.") = 5
    max_chars: _bounded(20, 100_000, "Each value cut to this many characters.") = 200


@dataclass
class SourceLine:
    """One line of source around the stop; ``current`` marks the stopped one."""

    line: int
    text: str
    current: bool = False


@dataclass
class FrameLine:
    """A frame of the stack with the text of its line."""

    id: int
    name: str
    path: str | None
    line: int
    text: str = ""


@dataclass
class Snapshot:
    """The stop seen at once: what ``source``, ``stack``, ``scopes``/``variables``, ``watches`` and ``output`` show."""

    source: list[SourceLine] = field(default_factory=list)
    frames: list[FrameLine] = field(default_factory=list)
    frames_total: int = 0
    locals: list[Variable] = field(default_factory=list)
    locals_total: int = 0
    watches: list[Watch] = field(default_factory=list)
    output: list[str] = field(default_factory=list)


def matches(name: str, pattern: str | None) -> bool:
    """Whether a variable's name passes a filter: a glob when it has ``*?[``, else a substring (case ignored)."""
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name.lower(), pattern.lower())
    return pattern.lower() in name.lower()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


async def _locals(session: Session, p: SnapshotParams) -> tuple[list[Variable], int]:
    if p.locals == 0:
        return [], 0
    scopes = await session.scopes(None)
    if not scopes:
        return [], 0
    page = await session.variables(scopes[0].ref, 0, P.MAX_PAGE if p.filter else p.locals)
    values = [v for v in page.items if not v.group]
    kept = [replace(v, value=_cut(v.value, p.max_chars)) for v in values if matches(v.name, p.filter)]
    return kept[:p.locals], len(kept) if p.filter else page.total - (len(page.items) - len(values))


async def _source(session: Session, p: SnapshotParams, line: int) -> list[SourceLine]:
    try:
        text = await session.source(None)
    except RelayError:
        return []
    lines = str(text).splitlines()
    low, high = max(1, line - p.context), min(len(lines), line + p.context)
    return [SourceLine(n, _cut(lines[n - 1], p.max_chars), n == line) for n in range(low, high + 1)]


async def take(session: Session, p: SnapshotParams) -> Snapshot:
    """The snapshot of a session: empty parts where it is not paused."""
    snap = Snapshot()
    if p.output:
        chunks = session.output.tail(p.output).chunks
        snap.output = [_cut(line, p.max_chars) for line in "".join(c.text for c in chunks).splitlines()[-p.output:]]
    stop = session.stop
    if session.state != "paused" or stop is None or stop.frame is None:
        return snap
    (frames, snap.frames_total), snap.source, (snap.locals, snap.locals_total), snap.watches = await asyncio.gather(
        session.stack(None, 0, p.frames), _source(session, p, stop.frame.line), _locals(session, p),
        watching.values(session))
    snap.frames = [FrameLine(f.id, f.name, f.path, f.line, _cut(file_line(f.path, f.line).strip(), p.max_chars))
                   for f in frames]
    current = [s.text for s in snap.source if s.current]
    if current and snap.frames:  # the top frame's line from the text the adapter gave (a file it alone has)
        snap.frames[0].text = current[0].strip()
    return snap


async def _snapshot(ctx: Context, p: SnapshotParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    return {"state": session.state, "stop": session.stop, "snapshot": await take(session, p)}


OPERATIONS = (
    Operation("snapshot", SnapshotParams, _snapshot,
              "The stop at once: source around it, the top frames, the top frame's locals, watches, last output.",
              ("state", "stop", "snapshot"), SESSION_ERRORS,
              when="Use it after each stop instead of stack, scopes, variables and source: one call, bounded.",
              http=(f"GET {S}/snapshot",)),
)

RESULT_TYPES: dict[str, Any] = {"snapshot": Snapshot}


def render(result: dict[str, Any], shorten: Callable[[str | None], str] = str) -> str:
    """A snapshot as a few lines of text (from its JSON form): where, the source, the stack, locals, watches, output."""
    snap, stop = result.get("snapshot") or {}, result.get("stop")
    if stop and stop.get("frame"):
        frame = stop["frame"]
        lines = [f"paused ({stop_reason(stop_from_json(stop))}) at {shorten(frame.get('path'))}:"
                 f"{frame.get('line')} in {frame.get('name')}"]
    else:
        lines = [str(result.get("state"))]
    lines += [f"{'>' if s['current'] else ' '}{s['line']:5} {s['text']}".rstrip() for s in snap.get("source", [])]
    if snap.get("frames"):
        lines.append(f"stack ({snap['frames_total']} frames):")
        lines += [f"  #{i} {f['name']} at {shorten(f['path'])}:{f['line']}  {f['text']}".rstrip()
                  for i, f in enumerate(snap["frames"])]
    if snap.get("locals"):
        shown = len(snap["locals"])
        more = f", {snap['locals_total'] - shown} more" if snap["locals_total"] > shown else ""
        lines.append(f"locals{more}:")
        lines += [f"  {v['name']} = {v['value']}" + (f"  ({v['type']})" if v.get("type") else "")
                  for v in snap["locals"]]
    if snap.get("watches"):
        lines.append("watches:")
        lines += [f"  {w['expression']} = {w['value'] if w.get('error') is None else 'error: ' + w['error']}"
                  for w in snap["watches"]]
    if snap.get("output"):
        lines.append("output:")
        lines += [f"  {line}" for line in snap["output"]]
    return "\n".join(lines)
