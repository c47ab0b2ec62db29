"""The relay's breakpoints: validated up front, applied to every session (or to the one session owning one)."""

from __future__ import annotations

import itertools
import os
import re

from ..errors import RelayError
from ..model import Breakpoint, BreakpointResult
from ..source import anchors
from ..source import cel as cel_source
from ..source import python as python_source
from ..source.lines import file_text, stamp

EXCEPTION_MODES = ("raised", "uncaught", "none")


def applies(bp: Breakpoint, session: str) -> bool:
    """Whether ``bp`` is one of ``session``'s: a global breakpoint, or one that session owns."""
    return bp.session is None or bp.session == session


class BreakpointStore:
    """Holds breakpoints by id; knows nothing of sessions (the manager applies them)."""

    def __init__(self) -> None:
        self._items: dict[int, Breakpoint] = {}
        self._missing: set[int] = set()  # line breakpoints whose file does not exist yet
        self._ids = itertools.count(1)
        self._texts: dict[str, tuple[tuple[int, int], str]] = {}  # path -> (mtime_ns, size), the text lines refer to
        self.exceptions = "uncaught"  # the default of sessions started without a mode of their own
        self.exception_types: list[str] = []  # the exception mode applies to these types only (empty: every type)
        self.stop_on_condition_error = True  # a condition that fails to evaluate stops, as in VS Code

    def list(self, session: str | None = None) -> list[Breakpoint]:
        """Every breakpoint, or (``session`` given) those that apply to that session: its own and the global ones."""
        return sorted((b for b in self._items.values() if session is None or applies(b, session)),
                      key=lambda b: b.id)

    def get(self, bp_id: int) -> Breakpoint:
        try:
            return self._items[int(bp_id)]
        except (KeyError, ValueError):
            known = ", ".join(str(i) for i in sorted(self._items)) or "none"
            raise RelayError(
                "invalid_request", f"There is no breakpoint {bp_id}.", f"Known breakpoint ids: {known}."
            ) from None

    def _new(self, **fields) -> Breakpoint:
        for other in self._items.values():  # the same spec for the same owner is that breakpoint
            if all(getattr(other, key) == value for key, value in fields.items()):
                return other
        bp = Breakpoint(id=next(self._ids), **fields)
        self._items[bp.id] = bp
        return bp

    def add_line(
        self,
        path: str,
        line: int | None,
        condition: str | None = None,
        hit_condition: str | None = None,
        log_message: str | None = None,
        session: str | None = None,
        content: str | None = None,
        task: str | None = None,
    ) -> Breakpoint:
        """A breakpoint on ``line``, or (``content`` given) on the line holding that text, near ``line`` if given;
        with ``task``, it stops only in the asyncio task of that name."""
        path = os.path.abspath(os.path.expanduser(path))
        warning = ""
        if content is not None:
            line, warning = self._anchor(path, content, line)
        try:
            line = int(line)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise RelayError("invalid_line", f"{line!r} is not a line number.",
                             "Give the line as a whole number, or the text it holds.") from None
        if line < 1:
            raise RelayError("invalid_line", f"Line {line} does not exist; lines start at 1.",
                             "Give a line number from 1 on.")
        if path.endswith(".py") and condition:  # the file says the language; other backends judge their own
            python_source.check_condition(condition)
        if hit_condition:
            python_source.check_hit_condition(hit_condition)
        if task is not None and not task.strip():
            raise RelayError("invalid_request", "A breakpoint's task needs the name of an asyncio task.",
                             "Give the name the task was created with, e.g. create_task(work(), name='beta').",
                             {"field": "task"})
        spec = {"condition": condition or None, "hit_condition": hit_condition or None,
                "log_message": log_message or None, "task": task or None}
        for other in self._items.values():  # a debugger keeps one breakpoint per line: the same spec is that one
            if other.kind == "line" and other.path == path and other.line == line and other.session == session:
                before = {key: getattr(other, key) for key in spec}
                if before != spec:  # a new condition, hit count or log message on that line replaces the old
                    for key, value in spec.items():
                        setattr(other, key, value)
                    was = ", ".join(f"{key} {value!r}" for key, value in before.items() if value) or "no condition"
                    other.message = f"replaced breakpoint {other.id} on this line (it had {was})"
                other.content, other.warning = content or other.content, warning or other.warning
                return other
        bp = Breakpoint(id=0, kind="line", path=path, line=line, condition=condition or None,
                        hit_condition=hit_condition or None, log_message=log_message or None, task=task or None,
                        session=session, content=content, warning=warning)
        missing = self._check_line(bp, strict=True)
        self._remember(path)
        bp.id = next(self._ids)
        self._items[bp.id] = bp
        if missing:
            self._missing.add(bp.id)
        return bp

    def _anchor(self, path: str, content: str, near: int | None) -> tuple[int | None, str]:
        """The line of ``path`` holding ``content`` and the match's warning; a file not there yet keeps ``near``."""
        if not content.strip():
            raise RelayError("invalid_request", "A breakpoint by content needs the text of its line.",
                             "Give text copied from the line, e.g. total += x.", {"field": "content"})
        if not os.path.isfile(path):
            return near or 1, f"{os.path.basename(path)} does not exist yet: its line is looked up when it does"
        self.edited()  # other breakpoints of the file follow its edits before a line of the new text is taken
        anchor = anchors.find(file_text(path), content, near)
        if anchor.line is None:
            raise RelayError("invalid_line", f"No line of {os.path.basename(path)} holds {content.strip()!r}.",
                             "Give text copied from one of its lines, as it is written there (e.g. total += x).",
                             {"path": path, "content": content})
        return anchor.line, anchor.warning

    def _remember(self, path: str) -> None:
        """Keep the text of ``path`` its line breakpoints refer to, to follow its edits."""
        key = stamp(path)
        if key is not None and self._texts.get(path, (None,))[0] != key:
            self._texts[path] = (key, file_text(path))

    def edited(self) -> list[Breakpoint]:
        """Move the line breakpoints of files edited since they were set (diffing old and new text); the moved."""
        moved = []
        kept = {bp.path for bp in self._items.values() if bp.kind == "line"}
        for path, (key, old) in list(self._texts.items()):
            if path not in kept:  # its breakpoints are gone
                del self._texts[path]
                continue
            now = stamp(path)
            if now is None or now == key:
                continue
            new = file_text(path)
            self._texts[path] = (now, new)
            for bp in self._items.values():
                if bp.kind != "line" or bp.path != path or bp.line is None:
                    continue
                where = anchors.follow(old, new, bp.line)
                if bp.content:
                    found = anchors.find(new, bp.content, where.line)
                    where = found if found.line is not None else anchors.Anchor(where.line, found.warning)
                if (where.line, where.warning) != (bp.line, bp.warning):
                    bp.line, bp.warning = where.line, where.warning
                    bp.verified, bp.status = False, "unverified"
                    self._check_line(bp)
                    moved.append(bp)
        return moved

    def _check_line(self, bp: Breakpoint, strict: bool = False) -> bool:
        """Mark a line breakpoint pending (its file is missing: returns True), or refused if its line has no code."""
        assert bp.path is not None and bp.line is not None
        if not os.path.isfile(bp.path):
            bp.verified, bp.status = False, "pending"
            bp.message = f"file not found: {bp.path} (pending until it exists)"
            return True
        bp.message = ""
        if not bp.path.endswith(".py"):
            return False
        source = file_text(bp.path)
        try:
            lines = python_source.executable_lines(source, bp.path)
        except (SyntaxError, ValueError):
            return False  # the launch reports a broken file; the adapter judges the line
        count = source.count("\n") + (0 if source.endswith("\n") or not source else 1)
        if bp.line > count and strict:
            raise RelayError("invalid_line", f"{os.path.basename(bp.path)} has {count} lines; line {bp.line} "
                             "does not exist.", f"Give a line from 1 to {count}.",
                             {"path": bp.path, "line": bp.line, "lines": count})
        if bp.line not in lines:
            near = python_source.nearest(lines, bp.line)
            suggestion = f"; the nearest executable line is {near}" if near else ""
            bp.verified, bp.status = False, "refused"
            bp.message = f"line {bp.line} has no code (blank, comment or inside a statement){suggestion}"
        return False

    def appeared(self) -> list[Breakpoint]:
        """Pending breakpoints whose file exists now (re-checked, ready to send)."""
        found = []
        for bp_id in list(self._missing):
            bp = self._items[bp_id]
            if bp.content and os.path.isfile(bp.path or ""):
                anchor = anchors.find(file_text(bp.path or ""), bp.content, bp.line)
                bp.line, bp.warning = anchor.line or bp.line, anchor.warning
            if not self._check_line(bp):
                self._remember(bp.path or "")
                self._missing.discard(bp_id)
                bp.status = "unverified" if bp.status == "pending" else bp.status  # until a session says more
                found.append(bp)
        return found

    def refresh(self) -> list[Breakpoint]:
        """The breakpoints to send again: those whose file appeared, and those moved by edits of their file."""
        return [*self.appeared(), *self.edited()]

    def sendable(self, bp: Breakpoint, pending: bool = False) -> bool:
        """Whether a backend should receive this breakpoint: enabled, its file there (or ``pending``), not a refused
        line (a refused function, stage or output breakpoint was refused by a backend lacking its kind: another may
        take it)."""
        return (bp.enabled and (pending or bp.id not in self._missing)
                and (bp.status != "refused" or bp.kind != "line"))

    def add_function(self, name: str, condition: str | None = None, session: str | None = None) -> Breakpoint:
        if not name or not name.strip():
            raise RelayError("invalid_request", "A function breakpoint needs a function name.")
        return self._new(kind="function", name=name.strip(), condition=condition or None, session=session)

    def add_stage(
        self, flow: str, stage: str, rule_index: int | None = None, condition: str | None = None,
        session: str | None = None,
    ) -> Breakpoint:
        if not flow or not stage:
            raise RelayError("invalid_request", "A stage breakpoint needs a flow and a stage.")
        checked = cel_source.check_condition(condition) if condition else True
        bp = self._new(kind="stage", flow=flow, stage=stage, rule_index=rule_index, condition=condition or None,
                       session=session)
        bp.message = "" if checked else cel_source.UNCHECKED
        return bp

    def add_output(self, pattern: str, session: str | None = None) -> Breakpoint:
        """Pause a session just after a line of its output matches ``pattern`` (``re.search``)."""
        if not pattern:
            raise RelayError("invalid_request", "An output breakpoint needs a regular expression.",
                             "Give a regular expression, e.g. ^ERROR.", {"field": "pattern"})
        try:
            re.compile(pattern)
        except re.error as exc:
            raise RelayError("invalid_request", f"The output pattern {pattern!r} is not a regular expression: {exc}.",
                             "Write a Python regular expression, e.g. `loss: nan` or `^ERROR`.",
                             {"field": "pattern", "pattern": pattern}) from None
        return self._new(kind="output", pattern=pattern, session=session)

    def output_breakpoints(self, session: str) -> list[Breakpoint]:
        """The enabled output breakpoints ``session``'s output is matched against (its own and the global ones)."""
        return [bp for bp in self._items.values() if bp.kind == "output" and bp.enabled and applies(bp, session)]

    def set_exceptions(self, mode: str, types: list[str] | None = None) -> str:
        """Stop on ``mode`` exceptions, of ``types`` only (names such as ``ValueError``, ``app.Error``) when given."""
        if mode not in EXCEPTION_MODES:
            raise RelayError("invalid_request", f"Unknown exception mode {mode!r}.",
                             "Use raised, uncaught or none.")
        wrong = [name for name in types or [] if not all(part.isidentifier() for part in name.split("."))]
        if wrong:
            raise RelayError("invalid_request", f"{wrong[0]!r} is not an exception type name.",
                             "Name exception classes, e.g. ValueError,KeyError or mymodule.MyError.",
                             {"field": "types"})
        self.exceptions, self.exception_types = mode, list(dict.fromkeys(types or []))
        return mode

    def update(self, bp_id: int, **changes: str | None) -> Breakpoint:
        """Change a breakpoint's ``condition``, ``hit_condition`` or ``log_message`` in place ("" removes one)."""
        bp = self.get(bp_id)
        given = {key: value.strip() or None for key, value in changes.items() if value is not None}
        if given.get("condition") and bp.kind == "line" and (bp.path or "").endswith(".py"):
            python_source.check_condition(given["condition"])  # the backend judges other languages when it is sent
        if given.get("hit_condition"):
            python_source.check_hit_condition(given["hit_condition"])
        if bp.kind == "stage" and (given.get("hit_condition") or given.get("log_message")):
            raise RelayError("invalid_request", "A stage breakpoint takes a condition only.",
                             "Give it a condition, or use a line breakpoint for a hit count or a log message.")
        for key, value in given.items():
            setattr(bp, key, value)
        return bp

    def remove(self, bp_id: int) -> Breakpoint:
        return self._drop(self.get(bp_id))

    def clear(self, path: str | None = None) -> list[Breakpoint]:
        full = os.path.abspath(path) if path else None
        return [self._drop(bp) for bp in list(self._items.values()) if full is None or bp.path == full]

    def _drop(self, bp: Breakpoint) -> Breakpoint:
        """Forget ``bp``; it says it is removed (no longer bound anywhere)."""
        del self._items[bp.id]
        self._missing.discard(bp.id)
        bp.status, bp.verified = "removed", False
        return bp

    def record(self, bp_id: int, result: BreakpointResult) -> Breakpoint | None:
        """Take what a backend says of a breakpoint; returns it when it changed."""
        bp = self._items.get(bp_id)
        if bp is None:
            return None
        before = (bp.verified, bp.line, bp.message, bp.status)
        if bp.id in self._missing:
            if not result.verified:
                return None  # the relay's "pending until it exists" says more than the peer's "does not exist"
            self._missing.discard(bp.id)  # bound as its file loaded
        bp.verified = result.verified
        if result.line and bp.kind == "line":
            bp.line = result.line
        bp.message = result.message if result.verified else result.message or bp.message
        bp.status = "verified" if result.verified else "refused" if result.refused else "unverified"
        return bp if (bp.verified, bp.line, bp.message, bp.status) != before else None

