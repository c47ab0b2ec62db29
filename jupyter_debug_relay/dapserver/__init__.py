"""The DAP front end: a relay session served over DAP for editors (``expose``); registers itself as its opener."""

from __future__ import annotations

from typing import Any

from ..facade.relay import Relay
from ..operations import editors
from .server import DapServer

__all__ = ["DapServer", "open_server"]


async def open_server(relay: Relay, session: str, port: int = 0, read_only: bool = False) -> dict[str, Any]:
    """Serve ``session`` over DAP (on the relay loop); closed with the relay; its url, port, token."""
    server = await DapServer(relay, session, read_only).open(port)
    relay.on_close(server.close)
    return {"url": server.url, "port": server.port, "token": server.token, "read_only": read_only,
            "connection_file": server.connection_file}


editors.OPENERS.append(open_server)
