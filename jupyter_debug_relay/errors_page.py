"""The table of error codes in docs/python-api.md, generated from ``errors.CODES``:
``python -m jupyter_debug_relay.errors_page [PAGE] [--check]`` (default docs/python-api.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from . import generated
from .errors import CODES

PAGE = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def codes_table() -> str:
    """One row per error code: the code, its HTTP status and its default hint."""
    head = ["| code | HTTP | default hint |", "|---|---|---|"]
    return "\n".join(head + [f"| `{code}` | {declared.status} | {declared.hint} |"
                             for code, declared in CODES.items()])


BLOCKS = {"error-codes": codes_table}


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page's generated blocks; ``--check`` only compares."""
    return generated.main(sys.argv[1:] if argv is None else argv, PAGE, BLOCKS,
                          "python -m jupyter_debug_relay.errors_page")


if __name__ == "__main__":
    sys.exit(main())
