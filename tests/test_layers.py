"""The layer rule: the kernel and the panel reach the engine only through the facade and the operations."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_debug_relay"
LOWER = ("engine", "backends", "protocols", "transports")


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, as an absolute dotted name."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


@pytest.mark.parametrize(("folder", "forbidden"), [
    ("kernel", LOWER),
    ("widgets", (*LOWER, "kernel")),
])
def test_front_ends_import_nothing_below_the_facade(folder, forbidden):
    wrong = {f"{path.name}: {name}" for path in sorted((PACKAGE / folder).glob("*.py")) for name in imported(path)
             if any(name == f"jupyter_debug_relay.{f}" or name.startswith(f"jupyter_debug_relay.{f}.")
                    for f in forbidden)}
    assert not wrong, f"{folder}/ imports below the facade: {sorted(wrong)}"


def test_the_rule_sees_a_relative_import():
    assert "jupyter_debug_relay.engine.events" in imported(PACKAGE / "events.py")
