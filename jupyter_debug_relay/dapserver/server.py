"""A DAP server over one relay session: editors attach on a loopback port with a token, several at once.

It runs on the relay loop. A client proves itself first: before an ``attach`` whose arguments hold the token,
it gets capabilities (``initialize``) and refusals, nothing else; a wrong token closes the connection. After,
each request is an operation on the session (``Requests``) and each event of the session goes to every client.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import logging
import os
import secrets
from typing import Any

from ..errors import RelayError
from ..facade.events import Event
from ..facade.relay import Relay
from ..protocols.dap import encode, read_message
from ..tokens import remove_token_file, write_token_file
from . import requests

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
UNTRUSTED_BODY = 64 << 10  # the largest message read from a client that has not given the token yet


class DapServer:
    """Serves session ``session`` of ``relay`` over DAP; ``url`` and ``token`` are what a client needs."""

    def __init__(self, relay: Relay, session: str, read_only: bool = False) -> None:
        self.relay, self.session, self.read_only = relay, session, read_only
        self.token = secrets.token_urlsafe(24)
        self.port = 0
        self.connection_file: str | None = None  # the url and token for the same user (the CLI reads it)
        self.clients: set[Client] = set()
        self._server: asyncio.Server | None = None
        self._subscription: Any = None

    @property
    def url(self) -> str:
        return f"dap://{HOST}:{self.port}"

    async def open(self, port: int = 0) -> DapServer:
        """Listen on loopback ``port`` (0: a free one) and follow the session's events."""
        try:
            self._server = await asyncio.start_server(self._accept, HOST, port)
        except OSError as exc:
            raise RelayError("connection_failed", f"Cannot listen on {HOST}:{port}: {exc.strerror}.",
                             "Pick another port, or 0 for a free one.") from None
        self.port = self._server.sockets[0].getsockname()[1]
        self._subscription = self.relay.manager.bus.subscribe(self._tell)
        self.connection_file = write_token_file(f"jupyter-debug-relay-dap-{os.getpid()}-{self.port}.json",
                                           {"url": self.url, "token": self.token, "session": self.session})
        return self

    async def close(self) -> None:
        """Stop listening and let every client go."""
        remove_token_file(self.connection_file)
        if self._subscription is not None:
            self._subscription.close()
        if self._server is not None:
            self._server.close()
        for client in list(self.clients):
            client.close()
        if self._server is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)

    def _tell(self, event: Event) -> None:
        if event.session not in (self.session, ""):  # "": a breakpoint of every session
            return
        told: dict[int, list[dict[str, Any]]] = {}  # per way of counting lines
        for client in list(self.clients):
            if client.joined:
                shift = client.requests.shift
                if shift not in told:
                    told[shift] = requests.events(event, shift)
                for message in told[shift]:
                    client.send(dict(message))

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = Client(self, reader, writer)
        self.clients.add(client)
        try:
            await client.serve()
        finally:
            self.clients.discard(client)
            client.close()

    async def run(self, name: str, args: dict[str, Any]) -> Any:
        """Run an operation on the exposed session."""
        return await self.relay.operations.run(name, {**args, "session": self.session})


class Client:
    """One connected DAP client: its sequence numbers, whether it proved the token, its requests."""

    def __init__(self, server: DapServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.server, self.reader, self.writer = server, reader, writer
        self.joined = False
        self._seq = itertools.count(1)
        self.requests = requests.Requests(self._run)

    async def _run(self, name: str, args: dict[str, Any]) -> Any:
        return await self.server.run(name, {k: v for k, v in args.items() if v is not None})

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            message["seq"] = next(self._seq)
            self.writer.write(encode(message))

    def close(self) -> None:
        if not self.writer.is_closing():
            self.writer.close()

    async def serve(self) -> None:
        while not self.writer.is_closing():
            try:
                message = await read_message(self.reader, None if self.joined else UNTRUSTED_BODY)
            except (RelayError, ConnectionError):
                return
            if message is None:
                break
            if message.get("type") != "request" or not isinstance(message.get("command"), str):
                continue
            if not await self._handle(message):
                break
        if self.joined:
            self.joined = False
            with contextlib.suppress(RelayError):
                await self.requests.forget()

    async def _handle(self, request: dict[str, Any]) -> bool:
        """Answer one request; False when the connection is to end."""
        command = request["command"]
        args = request.get("arguments") if isinstance(request.get("arguments"), dict) else {}
        if command == "initialize":
            self.requests.initialize(args)
            self._answer(request, requests.CAPABILITIES)
        elif command == "disconnect":
            self._answer(request, {})
            return False
        elif not self.joined:
            return self._join(request, command, args)
        elif self.server.read_only and command in requests.CHANGING:
            self._refuse(request, RelayError(
                "read_only", f"This connection is read-only: {command} would change the session."))
        else:
            try:
                body = await self.requests.answer(command, args)
            except RelayError as exc:
                self._refuse(request, exc)
                return True
            self._answer(request, body)
            if command == "configurationDone":
                status = await self.server.run("status", {})
                for event in requests.stopped_now(status["session"]):
                    self.send(event)
        return True

    def _join(self, request: dict[str, Any], command: str, args: dict[str, Any]) -> bool:
        """The first request after ``initialize``: an ``attach`` with the token, or the connection ends."""
        given = args.get("token")
        if command != "attach" or not isinstance(given, str):
            self._refuse(request, RelayError(
                "unauthorized", f"Attach with the token first; {command} is refused until then.",
                'Send attach with {"token": TOKEN}: the token printed by expose.'))
            return command != "attach"
        if not hmac.compare_digest(given.encode(), self.server.token.encode()):
            log.warning("DAP client refused: wrong token")
            self._refuse(request, RelayError("unauthorized", "Wrong token: this connection is closed.",
                                             "Use the token printed with the dap:// address."))
            return False
        self.joined = True
        self._answer(request, {})
        self.send({"type": "event", "event": "initialized", "body": {}})
        return True

    def _answer(self, request: dict[str, Any], body: dict[str, Any]) -> None:
        self.send(requests.response(request, body))

    def _refuse(self, request: dict[str, Any], error: RelayError) -> None:
        self.send(requests.refusal(request, error))
