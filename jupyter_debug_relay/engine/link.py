"""A session whose link to its peer can go down and come back (a remote relay's): the state ``disconnected``."""

from __future__ import annotations

from typing import Any

from ..errors import RelayError


class Link:
    """``disconnected`` while the link is down, the state it had when the link comes back; the breakpoints
    (those changed meanwhile included) are sent again then."""

    id: str
    state: str
    name: str
    manager: Any
    backend: Any
    exceptions: str | None
    ended: bool
    _set_state: Any
    on_breakpoint: Any
    _before_disconnect = "running"

    def on_disconnected(self) -> None:
        if not self.ended and self.state != "disconnected":
            self._before_disconnect = self.state
            self._set_state("disconnected")

    def on_reconnected(self) -> None:
        if self.state == "disconnected":
            self._set_state(self._before_disconnect)
            self.manager.spawn(self.send_breakpoints())

    async def send_breakpoints(self) -> None:
        """The relay's breakpoints that apply to this session, to its backend; their results recorded."""
        store = self.manager.breakpoints
        sent = [bp for bp in store.list(self.id) if store.sendable(bp, self.backend.binds_pending)]
        await self.backend.apply_breakpoints(sent, store.exceptions if self.exceptions is None else self.exceptions)
        for bp_id, result in self.backend.breakpoint_results.items():
            self.on_breakpoint(bp_id, result)

    def check_link(self) -> None:
        if self.state == "disconnected":
            raise RelayError("connection_failed", f"Session {self.name} is disconnected from its remote relay; it "
                             "comes back by itself when the link does.", "Wait, then try again (list shows its state).")
