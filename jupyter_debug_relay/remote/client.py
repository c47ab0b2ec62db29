"""One remote relay: its address, token and certificate pin, and the HTTP calls made to it."""

from __future__ import annotations

import os
import socket
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..errors import RelayError, answer_data
from . import tls
from .tls import is_loopback


def read_token(path: str) -> str:
    """The token kept in ``path`` (its first line); a token is never taken from a command line."""
    try:
        with open(os.path.expanduser(path)) as f:
            token = f.readline().strip()
    except OSError as exc:
        raise RelayError("file_not_found", f"Cannot read the token file {path!r}: {exc.strerror}.",
                         "Write the remote relay's token into a file (mode 0600) and give its path.",
                         {"field": "token_file"}) from None
    if not token:
        raise RelayError("invalid_request", f"The token file {path!r} is empty.",
                         "Put the remote relay's token on its first line.", {"field": "token_file"})
    return token


def checked_url(url: str, fingerprint: str | None) -> str:
    """``url`` without a trailing slash; plain HTTP to a host other than loopback is refused before any connection."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RelayError("invalid_request", f"{url!r} is not a relay's URL.",
                         "Give the URL the remote relay printed, e.g. https://10.0.0.5:8765.", {"field": "url"})
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise RelayError("unauthorized", f"Refusing plain HTTP to {parts.hostname}: the token and every value "
                         "would cross the network in clear text.",
                         "Serve the remote with TLS (serve --host ADDR --tls-self-signed) and use its https:// URL "
                         "with --fingerprint.", {"field": "url"})
    if parts.scheme == "http" and fingerprint:
        raise RelayError("invalid_request", "A fingerprint needs an https:// URL.", details={"field": "fingerprint"})
    return url.rstrip("/")


@dataclass
class Remote:
    """A remote relay server; ``client`` talks to it with the token, over the pinned TLS when it is https."""

    name: str
    url: str
    token: str = field(repr=False)
    fingerprint: str | None = None
    timeout: float = 30.0
    connected: bool = True
    client: httpx.AsyncClient = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.fingerprint = tls.normalize(self.fingerprint) if self.fingerprint else None
        self.url = checked_url(self.url, self.fingerprint)
        verify: ssl.SSLContext | bool = tls.client_context(self.fingerprint) if self.url.startswith("https") else True
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]  # a request's head and body: no delayed-ACK wait
        self.client = httpx.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"},
            transport=httpx.AsyncHTTPTransport(verify=verify, socket_options=nodelay, trust_env=False),
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)), trust_env=False)

    def public(self) -> dict[str, Any]:
        """What ``remote_list`` shows of it (never the token)."""
        return {"name": self.name, "url": self.url,
                "fingerprint": tls.shown(self.fingerprint) if self.fingerprint else None,
                "state": "connected" if self.connected else "disconnected"}

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None,
                   params: dict[str, Any] | None = None) -> Any:
        """The remote's JSON answer; its error as the same ``RelayError``; no route as ``connection_failed``."""
        query = {k: str(v).lower() if isinstance(v, bool) else v for k, v in (params or {}).items() if v is not None}
        try:
            response = await self.client.request(method, path, json=body, params=query)
        except httpx.HTTPError as exc:
            raise self.unreachable(exc) from None
        return self.answer(response)

    def answer(self, response: httpx.Response) -> Any:
        try:
            return answer_data(response, f"The remote relay {self.name}",
                               "Check that the URL is a jupyter-debug-relay server.")
        except RelayError as exc:
            if exc.code != "unauthorized":
                raise
            raise RelayError("unauthorized", f"The remote relay {self.name} refused the token.",
                             "Check the token file: it must hold the token the remote relay was served with.") from None

    def unreachable(self, exc: Exception) -> RelayError:
        """The error for a request that could not reach the remote (its certificate refused, or no route)."""
        cause: BaseException | None = exc
        while cause is not None and not isinstance(cause, ssl.SSLError):
            cause = cause.__cause__ or cause.__context__
        if isinstance(cause, ssl.SSLCertVerificationError):
            return RelayError("unauthorized", f"The remote relay {self.name}'s certificate was refused: "
                              f"{getattr(cause, 'verify_message', None) or cause}. Nothing was sent.",
                              "Check --fingerprint against the one the remote printed at start; a different one "
                              "means another server answers at that address.", {"url": self.url})
        return RelayError("connection_failed", f"Cannot reach the remote relay {self.name} at {self.url}: "
                          f"{type(exc).__name__}{': ' + str(exc) if str(exc) else ''}.",
                          "Check that it still serves and that the network lets you through.", {"url": self.url})

    async def check(self) -> dict[str, Any]:
        """Prove the token (``GET /info`` needs it) and the certificate; the remote's info."""
        info = await self.call("GET", "/info")
        if not isinstance(info, dict) or info.get("name") != "jupyter_debug_relay":
            raise RelayError("protocol_error", f"{self.url} is not a jupyter-debug-relay server.")
        return info

    async def close(self) -> None:
        await self.client.aclose()
