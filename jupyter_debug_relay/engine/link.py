"""A session whose link to its peer can go down and come back: the state ``disconnected`` (a remote relay's, back by
itself) and ``reconnect`` (a Mycel socket's, asked for)."""

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
    start: Any
    stop: Any
    error: Any
    _before_disconnect = "running"

    def on_disconnected(self) -> None:
        if not self.ended and self.state != "disconnected":
            self._before_disconnect = self.state
            self._set_state("disconnected")

    def on_reconnected(self) -> None:
        if self.state == "disconnected":
            self._set_state(self._before_disconnect)
            self.manager.spawn(self.send_breakpoints())

    def sendable(self) -> tuple[list[Any], str]:
        """The relay's breakpoints that apply to this session, and its exception mode: what its backend is sent."""
        store = self.manager.breakpoints
        return ([bp for bp in store.list(self.id) if store.sendable(bp, self.backend.binds_pending)],
                store.exceptions if self.exceptions is None else self.exceptions)

    def took_breakpoints(self) -> None:
        """Record what the backend said of the breakpoints it was sent."""
        for bp_id, result in self.backend.breakpoint_results.items():
            self.on_breakpoint(bp_id, result)

    async def send_breakpoints(self) -> None:
        await self.backend.apply_breakpoints(*self.sendable())
        self.took_breakpoints()

    async def reconnect(self) -> None:
        """Open the same backend's connection again (after it dropped), with the relay's breakpoints as they are."""
        await self.backend.close()
        self.stop, self.error = None, None
        await self.start()

    def check_link(self) -> None:
        if self.state == "disconnected":
            raise RelayError("connection_failed", f"Session {self.name} is disconnected from its remote relay; it "
                             "comes back by itself when the link does.", "Wait, then try again (list shows its state).")
