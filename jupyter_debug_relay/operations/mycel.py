"""Mycel's own verbs (seed 000): ``inspect``, ``ready``, ``consume`` and a thread's ``timeline``.

Each runs on a Mycel session only; any other session answers ``unsupported`` naming its backend.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictInt

from ..backends import factory
from ..engine.session import Session
from ..errors import RelayError
from .base import SESSION_ERRORS, Context, Operation, S, session_of
from .params import SessionParams, Text

INSPECTABLE = Literal["flows", "flow", "connectors", "types", "transforms"]
MYCEL = "supportsStageBreakpoints"  # the capability every Mycel session declares
MYCEL_ERRORS = (*SESSION_ERRORS, "unsupported", "not_running", "target_exited")


class InspectParams(SessionParams):
    """What to read from the Mycel runtime: its flows, one flow (``name``), connectors, types or transforms."""

    what: INSPECTABLE = Field("flows", description="flows, flow (with name), connectors, types or transforms.")
    name: Text | None = Field(None, description="The flow, for what=flow.")


class ConsumeParams(SessionParams):
    """One message pulled from a manual-consume connector through its flow."""

    connector: Text = Field(..., description="The connector to pull from (ready lists those with manualConsume).")


class TimelineParams(SessionParams):
    """A Mycel thread's own events, oldest first."""

    thread_id: StrictInt | None = Field(None, description="The thread; default: the stopped thread.")


def _mycel(ctx: Context, key: str | None) -> Session:
    """The session ``key`` when it is a live Mycel session; ``unsupported`` naming its backend otherwise."""
    session = session_of(ctx, key)
    if not factory.is_mycel(session.backend):
        raise RelayError("unsupported", f"Session {session.name} ({session.backend.kind}) is not a Mycel session; "
                         "only Mycel sessions have inspect, ready, consume and timeline.",
                         "Connect to a Mycel service: connect mycel ws://HOST:9090/debug.")
    session.require_live()
    return session


async def _inspect(ctx: Context, p: InspectParams) -> dict[str, Any]:
    backend: Any = _mycel(ctx, p.session).backend
    return {"what": p.what, "inspection": await backend.inspect(p.what, p.name)}


async def _ready(ctx: Context, p: SessionParams) -> dict[str, Any]:
    backend: Any = _mycel(ctx, p.session).backend
    return {"sources": await backend.ready()}


async def _consume(ctx: Context, p: ConsumeParams) -> dict[str, Any]:
    backend: Any = _mycel(ctx, p.session).backend
    return await backend.consume(p.connector)


async def _timeline(ctx: Context, p: TimelineParams) -> dict[str, Any]:
    session = _mycel(ctx, p.session)
    thread_id = p.thread_id
    if thread_id is None:
        if session.stop is None:
            raise RelayError("invalid_request", f"Session {session.name} is not paused, so timeline needs a "
                             "thread_id.", "List the threads with threads.", {"field": "thread_id"})
        thread_id = session.stop.thread_id
    backend: Any = session.backend
    return {"thread_id": thread_id, "events": backend.timeline(thread_id)}


OPERATIONS: tuple[Operation, ...] = (
    Operation("inspect", InspectParams, _inspect, "Read a Mycel runtime's flows, connectors, types or transforms.",
              ("what", "inspection"), MYCEL_ERRORS, capability=MYCEL,
              when="Use it on a Mycel session to learn its flows (then stage breakpoints) and connectors.",
              http=(f"GET {S}/inspect/{{what}}",)),
    Operation("ready", SessionParams, _ready, "Tell a Mycel runtime to start its suspended connectors.",
              ("sources",), MYCEL_ERRORS, capability=MYCEL,
              when="Use it on a Mycel session to list its event sources; those with manualConsume need consume.",
              http=(f"POST {S}/ready",),
              example={}),
    Operation("consume", ConsumeParams, _consume, "Pull one message from a Mycel connector through its flow.",
              ("connector", "done", "thread_id"), (*MYCEL_ERRORS, "timeout"), capability=MYCEL,
              budget=lambda p, t: 2 * t,
              when="Use it on a Mycel session with a manual-consume connector (see ready); then wait for the stop.",
              http=(f"POST {S}/consume",),
              example={"connector": "orders_queue"}),
    Operation("timeline", TimelineParams, _timeline, "A Mycel thread's own events (flow, stage and rule), oldest "
              "first.", ("thread_id", "events"), MYCEL_ERRORS, capability=MYCEL,
              when="Use it on a Mycel session to see what a request went through: stages, rule results, errors.",
              http=(f"GET {S}/timeline",)),
)

RESULT_TYPES: dict[str, Any] = {
    "what": str, "inspection": Any, "sources": list[dict[str, Any]], "connector": str, "done": bool,
    "thread_id": int | None, "events": list[dict[str, Any]],
}
