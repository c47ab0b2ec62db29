"""The server's breakpoints kept on disk (restored at start, saved on change) and profiles given whole over HTTP."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..errors import RelayError
from ..model import as_dict
from ..operations import OPERATIONS, keeping
from ..operations.dispatch import invalid
from ..operations.keeping import BreakpointSpec, Profile
from ..store.profiles import ProfileStore, spec

log = logging.getLogger(__name__)


class ProfilePut(Profile):
    """``PUT /breakpoint-profiles/{name}``: the set to keep; an empty body keeps the relay's breakpoints now."""

    breakpoints: list[BreakpointSpec] | None = Field(None,  # type: ignore[valid-type]
                                                     description="The breakpoints; default: the relay's now.")


def parse_body(model: type[BaseModel], what: str, body: Any) -> Any:
    """``body`` checked against ``model``; ``invalid_request`` naming the field."""
    try:
        return model.model_validate({} if body is None else body)
    except ValidationError as exc:
        raise invalid(what, exc) from None


class Persistence:
    """Breakpoint sets of one relay in a home: profiles given whole, and (``keep``) the saved set."""

    def __init__(self, relay: Any, root: str | None = None) -> None:
        self.relay = relay
        if root:
            relay.profiles = ProfileStore(root)
        self.store = relay.profiles
        self._writer: concurrent.futures.ThreadPoolExecutor | None = None
        self._written: Any = None
        self._unsubscribe: Any = None

    # -- the relay's breakpoints --------------------------------------------------------------

    def current(self, session: str | None = None) -> dict[str, Any]:
        """The relay's global breakpoints (with ``session``: those it sees) as specs, and its exception mode."""
        now = self.relay.operations.call("breakpoints", {"session": session})
        return {"breakpoints": [spec(bp) for bp in now["breakpoints"] if session or bp.session is None],
                "exceptions": now["exceptions"]}

    async def apply(self, profile: Profile) -> list[dict[str, Any]]:
        """Make every breakpoint of ``profile`` (one already there is kept) and set its exception mode."""
        made = await asyncio.wrap_future(self.relay.submit(keeping.apply(OPERATIONS, self.relay, profile)))
        return as_dict(made)

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
