"""Plain-text descriptions of the neutral model, the same in every front end (magics, panel, agents)."""

from __future__ import annotations

import os
from collections.abc import Callable

from .model import Breakpoint, Frame, StopInfo, Watch


def short_path(path: str | None) -> str:
    """``path`` relative to the working directory when it lies under it."""
    if not path:
        return "?"
    if not os.path.isabs(path):  # relative already, or not a file at all (flow:orders, ws://...)
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def where_text(frame: Frame | None, shorten: Callable[[str | None], str] = short_path) -> str:
    """``at app.py:12 in compute()``."""
    if frame is None:
        return "at an unknown place"
    if not frame.name:  # EZ stops do not name the function
        function = ""
    elif frame.name.isidentifier() or frame.name.startswith("<"):
        function = f" in {frame.name}()"
    else:  # not a function: a Mycel rule, an lldb frame with its signature ...
        function = f" in {frame.name}"
    return f"at {shorten(frame.path)}:{frame.line}{function}"


def stop_text(stop: StopInfo) -> str:
    """``paused at app.py:12 in compute() — breakpoint 1 [thread 1]``."""
    reason = stop.reason
    if stop.breakpoint_ids and reason in ("breakpoint", "function breakpoint"):
        reason += " " + ", ".join(str(i) for i in stop.breakpoint_ids)
    if stop.exception is not None:
        reason = f"exception {stop.exception.type}: {stop.exception.message}"
    return f"paused {where_text(stop.frame)} — {reason} [thread {stop.thread_id}]"


def exit_text(exit_code: int | None) -> str:
    """How a target ended: ``exited with code 1``, ``ended by signal 9`` (stopped), or ``ended`` (detached)."""
    if exit_code is None:
        return "ended"
    if exit_code < 0:
        return f"ended by signal {-exit_code}"
    return f"exited with code {exit_code}"


def breakpoint_text(bp: Breakpoint, shorten: Callable[[str | None], str] = short_path) -> str:
    """``breakpoint 3 at app.py:12 if i == 3 hit >=2 — verified`` (or why it is not)."""
    if bp.kind == "line":
        where = f"{shorten(bp.path)}:{bp.line}"
    elif bp.kind == "function":
        where = f"function {bp.name}"
    elif bp.kind == "stage":
        where = f"stage {bp.flow}/{bp.stage}" + (f" rule {bp.rule_index}" if bp.rule_index is not None else "")
    else:
        where = f"exceptions {bp.name}"
    extras = "".join((
        f" if {bp.condition}" if bp.condition else "",
        f" hit {bp.hit_condition}" if bp.hit_condition else "",
        f" log {bp.log_message}" if bp.log_message else "",
        f" (session {bp.session} only)" if bp.session else "",
    ))
    if not bp.enabled:
        status = "disabled"
    elif bp.verified:
        status = "verified"
    else:
        status = "not verified" + (f": {bp.message}" if bp.message else " yet (checked when a session starts)")
    return f"breakpoint {bp.id} at {where}{extras} — {status}"


def watch_lines(watches: list[Watch]) -> str:
    """``\n  watch 1: len(queue) = 3`` per watch expression (its error when it has no value), or nothing."""
    return "".join(f"\n  watch {w.index}: {w.expression} = " + (w.value if w.error is None else f"<{w.error}>")
                   for w in watches if w.value is not None or w.error is not None)
