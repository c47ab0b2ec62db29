"""Result objects of the magics: a short stable text repr, a readable HTML repr, the data as attributes."""

from __future__ import annotations

import dataclasses
import html
import shlex
from collections.abc import Sequence
from typing import Any

from ..errors import RelayError
from ..model import (
    AsyncTasks,
    Breakpoint,
    Frame,
    OutputPage,
    ProcessInfo,
    Recording,
    SessionInfo,
    StopInfo,
    Thread,
    Variable,
    Watch,
    as_dict,
)
from ..source.lines import line_of
from ..text import (
    breakpoint_text,
    called,
    doctor_lines,
    exit_text,
    finished_text,
    history_lines,
    line_text,
    recorded_state_lines,
    recording_line,
    short_path,
    signal_name,
    state_text,
    stop_text,
    stop_with_line,
    task_rows,
    task_waits,
    task_where,
    tasks_lines,
    watch_lines,
)

SOURCE_CONTEXT = 5  # lines shown around the current line in a stop's HTML
CYCLE = "  ↺ cycle: an ancestor again"  # after a value that is one of its ancestors in the tree


def _e(value: Any) -> str:
    return html.escape(str(value))


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], marked: int | None = None) -> str:
    head = "".join(f"<th style='text-align:left'>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr{}>{}</tr>".format(
            " style='background:#fff3c4;font-weight:bold'" if i == marked else "",
            "".join(f"<td style='text-align:left'><code>{_e(c)}</code></td>" for c in row),
        )
        for i, row in enumerate(rows)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Result:
    """What a magic returns; ``text`` is its stable plain-text form, ``error`` a failure if any."""

    error: RelayError | None = None

    def __init__(self, text: str) -> None:
        self.text = text

    @property
    def ok(self) -> bool:
        return self.error is None

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return f"<pre>{_e(self.text)}</pre>"


class ErrorResult(Result):
    """A failed command: one line with the code, the message and the hint."""

    def __init__(self, error: RelayError) -> None:
        hint = f" Hint: {error.hint}" if error.hint else ""
        super().__init__(f"error {error.code}: {error.message}{hint}")
        self.error = error
        self.code = error.code

    def _repr_html_(self) -> str:
        hint = f"<br><i>{_e(self.error.hint)}</i>" if self.error.hint else ""
        return (f"<div style='color:#b00020'><b>{_e(self.error.code)}</b>: {_e(self.error.message)}{hint}</div>")


class StopResult(Result):
    """Where a session stands after a wait: paused (with the source), ended, or still running."""

    def __init__(self, session: str, state: str, *, stop: StopInfo | None = None, exit_code: int | None = None,
                 source: str | None = None, waited: float | None = None, prefix: str = "",
                 thread_end: dict[str, Any] | None = None, note: str = "", watches: list[Watch] | None = None) -> None:
        if stop is not None and stop.frame is not None and not stop.source_line and source is not None:
            # a frame the stop did not come with (`frame N`): its line from the source shown
            stop = dataclasses.replace(stop, source_line=line_of(source, stop.frame.line))
        self.session, self.state, self.stop, self.exit_code, self.source = session, state, stop, exit_code, source
        self.watches = watches or []
        self.frame = stop.frame if stop else None
        self.thread_end = thread_end
        self.traceback = stop.exception.traceback.rstrip("\n") if stop and stop.exception else ""
        if thread_end is not None:  # the step ran its thread to the end (a Mycel flow); another may be paused
            text = finished_text(thread_end) + (f"; {stop_text(stop)}" if stop is not None else "")
        elif stop is not None:
            note_line = f"\n  note: {stop.source_note}" if stop.source_note else ""
            text = stop_with_line(stop, stop_text(stop)) + note_line + (f"\n{self.traceback}" if self.traceback else "")
        elif state in ("terminated", "failed"):
            text = (exit_text(exit_code) if state == "terminated" else "failed") + (f"\n  note: {note}" if note else "")
        elif waited is not None:
            text = f"still running after {waited:g} s (use `%debug_session wait` or `pause`)"
            text += f": {note}" if note else ""
        else:
            text = state
        super().__init__(prefix + text + watch_lines(self.watches))

    def _repr_html_(self) -> str:
        headline = self.text.removesuffix(f"\n{self.traceback}") if self.traceback else self.text
        head, _, line = headline.partition("\n")
        out = f"<div><b>{_e(head)}</b></div>"
        if self.source is not None and self.frame is not None:
            out += source_html(self.source, self.frame.line)
        elif line:
            out += f"<pre>{_e(line)}</pre>"
        if self.traceback:
            out += f"<pre style='color:#b00020'>{_e(self.traceback)}</pre>"
        return out


def source_html(source: str, line: int, context: int = SOURCE_CONTEXT) -> str:
    lines = source.splitlines()
    first, last = max(1, line - context), min(len(lines), line + context)
    rows = []
    for number in range(first, last + 1):
        mark = "→" if number == line else " "
        style = " style='background:#fff3c4'" if number == line else ""
        rows.append(f"<span{style}>{mark} {number:>4}  {_e(lines[number - 1])}</span>")
    return "<pre style='line-height:1.3'>" + "\n".join(rows) + "</pre>"


class StackResult(Result):
    """The frames of a thread from frame ``start`` (of ``total``); the selected one marked, native code said so."""

    def __init__(self, frames: list[Frame], selected: int = 0, start: int = 0, total: int | None = None,
                 source_lines: Sequence[str] = ()) -> None:
        self.frames, self.selected, self.start = frames, selected, start
        self.total = total if total is not None else start + len(frames)
        lines = []
        for i, f in enumerate(frames):
            where = "[native code]" if f.native else f"at {short_path(f.path)}:{f.line}"
            lines.append(f"{'→' if start + i == selected else ' '} #{start + i} {called(f.name)} {where}")
            shown = line_text(f.line, source_lines[i]) if i < len(source_lines) else ""
            if shown:
                lines.append(f"      {shown}")
        shown_to = start + len(frames)
        if frames and (start or shown_to < self.total):
            lines.append(f"… frames {start}–{shown_to - 1} of {self.total} (use --start/--levels for more)")
        super().__init__("\n".join(lines) or "no frames")

    def _repr_html_(self) -> str:
        rows = [(f"#{i}", f.name, "native code" if f.native else short_path(f.path), "" if f.native else f.line)
                for i, f in enumerate(self.frames, self.start)]
        return _table(("", "function", "file", "line"), rows, self.selected - self.start)


class VariablesResult(Result):
    """Variables of a scope or children of a value, with the paging position."""

    def __init__(self, title: str, variables: list[Variable], start: int = 0, total: int | None = None) -> None:
        self.title, self.variables, self.start = title, variables, start
        self.total = total if total is not None else len(variables)
        lines = [f"{v.name} = {_one_line(v.value)}" + (f"  ({v.type})" if v.type else "") + (CYCLE if v.cycle else "")
                 for v in variables if not v.group]
        shown_to = start + len(variables)
        if start or shown_to < self.total:
            lines.append(f"… {start}–{shown_to} of {self.total} (use --start/--count for more)")
        super().__init__("\n".join(lines) or f"{title}: no variables")

    def __getitem__(self, name: str) -> Variable:
        for var in self.variables:
            if var.name == name:
                return var
        raise KeyError(name)

    def _repr_html_(self) -> str:
        rows = "".join(_variable_row(v) for v in self.variables)
        more = f"<div><i>{self.start}–{self.start + len(self.variables)} of {self.total}</i></div>"
        return f"<div><b>{_e(self.title)}</b></div><table>{rows}</table>{more}"


def _variable_row(var: Variable) -> str:
    """A table row; a value with children folds out how to list them."""
    name = f"<code>{_e(var.name)}</code>"
    if var.ref:
        name = f"<details><summary>{name}</summary>ref {var.ref}: <code>%debug_session vars {var.ref}</code></details>"
    cut = " <i>(cut)</i>" if var.truncated else ""
    cut += f" <i>{_e(CYCLE.strip())}</i>" if var.cycle else ""
    return (f"<tr><td style='text-align:left'>{name}</td>"
            f"<td style='text-align:left'><code>{_e(var.value)}</code>{cut}</td></tr>")


def _one_line(value: str, limit: int = 200) -> str:
    """A value as one line of text: its first line, cut at ``limit``; the HTML shows it whole."""
    first = value.split("\n", 1)[0]
    return first[:limit] + " …" if len(first) > limit or first != value else first


class ValueResult(Result):
    """The result of an evaluation or an assignment."""

    def __init__(self, variable: Variable) -> None:
        self.variable, self.value, self.type = variable, variable.value, variable.type
        super().__init__(variable.value)


SESSION_COLUMNS = ("CUR", "ID", "UID", "NAME", "BACKEND", "STATE", "DETAIL", "AT", "TARGET")


class SessionsResult(Result):
    """Every session in a table an agent can split: a header, one word per column (quoted if it has spaces).

    ``CUR`` is ``*`` for the current session; ``-`` stands for an empty value (a name that is the id, no place).
    """

    def __init__(self, infos: list[SessionInfo], current: str | None) -> None:
        self.sessions, self.current = infos, current
        rows = [[_word(v) for v in ("*" if i.id == current else "-", i.id, i.uid or "-",
                                    "-" if i.name == i.id else i.name, i.backend, i.state, _detail(i), _at(i),
                                    short_path(i.target) or "-")]
                for i in infos]
        super().__init__(_columns([list(SESSION_COLUMNS), *rows]) if infos
                         else "no sessions (start one with `%debug_session launch SCRIPT`)")

    def _repr_html_(self) -> str:
        rows = [(("*" if i.id == self.current else ""), i.id, i.uid or "", "" if i.name == i.id else i.name,
                 i.backend, state_text(i), short_path(i.target)) for i in self.sessions]
        return _table(("", "id", "uid", "name", "backend", "state", "target"), rows)


def _word(value: str) -> str:
    """A column's value as one word: quoted as a shell would when it has spaces (``shlex.split`` reads it back)."""
    return shlex.quote(value) if not value or any(c.isspace() or c in "'\"" for c in value) else value


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(row[n]) for row in rows) for n in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([*(v.ljust(w) for v, w in zip(row, widths, strict=False)), row[-1]])
                     for row in rows)


def _detail(info: SessionInfo) -> str:
    """One word on the state: why it paused, how it ended (exit=3, signal=SIGSEGV, stopped-by-user), what failed."""
    if info.state == "paused" and info.stop is not None:
        return info.stop.reason.replace(" ", "-")
    if info.state == "terminated":
        if info.stopped_by_user:
            return "stopped-by-user"
        if info.exit_code is None:
            return "ended"
        return f"signal={signal_name(-info.exit_code)}" if info.exit_code < 0 else f"exit={info.exit_code}"
    if info.state == "failed" and info.error:
        return str(info.error.get("code"))
    return "-"


def _at(info: SessionInfo) -> str:
    frame = info.stop.frame if info.state == "paused" and info.stop is not None else None
    return f"{short_path(frame.path)}:{frame.line}" if frame is not None else "-"


class StatusResult(Result):
    """One session's state, where it is and its target."""

    def __init__(self, info: SessionInfo) -> None:
        self.info, self.state, self.stop = info, info.state, info.stop
        why = f" — {info.error['message']}" if info.state == "terminated" and info.error else ""  # how it ended
        super().__init__(f"{info.name} ({info.backend}, {short_path(info.target)}): {state_text(info)}{why}")


class ThreadsResult(Result):
    """The target's threads; the one the last stop is about starred."""

    def __init__(self, threads: list[Thread], current: int | None) -> None:
        self.threads = threads
        lines = [f"{'*' if t.id == current else ' '} {t.id} {t.name}" + (" (stopped)" if t.stopped else "")
                 for t in threads]
        super().__init__("\n".join(lines) or "no threads")


class TasksResult(Result):
    """The target's asyncio tasks as a tree of what awaits what, one per event loop; the stopped task marked."""

    def __init__(self, found: AsyncTasks) -> None:
        self.tasks, self.loops, self.total, self.note = found.tasks, found.loops, found.total, found.note
        self._json = as_dict(found)
        super().__init__("\n".join(tasks_lines(self._json)))

    def _repr_html_(self) -> str:
        rows = task_rows(self._json)
        if not rows:
            return super()._repr_html_()
        cells = [(branch.replace(" ", "\u00a0") + task["name"], *(("", "", "shown above") if again else
                  (task["state"], task_where(task), task_waits(task)))) for _, branch, task, again in rows]
        marked = next((n for n, (_, _, task, again) in enumerate(rows) if task.get("stopped") and not again), None)
        note = f"<div><i>{_e(self.note)}</i></div>" if self.note else ""
        return _table(("task", "state", "where", "doing"), cells, marked) + note  # branches keep their width


class BreakpointsResult(Result):
    """Breakpoints, one per line."""

    def __init__(self, breakpoints: list[Breakpoint], empty: str = "no breakpoints") -> None:
        self.breakpoints = breakpoints
        self.breakpoint = breakpoints[0] if len(breakpoints) == 1 else None
        super().__init__("\n".join(breakpoint_text(bp) for bp in breakpoints) or empty)

    def _repr_html_(self) -> str:
        rows = [(bp.id, bp.kind, breakpoint_text(bp).split(" at ", 1)[1]) for bp in self.breakpoints]
        return _table(("id", "kind", "where / status"), rows)


class OutputResult(Result):
    """Target output read from a cursor; ``cursor`` is where the next read starts."""

    def __init__(self, page: OutputPage, tail: int | None = None) -> None:
        self.page, self.chunks, self.cursor, self.dropped = page, page.chunks, page.cursor, page.dropped
        text = page.text
        if tail is not None:
            text = "\n".join(text.splitlines()[-tail:]) if tail > 0 else ""
        note = f"[{page.dropped:,} bytes of earlier output dropped]\n" if page.dropped else ""
        super().__init__((note + text).rstrip("\n"))


class DoctorResult(Result):
    """The doctor's report: the debugpy each target Python runs, each speed-up on or off there and why."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.report = report
        super().__init__("\n".join(doctor_lines(report)))


class ProcessesResult(Result):
    """Local Python processes to attach to: pid, whether debugpy listens (and where), command line."""

    def __init__(self, processes: list[ProcessInfo]) -> None:
        self.processes = processes
        lines = [f"{p.pid:>7}  {_listens(p):<22}  {_one_line(p.command, 400)}" for p in processes]
        super().__init__("\n".join(lines) or "no Python processes of yours to attach to")

    def _repr_html_(self) -> str:
        rows = [(p.pid, _listens(p), p.command) for p in self.processes]
        return _table(("pid", "debugpy", "command line"), rows)


def _listens(process: ProcessInfo) -> str:
    """``debugpy on port 5678`` (attach --port), ``debugpy loaded`` or ``-`` (attach --pid)."""
    if process.port is not None:
        return f"debugpy on port {process.port}"
    return "debugpy loaded" if process.debugpy else "-"


class RecordingResult(Result):
    """What ``record`` answers: what is recorded, and how much is held."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        super().__init__(recording_line(as_dict(recording)))


class HistoryResult(Result):
    """The recorded states, one per line: place, the line's text, what the line before changed; the shown marked."""

    def __init__(self, found: dict[str, Any]) -> None:
        self.recording, self.steps, self.total = found["recording"], found["steps"], found["total"]
        self._json = as_dict(found)
        super().__init__("\n".join(history_lines(self._json)))

    def _repr_html_(self) -> str:
        if not self.steps:
            return super()._repr_html_()
        position = self.recording.position
        rows = [(f"#{s.index}", f"{short_path(s.path)}:{s.line}", f"{s.function}()",
                 f"returned {s.value}" if s.kind == "return" else f"raised {s.value}" if s.kind == "exception"
                 else s.source_line.strip(),
                 ", ".join(f"{c.name} = {c.value}" for c in s.changes)) for s in self.steps]
        marked = next((n for n, s in enumerate(self.steps) if s.index == position), None)
        return f"<div>{_e(recording_line(self._json['recording']))}</div>" + _table(
            ("state", "where", "function", "line", "changed"), rows, marked)


class RecordedStateResult(Result):
    """A recorded state shown by ``back`` or ``forward``: its line and its locals, what changed marked."""

    def __init__(self, found: dict[str, Any]) -> None:
        self.recording, self.state = found["recording"], found["recorded"]
        self.locals = {v.name: v.value for v in self.state.locals} if self.state else {}
        self._json = as_dict(found)
        super().__init__("\n".join(recorded_state_lines(self._json)))

    def _repr_html_(self) -> str:
        if self.state is None:
            return super()._repr_html_()
        lines = recorded_state_lines(self._json)
        rows = [(v.name, v.value, "changed" if v.changed else "") for v in self.state.locals]
        marked = [n for n, v in enumerate(self.state.locals) if v.changed]
        head = "<br>".join(_e(line) for line in lines[:2])
        return f"<div><b>{head}</b></div>" + _table(("local", "value", ""), rows, marked[0] if marked else None)
