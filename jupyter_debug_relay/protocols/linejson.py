"""Line-delimited JSON: one JSON object a line; any other line is the target's own output."""

from __future__ import annotations

import asyncio
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
