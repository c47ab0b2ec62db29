"""A byte stream to a peer: an asyncio reader plus a writer, over pipes or TCP."""

from __future__ import annotations

import asyncio
import codecs
import socket
from collections.abc import Callable

from ..errors import RelayError


class ByteStream:
    """The reading and writing ends of one connection to a peer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, label: str) -> None:
        self.reader = reader
        self.writer = writer
        self.label = label

    def write(self, data: bytes) -> None:
        if self.writer.is_closing():
            raise ConnectionResetError(f"the connection to {self.label} is closed")
        self.writer.write(data)

    def close(self) -> None:
        if not self.writer.is_closing():
            self.writer.close()


async def forward_text(reader: asyncio.StreamReader, on_text: Callable[[str], None] | None,
                       at_end: Callable[[], None] | None = None) -> None:
    """Decode a pipe as UTF-8 as it arrives and hand each piece on (``None``: read and drop) until EOF, then call
    ``at_end``."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    while data := await reader.read(1 << 16):
        if on_text is not None and (text := decoder.decode(data)):
            on_text(text)
    if on_text is not None and (text := decoder.decode(b"", final=True)):
        on_text(text)
    if at_end is not None:
        at_end()


async def read_what_is_there() -> None:
    """Let text already in a pipe reach ``forward_text``'s callback: the event loop's three turns from a readable
    pipe (the selector sees it, the reader is fed, the reading task hands the text on)."""
    for _ in range(3):
        await asyncio.sleep(0)


def pipe_stream(proc: asyncio.subprocess.Process, label: str) -> ByteStream:
    """The stdout/stdin pipes of a spawned process as a stream."""
    assert proc.stdout is not None and proc.stdin is not None
    return ByteStream(proc.stdout, proc.stdin, label)


async def tcp_stream(host: str, port: int, timeout: float = 10.0) -> ByteStream:
    """Connect to ``host:port`` with TCP_NODELAY set (no 40 ms delayed-ACK stalls)."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, limit=1 << 20), timeout
        )
    except (OSError, asyncio.TimeoutError) as exc:
        raise RelayError(
            "connection_failed",
            f"Cannot connect to {host}:{port}: {exc or 'timed out'}.",
            details={"address": f"{host}:{port}"},
        ) from exc
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return ByteStream(reader, writer, f"{host}:{port}")
