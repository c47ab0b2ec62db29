"""Back in time: what a session's target recorded (``record``), as the relay holds it, and the state shown.

The target keeps the events (``backends/debugpy/_recorder.py``); the relay reads the new ones at each look
(``history``, ``back``, ``forward``) while the target is paused, and keeps a copy under the same byte cap, so the
history stays readable after the recorded function returned, after a continue and after the target ended. A state
shown (``position``) answers ``stack``, ``scopes``, ``variables`` and ``evaluate`` until the session moves on.
Everything read is data: reprs of the target's values, never run in the kernel.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import RelayError
from ..model import (
    Frame,
    RecordedCode,
    RecordedEvent,
    RecordedStep,
    RecordedValue,
    Recording,
    RecordingBatch,
    Scope,
    Variable,
    VariablePage,
)
from ..protocols import recorder
from ..source.lines import file_line

RECORDED_FRAME = 2_000_000_001  # the frame id of the recorded state shown (no backend hands out such ids)
RECORDED_LOCALS = 2_000_000_002  # the variables reference of its locals
EVENT_BYTES = 64  # what an event costs besides its texts (as in the target)
LOOK_AHEAD = 10_000  # events looked through for the next state of a call (what its line changed)
MORE_BATCHES = 16  # answers read in one look, at most (each up to recorder.BATCH bytes)
RANGE = re.compile(r"^(?P<path>.+):(?P<first>\d+)-(?P<last>\d+)$")


def parse_target(target: str) -> dict[str, Any]:
    """``FUNCTION`` or ``FILE:FIRST-LAST`` as the recorder's arguments; a bad range is ``invalid_request``."""
    target = target.strip()
    found = RANGE.match(target)
    if found is None and re.match(r"^.+:\d+(-\d*)?$", target):
        raise RelayError("invalid_request", f"{target!r} is not a range of lines: write FILE:FIRST-LAST.",
                         "e.g. record app.py:10-24, or record a function by its name (record compute).",
                         {"field": "target"})
    if found is None:
        if not re.match(r"^[A-Za-z_][\w.]*$", target):
            raise RelayError("invalid_request", f"{target!r} is neither a function's name nor FILE:FIRST-LAST.",
                             "e.g. record compute, record Grader.score or record app.py:10-24.",
                             {"field": "target"})
        return {"kind": "function", "name": target}
    first, last = int(found["first"]), int(found["last"])
    if first < 1 or last < first:
        raise RelayError("invalid_request", f"The range {first}-{last} is empty: the first line comes first, from 1.",
                         f"e.g. record {found['path']}:{min(first, last) or 1}-{max(first, last)}.",
                         {"field": "target"})
    path = os.path.abspath(os.path.expanduser(found["path"]))
    if not os.path.isfile(path):
        raise RelayError("file_not_found", f"There is no file {found['path']}.",
                         "Give the path of the target's source file, relative to the working directory.",
                         {"field": "target", "path": path})
    return {"kind": "range", "path": path, "first": first, "last": last}


def refused(answer: dict[str, Any], target: str, session: str) -> RelayError | None:
    """The error a recorder's answer stands for, in the relay's own words (None: no error)."""
    error = answer.get("error")
    if error is None:
        return None
    if error == "unsupported":
        version = ".".join(str(part) for part in answer.get("version") or [])[:20]
        why = str(answer.get("why") or "")[:300]
        return RelayError("unsupported",
                          f"{target} cannot be recorded in session {session} (Python {version}): {why}.",
                          "On Python 3.11 a function is recorded once its def ran (record NAME at a stop after it); "
                          "a module's own lines need Python 3.12+ (sys.monitoring).", {"version": version, "why": why})
    if error == "unknown_function":
        return RelayError("invalid_request", f"No function {target!r} is loaded in the target.",
                          "Name it as its code does (compute, Grader.score, module.compute) and record at a stop "
                          "after the module defining it ran, or record FILE:FIRST-LAST.", {"field": "target"})
    if error == "no_code":
        if answer.get("loaded"):
            return RelayError("invalid_line", f"{target} holds no code the target runs.",
                              "Give lines that hold statements of a function or of the module.", {"field": "target"})
        return RelayError("invalid_request", f"No code of {target.rsplit(':', 1)[0]} is loaded in the target.",
                          "Record at a stop after the module is imported (or the script started).",
                          {"field": "target"})
    if error == "no_tool":
        return RelayError("unsupported", "Every sys.monitoring tool id of the target is taken (coverage, profilers).",
                          "Stop the other tool, or record without it.")
    if error == "not_recording":
        return nothing_recorded(session)
    if error == "gone":
        return RelayError("invalid_request", "That state fell out of the target's ring.",
                          "Look at a later state, or record less (a smaller range).")
    if error == "raised":
        said = f"{str(answer.get('type'))[:80]}: {str(answer.get('message'))[:300]}"
        return RelayError("evaluation_failed", f"The expression raised {said} on the recorded values.",
                          "Only the recorded locals (as their reprs, literals as values) and the builtins are there.",
                          {"adapter_message": said})
    said = f"{str(answer.get('type'))[:80]}: {str(answer.get('message'))[:300]}"
    return recorder.failed("the recorder", said)


def nothing_recorded(session: str) -> RelayError:
    return RelayError("invalid_request", f"Session {session} has nothing recorded.",
                      "Record a function first (record compute, or record FILE:FIRST-LAST), then run it.")


class History:
    """The events the relay holds of a session's recording, under a byte cap, and the state shown."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.codes: list[RecordedCode] = []
        self.events: list[RecordedEvent] = []
        self.sizes: list[int] = []
        self.bytes = 0
        self.cap = recorder.CAP
        self.dropped = 0  # fallen out of the target's ring before the relay read them, or out of the relay's copy
        self.last = 0  # the target's number of the last event read
        self.position: int | None = None  # index into events of the state shown; None: the live stop
        self.recording = True

    def take(self, batch: RecordingBatch) -> None:
        """New events of the target's answer; what fell out before they were read is counted."""
        self.codes, self.cap = batch.codes, batch.cap
        for event in batch.events:
            if event[0] <= self.last:
                continue
            if event[0] > self.last + 1:
                self.dropped += event[0] - self.last - 1
            self.last = event[0]
            size = EVENT_BYTES + sum(len(name) + len(text or "") for name, text in event[5]) + len(event[6] or "")
            self.events.append(event)
            self.sizes.append(size)
            self.bytes += size
        cut = 0
        while self.bytes > self.cap and cut < len(self.events):
            self.bytes -= self.sizes[cut]
            cut += 1
        if cut:
            del self.events[:cut], self.sizes[:cut]
            self.dropped += cut
            if self.position is not None:
                self.position = max(0, self.position - cut)

    def info(self, note: str = "") -> Recording:
        return Recording(what=self.what, functions=[f"{c.name} ({c.path}:{c.first})" for c in self.codes],
                         states=len(self.events), position=None if self.position is None else self.position + 1,
                         dropped=self.dropped, bytes=self.bytes, cap=self.cap, recording=self.recording, note=note)

    def step(self, index: int, with_locals: bool = False) -> RecordedStep:
        """State ``index`` (0-based here, 1-based in the answer), its locals rebuilt when asked."""
        _, call, code_index, kind, line, _, value = self.events[index]
        changes = next((e[5] for e in self.events[index + 1:index + 1 + LOOK_AHEAD] if e[1] == call), [])
        code = self.codes[code_index] if 0 <= code_index < len(self.codes) else RecordedCode("?", "", 0)
        step = RecordedStep(index=index + 1, call=call, kind=kind, function=code.name, path=code.path, line=line,
                            changes=[RecordedValue(name, text or "", True, text is None) for name, text in changes],
                            value=value or "", source_line=file_line(code.path, line) if code.path else "")
        if with_locals:
            step.locals, step.partial = self._locals(index)
        return step

    def _locals(self, index: int) -> tuple[list[RecordedValue], bool]:
        """The locals at state ``index``: each one's latest text in its call up to there; what the state's line
        before changed marked."""
        call = self.events[index][1]
        known: dict[str, str | None] = {}
        first = True
        for event in reversed(self.events[:index + 1]):
            if event[1] != call:
                continue
            for name, text in event[5]:
                known.setdefault(name, text)
        starts = [e for e in self.events[:index + 1] if e[1] == call]
        first = bool(starts) and self.events.index(starts[0]) == 0 and self.dropped > 0
        changed = {name for name, _ in self.events[index][5]}
        return ([RecordedValue(name, text, name in changed) for name, text in known.items() if text is not None],
                first)

    def frame(self) -> Frame:
        """The frame of the state shown."""
        assert self.position is not None
        step = self.step(self.position)
        return Frame(id=RECORDED_FRAME, name=f"{step.function} (recorded state {step.index} of {len(self.events)})",
                     path=step.path or None, line=step.line)


def shown(history: History | None) -> History | None:
    """A session's history when it shows a recorded state (not the live stop)."""
    return history if history is not None and history.position is not None else None


def stack(history: History) -> tuple[list[Frame], int]:
    return [history.frame()], 1


def scopes(history: History) -> list[Scope]:
    return [Scope(name="Recorded locals", ref=RECORDED_LOCALS)]


def variables(history: History, start: int, count: int) -> VariablePage:
    assert history.position is not None
    step = history.step(history.position, with_locals=True)
    items = [Variable(name=v.name, value=v.value, type="changed" if v.changed else "", evaluate_name=v.name)
             for v in step.locals]
    return VariablePage(items=items[start:start + count], start=start, total=len(items))


Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]  # the recorder asked in the target (Session's)


async def evaluate(history: History, expression: str, ask: Ask, paused: bool) -> Variable:
    """``expression`` on the recorded values of the state shown: a local's recorded repr, else computed in the
    target on the recorded values (``ask``, while the target is ``paused`` there)."""
    assert history.position is not None
    step = history.step(history.position, with_locals=True)
    name = expression.strip()
    for value in step.locals:
        if value.name == name:
            return Variable(name=name, value=value.value, type="recorded repr", evaluate_name=name)
    if not paused or not history.recording:
        raise RelayError("evaluation_failed", f"{name!r} is not a recorded local of this state, and the target is not "
                         "there to compute it.", "Name one of the recorded locals (vars lists them).",
                         {"adapter_message": "not a recorded local"})
    answer = await ask("value", {"seq": history.events[history.position][0], "expression": expression})
    return Variable(name=name, value=str(answer.get("value", ""))[:10_000], type=str(answer.get("type", ""))[:100])


def plain(obj: Any) -> Any:
    from ..model import as_dict

    return as_dict(obj)
