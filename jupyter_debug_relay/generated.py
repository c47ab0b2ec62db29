"""Pages whose blocks are generated from the code (``<!-- generated: NAME ... -->`` to ``<!-- end: NAME -->``):
each block rewritten, or (``--check``) compared."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path


def render(text: str, blocks: dict[str, Callable[[], str]]) -> str:
    """``text`` with every block of ``blocks`` rewritten by its function; a missing marker is an error."""
    for name, build in blocks.items():
        pattern = re.compile(rf"(<!-- generated: {name} [^\n]*-->\n)(?:.*?\n)?(<!-- end: {name} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"the page has no generated block {name!r}")
        text = pattern.sub(lambda m, build=build: m.group(1) + build() + "\n" + m.group(2), text)
    return text


def main(argv: list[str], page: Path, blocks: dict[str, Callable[[], str]], command: str) -> int:
    """Rewrite the blocks of the page (``page``, or the path in ``argv``); with ``--check`` only compare, and say
    ``command`` rewrites it."""
    paths = [a for a in argv if a != "--check"]
    path = Path(paths[0]) if paths else page
    old = path.read_text()
    new = render(old, blocks)
    if "--check" in argv:
        if new != old:
            print(f"{path} is out of date: run {command}", file=sys.stderr)
            return 1
        return 0
    if new != old:
        path.write_text(new)
    return 0
