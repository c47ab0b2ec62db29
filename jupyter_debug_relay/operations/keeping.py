"""Breakpoints and sessions that last: named breakpoint profiles in the home, and a session's export and import.

An export is a session's launch configuration (the operation and arguments that started its target) with the
breakpoints it sees and the exception mode, as JSON; secrets in its arguments are masked unless asked otherwise.
An import makes a new session, gives it the export's breakpoints (its own) and starts its target again.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, create_model

from ..errors import RelayError
from ..redact import REDACTED, mask
from ..store.profiles import spec
from . import params as P
from .base import SESSION_ERRORS, Context, Operation, S, session_of
from .created import empty

BreakpointSpec = create_model(
    "BreakpointSpec", __base__=P.AddBreakpointParams, __doc__="A breakpoint to make: the add_breakpoint fields and "
    "whether it is on.", enabled=(StrictBool, Field(True, description="Whether the breakpoint is on.")))


class Profile(BaseModel):
    """A named breakpoint set: its breakpoints and, if given, the exception mode."""

    model_config = ConfigDict(extra="forbid", strict=True)

    breakpoints: list[BreakpointSpec] = Field(default_factory=list,  # type: ignore[valid-type]
                                              description="The breakpoints of the set.")
    exceptions: P.ExceptionMode | None = Field(None, description="The exception mode the set brings.")


class NamedProfile(Profile):
    """A saved profile and its name."""

    name: StrictStr = Field(..., description="The profile's name.")


class StartConfig(BaseModel):
    """How a session's target was started: the operation and its arguments."""

    model_config = ConfigDict(extra="forbid", strict=True)

    operation: Literal["launch", "attach", "connect"] = Field(..., description="launch, attach or connect.")
    args: dict[StrictStr, Any] = Field(default_factory=dict, description="The operation's arguments.")


class SessionExport(Profile):
    """A session's launch configuration and the breakpoints it sees: import starts it again."""

    version: Literal[1] = Field(1, description="The format's version.")
    name: StrictStr | None = Field(None, description="The session's name.")
    start: StartConfig = Field(..., description="How the target was started.")


class ImportParams(SessionExport, P.Params):
    """An export to start again in a new session, and how long to wait for its first stop."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    wait: StrictBool = Field(True, description="Wait for the first stop or the end; false answers at once.")
    timeout: P.Timeout = Field(10.0, description="Seconds to wait; past them the answer is state running.")


class ProfileName(P.Params):
    """A breakpoint profile by its name."""

    name: StrictStr = Field(..., description="The profile's name: letters, digits, '.', '_', '-' (up to 64).")


class ExportParams(P.SessionParams):
    """A session to export."""

    redact: StrictBool = Field(True, description="Mask secret-looking arguments and environment entries.")


def check_unmasked(body: Any, where: str = "start") -> None:
    """Refuse an import holding masked values: starting a target with ``<redacted>`` for a secret is a mistake."""
    if body == REDACTED:
        raise RelayError("invalid_request", f"{where} is {REDACTED}: the export masked a secret.",
                         "Put the real value back before importing (or export with redact off).", {"field": where})
    if isinstance(body, dict):
        for key, item in body.items():
            check_unmasked(item, f"{where}.{key}")
    elif isinstance(body, list):
        for i, item in enumerate(body):
            check_unmasked(item, f"{where}[{i}]")


async def apply(core: dict[str, Operation], ctx: Context, profile: Profile, session: str | None = None
                ) -> list[Any]:
    """Make ``profile``'s breakpoints (``session``'s own if given; one already there is kept), set its mode."""
    made = []
    for bp in profile.breakpoints:
        fields = {**bp.model_dump(exclude={"enabled"}, exclude_none=True), "session": session}
        add = core["add_breakpoint"]
        made.append((await add.run(ctx, add.params.model_validate(fields)))["breakpoint"])
        if not bp.enabled:
            update = core["update_breakpoint"]
            made[-1] = (await update.run(ctx, update.params(id=made[-1].id, enabled=False)))["breakpoint"]
    if profile.exceptions is not None:
        mode = core["set_exceptions"]
        await mode.run(ctx, mode.params(mode=profile.exceptions))
    return made


def now(ctx: Context, session: str | None = None) -> dict[str, Any]:
    """The relay's global breakpoints (with ``session``: those it sees) as specs, and the exception mode."""
    store = ctx.manager.breakpoints
    return {"breakpoints": [spec(bp) for bp in store.list(session) if session or bp.session is None],
            "exceptions": store.exceptions}


def operations(core: dict[str, Operation]) -> tuple[Operation, ...]:
    """Profiles, export and import; an import starts its target with ``core``'s launch, attach or connect."""

    async def _profiles(ctx: Context, p: P.NoParams) -> dict[str, Any]:
        return {"profiles": await asyncio.to_thread(ctx.profiles.names)}

    async def _save_profile(ctx: Context, p: ProfileName) -> dict[str, Any]:
        kept = now(ctx)
        return {"profile": await asyncio.to_thread(ctx.profiles.save, p.name, kept["breakpoints"],
                                                   kept["exceptions"])}

    async def _load_profile(ctx: Context, p: ProfileName) -> dict[str, Any]:
        saved = await asyncio.to_thread(ctx.profiles.load, p.name)
        try:
            profile = Profile.model_validate({k: v for k, v in saved.items() if k != "name"})
        except ValueError as exc:
            raise RelayError("invalid_request", f"Profile {p.name!r} is not a breakpoint set: {exc}",
                             "Save it again with save_profile.") from None
        return {"breakpoints": await apply(core, ctx, profile), "exceptions": ctx.manager.breakpoints.exceptions}

    async def _export(ctx: Context, p: ExportParams) -> dict[str, Any]:
        session = session_of(ctx, p.session)
        if session.started_with is None:
            raise RelayError("unsupported", f"Session {session.name} has no target yet, so there is no launch "
                             "configuration to export.", "Launch, attach or connect in it first.")
        start = mask(session.started_with) if p.redact else session.started_with
        return {"export": {"version": 1, "name": session.name, "start": start, **now(ctx, session.id)}}

    async def _import(ctx: Context, p: ImportParams) -> dict[str, Any]:
        check_unmasked(p.start.model_dump())
        session = empty(ctx)
        await apply(core, ctx, p, session.id)  # the export's breakpoints are the new session's own
        start = core[p.start.operation]
        args = {**p.start.args, "session": session.id, **({"name": p.name} if p.name else {})}
        try:
            params = start.params.model_validate(args)
        except ValueError as exc:
            raise RelayError("invalid_request", f"The export's start arguments do not fit {p.start.operation}: "
                             f"{exc}", "Fix start.args.", {"field": "start.args"}) from None
        await start.run(ctx, params)
        stop = None
        if p.wait:
            try:
                stop = await session.wait_for_stop(p.timeout)
            except RelayError as exc:
                if exc.code not in ("timeout", "target_exited"):
                    raise
        return {"session": session.info(), "state": session.state, "stop": stop}

    return (
        Operation("profiles", P.NoParams, _profiles, "The names of the saved breakpoint profiles.", ("profiles",),
                  when="Use it to see which breakpoint sets can be loaded.",
                  http=("GET /breakpoint-profiles",)),
        Operation("save_profile", ProfileName, _save_profile,
                  "Keep the relay's breakpoints (every session's) and exception mode under a name.", ("profile",),
                  ("invalid_request",),
                  when="Use it to keep a set of breakpoints for another day or another kernel.",
                  http=("POST /breakpoint-profiles/{name}/save",), example={}),
        Operation("load_profile", ProfileName, _load_profile,
                  "Make a saved profile's breakpoints (one already there is kept) and set its exception mode.",
                  ("breakpoints", "exceptions"), ("invalid_request", "not_found"),
                  when="Use it to bring back a breakpoint set saved with save_profile.",
                  http=("POST /breakpoint-profiles/{name}/load",), example={}),
        Operation("export", ExportParams, _export,
                  "A session's launch configuration and the breakpoints it sees, as JSON (secrets masked).",
                  ("export",), (*SESSION_ERRORS, "unsupported"),
                  when="Use it to save how a session was started, to start it again later with import.",
                  http=(f"GET {S}/export",)),
        Operation("import", ImportParams, _import,
                  "Start an export again in a new session with its breakpoints; waits for the first stop.",
                  ("session", "state", "stop"), ("invalid_request", "file_not_found", "adapter_failed",
                                                 "connection_failed"), budget=lambda p, t: 60.0 + p.timeout,
                  when="Use it with the JSON of export to debug the same target the same way again.",
                  http=("POST /sessions/import",),
                  example={"version": 1, "start": {"operation": "launch", "args": {"program": "main.py"}},
                           "breakpoints": [{"path": "main.py", "line": 3}], "exceptions": "none"}),
    )
