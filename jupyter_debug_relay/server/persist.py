"""The server's breakpoints kept on disk (restored at start, saved on change), profiles, session export and import."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError, create_model

from ..engine.profiles import ProfileStore, spec
from ..errors import RelayError
from ..operations.dispatch import invalid
from ..operations.params import AddBreakpointParams, ExceptionMode
from . import calls
from .redact import REDACTED
from .routes import StartOptions

log = logging.getLogger(__name__)

BreakpointSpec = create_model(
    "BreakpointSpec", __base__=AddBreakpointParams, __doc__="A breakpoint to make: the add_breakpoint fields and "
    "whether it is on.", enabled=(StrictBool, Field(True, description="Whether the breakpoint is on.")))


class Profile(BaseModel):
    """A named breakpoint set: its breakpoints and, if given, the exception mode."""

    model_config = ConfigDict(extra="forbid", strict=True)

    breakpoints: list[BreakpointSpec] = Field(default_factory=list,  # type: ignore[valid-type]
                                              description="The breakpoints of the set.")
    exceptions: ExceptionMode | None = Field(None, description="The exception mode the set brings.")


class NamedProfile(Profile):
    """A saved profile and its name."""

    name: StrictStr = Field(..., description="The profile's name.")


class ProfilePut(Profile):
    """``PUT /breakpoint-profiles/{name}``: the set to keep; an empty body keeps the relay's breakpoints now."""

    breakpoints: list[BreakpointSpec] | None = Field(None,  # type: ignore[valid-type]
                                                     description="The breakpoints; default: the relay's now.")


class StartConfig(BaseModel):
    """How a session's target was started: the operation and its arguments."""

    model_config = ConfigDict(extra="forbid", strict=True)

    operation: Literal["launch", "attach", "connect"] = Field(..., description="launch, attach or connect.")
    args: dict[StrictStr, Any] = Field(default_factory=dict, description="The operation's arguments.")


class SessionExport(Profile):
    """A session's launch configuration and the relay's breakpoints: ``POST /sessions/import`` starts it again."""

    version: Literal[1] = Field(1, description="The format's version.")
    name: StrictStr | None = Field(None, description="The session's name.")
    start: StartConfig = Field(..., description="How the target was started.")


class SessionImport(SessionExport, StartOptions):
    """``POST /sessions/import``: an export, and whether to wait for the first stop."""


def parse_body(model: type[BaseModel], what: str, body: Any) -> Any:
    """``body`` checked against ``model``; ``invalid_request`` naming the field."""
    try:
        return model.model_validate({} if body is None else body)
    except ValidationError as exc:
        raise invalid(what, exc) from None


class Persistence:
    """Breakpoint sets of one relay in a home: profiles, export/import, and (``keep``) the saved set."""

    def __init__(self, relay: Any, root: str | None = None) -> None:
        self.relay = relay
        self.store = ProfileStore(root or None)
        self._writer: concurrent.futures.ThreadPoolExecutor | None = None
        self._written: Any = None
        self._unsubscribe: Any = None

    # -- the relay's breakpoints --------------------------------------------------------------

    def current(self, session: str | None = None) -> dict[str, Any]:
        """The relay's global breakpoints (with ``session``: those it sees) as specs, and its exception mode."""
        now = self.relay.operations.call("breakpoints", {"session": session})
        return {"breakpoints": [spec(bp) for bp in now["breakpoints"] if session or bp.session is None],
                "exceptions": now["exceptions"]}

    async def apply(self, profile: Profile, session: str | None = None) -> list[dict[str, Any]]:
        """Make every breakpoint of ``profile`` (one already there is kept; ``session``'s only if given) and set its
        exception mode."""
        made = []
        for bp in profile.breakpoints:
            fields = {**bp.model_dump(exclude={"enabled"}, exclude_none=True), "session": session}
            made.append((await calls.run(self.relay, "add_breakpoint", fields, redact=False))["breakpoint"])
            if not bp.enabled:
                made[-1] = (await calls.run(self.relay, "update_breakpoint", {"id": made[-1]["id"], "enabled": False},
                                            redact=False))["breakpoint"]
        if profile.exceptions is not None:
            await calls.run(self.relay, "set_exceptions", {"mode": profile.exceptions})
        return made

    # -- the saved set ------------------------------------------------------------------------

    def restore(self) -> list[RelayError]:
        """Make the saved breakpoints again (at start); what could not be made is logged and returned."""
        saved = self.store.saved()
        failed: list[RelayError] = []
        if saved is None:
            return failed
        for item in saved.get("breakpoints", []):
            try:
                asyncio.run(self.apply(parse_body(Profile, "breakpoints.json", {"breakpoints": [item]})))
            except RelayError as exc:
                log.warning("saved breakpoint %s not restored: %s", item, exc.message)
                failed.append(exc)
        if saved.get("exceptions"):
            self.relay.operations.call("set_exceptions", {"mode": saved["exceptions"]})
        self._written = self.current()
        return failed

    def keep(self) -> None:
        """Save the relay's breakpoints on every change from now on (on a writer thread of its own)."""
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="breakpoint saver")
        self._unsubscribe = self.relay.subscribe(self._changed)
        self.save()

    def _changed(self, event: Any) -> None:
        if event.event == "breakpoint" and self._writer is not None:
            self._writer.submit(self.save)

    def save(self) -> None:
        """Write the saved set when it differs from the last one written."""
        try:
            now = self.current()
        except RelayError:
            return  # the relay is closing
        if now != self._written:
            self.store.keep(now["breakpoints"], now["exceptions"])
            self._written = now

    def close(self) -> None:
        """Stop saving, after a last save (the exception mode has no event of its own)."""
        if self._writer is None:
            return
        self._unsubscribe()
        self._writer.submit(self.save)
        self._writer.shutdown(wait=True)
        self._writer = None


def export(session: dict[str, Any], started: dict[str, Any] | None, saved: dict[str, Any]) -> dict[str, Any]:
    """A session's export: how it was started and the relay's breakpoints."""
    if started is None:
        raise RelayError("unsupported", f"Session {session['id']} was not started through this server, so its launch "
                         "configuration is not known here.",
                         "Export a session that an agent launched, attached or connected over HTTP or MCP.")
    return {"version": 1, "name": session["name"], "start": started, **saved}


def check_unmasked(body: Any) -> None:
    """Refuse an import holding masked values: starting a target with ``<redacted>`` for a secret is a mistake."""
    def walk(value: Any, where: str) -> None:
        if value == REDACTED:
            raise RelayError("invalid_request", f"{where} is {REDACTED}: the export masked a secret.",
                             "Put the real value back before importing (or export with redact off).",
                             {"field": where})
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{where}[{i}]")

    walk(body, "start")

