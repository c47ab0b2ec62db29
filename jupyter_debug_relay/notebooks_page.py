"""The list of tutorial notebooks in notebooks/README.md, generated from ``notebooks/*.ipynb`` (each one's first
heading): ``python -m jupyter_debug_relay.notebooks_page [PAGE] [--check]`` (default notebooks/README.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import generated

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PAGE = NOTEBOOKS / "README.md"


def heading(path: Path) -> str:
    """The first Markdown heading of a notebook, without its ``#``."""
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    raise ValueError(f"{path.name} has no Markdown heading")


def notebooks_table() -> str:
    """One row per notebook of the folder, in order: its file and its heading."""
    rows = [f"| `{path.name}` | {heading(path)} |" for path in sorted(NOTEBOOKS.glob("*.ipynb"))]
    return "\n".join(["| notebook | what it shows |", "|---|---|", *rows])


BLOCKS = {"notebooks": notebooks_table}


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page's generated blocks; ``--check`` only compares."""
    return generated.main(sys.argv[1:] if argv is None else argv, PAGE, BLOCKS,
                          "python -m jupyter_debug_relay.notebooks_page")


if __name__ == "__main__":
    sys.exit(main())
