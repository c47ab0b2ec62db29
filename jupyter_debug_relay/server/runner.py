"""Serving the app with uvicorn: on a socket bound first (port 0 works), in the foreground or on a thread."""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn

from ..errors import RelayError
from ..remote import tls
from ..store.profiles import home
from ..tokens import remove_token_file, write_token_file
from .app import ServerConfig, create_app

TOKEN_ENV = "JUPYTER_DEBUG_RELAY_TOKEN"


def resolve_token(given: str | None) -> tuple[str, bool]:
    """The token: ``given``, else ``$JUPYTER_DEBUG_RELAY_TOKEN``, else a random one; and whether it is random."""
    token = given or os.environ.get(TOKEN_ENV, "")
    if token:
        return token, False
    return secrets.token_urlsafe(32), True


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (0: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by accepted sockets: no 40 ms delayed ACK
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise RelayError("connection_failed", f"Cannot listen on {host}:{port}: {exc.strerror}.",
                         "Pick another port (--port 0 picks a free one).") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def exposure(config: ServerConfig) -> str:
    """Refuse plain HTTP beyond loopback unless ``insecure``; the warning to print when it is insecure ("" if not)."""
    if tls.is_loopback(config.host) or (config.tls_cert and config.tls_key):
        return ""
    if not config.insecure:
        raise RelayError("unauthorized", f"Refusing to serve plain HTTP on {config.host}: the token and every value "
                         "would cross the network in clear text.",
                         "Give --tls-cert and --tls-key, or --tls-self-signed (it prints the fingerprint for "
                         "remote add --fingerprint); --insecure serves plain HTTP anyway.")
    return (f"WARNING: serving PLAIN HTTP on {config.host} (--insecure): anyone on the network can read the token and "
            "every value, and take over the sessions.")


def self_signed(host: str) -> tuple[str, str, str]:
    """The server's own certificate for ``host``, made once in the home and kept: cert file, key file, fingerprint."""
    folder = os.path.join(home(), "tls", host.replace(":", "_"))
    cert, key = os.path.join(folder, "relay-cert.pem"), os.path.join(folder, "relay-key.pem")
    if os.path.exists(cert) and os.path.exists(key):
        return cert, key, tls.file_fingerprint(cert)
    return tls.self_signed(host, folder)


class RelayServer:
    """The HTTP API (and MCP at ``/mcp``) over ``relay``, listening as ``config`` says."""

    def __init__(self, relay: Any, config: ServerConfig, *, token_file: bool | None = None) -> None:
        self.warning = exposure(config)
        token, generated = resolve_token(config.token)
        config.token = token
        self.relay, self.config = relay, config
        self._sock = bind(config.host, config.port)
        config.port = self._sock.getsockname()[1]
        mcp_app, mcp_lifespan = _mcp(relay, config) if config.mcp else (None, None)
        self.api = create_app(relay, config, shutdown=self.request_exit, mcp_app=mcp_app)
        if config.persist:
            self.api.persistence.restore()
            self.api.persistence.keep()
        self._lifespan = mcp_lifespan
        self._server = uvicorn.Server(uvicorn.Config(
            self._app, interface="asgi3", log_level="warning", lifespan="on", timeout_graceful_shutdown=3, ws="none",
            proxy_headers=False, server_header=False, ssl_certfile=config.tls_cert or None,
            ssl_keyfile=config.tls_key or None))
        self._serving: concurrent.futures.Future[None] | None = None
        self.token_file = self._write_token_file() if (generated if token_file is None else token_file) else None

    @property
    def url(self) -> str:
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"{'https' if self.config.tls_cert else 'http'}://{host}:{self.config.port}"

    async def _app(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._run_lifespan(receive, send)
            return
        await self.api.app(scope, receive, send)

    async def _run_lifespan(self, receive: Any, send: Any) -> None:
        async with self._lifespan() if self._lifespan else contextlib.nullcontext():
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            self.api.closing.set()
        await send({"type": "lifespan.shutdown.complete"})

    def _write_token_file(self) -> str:
        return write_token_file(f"jupyter-debug-relay-{os.getpid()}-{self.config.port}.json",
                                {"url": self.url, "token": self.config.token, "pid": os.getpid(),
                                 "home": self.relay.home})

    def request_exit(self) -> None:
        """Stop serving soon (after the answer in flight)."""
        self.api.closing.set()
        self._server.should_exit = True

    def run(self) -> None:
        """Serve in this thread until ``POST /shutdown`` or a signal."""
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self.close()

    def start(self) -> RelayServer:
        """Serve on the relay's own loop (a request reaches the operations with no thread hop); returns once it
        accepts connections."""
        self._serving = self.relay.submit(self._server.serve(sockets=[self._sock]))
        deadline = time.monotonic() + 30
        while not self._server.started:
            if self._serving.done() or time.monotonic() > deadline:
                raise RelayError("adapter_failed", "The relay server did not start.")
            time.sleep(0.005)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (the relay stays open: its owner closes it)."""
        self.request_exit()
        if self._serving is not None:
            with contextlib.suppress(Exception):
                self._serving.result(timeout)
            self._serving = None
        self.close()

    def close(self) -> None:
        """Let go of the socket, the persisted state and the token file (again: nothing)."""
        self.api.persistence.close()
        self._sock.close()
        remove_token_file(self.token_file)
        self.token_file = None


def _mcp(relay: Any, config: ServerConfig) -> tuple[Any, Callable[[], contextlib.AbstractAsyncContextManager[Any]]]:
    """MCP over streamable HTTP at ``/mcp`` and the lifespan its session manager needs."""
    from .mcp import http_app

    app, manager = http_app(relay, config)

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        async with manager.run():
            yield

    return app, lifespan
