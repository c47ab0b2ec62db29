"""Sessions made before their target (seed 004's ``POST /sessions``): ``create``, starting a target in one, and
``update_session`` (its name and idle timeout).

``create`` makes an empty session; launch, attach and connect take an optional ``session`` naming one, so a
front end that made it first (the HTTP API) starts its target there.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import replace
from typing import Any

from pydantic import create_model

from ..backends.base import Backend
from ..engine.session import Session
from ..errors import RelayError
from ..model import Breakpoint, as_dict
from . import params as P
from .base import Context, Operation, S, session_of


class _Unstarted(Backend):
    """The backend of a session made by ``create``: nothing runs until launch, attach or connect."""

    kind = "none"

    def unsupported(self, feature: str) -> RelayError:
        return RelayError("not_running", f"This session has no target yet, so no {feature}.",
                          "Launch, attach or connect in it first.")

    async def start(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        raise RelayError("not_running", "This session has no target yet.", "Launch, attach or connect in it first.")

    async def terminate(self) -> None:
        return None

    async def close(self) -> None:
        return None


# The idle timeout (seconds) of each session given one by create or update_session.
_TIMEOUTS: weakref.WeakKeyDictionary[Session, float] = weakref.WeakKeyDictionary()


def _set_timeout(ctx: Context, session: Session, minutes: float) -> None:
    """Stop ``session`` once it has been idle for ``minutes`` (replacing a timeout it had)."""
    watched = session in _TIMEOUTS
    _TIMEOUTS[session] = minutes * 60
    if not watched:
        ctx.manager.spawn(_expire(ctx, session))


async def _expire(ctx: Context, session: Session) -> None:
    """Stop ``session`` once it has been idle (no call, no waiter) for its timeout."""
    while not session.ended:
        seconds = _TIMEOUTS[session]
        left = session.last_activity + seconds - time.time()
        if left <= 0 and not session.waiters and session.state != "launching":
            session.emit("error", RelayError("timeout", f"Session {session.name} was idle for {seconds:g} s and was "
                                             "stopped.", "Create it with a larger timeout_minutes.").to_dict())
            await ctx.manager.close_session(session)
            return
        await asyncio.sleep(min(max(left, 0.05), 1.0))


def empty(ctx: Context, name: str | None = None) -> Session:
    """A new session with no target yet, to launch, attach or connect in."""
    return ctx.manager.create(_Unstarted, name)


async def _create(ctx: Context, p: P.CreateParams) -> dict[str, Any]:
    session = empty(ctx, p.name)
    if p.timeout_minutes is not None:
        _set_timeout(ctx, session, p.timeout_minutes)
    return {"session": session.info()}


async def _update_session(ctx: Context, p: P.UpdateSessionParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    if p.name is not None and p.name != session.name:
        if any(s.name == p.name and not s.ended for s in ctx.manager.sessions.values()):
            raise RelayError("invalid_request", f"A live session is already named {p.name!r}.",
                             "Pick another name.", {"field": "name"})
        session.name = p.name
        session.emit("session", {"state": session.state, "info": as_dict(session.info())})
    if p.timeout_minutes is not None:
        _set_timeout(ctx, session, p.timeout_minutes)
    seconds = _TIMEOUTS.get(session)
    return {"session": session.info(), "timeout_minutes": None if seconds is None else seconds / 60}


class _Into:
    """A context whose manager starts the next target in an existing session made by ``create``."""

    def __init__(self, ctx: Context, session: Session) -> None:
        self.request_timeout = ctx.request_timeout
        self.remotes = ctx.remotes
        self.manager = self
        self._session = session

    async def start(self, make: Any, name: str | None, exceptions: str | None = None,
                    early_end: RelayError | None = None) -> Session:
        session = self._session
        session.factory, session.backend, session.exceptions = make, make(session), exceptions
        session.early_end = early_end
        session.error = session.stop = None  # from a start that failed before
        if name:
            session.name = name
        await session.start()
        return session


def _into(op: Operation) -> Operation:
    """``op`` (launch, attach or connect) with an optional ``session`` made by ``create`` to start in."""
    params = create_model(op.params.__name__, __base__=(op.params, P.IntoSession), __doc__=op.params.__doc__)
    fields = set(op.params.model_fields)

    async def run(ctx: Context, p: Any) -> Any:
        inner = op.params.model_validate(p.model_dump(include=fields))
        if p.session is None:
            out = await op.run(ctx, inner)
        else:
            try:
                session = ctx.manager.get(p.session)
            except RelayError as exc:
                raise RelayError(exc.code, exc.message, f"Make it first with create (name {p.session!r}), or leave "
                                 f"out session to {op.name} in a new one.", {"field": "session"}) from None
            if session.state not in ("created", "failed"):  # failed: its start failed, so it has no target
                raise RelayError("invalid_request", f"Session {session.name} is {session.state}; {op.name} can only "
                                 "start a target in a session that has none yet, or whose start failed.",
                                 f"Make a new session (create) to {op.name} in, or leave out session.",
                                 {"field": "session"})
            out = await op.run(_Into(ctx, session), inner)
        ctx.manager.get(out["session"].id).started_with = {  # what export writes
            "operation": op.name, "args": inner.model_dump(exclude_defaults=True, exclude={"name"})}
        return out

    return replace(op, params=params, run=run)


def operations(core: dict[str, Operation]) -> tuple[Operation, ...]:
    """``create``, and launch, attach and connect from ``core`` made able to start in a created session."""
    return (
        Operation("create", P.CreateParams, _create, "Make an empty session to launch, attach or connect in later.",
                  ("session",), ("invalid_request",),
                  when="Use it only to reserve a session (and its idle timeout) before starting a target in it.",
                  http=("POST /sessions",),
                  example={"name": "agent-1", "timeout_minutes": 60}),
        *(_into(core[name]) for name in ("launch", "attach", "connect")),
        Operation("update_session", P.UpdateSessionParams, _update_session,
                  "Rename a session or give it a new idle timeout.", ("session", "timeout_minutes"),
                  ("session_not_found", "invalid_request"),
                  when="Use it to name a session for later calls, or to keep an idle session longer (timeout_minutes).",
                  http=(f"PATCH {S}",),
                  example={"name": "agent-1", "timeout_minutes": 120}),
    )
