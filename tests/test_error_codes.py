"""Every error code the package raises or tests for is declared once, with a default hint and an HTTP status."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupyter_debug_relay
from jupyter_debug_relay.backends.mycel.messages import MYCEL_ERRORS
from jupyter_debug_relay.errors import CODES, RelayError
from jupyter_debug_relay.operations import OPERATIONS
from jupyter_debug_relay.protocols.jsonrpc import _OTHER_ERROR

PACKAGE = Path(jupyter_debug_relay.__file__).parent
TROUBLESHOOTING = PACKAGE.parent / "docs" / "troubleshooting.md"


def _strings(node: ast.AST) -> set[str]:
    """The string constants of an expression, but for keys looked up in it (``error.get("code")``, ``d["code"]``)."""
    keys = {id(n.args[0]) for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "get" and n.args}
    keys |= {id(n.slice) for n in ast.walk(node) if isinstance(n, ast.Subscript)}
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in keys}


def _is_code(node: ast.AST) -> bool:
    """``exc.code`` or ``error.get("code")``: a side of a comparison with an error code."""
    if isinstance(node, ast.Attribute):
        return node.attr == "code"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "code")


def _assigned(scope: ast.AST) -> dict[str, ast.AST]:
    return {t.id: n.value for n in ast.walk(scope) if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name)}


def _code_sides(node: ast.AST) -> list[ast.AST]:
    """Where ``node`` holds error codes: a ``RelayError``'s first argument (or ``code=``), or the other sides of a
    comparison with an error's code."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "RelayError":
        return node.args[:1] or [k.value for k in node.keywords if k.arg == "code"]
    if isinstance(node, ast.Compare) and any(map(_is_code, [node.left, *node.comparators])):
        return [side for side in [node.left, *node.comparators] if not _is_code(side)]
    return []


def codes_used(source: str) -> set[str]:
    """The codes a module's source gives a ``RelayError`` or compares an error's code with: written there, or
    through a name assigned in the same function or in the module."""
    tree = ast.parse(source)
    module = _assigned(tree)
    found: set[str] = set()
    for scope in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [tree]:
        assigned = {**module, **_assigned(scope)}
        for node in ast.walk(scope):
            for side in _code_sides(node):
                found |= _strings(assigned[side.id] if isinstance(side, ast.Name) and side.id in assigned else side)
    return found


def test_the_walk_finds_codes_given_compared_and_defaulted():
    source = '''
OUTRUN = ("module_one",)

def f(error, exc, status):
    code = {404: "not_here"}.get(status, "bad_thing")
    RelayError(code, "m")
    RelayError("raised_one", "m", "h")
    RelayError(code=str(error.get("code") or "fallback_one"), message="m")
    if exc.code in ("compared_one", "compared_two") or error.get("code") == "compared_three":
        pass
    return exc.code in OUTRUN
'''
    assert codes_used(source) == {"not_here", "bad_thing", "raised_one", "fallback_one", "compared_one",
                                  "compared_two", "compared_three", "module_one"}


def test_every_code_in_the_package_source_is_declared_and_every_declared_one_used():
    used: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for code in codes_used(path.read_text()):
            used.setdefault(code, []).append(str(path.relative_to(PACKAGE)))
    undeclared = {code: paths for code, paths in used.items() if code not in CODES}
    assert not undeclared, f"codes used but not declared in errors.CODES: {undeclared}"
    assert set(CODES) <= set(used), f"declared but never raised: {set(CODES) - set(used)}"


def test_every_code_an_operation_or_a_peer_table_names_is_declared():
    named = {code for op in OPERATIONS.values() for code in op.errors}
    named |= {code for code, _ in MYCEL_ERRORS.values()} | {_OTHER_ERROR[0]}
    assert named <= set(CODES), named - set(CODES)


def test_every_declared_code_has_a_hint_an_http_status_and_a_troubleshooting_section():
    sections = set(re.findall(r"^### `(\w+)`$", TROUBLESHOOTING.read_text(), re.M))
    for code, declared in CODES.items():
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", code), code
        assert declared.hint.strip() and declared.hint[0].isupper() and declared.hint.endswith("."), code
        assert 400 <= declared.status < 600, code
        assert code in sections, f"docs/troubleshooting.md has no section for {code}"


def test_an_error_raised_without_a_hint_gets_its_code_default():
    for code in ("unauthorized", "too_large", "forbidden", "read_only", "internal_error"):
        assert RelayError(code, "It went wrong.").hint == CODES[code].hint != ""
    assert RelayError("unauthorized", "It went wrong.", "Do this.").hint == "Do this."
