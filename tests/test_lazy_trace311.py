"""The 3.11 boot's code patcher: a call put at the start of code holding a breakpoint, nothing else changed."""

from __future__ import annotations

import dis
import sys
import traceback
from pathlib import Path

import pytest
from conftest import wait_until

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the patcher writes Python 3.11 bytecode")

if sys.version_info[:2] == (3, 11):
    from jupyter_debug_relay.backends.debugpy.boot import lazy_tracing as lazy

CALLS: list[str] = []
LINES: list[int | None] = []  # the line of the patched frame while it calls the hook


def hook() -> None:
    CALLS.append(sys._getframe(1).f_code.co_name)
    LINES.append(sys._getframe(1).f_lineno)


def signature_kinds(a, b=2, *rest, key, **named):  # noqa: ANN001, ANN002, ANN003, ANN201
    x = a + b
    try:
        if x > 3:
            raise ValueError(x)
    except ValueError:
        x = -x
    for i in range(3):
        x += i
    return x, rest, key, named


ONE_LINE: dict = {}
exec(compile("def one_line(): return 1\n", "<one line>", "exec"), ONE_LINE)  # its body shares the def's line
one_line = ONE_LINE["one_line"]


def closure(v):  # noqa: ANN001, ANN201
    def inner(w):  # noqa: ANN001, ANN202
        return v + w

    return inner


def counting(n):  # noqa: ANN001, ANN201
    yield from range(n)
    return n


def fails(value):  # noqa: ANN001, ANN201
    items = {"a": 1}
    return items[value] + 1


def lines_of(function) -> list:  # noqa: ANN001
    return [line for _, line in dis.findlinestarts(function.__code__)]


def line_of(function, text: str) -> int:  # noqa: ANN001
    import inspect

    source, first = inspect.getsourcelines(function)
    return first + next(k for k, line in enumerate(source) if text in line)


@pytest.fixture
def patched():  # noqa: ANN201
    """Patch functions for one test; their code is given back after it."""
    saved = {}

    def patch(function, lines):  # noqa: ANN001, ANN202
        saved.setdefault(function, function.__code__)
        function.__code__ = lazy.patch_tree(function.__code__, frozenset(lines))
        return function

    CALLS.clear()
    LINES.clear()
    lazy_hook = lazy.breakpoint_code_runs
    lazy.breakpoint_code_runs = hook
    yield patch
    lazy.breakpoint_code_runs = lazy_hook
    for function, code in saved.items():
        function.__code__ = code


def test_functions_of_every_signature_run_as_before_and_call_the_hook_once(patched) -> None:
    expected = signature_kinds(1, 3, 4, 5, key=1, z=2), one_line(), closure(2)(3)
    before = {f: lines_of(f) for f in (signature_kinds, one_line, closure)}
    patched(signature_kinds, [line_of(signature_kinds, "x = a + b")])
    patched(one_line, lines_of(one_line))
    patched(closure, [line_of(closure, "return inner")])
    assert (signature_kinds(1, 3, 4, 5, key=1, z=2), one_line(), closure(2)(3)) == expected
    assert CALLS == ["signature_kinds", "one_line", "closure"]
    assert {f: lines_of(f) for f in before} == before


def test_a_thread_already_traced_skips_the_call(patched) -> None:
    """Tracing on (pydevd's, for a hot function or after a stop): the call would only cost a frame per call."""
    patched(signature_kinds, [line_of(signature_kinds, "x = a + b")])
    expected = signature_kinds(1, key=0)
    sys.settrace(lambda frame, event, arg: None)
    try:
        traced = signature_kinds(1, key=0)
    finally:
        sys.settrace(None)
    assert traced == expected and CALLS == ["signature_kinds"]


def test_a_frame_paused_in_the_call_is_on_its_def_line(patched) -> None:
    """A pause can land while the call runs: the debugger then shows the frame, and a frame needs a line."""
    patched(signature_kinds, [line_of(signature_kinds, "x = a + b")])
    patched(one_line, lines_of(one_line))
    signature_kinds(1, key=0)
    one_line()
    assert LINES == [signature_kinds.__code__.co_firstlineno, one_line.__code__.co_firstlineno]


def test_nested_code_holding_the_line_gets_the_call_and_its_parent_does_not(patched) -> None:
    patched(closure, [line_of(closure, "return v + w")])
    add = closure(1)
    assert CALLS == []
    assert add(2) == 3 and CALLS == ["inner"]


def test_a_traceback_shows_the_same_lines_and_positions(patched) -> None:
    with pytest.raises(KeyError) as plain:
        fails("b")
    patched(fails, [line_of(fails, "items[value]")])
    with pytest.raises(KeyError) as after:
        fails("b")
    assert CALLS == ["fails"]
    assert traceback.format_tb(after.tb)[-1] == traceback.format_tb(plain.tb)[-1]
    assert list(fails.__code__.co_positions())[-3:] == list(lazy.ORIGINAL[fails.__code__].co_positions())[-3:]


def test_a_generator_holding_the_line_is_refused_and_one_beside_it_runs(patched) -> None:
    with pytest.raises(lazy.Unsafe):
        patched(counting, [line_of(counting, "yield from")])
    assert list(counting(3)) == [0, 1, 2]


def test_a_breakpoint_removed_later_gives_the_code_back(patched) -> None:
    original = fails.__code__
    patched(fails, [line_of(fails, "items[value]")])
    assert fails.__code__ is not original
    patched(fails, [])
    assert fails.__code__ is original
    assert fails("a") == 2 and CALLS == []


def test_many_constants_and_a_far_handler_still_work(patched) -> None:
    namespace: dict = {}
    source = ("def big():\n    x = [" + ",".join(f"'{i}'" for i in range(300)) + "]\n"
              + "    y = 0\n" * 150 + "    try:\n        raise ValueError\n    except ValueError:\n"
              + "        return len(x)\n")
    exec(compile(source, "<big>", "exec"), namespace)
    big = patched(namespace["big"], [2])
    assert big() == 300 and CALLS == ["big"]


def test_tracing_turned_on_by_the_call_sees_every_line_of_the_body(patched) -> None:
    events: list = []

    def local(frame, event, arg):  # noqa: ANN001, ANN202
        events.append((event, frame.f_lineno))
        return local

    def turn_on() -> None:
        sys.settrace(lambda frame, event, arg: None)
        sys._getframe(1).f_trace = local

    lazy.breakpoint_code_runs = turn_on
    try:
        patched(one_line, lines_of(one_line))
        patched(signature_kinds, [line_of(signature_kinds, "x = a + b")])
        one_line()
        sys.settrace(None)  # a thread already traced skips the call
        signature_kinds(0, key=0)
    finally:
        sys.settrace(None)
    first = line_of(signature_kinds, "x = a + b")
    assert events[:2] == [("line", one_line.__code__.co_firstlineno), ("return", one_line.__code__.co_firstlineno)]
    assert events[2] == ("line", first)
    assert ("line", line_of(signature_kinds, "for i in range(3)")) in events


LIB = (Path(__file__).parent / "programs" / "lazy_lib.py").read_text()

MAIN = """
import sys
import threading
import time

import lib

print("main traced", lib.traced(), flush=True)
worker = threading.Thread(target=lambda: print("thread traced", lib.traced(), flush=True))
worker.start()
worker.join()
print("result", lib.target(1), flush=True)
print("ready", flush=True)
n = 0
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    n = lib.tick(n)  # loop
    if n % 100000 == 0:
        time.sleep(0.01)
"""


def printed(session) -> str:  # noqa: ANN001
    return "".join(chunk.text for chunk in session.output().chunks)


def test_the_program_runs_untraced_until_the_code_of_a_breakpoint_runs(relay, write) -> None:
    lib = write("lib.py", LIB)
    main = write("main.py", MAIN)
    relay.breakpoints.add(lib, line_of_text(lib, "# target"))
    session = relay.launch(main)
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.path, stop.frame.line) == ("breakpoint", lib, line_of_text(lib, "# target"))
    assert "main traced False" in printed(session) and "thread traced False" in printed(session)
    session.terminate()


def test_the_environment_can_have_every_call_traced_from_the_start(relay, write) -> None:
    lib = write("lib.py", LIB)
    main = write("main.py", MAIN)
    relay.breakpoints.add(lib, line_of_text(lib, "# target"))
    session = relay.launch(main, env={"JUPYTER_DEBUG_RELAY_TRACE_ALL": "1"})
    assert session.wait_for_stop(30).frame.line == line_of_text(lib, "# target")
    assert "main traced True" in printed(session) and "thread traced True" in printed(session)
    session.terminate()


def test_code_of_a_breakpoint_file_run_another_way_has_every_call_traced(relay, write) -> None:
    script = write("script.py", "import sys\nvalue = 41\nprint('script', value + 1)  # script\n")
    main = write("main.py", f"source = open({script!r}).read()\nexec(compile(source, {script!r}, 'exec'))\n")
    relay.breakpoints.add(script, line_of_text(script, "# script"))
    session = relay.launch(main)
    stop = session.wait_for_stop(30)
    assert (stop.frame.path, stop.frame.line) == (script, line_of_text(script, "# script"))
    session.terminate()


@pytest.mark.parametrize(("where", "text"), [("lib.py", "# tick"), ("main.py", "# loop")],
                         ids=["a function loaded before", "the frame running now"])
def test_a_breakpoint_added_while_nothing_traces_stops(relay, write, where, text) -> None:
    files = {"lib.py": write("lib.py", LIB), "main.py": write("main.py", MAIN)}
    session = relay.launch(files["main.py"])
    wait_until(lambda: "ready" in printed(session), what="the program's loop")
    assert "main traced False" in printed(session)
    relay.breakpoints.add(files[where], line_of_text(files[where], text))
    stop = session.wait_for_stop(30)
    assert (stop.frame.path, stop.frame.line) == (files[where], line_of_text(files[where], text))
    session.terminate()


def line_of_text(path: str, text: str) -> int:
    with open(path) as source:
        return next(k for k, line in enumerate(source, 1) if text in line)


def test_a_breakpoint_call_in_the_program_stops_on_its_callers_next_line(relay, write) -> None:
    app = write("app.py", "def f():\n    x = 41\n    breakpoint()\n    return x + 1  # after\nprint(f())\n")
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.name, stop.frame.line) == ("breakpoint", "f", line_of_text(app, "# after"))
    assert session.evaluate("x").value == "41"
    session.terminate()


HOOKED = """
import os
import sys
import time

REFUSE = {refuse!r}


def hook(event, args):
    if event == "sys.addaudithook":
        print("asked to add a hook", flush=True)
        if REFUSE:
            raise RuntimeError("no more hooks")


sys.addaudithook(hook)
for i in range(100):
    try:
        raise ValueError(i)
    except ValueError:
        pass
print("ready", flush=True)
while not os.path.exists({go!r}):
    time.sleep(0.01)
try:
    {{}}["missing"]  # key
except KeyError:
    pass
source = open({script!r}).read()
exec(compile(source, {script!r}, "exec"))
print("done", flush=True)
"""


def hooked_program(write, refuse: bool) -> tuple[str, str, str]:  # noqa: ANN001
    """A program that installs an audit hook of its own (refusing any more hooks if ``refuse``), raises and catches,
    waits for the file ``go``, then catches a KeyError and runs a script's code compiled by itself: (it, script, go)."""
    script = write("script.py", "value = 41\nprint('script', value + 1)  # script\n")
    go = script + ".go"
    return write("main.py", HOOKED.format(refuse=refuse, go=go, script=script)), script, go


def test_exception_breakpoints_alone_add_no_audit_hook_and_a_later_breakpoint_still_sees_code_run_another_way(
        relay, write) -> None:
    main, script, go = hooked_program(write, refuse=False)
    relay.breakpoints.exceptions("raised", ["KeyError"])
    session = relay.launch(main)
    wait_until(lambda: "ready" in printed(session), what="the program's wait")
    assert "asked to add a hook" not in printed(session)  # traced for its exceptions, with no audit hook of the boot
    relay.breakpoints.add(script, line_of_text(script, "# script"))
    wait_until(lambda: "asked to add a hook" in printed(session), what="the boot's audit hook")
    open(go, "w").close()
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.path, stop.frame.line) == ("exception", main, line_of_text(main, "# key"))
    relay.breakpoints.exceptions("none")  # the continue goes back to lazy tracing: the hook tells of the script's code
    stop = session.continue_(timeout=30)
    assert (stop.frame.path, stop.frame.line) == (script, line_of_text(script, "# script"))
    assert session.continue_(timeout=30) is None
    assert "done" in printed(session)


def test_a_program_refusing_the_audit_hook_has_every_call_traced_and_still_stops(relay, write) -> None:
    main, script, go = hooked_program(write, refuse=True)
    session = relay.launch(main)
    wait_until(lambda: "ready" in printed(session), what="the program's wait")
    relay.breakpoints.add(script, line_of_text(script, "# script"))
    wait_until(lambda: "asked to add a hook" in printed(session), what="the boot's ask")
    open(go, "w").close()
    stop = session.wait_for_stop(30)
    assert (stop.frame.path, stop.frame.line) == (script, line_of_text(script, "# script"))
    assert session.continue_(timeout=30) is None
    assert "done" in printed(session)
