"""The Mycel test peer: the demo runtime, plus faults a test can switch on and a way to cut every client.

Run it with ``python -m tests.peers.mycel_peer --port 0 [--fault F]``; its URL is the first line
on stdout. In a test, ``start_peer()`` serves it on 127.0.0.1 from a background thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from websockets.exceptions import ConnectionClosed

from jupyter_debug_relay.examples.mycel_demo import (
    Connection,
    MycelRuntime,
    RuntimeThread,
    build_parser,
    serve_forever,
)

__all__ = ["FAULTS", "FaultyRuntime", "MycelRuntime", "RuntimeThread", "main", "start_peer"]

FAULTS = ("garbage", "binary", "oversized", "silent", "drop", "error", "unreadable")


class FaultyRuntime(MycelRuntime):
    """A demo runtime whose answers break on purpose once ``fault`` is set (events still flow)."""

    def __init__(
        self, *, fault: str | None = None, oversized_bytes: int = 2 * 1024 * 1024, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.fault: str | None = None
        self.error = (-32603, "internal error")
        self.oversized_bytes = oversized_bytes
        self.set_fault(fault)

    def set_fault(self, fault: str | None, code: int = -32603, message: str = "internal error") -> None:
        """Break every answer from now on: ``garbage`` (not JSON), ``binary`` (a binary frame), ``oversized``
        (a huge message), ``silent`` (no answer), ``drop`` (the TCP connection cut without a close frame),
        ``error`` (the JSON-RPC error ``code``/``message``), ``unreadable`` (a parse error with a null id, as
        a server answers a message it cannot read); None answers normally again."""
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; faults are {', '.join(FAULTS)}")
        self.fault = fault
        self.error = (code, message)

    async def drop_clients(self) -> None:
        """Cut every client's TCP connection without a close frame, as a network failure would."""
        assert self._server is not None
        for ws in self._server.connections:
            ws.transport.abort()

    async def respond(self, conn: Connection, message: dict[str, Any]) -> None:
        if self.fault is None:
            await super().respond(conn, message)
            return
        if self.fault == "drop":
            conn.ws.transport.abort()
            return
        text: str | bytes
        if self.fault == "garbage":
            text = "}{ not JSON at all"
        elif self.fault == "binary":
            text = json.dumps(message).encode()
        elif self.fault == "error":
            code, why = self.error
            text = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": code, "message": why}})
        elif self.fault == "unreadable":
            text = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        elif self.fault == "oversized":
            text = json.dumps(
                {"jsonrpc": "2.0", "id": message.get("id"), "result": "x" * self.oversized_bytes}
            )
        else:
            return
        with contextlib.suppress(ConnectionClosed):
            await conn.ws.send(text)


def start_peer(fault: str | None = None, port: int = 0, **kwargs: Any) -> RuntimeThread:
    """A ``FaultyRuntime`` serving on 127.0.0.1 from a daemon thread; stop it with ``.stop()``."""
    peer = RuntimeThread(FaultyRuntime(fault=fault, **kwargs), port)
    peer.start()
    return peer


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.peers.mycel_peer --port 0 [--fault F]``."""
    parser = build_parser("python -m tests.peers.mycel_peer")
    parser.add_argument("--fault", choices=FAULTS, help="break every answer this way")
    args = parser.parse_args(argv)
    asyncio.run(serve_forever(FaultyRuntime(fault=args.fault), args.port))


if __name__ == "__main__":
    main()
