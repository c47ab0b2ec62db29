"""Back in time: ``record``, ``history``, ``back`` and ``forward`` (a group of verbs of their own; see
``engine/history.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictBool, StrictInt, StrictStr

from ..engine import history as back_in_time
from ..engine.session import Session
from ..errors import RelayError
from ..model import RecordedStep, Recording
from ..protocols import recorder
from . import params as P
from .base import PAUSED_ERRORS, Context, Operation, S, session_of

_ERRORS = (*PAUSED_ERRORS, "evaluation_failed", "unsupported")


class RecordParams(P.SessionParams):
    """What to record: a function by name, or a range of lines of a file; or ``off``."""

    target: StrictStr | None = Field(None, description="A function (compute, Grader.score, module.compute) or "
                                                        "FILE:FIRST-LAST.")
    off: StrictBool = Field(False, description="Stop recording; what was recorded stays readable.")
    timeout: P.Timeout = Field(5.0, description="Seconds to wait for a running target to pause for the install.")


class HistoryParams(P.SessionParams):
    """A page of the recorded states."""

    start: P.Start | None = Field(None, description="Index of the first state (0-based); default: around the "
                                                    "state shown, or the last ones.")
    count: P.Count = Field(20, description="How many states, at most.")


Steps = Annotated[StrictInt, Field(ge=1, le=10_000_000, description="How many states to move.")]


class MoveParams(P.SessionParams):
    """Move through the recorded states."""

    steps: Steps = 1


async def record(session: Session, target: str, timeout: float) -> Recording:
    """Start recording ``target`` (a running target is paused for the install, then continued)."""
    args = back_in_time.parse_target(target)
    session.require_live()
    shown = target if args["kind"] == "function" else f"{args['path']}:{args['first']}-{args['last']}"
    resume = False
    if session.state == "running":
        try:
            await session.pause(None, True, timeout)
        except RelayError as exc:
            if exc.code != "timeout":
                raise
            raise RelayError("timeout", f"Session {session.name} did not pause within {timeout:g} s to install the "
                             "recorder.", "Record at the next stop (set a breakpoint, or pause it), or give a longer "
                             "timeout.") from None
        resume = True
    try:
        limits = {"cap": recorder.CAP, "max_chars": recorder.MAX_CHARS}
        answer = await session.ask_recorder("record", {**args, **limits}, shown)
    finally:
        if resume and session.state == "paused":
            await session.resume("continue", None, False, 0)
    history = back_in_time.History(shown)
    batch = recorder.batch(answer, "record")
    history.take(batch)
    session.history = history
    slower = f"; through sys.monitoring, slower: {batch.why[:300]}" if batch.how != "compiled" and batch.why else ""
    info = history.info(f"recording from the next line the program runs there{slower}")
    session.emit("record", {"recording": back_in_time.plain(info)})
    return info


async def off(session: Session) -> Recording:
    """Stop recording; what was recorded stays readable."""
    history = _held(session)
    if session.state == "paused" and history.recording:
        await refresh(session)
        await session.ask_recorder("off", {})
    history.recording = False
    return history.info("recording off; the history stays")


async def refresh(session: Session) -> back_in_time.History:
    """The session's history with the events recorded since the last look (read while the target is paused)."""
    history = _held(session)
    if session.state != "paused" or not history.recording:
        return history
    for _ in range(back_in_time.MORE_BATCHES):
        answer = await session.ask_recorder("since", {"seq": history.last, "limit": recorder.BATCH})
        batch = recorder.batch(answer, "since")
        history.take(batch)
        if not batch.more:
            break
    return history


def _held(session: Session) -> back_in_time.History:
    if session.history is None:
        raise back_in_time.nothing_recorded(session.name)
    return session.history


async def page(session: Session, start: int | None, count: int) -> dict[str, Any]:
    """A page of the recorded states (the last ``count`` by default), and the recording."""
    history = await refresh(session)
    total = len(history.events)
    if start is None:
        start = max(0, (history.position if history.position is not None else total) - count // 2) \
            if history.position is not None else max(0, total - count)
    steps = [history.step(i) for i in range(min(start, total), min(total, start + count))]
    return {"recording": history.info(), "steps": steps, "start": start, "total": total}


async def move(session: Session, steps: int) -> dict[str, Any]:
    """Show the state ``steps`` back (negative: forward) from the one shown; forward past the last is the live
    stop."""
    history = await refresh(session)
    total = len(history.events)
    if not total:
        raise RelayError("invalid_request", f"Session {session.name} has recorded no line yet.",
                         f"Run the recorded code ({history.what}) first, then go back.")
    here = history.position if history.position is not None else total
    there = here - steps
    if there < 0:
        raise RelayError("invalid_request", f"That is beyond the start of the history: {here} state"
                         f"{'s' if here != 1 else ''} back at most from here ({total} recorded).",
                         f"e.g. back {here}" if here else "You are at the first recorded state; go forward.",
                         {"field": "steps", "states": total, "position": here})
    if there > total or (there == total and history.position is None):
        raise RelayError("invalid_request", "That is beyond the live stop: the history ends there.",
                         "Go back first; continue or next runs the program on.", {"field": "steps"})
    history.position = None if there == total else there
    state = history.step(there, with_locals=True) if there < total else None
    info = history.info()
    session.emit("history", {"recording": back_in_time.plain(info), "recorded": back_in_time.plain(state),
                             "thread_id": session.stop.thread_id if session.stop else None})
    return {"recording": info, "recorded": state}



async def _record(ctx: Context, p: RecordParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    if p.off or p.target == "off":
        return {"recording": await off(session)}
    if not p.target:
        raise RelayError("invalid_request", "record needs a function or FILE:FIRST-LAST (or off).",
                         "e.g. record compute, or record app.py:10-24.", {"field": "target"})
    return {"recording": await record(session, p.target, p.timeout)}


async def _history(ctx: Context, p: HistoryParams) -> dict[str, Any]:
    return await page(session_of(ctx, p.session), p.start, p.count)


async def _back(ctx: Context, p: MoveParams) -> dict[str, Any]:
    return await move(session_of(ctx, p.session), p.steps)


async def _forward(ctx: Context, p: MoveParams) -> dict[str, Any]:
    return await move(session_of(ctx, p.session), -p.steps)


OPERATIONS = (
    Operation("record", RecordParams, _record,
              "Record every line a function (or a range of lines) runs: changed locals, returns, exceptions.",
              ("recording",), (*_ERRORS, "file_not_found", "invalid_line"), budget=lambda p, t: t + p.timeout,
              when="Use it before running the code you suspect, then history, back and forward to see how a value "
                   "came to be (Python 3.11+: a function; 3.12+ also a module's lines).",
              http=(f"POST {S}/record",),
              example={"target": "compute"}),
    Operation("history", HistoryParams, _history, "The recorded states: each line, what it changed, returns.",
              ("recording", "steps", "start", "total"), _ERRORS,
              when="Use it after record to list the recorded states; back and forward move through them.",
              http=(f"GET {S}/history",)),
    Operation("back", MoveParams, _back, "Show the recorded state N steps back: its line and locals.",
              ("recording", "recorded"), _ERRORS,
              when="Use it at a stop after recorded code ran, to step back to the line that made a wrong value; "
                   "stack, variables and evaluate then answer for that state until continue.",
              http=(f"POST {S}/back",),
              example={"steps": 1}),
    Operation("forward", MoveParams, _forward, "Show the recorded state N steps forward (past the last: the live "
              "stop).", ("recording", "recorded"), _ERRORS,
              when="Use it after back to move forward through the recorded states.",
              http=(f"POST {S}/forward",),
              example={"steps": 1}),
)

RESULT_TYPES: dict[str, Any] = {"recording": Recording, "steps": list[RecordedStep], "recorded": RecordedStep | None}
