"""The grammar blocks of docs/magics.md, generated from the magics' own help:
``python -m jupyter_debug_relay.kernel.magics_page [PAGE] [--check]`` (default docs/magics.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import generated
from .help import HELP, bp_help

PAGE = Path(__file__).resolve().parents[2] / "docs" / "magics.md"


def _text(block: str) -> str:
    return f"```text\n{block.rstrip()}\n```"


BLOCKS = {"magics-help": lambda: _text(HELP), "bp-grammar": lambda: _text(bp_help())}


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page's generated blocks; ``--check`` only compares."""
    return generated.main(sys.argv[1:] if argv is None else argv, PAGE, BLOCKS,
                          "python -m jupyter_debug_relay.kernel.magics_page")


if __name__ == "__main__":
    sys.exit(main())
