"""A WebSocket client carrying text messages, over the ``websockets`` asyncio client."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.frames import CloseCode

from ..errors import RelayError

DEFAULT_MAX_FRAME = 8 * 1024 * 1024


class WebSocketTransport:
    """One open WebSocket; ``recv`` and ``send`` raise ``RelayError`` instead of library errors."""

    def __init__(self, url: str, ws: ClientConnection, max_frame: int) -> None:
        self.url = url
        self.max_frame = max_frame
        self._ws = ws

    @classmethod
    async def connect(
        cls, url: str, *, timeout: float = 10.0, max_frame: int = DEFAULT_MAX_FRAME
    ) -> WebSocketTransport:
        """Open ``url`` (ws:// or wss://) within ``timeout`` s; a message over ``max_frame`` bytes fails."""
        parts = urlsplit(url)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise RelayError(
                "invalid_request",
                f"{url!r} is not a WebSocket URL.",
                "Give a URL such as ws://127.0.0.1:9090/debug.",
                {"url": url},
            )
        try:
            ws = await asyncio.wait_for(
                connect(
                    url, open_timeout=None, close_timeout=2, proxy=None, compression=None, max_size=max_frame
                ),
                timeout,
            )
        except asyncio.TimeoutError as exc:
            raise _failed(url, f"no answer within {timeout:g} s") from exc
        except InvalidHandshake as exc:
            raise _failed(url, f"the WebSocket handshake failed ({exc})") from exc
        except (OSError, InvalidURI) as exc:
            raise _failed(url, str(exc) or type(exc).__name__) from exc
        return cls(url, ws, max_frame)

    async def send(self, text: str) -> None:
        """Send one text message."""
        try:
            await self._ws.send(text)
        except ConnectionClosed as exc:
            raise self._closed(exc) from exc

    async def recv(self) -> str:
        """The next text message; raises ``RelayError`` once the connection is closed or broken."""
        try:
            message = await self._ws.recv()
        except ConnectionClosed as exc:
            raise self._closed(exc) from exc
        if isinstance(message, bytes):
            raise RelayError(
                "protocol_error",
                f"The peer at {self.url} sent a binary frame where JSON text was expected.",
                details={"url": self.url},
            )
        return message

    async def close(self) -> None:
        """Close the connection (a close handshake of at most a few seconds); safe to call twice."""
        await self._ws.close()

    def _closed(self, exc: ConnectionClosed) -> RelayError:
        if exc.sent is not None and exc.sent.code == CloseCode.MESSAGE_TOO_BIG:
            return RelayError(
                "protocol_error",
                f"The peer at {self.url} sent a message over the {self.max_frame} byte cap.",
                "Raise the frame cap if the peer's messages are legitimately that large.",
                {"url": self.url, "max_frame": self.max_frame},
            )
        return RelayError(
            "connection_failed",
            f"The connection to {self.url} closed ({exc}).",
            "Check that the peer is still running, then reconnect.",
            {"url": self.url},
        )


def _failed(url: str, why: str) -> RelayError:
    return RelayError("connection_failed", f"Cannot connect to {url}: {why}.", details={"url": url})
