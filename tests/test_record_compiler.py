"""The recorder's compiled path, in a target Python of each version without a debugger: a function compiled again
with its records keeps its behaviour, its line events and its docstring, and its events say what each line did."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from tests import targets

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jupyter_debug_relay", "backends",
                    "debugpy", "")
RUNNER = """
import json, sys, types
def load(file, name):
    module = types.ModuleType(name)
    with open({here!r} + file) as f:
        exec(compile(f.read(), "<builtin " + name + ">", "exec"), module.__dict__)
    sys.modules[name] = module
    return module
load("_record_compiler.py", "_jupyter_debug_relay_record_compiler")
recorder = load("_recorder.py", "_jupyter_debug_relay_recorder")
sys.path.insert(0, {folder!r})
import app
def record(name):
    return json.loads(recorder.call("record", json.dumps(dict(kind="function", cap=4_000_000, max_chars=200,
                                                                name=name))))
def events():
    told = json.loads(recorder.call("since", json.dumps(dict(seq=0, limit=1_000_000))))
    return [(e[3], e[4], dict((n, t) for n, t in e[5]), e[6]) for e in told["events"]]
def lines(function):
    seen = []
    def trace(frame, event, arg):
        if frame.f_code.co_name == function.__name__:
            seen.append((event, frame.f_lineno))
        return trace
    return seen, trace
out = {{}}
{scenario}
print("OUT" + json.dumps(out))
"""

APP = '''
import functools


def grow(n):
    """Makes a list."""
    items = []
    for i in range(n):
        if i % 2:
            items.append(i)
        elif i == 2:
            continue
        else:
            pass
    while (left := len(items)) > 1:
        del items[0]
    try:
        1 / 0
    except ZeroDivisionError as error:
        kind = type(error).__name__
    return items, left, kind


def traced(x):
    y = (x +
         1)
    return y


def deco(function):
    @functools.wraps(function)
    def wrapper(*args):
        return function(*args)
    return wrapper


@deco
def decorated(a, type=3):
    b = a * type
    return b


def gen(n):
    for i in range(n):
        yield i
    return


class Box:
    def put(self, value):
        self.value = value
        return self


def outer():
    def inner(v):
        return v + 1
    return inner
'''


def python_minor(python: str) -> int:
    done = subprocess.run([python, "-c", "import sys; print(sys.version_info[1])"], capture_output=True, text=True,
                          timeout=30)
    return int(done.stdout)


def _run(python: str, tmp_path, scenario: str) -> dict:
    folder = tmp_path / "app"
    folder.mkdir(exist_ok=True)
    (folder / "app.py").write_text(APP)
    program = RUNNER.format(here=HERE, folder=str(folder), scenario=textwrap.dedent(scenario))
    done = subprocess.run([python, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("OUT"))
    return json.loads(line[3:])


@pytest.fixture(params=[11, 12, 13])
def python(request) -> str:
    return targets.python_for(request.param)


def test_a_recorded_function_does_what_it_did_and_tells_each_line(python, tmp_path):
    out = _run(python, tmp_path, """
        out["plain"] = repr(app.grow(6))
        out["how"] = record("grow")["how"]
        out["recorded"] = repr(app.grow(6))
        out["doc"] = app.grow.__doc__
        out["events"] = events()
    """)
    assert out["how"] == "compiled"
    assert out["recorded"] == out["plain"] == "([5], 1, 'ZeroDivisionError')"
    assert out["doc"] == "Makes a list."
    events = [tuple(e) if not isinstance(e, list) else e for e in out["events"]]
    lines = [e[1] for e in events]
    assert lines[:6] == [7, 8, 9, 11, 14, 8]  # items = []; for; if i % 2; elif i == 2; pass (i = 0); for
    first = events[0]
    assert first[0] == "line" and first[2] == {"n": "6"}  # the call's arguments, told with its first line
    appended = [e for e in events if e[2].get("items") == "[1]"]
    assert appended and appended[0][1] == 8  # the list changed in place by line 10, told at the next line
    assert any(e[2].get("items") == "[1, 3]" for e in events)  # its repr kept when recorded, not read later
    assert ["line", 16, {"left": "3"}, None] in out["events"]  # the while's walrus, told at its body's line
    assert ["line", 15, {"items": "[3, 5]"}, None] in out["events"]  # del items[0] changed it in place
    raised = ["exception", 18, {"left": "1"}, "ZeroDivisionError: division by zero"]  # 3.12+: sys.monitoring tells
    if raised in out["events"]:
        assert ["line", 19, {}, None] in out["events"]
    else:  # 3.11: no exception event; the while's last test (the loop ends) is told with the handler's line
        assert ["line", 19, {"left": "1"}, None] in out["events"]
    assert ["line", 20, {"error": "ZeroDivisionError('division by zero')"}, None] in out["events"]
    assert ["line", 21, {"kind": "'ZeroDivisionError'"}, None] in out["events"]
    assert events[-1][0] == "return" and events[-1][3] == "([5], 1, 'ZeroDivisionError')"


def test_a_recorded_function_shows_a_debugger_the_same_line_events(python, tmp_path):
    out = _run(python, tmp_path, """
        out["table"] = sorted({line for _, _, line in app.traced.__code__.co_lines() if line})
        seen, trace = lines(app.traced)
        sys.settrace(trace); app.traced(1); sys.settrace(None)
        out["plain"] = seen
        record("traced")
        seen, trace = lines(app.traced)
        sys.settrace(trace); app.traced(1); sys.settrace(None)
        out["recorded"] = seen
        out["table_after"] = sorted({line for _, _, line in app.traced.__code__.co_lines() if line})
    """)
    assert out["recorded"] == out["plain"]
    assert out["table_after"] == out["table"] == [24, 25, 26, 27]


def test_a_decorated_function_a_generator_and_a_method_are_recorded_and_a_closure_is_refused(python, tmp_path):
    out = _run(python, tmp_path, """
        out["decorated"] = record("decorated")["how"]
        out["value"] = app.decorated(2)
        out["decorated_events"] = events()
        record("gen")
        out["gen"] = list(app.gen(2))
        out["gen_events"] = events()
        record("Box.put")
        box = app.Box().put([1])
        out["put_events"] = events()
        out["inner"] = record("outer.<locals>.inner")
        out["off"] = "error" not in json.loads(recorder.call("off", "{}"))
        out["after"] = app.decorated(3)
    """)
    assert out["decorated"] == "compiled" and out["value"] == 6 and out["after"] == 9
    assert out["decorated_events"][0][2] == {"a": "2", "type": "3"}  # a parameter named type works
    assert out["decorated_events"][-1][0::3] == ["return", "6"]
    assert out["gen"] == [0, 1]
    assert [e[0] for e in out["gen_events"]][-1] == "return"
    assert any(e[2].get("self", "").startswith("<app.Box object") for e in out["put_events"])
    if python_minor(python) == 11:  # made anew at each call: not compiled again, and 3.11 has no other way
        assert out["inner"]["error"] == "unsupported" and "made anew at each call" in out["inner"]["why"]
    else:
        assert out["inner"]["how"] == "sys.monitoring" and "made anew at each call" in out["inner"]["why"]


def test_a_target_older_than_311_answers_unsupported_saying_why(tmp_path):
    out = _run(targets.python_for(10), tmp_path, """
        out["answer"] = record("grow")
    """)
    assert out["answer"] == {"error": "unsupported", "version": out["answer"]["version"],
                             "why": "recording needs Python 3.11 or newer in the target"}
    assert out["answer"]["version"][:2] == [3, 10]


def test_what_a_recording_reads_of_the_boots_features_is_declared_and_there():
    """``_recorder.BOOT_NAMES`` names every boot module and name the recorder reads; each is defined at the top of
    that feature's file (a rename in the boot fails here, not silently in a target)."""
    import ast

    from jupyter_debug_relay.backends.debugpy import _nodelay_boot, _recorder

    source = open(os.path.join(HERE, "_recorder.py")).read()
    read = {node.attr for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id in ("lazy", "compiled", "guards")}
    assert read == {name for names in _recorder.BOOT_NAMES.values() for name in names}
    for module, names in _recorder.BOOT_NAMES.items():
        feature = module.removeprefix(_nodelay_boot.BOOT_MODULE + "_")
        tree = ast.parse(open(os.path.join(HERE, "boot", f"{feature}.py")).read())
        defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        defined |= {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(target, ast.Name)}
        assert set(names) <= defined, (feature, set(names) - defined)
