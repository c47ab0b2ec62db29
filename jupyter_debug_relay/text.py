"""Plain-text descriptions of the neutral model, the same in every front end (magics, panel, agents)."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from typing import Any

from .model import Breakpoint, Frame, SessionInfo, StopInfo, Watch

FINISHED_WIDTH = 200  # a finished flow's output shown inline is cut to this many characters


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


def called(name: str) -> str:
    """A frame's name as a call (``compute()``, ``Box.put()``, ``<module>()``); other names as they are (a Mycel
    rule, an lldb signature, a recorded state)."""
    return f"{name}()" if name.startswith("<") or all(part.isidentifier() for part in name.split(".")) else name


def where_text(frame: Frame | None, shorten: Callable[[str | None], str] = short_path) -> str:
    """``at app.py:12 in compute()``."""
    if frame is None:
        return "at an unknown place"
    function = f" in {called(frame.name)}" if frame.name else ""  # EZ stops do not name the function
    return f"at {shorten(frame.path)}:{frame.line}{function}"


def stop_reason(stop: StopInfo) -> str:
    """Why a target stopped, the same on every front end: ``breakpoint 1``, ``exception ValueError: bad value``
    (the first line of its message), ``step``."""
    reason = stop.reason
    if stop.breakpoint_ids and reason in ("breakpoint", "function breakpoint"):
        reason += " " + ", ".join(str(i) for i in stop.breakpoint_ids)
    if stop.exception is not None:
        first, *more = stop.exception.message.strip().splitlines() or [""]
        reason = f"exception {stop.exception.type}" + (f": {first}" if first else "") + (" …" if more else "")
    if stop.output_line is not None:
        reason += f" (just after the output line {stop.output_line!r})"
    return reason


def stop_text(stop: StopInfo) -> str:
    """``paused at app.py:12 in compute() — breakpoint 1 [thread 1]``."""
    return f"paused {where_text(stop.frame)} — {stop_reason(stop)} [thread {stop.thread_id}]"


def finished_text(end: dict) -> str:
    """How a step's thread finished its unit of work: ``flow create_user ended [thread 1]: {"id": 2}``."""
    output = json.dumps(end.get("output"), default=str, ensure_ascii=False)
    if len(output) > FINISHED_WIDTH:
        output = output[:FINISHED_WIDTH - 1] + "…"
    what = f"flow {end['flow']}" if end.get("flow") else "the thread's work"
    if end.get("error"):
        return f"{what} failed [thread {end.get('thread_id')}]: {end['error']}"
    return f"{what} ended [thread {end.get('thread_id')}]: {output}"


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; the number when the platform has no name for it."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def line_text(line: int, source_line: str) -> str:
    """``14 │ for name, amount in orders:``: a line number and its source, unindented; empty with no source."""
    return f"{line} │ {source_line.strip()}" if source_line.strip() else ""


def stop_with_line(stop: StopInfo, head: str) -> str:
    """``head``, then on a line of its own the source line ``stop`` is on (when it has one)."""
    shown = line_text(stop.frame.line, stop.source_line) if stop.frame is not None else ""
    return f"{head}\n{shown}" if shown else head


def exit_text(exit_code: int | None, stopped_by_user: bool = False) -> str:
    """How a target ended: ``exited with code 1``, ``ended by signal 11 (SIGSEGV)``, ``stopped by the user``
    (terminate), or ``ended`` (detached, or no code known)."""
    if stopped_by_user:
        return "stopped by the user"
    if exit_code is None:
        return "ended"
    if exit_code < 0:
        return f"ended by signal {-exit_code} ({signal_name(-exit_code)})"
    return f"exited with code {exit_code}"


def state_text(info: SessionInfo, describe_stop: Callable[[StopInfo], str] = stop_text) -> str:
    """How a session stands: its stop (``describe_stop``), how it ended (``exited with code 3``, ``ended by signal 11
    (SIGSEGV)``, ``stopped by the user``), ``failed: CODE``, or its state (with a wait for input said)."""
    if info.state == "paused" and info.stop is not None:
        return describe_stop(info.stop)
    if info.state == "terminated":
        return exit_text(info.exit_code, info.stopped_by_user)
    if info.state == "failed" and info.error:
        return f"failed: {info.error.get('code')}"
    return "running, waiting for input on stdin" if info.waiting_for_input else info.state


def breakpoint_text(bp: Breakpoint, shorten: Callable[[str | None], str] = short_path) -> str:
    """``breakpoint 3 at app.py:12 if i == 3 hit >=2 — verified`` (or why it is not)."""
    if bp.kind == "line":
        where = f"{shorten(bp.path)}:{bp.line}" + (f" ({bp.content.strip()!r})" if bp.content else "")
    elif bp.kind == "function":
        where = f"function {bp.name}"
    elif bp.kind == "stage":
        where = f"stage {bp.flow}/{bp.stage}" + (f" rule {bp.rule_index}" if bp.rule_index is not None else "")
    elif bp.kind == "output":
        where = f"output matching {bp.pattern!r}"
    else:
        where = f"exceptions {bp.name}"
    extras = "".join((
        f" if {bp.condition}" if bp.condition else "",
        f" hit {bp.hit_condition}" if bp.hit_condition else "",
        f" --task {bp.task}" if bp.task else "",
        f" log {bp.log_message}" if bp.log_message else "",
        f" (session {bp.session} only)" if bp.session else "",
    ))
    warning = f"; warning: {bp.warning}" if bp.warning else ""
    return f"breakpoint {bp.id} at {where}{extras} — {status_text(bp)}{warning}"


def status_text(bp: Breakpoint) -> str:
    """``verified``, ``disabled``, ``removed``, or why it does not stop a target: ``not verified: line 2 has no
    code ...`` (refused or unverified, with the reason), ``not verified yet (checked when a session starts)``."""
    if bp.status == "removed":
        return "removed"
    if not bp.enabled:
        return "disabled"
    if bp.verified:
        return "verified"
    return "not verified" + (f": {bp.message}" if bp.message else " yet (checked when a session starts)")


def unbound_lines(breakpoints: list[Breakpoint]) -> str:
    """``\n  breakpoint 3 at app.py:2 — not verified: ...`` per breakpoint a start could not bind, or nothing."""
    return "".join(f"\n  {breakpoint_text(bp)}" for bp in breakpoints)


def replay_hint(uid: str) -> str:
    """What to do with an ended session: replay its recording ``uid``."""
    return f"Replay it with `jupyter-debug-relay replay {uid}`, or pick a live session."


def watch_lines(watches: list[Watch]) -> str:
    """``\n  watch 1: len(queue) = 3`` per watch expression (its error when it has no value), or nothing."""
    return "".join(f"\n  watch {w.index}: {w.expression} = " + (w.value if w.error is None else f"<{w.error}>")
                   for w in watches if w.value is not None or w.error is not None)


def warnings_line(warnings: list[str]) -> str:
    """The one line every front end shows for a start's ``warnings`` (empty when there are none)."""
    if not warnings:
        return ""
    return "warning: " + " | ".join(warnings) + " (`jupyter-debug-relay doctor` says what to do)"


DOCTOR_SOURCES = {  # where the debugpy a Python runs comes from
    "kernel": "the kernel's", "own": "the Python's own", "cache": "the relay's copy for this Python",
    "given": "the one given to check", "other": "the one the relay was told to lend"}


def doctor_lines(report: dict[str, Any]) -> list[str]:
    """The doctor's report as text: a line per fact, a line per feature."""
    kernel = report["kernel_debugpy"]
    proven = " to ".join(report["kernel_debugpy"]["proven"])
    width = max((len(f["name"]) for one in report["pythons"] for f in one["features"]), default=0)
    said = [f"jupyter-debug-relay {report['relay']}",
            f"kernel's debugpy: {kernel['version']} in {kernel['folder']}, "
            + (f"in the proven range ({proven})" if kernel["in_range"] else f"OUTSIDE the proven range ({proven})")]
    if kernel["what_to_do"]:
        said.append(f"  what to do: {kernel['what_to_do']}")
    said.append(f"targets run debugpy {report['targets_run']}")
    for one in report["pythons"]:
        said += ["", f"Python {one['version']}: {one['python']}"]
        debugpy = one["debugpy"]
        if one["error"]:
            said += [f"  error: {one['error']['code']}: {one['error']['message']}", f"  hint: {one['error']['hint']}"]
            continue
        where = DOCTOR_SOURCES[debugpy["source"]] + (", installed just now" if debugpy["installed_now"] else "")
        range_note = "" if debugpy["in_range"] else f", outside the proven range ({proven})"
        said.append(f"  debugpy {debugpy['version']} in {debugpy['folder']} ({where}){range_note}")
        if debugpy["note"]:
            said.append(f"  note: {debugpy['note']}")
        for feature in one["features"]:
            if feature["state"] == "on":
                said.append(f"  on   {feature['name']}")
            elif feature["state"] == "off":
                said.append(f"  OFF  {feature['name']:<{width}}  {feature['why']}; so {feature['loses']}")
            else:
                said.append(f"  --   {feature['name']:<{width}}  not checked: {feature['why']}")
        said += [f"  what to do: {text}" for text in one["what_to_do"]]
    off = [f"{f['name']} (Python {s['version']})" for s in report["pythons"] for f in s["features"]
           if f["state"] == "off"]
    said.append("")
    if report["errors"]:
        said.append(f"result: {plural(report['errors'], 'Python')} could not be checked")
    said.append(f"result: {plural(len(off), 'feature')} off: {', '.join(off)}" if off else
                "result: every feature checked is on")
    return said


def plural(count: int, word: str) -> str:
    """``3 features``, ``1 feature``, ``2 Python``."""
    return f"{count} {word}" + ("" if count == 1 or word == "Python" else "s")


def task_rows(found: dict[str, Any]) -> list[tuple[int, str, dict[str, Any], bool]]:
    """The tasks of a ``tasks`` answer (its JSON form) in tree order, as (loop, branch drawn before the name, task,
    shown above already): each task under every task that awaits it, whole the first time only."""
    tasks = found.get("tasks") or []
    by_id = {task["id"]: task for task in tasks}
    awaited = {child for task in tasks for child in task.get("awaits") or ()}
    rows: list[tuple[int, str, dict[str, Any], bool]] = []
    shown: set[str] = set()

    def draw(task: dict[str, Any], lead: str, last: bool, loop: int) -> None:
        again = task["id"] in shown
        rows.append((loop, lead + ("└── " if last else "├── "), task, again))
        if again:
            return
        shown.add(task["id"])
        children = [by_id[child] for child in task.get("awaits") or () if child in by_id]
        for n, child in enumerate(children):
            draw(child, lead + ("    " if last else "│   "), n == len(children) - 1, loop)

    for loop in sorted({task.get("loop", 0) for task in tasks}):
        mine = [task for task in tasks if task.get("loop", 0) == loop]
        roots = [task for task in mine if task["id"] not in awaited]
        while roots:
            for n, task in enumerate(roots):
                draw(task, "", n == len(roots) - 1, loop)
            roots = [task for task in mine if task["id"] not in shown][:1]  # only in a cycle of awaits: drawn too
    return rows


def task_where(task: dict[str, Any], shorten: Callable[[str | None], str] = short_path) -> str:
    """``at app.py:14 in consume()``: the line a task waits at (or runs), or its coroutine when it has none."""
    if task.get("path") is None:
        return f"{task.get('coroutine')}()"
    name = next((f["name"] for f in reversed(task.get("stack") or [])
                 if f["path"] == task["path"] and f["line"] == task.get("line")), task.get("coroutine"))
    return f"at {shorten(task['path'])}:{task.get('line')} in {name}()"


def task_waits(task: dict[str, Any]) -> str:
    """What a task does besides: ``stopped here``, ``awaits Future pending in Queue.get()``, ``raised ValueError``."""
    stack = task.get("stack") or []
    inner = stack[-1] if stack else None
    beyond = f" in {inner['name']}()" if inner and (inner["path"], inner["line"]) != (task.get("path"),
                                                                                      task.get("line")) else ""
    said = []
    if task.get("stopped"):
        said.append("stopped here")
    elif task.get("running"):
        said.append("running (its thread is paused)")
    if task.get("future"):
        said.append(f"awaits {task['future']}{beyond}")
    elif beyond and not task.get("running"):
        said.append(beyond.strip())
    if task.get("exception"):
        said.append(f"raised {task['exception']}")
    return "; ".join(said)


def tasks_lines(found: dict[str, Any], shorten: Callable[[str | None], str] = short_path) -> list[str]:
    """A ``tasks`` answer (its JSON form) as a tree per event loop, the way ``python -m asyncio pstree`` draws it:
    ``├── consumer (pending) at app.py:14 in consume() — awaits Future pending in Queue.get()``."""
    rows = task_rows(found)
    if not rows:
        return [found.get("note") or "no asyncio tasks"]
    loops = {loop["index"]: loop for loop in found.get("loops") or []}
    lines: list[str] = []
    previous = None
    for loop, branch, task, again in rows:
        if loop != previous:
            previous, about = loop, loops.get(loop, {})
            thread = f"on thread {about['thread']}" if about.get("thread") else "not running"
            count = sum(1 for row in rows if row[0] == loop and not row[3])
            lines.append(f"event loop {loop} ({thread}): {plural(count, 'task')}")
        if again:
            lines.append(f"{branch}{task['name']} (shown above)")
            continue
        waits = task_waits(task)
        lines.append(f"{branch}{task['name']} ({task['state']}) {task_where(task, shorten)}"
                     + (f" — {waits}" if waits else ""))
    if found.get("note"):
        lines.append(f"note: {found['note']}")
    return lines


# -- back in time (record, history, back, forward) ---------------------------------------------------------------

def _size(count: int) -> str:
    return f"{count / 1_000_000:.1f} MB" if count >= 100_000 else f"{count / 1000:.1f} KB"


def recording_line(recording: dict[str, Any], shorten: Callable[[str | None], str] = short_path) -> str:
    """A ``Recording`` (its JSON form) in one line: what is recorded, how many states, what fell out."""
    functions = ", ".join(recording.get("functions") or []) or recording.get("what", "?")
    for path in {part.rsplit("(", 1)[-1].rsplit(":", 1)[0] for part in recording.get("functions") or []}:
        functions = functions.replace(path, shorten(path))
    state = "recording" if recording.get("recording") else "recorded (off)"
    dropped = f", {recording['dropped']:,} fell out of the cap" if recording.get("dropped") else ""
    note = f" — {recording['note']}" if recording.get("note") else ""
    return (f"{state} {functions}: {recording.get('states', 0):,} states, {_size(recording.get('bytes', 0))} of "
            f"{_size(recording.get('cap', 0))}{dropped}{note}")


def recorded_step_line(step: dict[str, Any], shorten: Callable[[str | None], str] = short_path,
                       marked: bool = False) -> str:
    """One recorded state as a line: number, place, the line's text, then what the line before changed."""
    where = f"{shorten(step.get('path'))}:{step.get('line')} {step.get('function')}()"
    kind = step.get("kind")
    what = (f"returned {step.get('value')}" if kind == "return" else f"raised {step.get('value')}"
            if kind == "exception" else (step.get("source_line") or "").strip())
    changes = ", ".join(f"{c['name']} deleted" if c.get("deleted") else f"{c['name']} = {c['value']}"
                        for c in step.get("changes") or [])
    return f"{'>' if marked else ' '} #{step.get('index')} {where}  {what}" + (f"   [{changes}]" if changes else "")


def history_lines(result: dict[str, Any], shorten: Callable[[str | None], str] = short_path) -> list[str]:
    """A ``history`` answer (its JSON form): the recording, then one line per state, the one shown marked."""
    recording = result.get("recording") or {}
    position = recording.get("position")
    steps = result.get("steps") or []
    lines = [recording_line(recording, shorten)]
    if not steps:
        return [*lines, "no state recorded yet: run the recorded code"]
    total, start = result.get("total", len(steps)), result.get("start", 0)
    if start:
        lines.append(f"  ... {start:,} earlier")
    lines += [recorded_step_line(step, shorten, step.get("index") == position) for step in steps]
    if start + len(steps) < total:
        lines.append(f"  ... {total - start - len(steps):,} later")
    lines.append("  (live stop)" if position is None else f"  showing #{position}; forward past #{total} is the "
                 "live stop")
    return lines


def recorded_state_lines(result: dict[str, Any], shorten: Callable[[str | None], str] = short_path) -> list[str]:
    """A ``back`` or ``forward`` answer (its JSON form): the state shown, its line, its locals (changed marked)."""
    recording = result.get("recording") or {}
    state = result.get("recorded")
    if state is None:
        return [f"at the live stop again (after {recording.get('states', 0):,} recorded states); continue runs on"]
    kind = state.get("kind")
    head = (f"recorded state {state.get('index')} of {recording.get('states')}: {state.get('function')}() at "
            f"{shorten(state.get('path'))}:{state.get('line')}")
    if kind == "return":
        head += f", returning {state.get('value')}"
    elif kind == "exception":
        head += f", raising {state.get('value')}"
    lines = [head]
    if state.get("source_line"):
        lines.append(f"    {state['source_line'].strip()}")
    for value in state.get("locals") or []:
        lines.append(f"  {'*' if value.get('changed') else ' '} {value['name']} = {value['value']}")
    deleted = [c["name"] for c in state.get("changes") or [] if c.get("deleted")]
    if deleted:
        lines.append(f"  * deleted: {', '.join(deleted)}")
    if state.get("partial"):
        lines.append("  (the call's first states fell out of the cap: some locals are not known)")
    return lines
