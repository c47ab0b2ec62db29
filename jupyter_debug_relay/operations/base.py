"""What every operation is made of: the ``Operation`` record, the context it runs against, shared lookups."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..engine.manager import SessionManager
from ..engine.session import Session
from ..errors import RelayError
from ..store.profiles import ProfileStore
from . import params as P

if TYPE_CHECKING:
    from ..remote.registry import Remotes

Run = Callable[[Any, Any], Awaitable[Any]]  # a dict of model objects, or one model object


class Context(Protocol):
    """What an operation runs against: the relay's session manager, breakpoint profiles, remote relays and request
    timeout."""

    manager: SessionManager
    profiles: ProfileStore
    remotes: Remotes
    request_timeout: float


@dataclass(frozen=True)
class Operation:
    """One verb: its name, parameters model, coroutine, result keys, error codes and needed capability."""

    name: str
    params: type[P.Params]
    run: Run
    summary: str
    returns: tuple[str, ...]
    errors: tuple[str, ...] = ()
    capability: str | None = None
    aliases: dict[str, dict[str, Any]] = field(default_factory=dict)  # comm v1 name -> its own defaults
    budget: Callable[[Any, float], float] = lambda p, request_timeout: request_timeout
    when: str = ""  # when a model (an MCP client) should reach for it
    http: tuple[str, ...] = ()  # its HTTP endpoints, "METHOD /path" with the operation's fields in braces
    example: dict[str, Any] | None = None  # a request body for the OpenAPI document

    @property
    def takes_session(self) -> bool:
        return issubclass(self.params, P.SessionParams)


S = "/sessions/{session}"  # the HTTP path of one session
SESSION_ERRORS = ("session_not_found", "invalid_request")
PAUSED_ERRORS = (*SESSION_ERRORS, "not_paused", "target_exited", "timeout", "protocol_error")


def session_of(ctx: Context, key: str | None) -> Session:
    """The session named ``key``, or the most recent one whose start did not fail (the most recent if every one's
    did, so a call says why)."""
    manager = ctx.manager
    if key is not None:
        return manager.get(key)
    if not manager.sessions:
        raise RelayError("session_not_found", "There is no debug session yet.",
                         "Start one with launch, attach or connect.")
    sessions = list(manager.sessions.values())
    session = next((s for s in reversed(sessions) if s.ran or s.state != "failed"), sessions[-1])
    session.touch()
    return session


def waits(p: Any, request_timeout: float) -> float:
    """The time budget of an operation that waits ``p.timeout`` for a stop."""
    return p.timeout + request_timeout


def start_answer(session: Session) -> dict[str, Any]:
    """What a start (launch, attach, connect) answers: the session, the breakpoints it will not stop at, and the
    warnings of how its target runs."""
    info = session.info()
    return {"session": info, "unverified": unbound(session), "warnings": info.warnings}


def unbound(session: Session) -> list[Any]:
    """The breakpoints a started session will not stop at (unverified or refused), each with its reason."""
    return [bp for bp in session.manager.breakpoints.list(session.id)
            if bp.enabled and bp.status in ("unverified", "refused")]
