"""The Mycel demo's CEL: Mycel's extension functions on cel-python, its errors, and how the server reports them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from jupyter_debug_relay.examples.mycel_demo import Flow, MycelRuntime, Rule, RuntimeThread
from jupyter_debug_relay.examples.mycel_demo.cel import (
    EXTENSIONS,
    CelCompileError,
    CelError,
    condition_holds,
    evaluate_typed,
)
from jupyter_debug_relay.protocols.jsonrpc import ErrorCode

ROOT = Path(__file__).resolve().parent.parent
DATA = {
    "input": {
        "email": " Ann@Example.COM ",
        "name": "Ann",
        "amount": 15,
        "tags": ["b", "a", "b"],
        "items": [{"sku": "x", "price": 3.5}, {"sku": "y", "price": 1}, {"sku": "z"}],
    },
    "output": {},
    "enriched": {"existing_user": None},
}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")

# Every extension function: an expression using it, its JSON value and its CEL type.
EXTENSION_CASES: dict[str, tuple[str, Any, str]] = {
    "lower": ("lower(input.email)", " ann@example.com ", "string"),
    "upper": ('input.name.upper()', "ANN", "string"),
    "trim": ("trim(input.email)", "Ann@Example.COM", "string"),
    "split": ('split(lower(trim(input.email)), "@")', ["ann", "example.com"], "list"),
    "join": ('join(input.tags, "+")', "b+a+b", "string"),
    "replace": ('replace(input.name, "n", "N")', "ANN", "string"),
    "first": ("first(input.tags)", "b", "string"),
    "last": ("last([])", None, "null_type"),
    "unique": ("unique(input.tags)", ["b", "a"], "list"),
    "reverse": ("reverse(input.tags)", ["b", "a", "b"], "list"),
    "flatten": ("flatten([[1, 2], [3], 4])", [1, 2, 3, 4], "list"),
    "pluck": ('pluck(input.items, "price")', [3.5, 1, None], "list"),
    "sort_by": ('pluck(sort_by(input.items, "price"), "sku")', ["y", "x", "z"], "list"),
    "sum": ("sum([1, 2, 3])", 6, "int"),
    "avg": ("avg([1, 2.5])", 1.75, "double"),
    "min_val": ("min_val([3, 1.5, 2])", 1.5, "double"),
    "max_val": ("max_val([3, 1.5, 2])", 3, "int"),
    "type": ("type(input.amount) + type(2.0) + type(enriched.existing_user)", "intdoublenull_type", "string"),
    "has_field": ('has_field(input, "name") && !has_field(input, "age")', True, "bool"),
    "default": ('default(enriched.existing_user, "none")', "none", "string"),
    "coalesce": ("coalesce(null, enriched.existing_user, 7, 8)", 7, "int"),
    "uuid": ("uuid()", UUID, "string"),
    "now": ("now()", ISO_UTC, "string"),
    "now_unix": ("now_unix() > 1700000000", True, "bool"),
}


def test_every_extension_function_has_a_case():
    assert sorted(EXTENSION_CASES) == sorted(EXTENSIONS)


@pytest.mark.parametrize("name", sorted(EXTENSION_CASES))
def test_extension_function(name):
    expression, expected, cel_type = EXTENSION_CASES[name]
    value, kind = evaluate_typed(expression, DATA)
    if isinstance(expected, re.Pattern):
        assert expected.fullmatch(value), value
    else:
        assert value == expected and type(value) is type(expected)
    assert kind == cel_type


def test_standard_cel_still_works_beside_the_extensions():
    assert evaluate_typed('input.email.trim().endsWith(".COM") ? size(input.tags) : 0', DATA) == (3, "int")
    assert evaluate_typed("input.items.filter(i, has(i.price)).map(i, i.sku)", DATA) == (["x", "y"], "list")
    assert evaluate_typed("(double(input.amount) - 32.0) * 5.0 / 9.0", DATA)[0] == pytest.approx(-9.4444, 1e-4)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("input.name + ) 2", "syntax error at line 1, column 14"),
        ("lower(input.name", "syntax error: unexpected end of expression"),
        ('input.name == "Ann', "syntax error at line 1, column 15"),
        ("   ", "empty expression"),
        ("x" * 4001, "expression longer than 4000 characters"),
        ('__import__("os").getcwd()', "undeclared function '__import__'"),
        ('input.name.getcwd()', "undeclared function 'getcwd'"),
    ],
)
def test_compile_errors(expression, message):
    with pytest.raises(CelCompileError) as error:
        evaluate_typed(expression, DATA)
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("input.nope", "no such key: 'nope'"),
        ("nope", "undeclared reference to 'nope'"),
        ("input.amount / 0", "modulus or divide by zero"),
        ("input.tags[5]", "index out of range"),
        ("input.name + 1", "no such overload for '+' applied to (string, int)"),
        ("enriched.existing_user.name", "cannot select a field from null_type"),
        ("lower(input.amount)", "lower() needs a string, got int"),
        ("avg([])", "avg() of an empty list"),
        ('sum(["1"])', "sum() needs a list of numbers, got a string in it"),
        ('lower("a", "b")', "no such overload for lower()"),
    ],
)
def test_evaluation_errors(expression, message):
    with pytest.raises(CelError) as error:
        evaluate_typed(expression, DATA)
    assert not isinstance(error.value, CelCompileError)
    assert str(error.value) == message


def test_an_expression_nested_too_deeply_is_refused_not_a_crash():
    with pytest.raises(CelError, match="^expression nested too deeply$"):
        evaluate_typed("(" * 1999 + "1" + ")" * 1999, DATA)


def test_a_failing_extension_is_a_cel_error_value_that_short_circuits():
    assert evaluate_typed("false && lower(1) == 'x'", DATA) == (False, "bool")


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ('input.name == "Ann"', True),
        ('input.name == "Bob"', False),
        ("input.name", False),  # a string, not a bool
        ("size(input.tags)", False),  # an int, not a bool
        ("input.nope == 1", False),  # fails
        ("input.name ==", False),  # does not compile
    ],
)
def test_a_condition_holds_only_when_it_is_the_bool_true(condition, holds):
    assert condition_holds(condition, DATA) is holds


# -- through the debug server ---------------------------------------------------------------------------

BROKEN = Flow(
    "broken",
    ("api", "POST /broken"),
    ("postgres", "broken"),
    ("transform", "write"),
    rules=(Rule("name", "upper(input.name)"), Rule("total", "input.amount * "), Rule("never", '"reached"')),
)
FAILING = Flow(
    "failing",
    ("api", "POST /failing"),
    ("postgres", "failing"),
    ("transform", "write"),
    rules=(Rule("domain", 'split(input.email, "@")[1]'),),
)


class Client:
    """A bare Mycel debug client on the wire: requests answered in order, notifications kept."""

    def __init__(self, url: str) -> None:
        self.ws = connect(url)
        self.ids = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.ids += 1
        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}))
        while "id" not in (message := json.loads(self.ws.recv(timeout=10))):
            self.events.append(message)
        assert message["id"] == self.ids
        return message

    def event(self, name: str) -> dict[str, Any]:
        for message in self.events:
            if message["method"] == name:
                self.events.remove(message)
                return message["params"]
        while (message := json.loads(self.ws.recv(timeout=10)))["method"] != name:
            self.events.append(message)
        return message["params"]


@pytest.fixture
def demo():
    runtime = RuntimeThread(MycelRuntime(flows=(BROKEN, FAILING)))
    runtime.start()
    client = Client(runtime.url)
    client.call("debug.attach", clientName="test")
    yield runtime, client
    client.ws.close()
    runtime.stop()


def test_a_rule_that_does_not_compile_fails_its_flow_and_its_rule_eval_says_why(demo):
    runtime, client = demo
    result = runtime.request("broken", {"name": "ann", "amount": 2}).result(10)
    why = "syntax error: unexpected end of expression"
    assert result == {"output": {"name": "ANN"}, "error": f"failed to compile expression for 'total': {why}"}
    first, second = client.event("event.ruleEval"), client.event("event.ruleEval")
    assert (first["target"], first["result"], first["error"]) == ("name", "ANN", "")
    assert (second["ruleIndex"], second["target"], second["result"]) == (1, "total", None)
    assert second["error"] == why
    assert client.event("event.flowEnd")["error"] == result["error"]


def test_a_rule_that_fails_at_run_time_fails_its_flow(demo):
    runtime, client = demo
    result = runtime.request("failing", {"email": "no-at-sign"}).result(10)
    assert result["error"] == "failed to evaluate expression for 'domain': index out of range"
    assert client.event("event.ruleEval")["error"] == "index out of range"


def test_evaluate_reports_cel_errors_with_the_eval_error_code(demo):
    runtime, client = demo
    client.call("debug.setBreakpoints", flow="failing", breakpoints=[{"stage": "transform", "ruleIndex": -1}])
    pending = runtime.request("failing", {"email": "ann@example.com"})
    thread = client.event("event.stopped")["threadId"]
    ok = client.call("debug.evaluate", threadId=thread, expression='upper(split(input.email, "@")[0])')
    assert ok["result"] == {"result": "ANN", "type": "string"}
    for expression, message in (
        ("input.email == ==", "eval error: syntax error at line 1, column 16"),
        ("input.nope", "eval error: no such key: 'nope'"),
        ("system(1)", "eval error: undeclared function 'system'"),
    ):
        error = client.call("debug.evaluate", threadId=thread, expression=expression)["error"]
        assert error == {"code": ErrorCode.EVAL_ERROR, "message": message}
    client.call("debug.continue", threadId=thread)
    assert pending.result(10)["output"] == {"id": 1, "domain": "example.com"}


def test_a_breakpoint_whose_condition_is_not_true_does_not_stop(demo):
    runtime, client = demo
    conditions = ["input.email", "input.nope == 1", "input.email ==", 'input.email == "b@x"']
    breakpoints = [{"stage": "transform", "ruleIndex": -1, "condition": c} for c in conditions]
    echoed = client.call("debug.setBreakpoints", flow="failing", breakpoints=breakpoints)["result"]
    assert [bp["condition"] for bp in echoed["breakpoints"]] == conditions
    assert runtime.request("failing", {"email": "a@x"}).result(10)["error"] == ""
    assert not [e for e in client.events if e["method"] == "event.stopped"]
    pending = runtime.request("failing", {"email": "b@x"})
    assert client.event("event.stopped")["stage"] == "transform"
    client.call("debug.continue", threadId=client.call("debug.threads")["result"]["threads"][0]["id"])
    assert pending.result(10)["error"] == ""


# -- without cel-python -----------------------------------------------------------------------------------

HIDE_CELPY = "import sys; sys.modules['celpy'] = None; "


def test_without_cel_python_the_program_exits_with_the_install_hint():
    code = HIDE_CELPY + "import runpy; runpy.run_module('jupyter_debug_relay.examples.mycel_demo', run_name='__main__')"
    done = subprocess.run(
        [sys.executable, "-c", code, "--port", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "Traceback" not in done.stderr
    assert "cel-python" in done.stderr and "pip install 'jupyter_debug_relay[demo]'" in done.stderr


def test_without_cel_python_the_runtime_raises_a_relay_error():
    code = HIDE_CELPY + (
        "from jupyter_debug_relay.examples.mycel_demo import RuntimeThread\n"
        "try:\n    RuntimeThread()\nexcept Exception as exc:\n    print(type(exc).__name__, exc.code, exc.hint)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    hint = "Install the demo extra: pip install 'jupyter_debug_relay[demo]'."
    assert done.stdout.strip() == f"RelayError unsupported {hint}"
