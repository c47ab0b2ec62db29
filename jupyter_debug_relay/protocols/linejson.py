"""Line-delimited JSON: one JSON object a line; any other line is the target's own output.

A line-JSON peer (the EZ debugger, seed 003) has no request ids: it answers commands in the order
they were sent, each with an event of a known name, or an ``error`` event. ``PendingAnswers``
matches answers to commands that way, as ``DapChannel`` matches by ``request_seq``.
"""

from __future__ import annotations

import asyncio
import collections
import json
from dataclasses import dataclass
from typing import Any

from ..errors import RelayError

MAX_LINE = 1 << 20
_CHUNK = 1 << 16


@dataclass
class Line:
    """One line as received (``text``, decoded, with its newline) and the JSON object it holds, if any."""

    text: str
    message: dict[str, Any] | None = None


class LineReader:
    """Splits a stream into lines of at most ``max_line`` bytes; a longer line is a protocol error."""

    def __init__(self, reader: asyncio.StreamReader, max_line: int = MAX_LINE) -> None:
        self._reader = reader
        self._max = max_line
        self._buf = bytearray()
        self._scanned = 0  # how much of the buffer is known to hold no newline
        self._eof = False

    async def read(self) -> Line | None:
        """The next line, or None at the end of the stream.

        Raises ``RelayError("protocol_error")`` as soon as a line outgrows the cap,
        without waiting for its end.
        """
        while True:
            end = self._buf.find(b"\n", self._scanned)
            if end >= 0:
                self._check(end)
                return self._take(end + 1)
            self._scanned = len(self._buf)
            self._check(self._scanned)
            if self._eof:
                return self._take(len(self._buf)) if self._buf else None
            chunk = await self._reader.read(_CHUNK)
            self._eof = not chunk
            self._buf += chunk

    def _check(self, length: int) -> None:
        if length > self._max:
            raise RelayError(
                "protocol_error",
                f"The peer sent a line of more than {self._max} bytes.",
                details={"limit": self._max},
            )

    def _take(self, size: int) -> Line:
        raw = bytes(self._buf[:size])
        del self._buf[:size]
        self._scanned = 0
        text = raw.decode("utf-8", "replace")
        stripped = text.strip()
        if stripped.startswith("{"):
            try:
                message = json.loads(stripped)
            except (ValueError, RecursionError):
                message = None
            if isinstance(message, dict):
                return Line(text, message)
        return Line(text)


async def write(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    """Send ``message`` as one line of compact JSON and wait until the transport takes it."""
    writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    await writer.drain()


@dataclass
class Pending:
    """A command sent and the event name that answers it; its future is cancelled once nobody waits."""

    command: str
    answer: str
    future: asyncio.Future[tuple[str, dict[str, Any]]]


class PendingAnswers:
    """Commands still owed an answer, oldest first; answers arrive in the order the commands were sent."""

    def __init__(self) -> None:
        self._queue: collections.deque[Pending] = collections.deque()

    def expect(self, command: str, answer: str) -> Pending:
        """Register a command about to be sent; await ``.future`` for ``(event name, data)``."""
        pending = Pending(command, answer, asyncio.get_running_loop().create_future())
        self._queue.append(pending)
        return pending

    def offer(self, name: str, data: dict[str, Any], unnamed_error_answers: bool) -> bool:
        """Hand the event to the oldest command if it answers it: its ``answer`` event, an ``error`` naming
        the command, or an ``error`` naming none when ``unnamed_error_answers`` (the peer's state says so)."""
        if not self._queue:
            return False
        pending = self._queue[0]
        if name != "error":
            matches = name == pending.answer
        elif "command" in data:
            matches = data["command"] == pending.command
        else:
            matches = unnamed_error_answers
        if matches:
            self._queue.popleft()
            if not pending.future.done():
                pending.future.set_result((name, data))
        return matches

    def fail_all(self, error: BaseException) -> None:
        """The peer is gone: every command still waiting fails with ``error``."""
        for pending in self._queue:
            if not pending.future.done():
                pending.future.set_exception(error)
        self._queue.clear()
