"""The page that lists every change the boot makes inside pydevd and debugpy, generated from ``boot/table.py``:
``python -m jupyter_debug_relay.backends.debugpy.features_page [PAGE] [--check]`` (default docs/debugpy.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from ... import generated
from .boot import table

PAGE = Path(__file__).resolve().parents[3] / "docs" / "debugpy.md"


def pythons(feature: table.Feature) -> str:
    oldest, first_not = feature.pythons
    shown = f"{oldest[0]}.{oldest[1]}"
    if first_not is None:
        return f"{shown}+"
    last = (first_not[0], first_not[1] - 1)
    return shown if last == oldest else f"{shown}–{last[0]}.{last[1]}"


def names(feature: table.Feature) -> str:
    return "<br>".join(f"`{module.lstrip('?')}`: " + ", ".join(f"`{name}`" for name in found)
                       for module, found in feature.names.items())


def features_table() -> str:
    """One row per feature: its name, its Pythons, the debugpy versions it is proven on, when it is switched on, what
    it does, what is lost while it is off, and the names it reads or replaces."""
    head = ["| feature | Pythons | proven on debugpy | switched on after | what it does | while it is off | names it "
            "reads or replaces |", "|---|---|---|---|---|---|---|"]
    rows = [f"| `{f.name}` | {pythons(f)} | {' to '.join(f.proven)} | `{f.after}` | {f.what} | "
            f"{f.off[0].upper() + f.off[1:]}. | {names(f)} |" for f in table.FEATURES]
    return "\n".join(head + rows)


def proven() -> str:
    return (f"Proven on debugpy **{table.OLDEST}** to **{table.NEWEST}** (`pyproject.toml` asks for "
            f"`debugpy>={table.OLDEST},<1.9`).")


BLOCKS = {"features": features_table, "proven": proven}


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page's generated blocks; ``--check`` only compares."""
    return generated.main(sys.argv[1:] if argv is None else argv, PAGE, BLOCKS,
                          "python -m jupyter_debug_relay.backends.debugpy.features_page")


if __name__ == "__main__":
    sys.exit(main())
