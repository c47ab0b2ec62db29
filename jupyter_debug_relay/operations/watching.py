"""Looking without a frame id: hover (a short value) and watch expressions, evaluated at every stop of a session."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictInt

from ..engine.session import Session
from ..errors import RelayError
from ..model import Watch
from . import params as P
from .base import PAUSED_ERRORS, SESSION_ERRORS, Context, Operation, S, session_of

HOVER_LENGTH = 120  # characters of a hover's value


class HoverParams(P.FrameParams):
    """An expression under the cursor: evaluated in hover context, its value cut short."""

    expression: P.Text = Field(..., description="The expression under the cursor, e.g. a name or an attribute.")


class WatchParams(P.SessionParams):
    """A watch expression to add to a session."""

    expression: P.Text = Field(..., description="An expression evaluated in the top frame at every stop.")


class WatchIndexParams(P.SessionParams):
    """One watch expression of a session by its 1-based index."""

    index: Annotated[StrictInt, Field(ge=1, description="The watch's index (1-based), as watches lists it.")]


async def values(session: Session) -> list[Watch]:
    """The session's watch expressions with their values in the top frame of its stop (errors said, not raised)."""
    paused = session.state == "paused"
    found = []
    for index, expression in enumerate(session.watches, 1):
        watch = Watch(index, expression)
        if paused:
            try:
                value = await session.evaluate(expression, None, "watch")
                watch.value, watch.type = value.value, value.type
            except RelayError as exc:
                watch.error = exc.message
        found.append(watch)
    return found


async def with_watches(session: Session, out: dict[str, Any]) -> dict[str, Any]:
    """A stop's result with the session's watch values beside it (when it has watches and stopped)."""
    if out.get("stop") is not None and session.watches:
        out["watches"] = await values(session)
    return out


async def _hover(ctx: Context, p: HoverParams) -> dict[str, Any]:
    value = await session_of(ctx, p.session).evaluate(p.expression, p.frame_id, "hover")
    if len(value.value) > HOVER_LENGTH:
        value.value, value.truncated = value.value[:HOVER_LENGTH] + "…", True
    return {"variable": value}


async def _add_watch(ctx: Context, p: WatchParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    if p.expression.strip() not in session.watches:  # the same expression twice is that watch
        session.watches.append(p.expression.strip())
    return {"watches": await values(session)}


async def _watches(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    return {"watches": await values(session_of(ctx, p.session))}


async def _remove_watch(ctx: Context, p: WatchIndexParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    if p.index > len(session.watches):
        raise RelayError("invalid_request", f"Session {session.name} has no watch {p.index} (it has "
                         f"{len(session.watches)}).", "List them with watches.", {"field": "index"})
    del session.watches[p.index - 1]
    return {"watches": await values(session)}


OPERATIONS = (
    Operation("hover", HoverParams, _hover, "A short value of an expression, as an editor's hover shows it.",
              ("variable",), (*PAUSED_ERRORS, "evaluation_failed"),
              when="Use it for a quick look at a name when paused; use evaluate for the whole value.",
              http=(f"POST {S}/hover",),
              example={"expression": "config.timeout"}),
    Operation("add_watch", WatchParams, _add_watch, "Watch an expression: it is evaluated at every stop.",
              ("watches",), SESSION_ERRORS,
              when="Use it for values to follow while stepping: every step's answer then carries them (watches).",
              http=(f"POST {S}/watch",),
              example={"expression": "len(queue)"}),
    Operation("watches", P.SessionParams, _watches, "A session's watch expressions and their values now.",
              ("watches",), SESSION_ERRORS,
              when="Use it to read every watch at once, or to find a watch's index to remove it.",
              http=(f"GET {S}/watch",)),
    Operation("remove_watch", WatchIndexParams, _remove_watch, "Stop watching an expression (by its index).",
              ("watches",), SESSION_ERRORS,
              when="Use it with an index from watches.",
              http=(f"DELETE {S}/watch/{{index}}",)),
)
