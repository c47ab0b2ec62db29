"""JSON-RPC 2.0 over a text transport: requests matched to answers, notifications, errors as RelayError."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable, Mapping
from enum import IntEnum
from typing import Any, Protocol

from ..errors import RelayError
from . import tasks
from .timeouts import DEFAULT_TIMEOUT, clamp_timeout

log = logging.getLogger(__name__)


class ErrorCode(IntEnum):
    """JSON-RPC 2.0 error codes: the standard ones, then the Mycel debug protocol's (server errors -32000..-32003)."""

    PARSE_ERROR = -32700  # invalid JSON received
    INVALID_REQUEST = -32600  # not a JSON-RPC 2.0 request
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SESSION_NOT_FOUND = -32000  # Mycel: a method called before debug.attach
    THREAD_NOT_FOUND = -32001  # Mycel: no such debug thread
    FLOW_NOT_FOUND = -32002  # Mycel: no such flow
    EVAL_ERROR = -32003  # Mycel: a CEL expression failed


_RELAY_BUG = "The peer could not read what the relay sent; please report this as a relay bug."
STANDARD_ERRORS: dict[int, tuple[str, str]] = {
    ErrorCode.PARSE_ERROR: ("protocol_error", _RELAY_BUG),
    ErrorCode.INVALID_REQUEST: ("protocol_error", _RELAY_BUG),
    ErrorCode.METHOD_NOT_FOUND: (
        "unsupported",
        "The peer does not know this method; check that its version supports it.",
    ),
    ErrorCode.INVALID_PARAMS: (
        "invalid_request",
        "Check the arguments of the request against the peer's documentation.",
    ),
    ErrorCode.INTERNAL_ERROR: ("invalid_request", "The peer could not carry out the request; its message says why."),
}
_OTHER_ERROR = ("invalid_request", "The peer refused the request; its message says why.")


class TextTransport(Protocol):
    """What the channel needs from a connection: whole text messages both ways."""

    async def send(self, text: str) -> None: ...

    async def recv(self) -> str: ...

    async def close(self) -> None: ...


def _copy(error: RelayError) -> RelayError:
    return RelayError(error.code, error.message, error.hint, dict(error.details))


class JsonRpcChannel:
    """A JSON-RPC 2.0 client over one connection.

    ``on_notification(method, params)`` gets every notification, on the reader's task.
    ``on_closed(error)`` is called once when the connection ends without ``close()``:
    the peer left (``connection_failed``) or broke the protocol (``protocol_error``,
    after which the channel closes the connection itself). Either way every pending
    request fails with that error, so nothing waits forever.
    """

    def __init__(
        self,
        transport: TextTransport,
        *,
        peer: str = "peer",
        timeout: float = DEFAULT_TIMEOUT,
        errors: Mapping[int, tuple[str, str]] | None = None,
        on_notification: Callable[[str, Any], None] | None = None,
        on_closed: Callable[[RelayError], None] | None = None,
    ) -> None:
        self.peer = peer
        self.timeout = clamp_timeout(timeout)
        self.error: RelayError | None = None
        self._transport = transport
        self._errors = {**STANDARD_ERRORS, **(errors or {})}
        self._on_notification = on_notification
        self._on_closed = on_closed
        self._ids = itertools.count(1)
        self._issued = 0
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._replies: set[asyncio.Task] = set()
        self._reader: asyncio.Task | None = None

    @property
    def closed(self) -> bool:
        return self.error is not None

    def start(self) -> None:
        """Start reading; call once, on the loop that will use the channel."""
        self._reader = asyncio.get_running_loop().create_task(self._read_loop(), name=f"jsonrpc-{self.peer}")

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send a request, return its result; ``timeout`` (clamped to 1-300 s) defaults to the channel's."""
        if self.error is not None:
            raise _copy(self.error)
        req_id = next(self._ids)
        self._issued = req_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[req_id] = (method, future)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
        if params is not None:
            message["params"] = params
        seconds = self.timeout if timeout is None else clamp_timeout(timeout)
        try:
            await self._transport.send(json.dumps(message))
            return await asyncio.wait_for(future, seconds)
        except asyncio.TimeoutError:
            raise RelayError(
                "timeout",
                f"{self.peer} did not answer {method} within {seconds:g} s.",
                "The peer may be busy or stuck; try again, or reconnect if it stays silent.",
                {"method": method, "timeout": seconds},
            ) from None
        finally:
            self._pending.pop(req_id, None)

    async def close(self) -> None:
        """Close the connection; pending requests fail with ``connection_failed``. Safe to call twice."""
        self._stop(RelayError("connection_failed", f"The connection to {self.peer} was closed."))
        await self._transport.close()

    def _stop(self, error: RelayError) -> None:
        if self.error is None:
            self.error = error
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
        for task in self._replies:
            task.cancel()
        for _method, future in self._pending.values():
            if not future.done():
                future.set_exception(_copy(self.error))

    async def _read_loop(self) -> None:
        try:
            while True:
                self._dispatch(await self._transport.recv())
        except RelayError as exc:
            error = exc
        except Exception as exc:  # whatever breaks the reader must still fail every waiter
            log.exception("reading from %s failed", self.peer)
            error = RelayError("connection_failed", f"Reading from {self.peer} failed: {exc!r}.")
        if self.error is not None:
            return
        self._stop(error)
        if self._on_closed is not None:
            self._on_closed(_copy(error))
        await self._transport.close()

    def _broken(self, what: str, text: str) -> RelayError:
        return RelayError(
            "protocol_error",
            f"{self.peer} sent {what}: {text[:120]!r}.",
            details={"peer": self.peer, "message": text[:1000]},
        )

    def _dispatch(self, text: str) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            raise self._broken("a message that is not JSON", text) from None
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            raise self._broken("a message that is not JSON-RPC 2.0", text)
        if "method" in msg:
            self._incoming(msg, text)
            return
        if "id" not in msg or ("result" in msg) == ("error" in msg):
            raise self._broken("a response without an id, or without exactly one of result and error", text)
        req_id = msg["id"]
        if req_id is None and isinstance(msg.get("error"), dict):
            error = msg["error"]
            raise RelayError(
                "protocol_error",
                f"{self.peer} could not read a request: {error.get('message', '')} ({error.get('code')}).",
                _RELAY_BUG,
                {"peer": self.peer, "message": text[:1000]},
            )
        known = isinstance(req_id, int) and not isinstance(req_id, bool) and 0 < req_id <= self._issued
        if not known:
            raise self._broken(f"an answer to a request it was never sent (id {req_id!r})", text)
        entry = self._pending.get(req_id)
        if entry is None or entry[1].done():
            return  # the answer to a request that already timed out
        method, future = entry
        if "error" in msg:
            future.set_exception(self._rpc_error(method, msg["error"], text))
        else:
            future.set_result(msg["result"])

    def _incoming(self, msg: dict[str, Any], text: str) -> None:
        method = msg["method"]
        if not isinstance(method, str):
            raise self._broken("a message whose method is not a string", text)
        if "id" in msg:
            reply = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": ErrorCode.METHOD_NOT_FOUND, "message": "method not found"},
            }
            tasks.spawn(self._transport.send(json.dumps(reply)), self._replies)
            return
        if self._on_notification is not None:
            try:
                self._on_notification(method, msg.get("params"))
            except Exception:
                log.exception("handling %s from %s failed", method, self.peer)

    def _rpc_error(self, method: str, error: Any, text: str) -> RelayError:
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            raise self._broken("an error without an integer code", text)
        code, message = error["code"], str(error.get("message", ""))
        relay_code, hint = self._errors.get(code, _OTHER_ERROR)
        details: dict[str, Any] = {"method": method, "rpc_code": code, "rpc_message": message}
        if "data" in error:
            details["data"] = error["data"]
        return RelayError(relay_code, f"{self.peer} refused {method}: {message} ({code}).", hint, details)
