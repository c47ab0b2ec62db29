"""A byte-capped ring of target output, read by cursor: the session's whole output budget."""

from __future__ import annotations

from collections import deque

from ..model import OutputChunk, OutputPage

DEFAULT_CAP = 1 << 20


class OutputRing:
    """Keeps the newest output up to ``cap`` bytes; what falls out is counted in ``dropped``.

    It is the only place a session's output text is kept: the event history refers to its chunks by
    cursor, and the event queues let go of an output event once its chunk has left the ring.
    """

    def __init__(self, cap: int = DEFAULT_CAP) -> None:
        self.cap = max(int(cap), 1024)
        self._chunks: deque[tuple[OutputChunk, int]] = deque()
        self._size = 0
        self._next_seq = 0
        self.first = 0  # the cursor of the oldest chunk kept: every older one has fallen out
        self.dropped = 0  # bytes that fell out of the ring

    def append(self, category: str, text: str) -> tuple[OutputChunk, int, int]:
        """Keep ``text`` as the newest chunk; returns it, its UTF-8 size and the bytes cut off its head."""
        size = len(text.encode("utf-8", "replace"))
        cut = 0
        if size > self.cap:  # keep the tail of a chunk bigger than the whole ring
            text = text[-self.cap // 4 :]
            kept = len(text.encode("utf-8", "replace"))
            cut, size = size - kept, kept
            self.dropped += cut
        chunk = OutputChunk(seq=self._next_seq, category=category, text=text)
        self._next_seq += 1
        chunks = self._chunks
        chunks.append((chunk, size))
        self._size += size
        if self._size > self.cap:
            while self._size > self.cap:
                _, old = chunks.popleft()
                self._size -= old
                self.dropped += old
            self.first = chunks[0][0].seq
        return chunk, size, cut

    def read(self, since: int = 0, limit: int | None = None) -> OutputPage:
        """Chunks with ``seq >= since`` (at most ``limit``); ``cursor`` continues after them."""
        chunks = [c for c, _ in self._chunks if c.seq >= since]
        if limit is not None:
            chunks = chunks[:limit]
        cursor = chunks[-1].seq + 1 if chunks else max(since, self.first)
        return OutputPage(chunks=chunks, cursor=cursor, dropped=self.dropped)

    def clear(self) -> int:
        """Let go of every chunk (asked for: not counted as dropped); returns the cursor the next chunk gets."""
        self._chunks.clear()
        self._size = 0
        self.first = self._next_seq
        return self._next_seq

    def tail(self, count: int) -> OutputPage:
        chunks = [c for c, _ in self._chunks][-count:] if count > 0 else []
        return OutputPage(chunks=chunks, cursor=self._next_seq, dropped=self.dropped)

    def get(self, cursor: int) -> OutputChunk | None:
        """The chunk ``cursor`` if the ring still holds it."""
        index = cursor - self.first
        return self._chunks[index][0] if 0 <= index < len(self._chunks) else None

    @property
    def size(self) -> int:
        return self._size
