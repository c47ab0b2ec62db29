"""The layer rules: imports point down the layers, no module imports one that imports it back, and the kernel and
the panel reach the engine only through the facade and the operations."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_debug_relay"
LOWER = ("engine", "backends", "protocols", "transports")
# Each folder's layer, bottom up; the package's own modules (errors, model, text, ...) are the floor.
LAYERS = {"transports": 1, "protocols": 2, "source": 3, "examples": 3, "backends": 4, "remote": 4, "engine": 5,
          "store": 6, "operations": 7, "facade": 8, "pull": 9, "server": 10, "dapserver": 10, "widgets": 10,
          "kernel": 11, "cli": 12}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """Every import in ``path`` (at the top, in a function or for type checking): the absolute module, the names."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            found.append((".".join([*base, node.module] if node.module else base), [a.name for a in node.names]))
    return found


def imported(path: Path) -> set[str]:
    """Every dotted name ``path`` imports: each module, and each name taken from one."""
    return {full for module, names in imports(path) for full in (module, *(f"{module}.{n}" for n in names))}


def our_modules(path: Path) -> set[str]:
    """The package's modules that ``path`` imports: a submodule taken by name counts as itself, not its package."""
    found = set()
    for module, names in imports(path):
        for name in [f"{module}.{n}" if f"{module}.{n}" in MODULES else module for n in names] or [module]:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module_name(path):
                found.add(name)
    return found


GRAPH = {name: our_modules(path) for name, path in MODULES.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:  # the package itself: the public entry, above every layer
        return max(LAYERS.values()) + 1
    return LAYERS.get(parts[1], 0)


@pytest.mark.parametrize(("folder", "forbidden"), [
    ("kernel", LOWER),
    ("widgets", (*LOWER, "kernel")),
])
def test_front_ends_import_nothing_below_the_facade(folder, forbidden):
    wrong = {f"{path.name}: {name}" for path in sorted((PACKAGE / folder).glob("*.py")) for name in imported(path)
             if any(name == f"jupyter_debug_relay.{f}" or name.startswith(f"jupyter_debug_relay.{f}.")
                    for f in forbidden)}
    assert not wrong, f"{folder}/ imports below the facade: {sorted(wrong)}"


def test_imports_point_down_the_layers():
    up = sorted(f"{a} -> {b}" for a, deps in GRAPH.items() for b in deps if layer(b) > layer(a))
    assert not up, f"imports that point up: {up}"


def test_no_module_imports_one_that_imports_it_back():
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            circle = []
            while not circle or circle[-1] != v:
                circle.append(stack.pop())
                on_stack.discard(circle[-1])
            if len(circle) > 1:
                circles.append(sorted(circle))

    for module in GRAPH:
        if module not in index:
            visit(module)
    assert not circles, f"import circles: {circles}"


def test_the_rules_see_relative_lazy_and_type_checking_imports():
    assert "jupyter_debug_relay.engine.events" in imported(PACKAGE / "facade/events.py")
    assert "jupyter_debug_relay.kernel.extension" in GRAPH["jupyter_debug_relay"]  # imported inside a function
    assert "jupyter_debug_relay.engine.session" in GRAPH["jupyter_debug_relay.store.commands"]  # TYPE_CHECKING


def test_a_backend_knows_nothing_of_jupyter():
    jupyter = ("IPython", "ipykernel", "ipywidgets", "jupyter_client", "comm", "traitlets")
    wrong = sorted(f"{module_name(path)}: {name}" for path in (PACKAGE / "backends").rglob("*.py")
                   for name in imported(path) if name.split(".")[0] in jupyter)
    assert not wrong, f"backends that import Jupyter: {wrong}"


def test_the_architecture_page_names_every_folder_of_the_package_with_its_layer():
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    tree = page.split("## The tree")[1].split("\n## ")[0]
    named = {folder: int(level) for folders, level in re.findall(r"^\| (`\w+/`(?:, `\w+/`)*) \| (\d+) \|", tree, re.M)
             for folder in re.findall(r"`(\w+)/`", folders)}
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert set(LAYERS) == folders, "give each folder of the package its layer in LAYERS"
    assert named == LAYERS, "docs/architecture.md's table of the tree differs from the folders and their layers"
