"""The Debug Adapter Protocol base protocol: Content-Length framing and a channel.

Implements the "Base protocol" section of the DAP specification: each message
is a header part (``Content-Length: N``, CRLF-separated, ended by an empty
line) followed by N bytes of UTF-8 JSON. ``DapChannel`` numbers outgoing
messages, matches responses to requests by ``request_seq``, hands events to a
callback and answers reverse requests (``runInTerminal``, ``startDebugging``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import RelayError
from ..transports.streams import ByteStream
from . import tasks
from .timeouts import clamp_timeout

log = logging.getLogger(__name__)

MAX_BODY = 64 << 20
MAX_HEADER_LINES = 16
PEEK = 4096  # bytes kept from each end of an oversized body, to find whose answer it is
SKIP_CHUNK = 1 << 20
_IS_RESPONSE = re.compile(rb'(?<!\\)"type"\s*:\s*"response"')
_ANSWER_SEQ = re.compile(rb'(?<!\\)"request_seq"\s*:\s*(\d+)')
_ANSWER_COMMAND = re.compile(rb'(?<!\\)"command"\s*:\s*"([A-Za-z]{1,40})"')
ENVELOPES: dict[str, tuple[tuple[str, type, bool], ...]] = {  # type -> (key, its type, whether it must be there)
    "response": (("request_seq", int, True), ("success", bool, True), ("message", str, False), ("body", dict, False)),
    "event": (("event", str, True), ("body", dict, False)),
    "request": (("seq", int, True), ("command", str, True), ("arguments", dict, False)),
}
_TYPE_NAMES = {int: "an integer", bool: "true or false", str: "a string", dict: "an object"}


def encode(message: dict[str, Any]) -> bytes:
    """One framed message, header and body in a single buffer (one write, no Nagle stall)."""
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader, limit: int | None = None) -> dict[str, Any] | None:
    """The next message, or None at a clean end of stream; a broken frame is a ``protocol_error``, and so is a body
    over ``limit`` bytes when given (a peer not yet trusted)."""
    length: int | None = None
    for count in range(MAX_HEADER_LINES + 1):
        try:
            line = await reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial and count == 0:
                return None
            raise _frame_error("the stream ended inside a header") from exc
        except asyncio.LimitOverrunError as exc:
            raise _frame_error("a header line is too long") from exc
        line = line[:-2]
        if not line:
            break
        name, sep, value = line.partition(b":")
        if not sep:
            raise _frame_error(f"bad header line {line[:80]!r}")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError as exc:
                raise _frame_error(f"bad Content-Length {value.strip()[:40]!r}") from exc
    else:
        raise _frame_error("too many header lines")
    if length is None or length < 0:
        raise _frame_error("no Content-Length header")
    if limit is not None and length > limit:
        raise _frame_error(f"a body of {length:,} bytes is over the {limit:,}-byte cap of this stage")
    if length > MAX_BODY:
        return await _skip_oversized(reader, length)
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise _frame_error("the stream ended inside a body") from exc
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise _frame_error(f"the body is not JSON ({exc})") from exc
    if not isinstance(message, dict) or "type" not in message:
        raise _frame_error("the body is not a DAP message object")
    return message


async def _skip_oversized(reader: asyncio.StreamReader, length: int) -> dict[str, Any]:
    """Read past a body over the cap; an answer to a request becomes that request's failure, anything else breaks.

    The stream stays in step (the body is consumed, never held whole), so a value too big to send fails
    only the request that asked for it; the session goes on.
    """
    head = tail = b""
    left = length
    try:
        while left:
            chunk = await reader.readexactly(min(left, SKIP_CHUNK))
            head = head or chunk[:PEEK]
            tail = (tail + chunk)[-PEEK:]
            left -= len(chunk)
    except asyncio.IncompleteReadError as exc:
        raise _frame_error("the stream ended inside a body") from exc
    seq = _ANSWER_SEQ.search(head) or _ANSWER_SEQ.search(tail)
    command = _ANSWER_COMMAND.search(head) or _ANSWER_COMMAND.search(tail)
    if not _IS_RESPONSE.search(head + tail) or seq is None:
        raise _frame_error(f"a body of {length:,} bytes is over the {MAX_BODY:,}-byte cap")
    name = command.group(1).decode() if command else "the request"
    return {"type": "response", "request_seq": int(seq.group(1)), "success": False, "command": name,
            "body": {"oversized": length},
            "message": f"The answer to {name} is {length:,} bytes, over the {MAX_BODY:,}-byte cap of one message; "
                       "ask for a part of the value (a slice, a head, a length)."}


def _frame_error(what: str) -> RelayError:
    return RelayError("protocol_error", f"Broken DAP frame: {what}.")


def check_envelope(message: dict[str, Any], peer: str) -> None:
    """Raise ``protocol_error`` unless the message's own keys (not its body) have the types DAP gives them."""
    kind = message["type"]
    if kind not in ENVELOPES:
        raise RelayError("protocol_error", f"{peer} sent a message of type {str(kind)[:40]!r}, not a request, "
                         "response or event.", details={"peer": peer, "field": "type"})
    for key, kind_of, required in ENVELOPES[kind]:
        value = message.get(key)
        if value is None and not required:
            continue
        if not isinstance(value, kind_of) or (kind_of is int and isinstance(value, bool)):
            shown = "missing" if value is None else repr(value)[:60]
            article = "an" if kind == "event" else "a"
            raise RelayError("protocol_error", f"{peer} sent {article} {kind} whose {key} is {shown}, not "
                             f"{_TYPE_NAMES[kind_of]}.", details={"peer": peer, "field": key})


class DapRequestError(RelayError):
    """The adapter answered a request with ``success: false``."""

    def __init__(self, command: str, message: str, body: dict[str, Any]) -> None:
        super().__init__(
            "invalid_request",
            message or f"The adapter refused {command!r}.",
            "Check the arguments; the message is the adapter's own.",
            {"command": command},
        )
        self.command = command
        self.body = body


EventHandler = Callable[[dict[str, Any]], None]
ReverseHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
CloseHandler = Callable[[Exception | None], None]


class DapChannel:
    """Requests, responses, events and reverse requests over one framed stream."""

    def __init__(
        self,
        stream: ByteStream,
        on_event: EventHandler,
        on_reverse: ReverseHandler,
        on_close: CloseHandler,
        timeout: float | None = None,
    ) -> None:
        self.stream = stream
        self.timeout = clamp_timeout(timeout)
        self._on_event = on_event
        self._on_reverse = on_reverse
        self._on_close = on_close
        self._seq = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._closed: Exception | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self) -> None:
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def send(self, message: dict[str, Any]) -> int:
        if self._closed is not None:
            raise RelayError("adapter_failed", f"The connection to {self.stream.label} is closed.")
        self._seq += 1
        message["seq"] = self._seq
        try:
            self.stream.write(encode(message))
        except ConnectionError as exc:
            raise RelayError("adapter_failed", f"The connection to {self.stream.label} is closed.") from exc
        return self._seq

    def send_request(self, command: str, arguments: dict[str, Any] | None = None) -> asyncio.Future:
        """Send a request now; the future resolves to the response body."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        seq = self.send({"type": "request", "command": command, "arguments": arguments or {}})
        self._pending[seq] = future
        future.add_done_callback(lambda _f: self._pending.pop(seq, None))
        return future

    async def request(
        self, command: str, arguments: dict[str, Any] | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request and wait for its response body, at most ``timeout`` seconds."""
        return await self.wait(command, self.send_request(command, arguments), timeout)

    async def wait(self, command: str, future: asyncio.Future, timeout: float | None = None) -> dict:
        limit = self.timeout if timeout is None else clamp_timeout(timeout)
        try:
            return await asyncio.wait_for(future, limit)
        except asyncio.TimeoutError:
            raise RelayError(
                "timeout",
                f"No answer to {command!r} from {self.stream.label} within {limit:g} s.",
                "The adapter is busy or stuck; try again, or stop the session.",
            ) from None

    async def _read_loop(self) -> None:
        error: Exception | None = None
        try:
            while True:
                message = await read_message(self.stream.reader)
                if message is None:
                    break
                self._dispatch(message)
        except RelayError as exc:
            error = exc
        except (ConnectionError, OSError) as exc:
            error = RelayError("adapter_failed", f"The connection to {self.stream.label} broke: {exc}.")
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # a bug here must still end the channel and fail every waiter, not the task
            log.exception("reading from %s failed", self.stream.label)
            error = RelayError("adapter_failed", f"Reading from {self.stream.label} failed: {exc!r}.")
        self._close(error)

    def _dispatch(self, message: dict[str, Any]) -> None:
        check_envelope(message, self.stream.label)
        kind = message["type"]
        if kind == "response":
            future = self._pending.pop(message["request_seq"], None)
            if future is None or future.done():
                return
            body = message.get("body") or {}
            if message["success"]:
                future.set_result(body)
            else:
                error = body.get("error")
                detail = error.get("format") if isinstance(error, dict) else None
                text = detail if isinstance(detail, str) and detail else message.get("message") or ""
                future.set_exception(DapRequestError(str(message.get("command", "?")), text, body))
        elif kind == "event":
            try:
                self._on_event(message)
            except Exception:  # a bug in a handler must not kill the channel
                log.exception("event handler failed for %s", message.get("event"))
        else:
            tasks.spawn(self._answer(message), self._tasks)

    async def _answer(self, request: dict[str, Any]) -> None:
        command = request["command"]
        response: dict[str, Any] = {"type": "response", "request_seq": request["seq"], "command": command}
        try:
            response["body"] = await self._on_reverse(command, request.get("arguments") or {})
            response["success"] = True
        except Exception as exc:
            response.update(success=False, message=str(getattr(exc, "message", exc)))
        if not self.closed:
            self.send(response)

    def _close(self, error: Exception | None) -> None:
        if self._closed is not None:
            return
        self._closed = error or RelayError("adapter_failed", f"{self.stream.label} closed the connection.")
        for future in list(self._pending.values()):
            if not future.done():
                future.set_exception(self._closed)
        self._pending.clear()
        self.stream.close()
        self._on_close(error)

    async def close(self) -> None:
        if self._reader_task is not None and not self._reader_task.done():
            self._reader_task.cancel()
            try:
                await self._reader_task
            except asyncio.CancelledError:
                pass
        self._close(None)
        for task in list(self._tasks):
            task.cancel()
