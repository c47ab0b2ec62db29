"""Result objects of the magics: a short stable text repr, a readable HTML repr, the data as attributes."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ..errors import RelayError
from ..model import Breakpoint, Frame, OutputPage, SessionInfo, StopInfo, Thread, Variable, Watch
from ..text import breakpoint_text, exit_text, short_path, stop_text, watch_lines

SOURCE_CONTEXT = 5  # lines shown around the current line in a stop's HTML


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

    def __init__(self, session: str, state: str, stop: StopInfo | None = None, exit_code: int | None = None,
                 source: str | None = None, waited: float | None = None, prefix: str = "",
                 watches: list[Watch] | None = None) -> None:
        self.session, self.state, self.stop, self.exit_code, self.source = session, state, stop, exit_code, source
        self.watches = watches or []
        self.frame = stop.frame if stop else None
        if stop is not None:
            text = stop_text(stop)
        elif state in ("terminated", "failed"):
            text = exit_text(exit_code) if state == "terminated" else "failed"
        elif waited is not None:
            text = f"still running after {waited:g} s (use `%debug_session wait` or `pause`)"
        else:
            text = state
        super().__init__(prefix + text + watch_lines(self.watches))

    def _repr_html_(self) -> str:
        out = f"<div><b>{_e(self.text)}</b></div>"
        if self.source is not None and self.frame is not None:
            out += source_html(self.source, self.frame.line)
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
    """The frames of a thread; the selected one marked."""

    def __init__(self, frames: list[Frame], selected: int = 0) -> None:
        self.frames, self.selected = frames, selected
        lines = [
            f"{'→' if i == selected else ' '} #{i} {f.name}() at {short_path(f.path)}:{f.line}"
            for i, f in enumerate(frames)
        ]
        super().__init__("\n".join(lines) or "no frames")

    def _repr_html_(self) -> str:
        rows = [(f"#{i}", f.name, short_path(f.path), f.line) for i, f in enumerate(self.frames)]
        return _table(("", "function", "file", "line"), rows, self.selected)


class VariablesResult(Result):
    """Variables of a scope or children of a value, with the paging position."""

    def __init__(self, title: str, variables: list[Variable], start: int = 0, total: int | None = None) -> None:
        self.title, self.variables, self.start = title, variables, start
        self.total = total if total is not None else len(variables)
        lines = [f"{v.name} = {_one_line(v.value)}" + (f"  ({v.type})" if v.type else "") for v in variables
                 if not _is_group(v)]
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
    return (f"<tr><td style='text-align:left'>{name}</td>"
            f"<td style='text-align:left'><code>{_e(var.value)}</code>{cut}</td></tr>")


def _one_line(value: str, limit: int = 200) -> str:
    """A value as one line of text: its first line, cut at ``limit``; the HTML shows it whole."""
    first = value.split("\n", 1)[0]
    return first[:limit] + " …" if len(first) > limit or first != value else first


def _is_group(var: Variable) -> bool:
    """debugpy's presentation groups ("special variables", ...): folders with no value of their own."""
    return var.name.endswith(" variables") and not var.value and bool(var.ref)


class ValueResult(Result):
    """The result of an evaluation or an assignment."""

    def __init__(self, variable: Variable) -> None:
        self.variable, self.value, self.type = variable, variable.value, variable.type
        super().__init__(variable.value)


class SessionsResult(Result):
    """Every session with its state; the current one starred."""

    def __init__(self, infos: list[SessionInfo], current: str | None) -> None:
        self.sessions, self.current = infos, current
        lines = [
            f"{'*' if i.id == current else ' '} {i.id}  {i.name}  {i.backend}  {_state(i)}  {short_path(i.target)}"
            for i in infos
        ]
        super().__init__("\n".join(lines) or "no sessions (start one with `%debug_session launch SCRIPT`)")

    def _repr_html_(self) -> str:
        rows = [(("*" if i.id == self.current else ""), i.id, i.name, i.backend, _state(i), short_path(i.target))
                for i in self.sessions]
        return _table(("", "id", "name", "backend", "state", "target"), rows)


def _state(info: SessionInfo) -> str:
    if info.state == "paused" and info.stop is not None:
        return stop_text(info.stop)
    if info.state == "terminated":
        return exit_text(info.exit_code)
    if info.state == "failed" and info.error:
        return f"failed: {info.error.get('code')}"
    return info.state


class StatusResult(Result):
    """One session's state, where it is and its target."""

    def __init__(self, info: SessionInfo) -> None:
        self.info, self.state, self.stop = info, info.state, info.stop
        super().__init__(f"{info.name} ({info.backend}, {short_path(info.target)}): {_state(info)}")


class ThreadsResult(Result):
    """The target's threads; the one the last stop is about starred."""

    def __init__(self, threads: list[Thread], current: int | None) -> None:
        self.threads = threads
        lines = [f"{'*' if t.id == current else ' '} {t.id} {t.name}" + (" (stopped)" if t.stopped else "")
                 for t in threads]
        super().__init__("\n".join(lines) or "no threads")


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
        note = f"[{page.dropped} earlier chunks dropped]\n" if page.dropped else ""
        super().__init__((note + text).rstrip("\n"))
