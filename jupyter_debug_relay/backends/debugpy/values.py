"""How a Python target's values read in the variables tree: bytes by length and base64 chunks, cycles marked.

``PythonValues`` is a part of ``DebugpyBackend``. pydevd gives one object one variables reference while the
target is paused, so a child whose reference is one of its ancestors' is that ancestor again: a cycle.
"""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING

from ...model import Variable, VariablePage

BYTES_TYPES = ("bytes", "bytearray")
CHUNK = 48  # bytes per child: 64 base64 characters
PREVIEW = 60  # characters of a bytes value's repr shown after its length


class PythonValues:
    """Bytes and cycles of ``DebugpyBackend`` (which provides ``evaluate``)."""

    _parents: dict[int, int]  # a value's reference -> its parent's, while the target is paused

    if TYPE_CHECKING:
        async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable: ...

    def forget_values(self) -> None:
        """The target moves on: its references mean nothing any more."""
        self._parents.clear()

    def mark_cycles(self, ref: int, items: list[Variable]) -> None:
        """Mark the children of ``ref`` that are ``ref`` itself or one of its ancestors."""
        ancestors, at = set(), ref
        while at and at not in ancestors:
            ancestors.add(at)
            at = self._parents.get(at, 0)
        for var in items:
            if not var.ref:
                continue
            if var.ref in ancestors:
                var.cycle = True
            else:
                self._parents.setdefault(var.ref, ref)

    async def show_bytes(self, items: list[Variable], frame_id: int | None) -> None:
        """A bytes value reads as its length and the start of its repr; it pages as base64 chunks."""
        for var in items:
            if var.type in BYTES_TYPES and var.evaluate_name and not var.cycle:
                size = int((await self.evaluate(f"len({var.evaluate_name})", frame_id, "watch")).value)
                preview = var.value if len(var.value) <= PREVIEW else var.value[:PREVIEW] + "…"
                var.value = f"{size:,} bytes: {preview}"
                var.indexed, var.named = math.ceil(size / CHUNK), 0

    async def bytes_page(self, expr: str, frame_id: int | None, start: int, count: int) -> VariablePage:
        """Chunks ``start`` to ``start + count`` of a bytes value, each ``CHUNK`` bytes in base64, named by offset."""
        size = int((await self.evaluate(f"len({expr})", frame_id, "watch")).value)
        total = math.ceil(size / CHUNK)
        first, last = start * CHUNK, min(start + count, total) * CHUNK
        chunks = (f"[__import__('base64').b64encode(bytes(({expr})[i:i + {CHUNK}])).decode() "
                  f"for i in range({first}, {last}, {CHUNK})]")
        texts = ast.literal_eval((await self.evaluate(chunks, frame_id, "clipboard")).value) if first < last else []
        items = []
        for n, text in enumerate(texts):
            at = first + n * CHUNK
            end = min(at + CHUNK, size)
            items.append(Variable(name=f"{at}–{end - 1}", value=text, type="base64",
                                  evaluate_name=f"{expr}[{at}:{end}]"))
        return VariablePage(items=items, start=start, total=total)
