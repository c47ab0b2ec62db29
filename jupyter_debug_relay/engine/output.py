"""A byte-capped ring of target output, read by cursor."""

from __future__ import annotations

from collections import deque

from ..model import OutputChunk, OutputPage

DEFAULT_CAP = 1 << 20


class OutputRing:
    """Keeps the newest output up to ``cap`` bytes; what falls out is counted in ``dropped``."""

    def __init__(self, cap: int = DEFAULT_CAP) -> None:
        self.cap = max(int(cap), 1024)
        self._chunks: deque[tuple[OutputChunk, int]] = deque()
        self._size = 0
        self._next_seq = 0
        self.dropped = 0  # bytes that fell out of the ring

    def append(self, category: str, text: str) -> OutputChunk:
        size = len(text.encode("utf-8", "replace"))
        if size > self.cap:  # keep the tail of a chunk bigger than the whole ring
            keep = text[-self.cap // 4 :]
            self.dropped += size - len(keep.encode("utf-8", "replace"))
            text, size = keep, len(keep.encode("utf-8", "replace"))
        chunk = OutputChunk(seq=self._next_seq, category=category, text=text)
        self._next_seq += 1
        self._chunks.append((chunk, size))
        self._size += size
        while self._size > self.cap:
            _, old = self._chunks.popleft()
            self._size -= old
            self.dropped += old
        return chunk

    def read(self, since: int = 0, limit: int | None = None) -> OutputPage:
        """Chunks with ``seq >= since`` (at most ``limit``); ``cursor`` continues after them."""
        chunks = [c for c, _ in self._chunks if c.seq >= since]
        if limit is not None:
            chunks = chunks[:limit]
        cursor = chunks[-1].seq + 1 if chunks else max(since, self._first_seq())
        return OutputPage(chunks=chunks, cursor=cursor, dropped=self.dropped)

    def tail(self, count: int) -> OutputPage:
        chunks = [c for c, _ in self._chunks][-count:] if count > 0 else []
        return OutputPage(chunks=chunks, cursor=self._next_seq, dropped=self.dropped)

    def _first_seq(self) -> int:
        return self._chunks[0][0].seq if self._chunks else self._next_seq

    @property
    def size(self) -> int:
        return self._size
