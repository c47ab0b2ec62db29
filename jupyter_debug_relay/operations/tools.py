"""Verbs every front end shares beyond the core: assigning to an expression, clearing output, attachable processes."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from ..backends.debugpy.processes import python_processes
from ..model import ProcessInfo
from ..transports import process
from . import params as P
from .base import PAUSED_ERRORS, SESSION_ERRORS, Context, Operation, S, session_of


class SetExpressionParams(P.FrameParams):
    """A new value for an assignable expression of a frame: a name, an attribute, an item."""

    expression: P.Text = Field(..., description="What to assign to, in the target's language: p.x, d['k'], arr[3].")
    value: P.Text = Field(..., description="The new value: an expression in the target's language.")


async def _set_expression(ctx: Context, p: SetExpressionParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    return {"variable": await session.set_expression(p.expression, p.value, p.frame_id)}


async def _clear_output(ctx: Context, p: P.SessionParams) -> dict[str, Any]:
    return {"cursor": session_of(ctx, p.session).output.clear()}


async def _processes(ctx: Context, p: P.NoParams) -> dict[str, Any]:
    debugged = {s.backend.pid for s in ctx.manager.sessions.values() if s.backend.pid and not s.ended}
    return {"processes": await asyncio.to_thread(python_processes, process.own_processes() | debugged)}


OPERATIONS = (
    Operation("set_expression", SetExpressionParams, _set_expression,
              "Assign a value to an expression: an attribute, an item or a variable.", ("variable",),
              (*PAUSED_ERRORS, "unsupported", "evaluation_failed"), capability="supportsSetExpression",
              when="Use it when paused to change an attribute (p.x) or an item (d['k'], arr[3]) in place.",
              http=(f"POST {S}/set-expression",),
              example={"expression": "p.x", "value": "0"}),
    Operation("clear_output", P.SessionParams, _clear_output,
              "Forget the target's output read so far; the cursor goes on from where it was.", ("cursor",),
              SESSION_ERRORS,
              when="Use it to start reading a session's output afresh, e.g. before the next step.",
              http=(f"DELETE {S}/output",)),
    Operation("processes", P.NoParams, _processes,
              "The local Python processes to attach to, and the port debugpy listens on for each.", ("processes",),
              when="Use it before attach to find a pid, or the port of a process started with debugpy --listen.",
              http=("GET /processes",)),
)

RESULT_TYPES: dict[str, Any] = {"processes": list[ProcessInfo]}
