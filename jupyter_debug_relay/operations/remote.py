"""Remote relays: ``remote_add``, ``remote_list``, ``remote_remove``, and starting a target on one (``--on``).

A remote relay's sessions are sessions here, named ``NAME/ID`` (``lab/s1``), whose backend forwards every verb
to the remote's HTTP API and takes its events from the remote's event stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, StrictStr

from ..engine.session import Session
from ..errors import RelayError
from . import params as P
from .base import Context, Operation, start_answer

if TYPE_CHECKING:
    from ..remote.client import Remote
    from ..remote.registry import Remotes


class RemoteAddParams(P.Params):
    """A remote relay to add: its URL, the file holding its token, and its certificate's fingerprint."""

    name: P.Text = Field(..., description="The remote's name; its sessions are listed as NAME/s1.")
    url: P.Text = Field(..., description="The remote relay's URL, e.g. https://10.0.0.5:8765 (http only on loopback).")
    token_file: P.Text = Field(..., description="A file holding the remote relay's token (never the token itself).")
    fingerprint: StrictStr | None = Field(
        None, description="The SHA-256 fingerprint of the remote's certificate (a self-signed one), as it printed it.")


class RemoteNameParams(P.Params):
    """One remote relay, by its name."""

    name: P.Text = Field(..., description="The remote's name, as remote_add was given.")


def remotes(ctx: Context) -> Remotes:
    return ctx.remotes


def mirrors(ctx: Context, remote: Remote) -> list[Session]:
    """The sessions here that stand for ``remote``'s sessions."""
    return [s for s in ctx.manager.sessions.values()
            if s.backend.kind == "remote" and s.backend.remote is remote]


async def mirror(ctx: Context, remote: Remote, remote_id: str, plan: dict[str, Any] | None = None) -> Session:
    """A session here for ``remote``'s session ``remote_id``, started (its target too when ``plan`` says how)."""
    from ..remote.backend import RemoteBackend  # here, not at the top: it brings an HTTP client

    timeout = ctx.request_timeout
    return await ctx.manager.start(lambda events: RemoteBackend(events, remote, remote_id, plan, timeout),
                                   f"{remote.name}/{remote_id}")


async def discover(ctx: Context, remote: Remote) -> list[Session]:
    """Mirror the remote's live sessions not mirrored yet; every mirror of it."""
    known = {s.backend.session for s in mirrors(ctx, remote) if not s.ended}
    for info in (await remote.call("GET", "/sessions"))["sessions"]:
        if info.get("state") in ("running", "paused") and info.get("id") not in known:
            try:
                await mirror(ctx, remote, str(info["id"]))
            except RelayError as exc:  # it ended between the list and the mirror
                if exc.code not in ("target_exited", "session_not_found"):
                    raise
    return mirrors(ctx, remote)


def _listed(remote: Remote, sessions: list[Session]) -> dict[str, Any]:
    return {**remote.public(), "sessions": [s.name for s in sessions if not s.ended]}


async def start_on(ctx: Context, name: str, operation: str, args: dict[str, Any]) -> dict[str, Any]:
    """``operation`` (launch or attach) with ``args`` run on the remote relay ``name``, as a session here."""
    remote = remotes(ctx).get(name)
    made = await remote.call("POST", "/sessions", {"name": args.pop("name")} if args.get("name") else {})
    session = await mirror(ctx, remote, str(made["session"]["id"]), {"operation": operation, "args": args})
    return start_answer(session)  # as the remote's start answered them


async def _add(ctx: Context, p: RemoteAddParams) -> dict[str, Any]:
    from ..remote.client import read_token

    remote = await remotes(ctx).add(p.name, p.url, read_token(p.token_file), p.fingerprint, ctx.request_timeout)
    try:
        sessions = await discover(ctx, remote)
    except BaseException:
        await remotes(ctx).remove(p.name)
        raise
    return {"remote": _listed(remote, sessions), "sessions": [s.info() for s in sessions]}


async def _list(ctx: Context, p: P.NoParams) -> dict[str, Any]:
    listed = []
    for remote in remotes(ctx).items.values():
        sessions = mirrors(ctx, remote)
        if remote.connected:
            try:
                sessions = await discover(ctx, remote)
            except RelayError:
                pass  # shown as it is; its sessions say disconnected once their streams notice
        listed.append(_listed(remote, sessions))
    return {"remotes": listed}


async def _remove(ctx: Context, p: RemoteNameParams) -> dict[str, Any]:
    remote = remotes(ctx).get(p.name)
    sessions = [s for s in mirrors(ctx, remote) if not s.ended]
    for session in sessions:
        session.backend.leaving = True  # the remote's session goes on there; only this relay lets go of it
        await ctx.manager.close_session(session)
    await remotes(ctx).remove(p.name)
    return {"remote": _listed(remote, sessions)}


async def leave(ctx: Context) -> None:
    """Let go of every remote (the relay closes): sessions started here end there too, the others go on there."""
    for remote in list(remotes(ctx).items.values()):
        for session in mirrors(ctx, remote):
            session.backend.leaving = not session.backend.owned
            await ctx.manager.close_session(session)
    await remotes(ctx).close()


RESULT_TYPES: dict[str, Any] = {"remote": dict[str, Any], "remotes": list[dict[str, Any]]}

OPERATIONS: tuple[Operation, ...] = (
    Operation("remote_add", RemoteAddParams, _add, "Add a remote relay: its sessions become sessions here as NAME/s1.",
              ("remote", "sessions"), ("invalid_request", "unauthorized", "connection_failed", "file_not_found"),
              when="Use it to debug on another machine whose relay serves over TLS: its sessions join this relay's.",
              http=("POST /remotes",),
              example={"name": "lab", "url": "https://10.0.0.5:8765", "token_file": "~/.lab-token",
                       "fingerprint": "AB:CD:..."}),
    Operation("remote_list", P.NoParams, _list, "The remote relays, their state and their sessions.", ("remotes",),
              when="Use it to see which remotes are connected and which of their sessions are here.",
              http=("GET /remotes",)),
    Operation("remote_remove", RemoteNameParams, _remove, "Forget a remote relay; its sessions go on there.",
              ("remote",), ("invalid_request",),
              when="Use it when done with a remote; its targets keep running there.",
              http=("DELETE /remotes/{name}",)),
)
