"""Function breakpoints on qualified names, exception breakpoints by type, breakpoints changed in place (issue 16)."""

from __future__ import annotations

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError

SHAPES = """
import geometry


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5  # Point.norm


class Vector:
    def norm(self):
        return 0.0  # Vector.norm


def outer():
    def inner():
        return 1  # inner
    return inner()


def norm(value):
    return abs(value)  # plain norm


print(norm(-2), Vector().norm(), Point(3, 4).norm(), outer(), geometry.area(2))
"""

GEOMETRY = """
def area(side):
    return side * side  # area
"""

RAISING = """
def attempt(kind):
    try:
        raise kind("boom")
    except Exception:
        pass


for kind in (TypeError, KeyError, ValueError, TypeError):
    attempt(kind)
print("done")
"""

LOOP = """
total = 0
for i in range(10):
    total += i  # here
print("total", total)
"""


TICK = """
def tick():
    return 1


tick()
try:
    {}["x"]
except KeyError:
    pass
"""


@pytest.fixture
def shapes(write) -> str:
    write("geometry.py", GEOMETRY)
    return write("shapes.py", SHAPES)


def _stops(session, count: int) -> list[tuple[str, int]]:
    """(function name, line) of the first stop and of ``count - 1`` continues."""
    stops = [session.wait_for_stop(10)]
    while len(stops) < count:
        stops.append(session.continue_(timeout=10))
    return [(s.frame.name, s.frame.line) for s in stops]


@pytest.mark.every_target
def test_qualified_function_breakpoints_stop_in_that_function_only(relay, shapes):
    geometry = shapes.replace("shapes.py", "geometry.py")
    method = relay.breakpoints.add_function("Point.norm")
    nested = relay.breakpoints.add_function("outer.<locals>.inner")
    in_module = relay.breakpoints.add_function("geometry.area")
    session = relay.launch(shapes)
    assert _stops(session, 3) == [("norm", line_of(shapes, "# Point.norm") - 1),
                                  ("inner", line_of(shapes, "# inner") - 1),
                                  ("area", line_of(geometry, "# area") - 1)]
    assert [b.verified for b in relay.breakpoints.list()] == [True, True, True]
    assert session.stop.breakpoint_ids == [in_module.id]
    assert session.continue_(timeout=10) is None and session.state == "terminated"
    assert method.id != nested.id


def test_a_qualified_function_breakpoint_keeps_its_own_condition(relay, shapes):
    relay.breakpoints.add_function("Point.norm", condition="self.x == 3")
    session = relay.launch(shapes)
    assert session.wait_for_stop(10).frame.name == "norm"
    assert session.evaluate("type(self).__name__").value == "'Point'"


def test_two_function_breakpoints_on_one_plain_name_refuse_the_second_and_say_why(relay, shapes):
    first = relay.breakpoints.add_function("Point.norm")
    second = relay.breakpoints.add_function("Vector.norm")
    session = relay.launch(shapes)
    assert session.wait_for_stop(10).breakpoint_ids == [first.id]
    refused = relay.breakpoints.get(second.id)
    assert refused.status == "refused" and f"breakpoint {first.id} (Point.norm)" in refused.message


@pytest.mark.every_target
def test_exception_breakpoints_limited_to_some_types(relay, write):
    app = write("raising.py", RAISING)
    assert relay.breakpoints.exceptions("raised", types=["KeyError", "ValueError"]) == "raised"
    assert relay.breakpoints.exception_types == ["KeyError", "ValueError"]
    session = relay.launch(app)
    seen = [session.wait_for_stop(10).exception.type]
    seen.append(session.continue_(timeout=10).exception.type)
    assert seen == ["KeyError", "ValueError"]
    assert session.continue_(timeout=10) is None  # the TypeErrors before and after ran through: the end
    assert session.state == "terminated"


def test_exception_types_change_on_a_live_session_and_a_bad_name_is_refused(relay, write):
    app = write("raising.py", RAISING)
    relay.breakpoints.exceptions("raised", types=["KeyError"])
    session = relay.launch(app)
    assert session.wait_for_stop(10).exception.type == "KeyError"
    relay.breakpoints.exceptions("raised", types=["TypeError"])
    assert session.continue_(timeout=10).exception.type == "TypeError"
    with pytest.raises(RelayError) as bad:
        relay.breakpoints.exceptions("raised", types=["Value Error"])
    assert bad.value.code == "invalid_request" and "Value Error" in bad.value.message


def test_a_breakpoint_changed_in_place_applies_to_the_live_session(relay, write):
    app = write("loop.py", LOOP)
    bp = relay.breakpoints.add(app, line_of(app, "# here"))
    session = relay.launch(app)
    assert session.wait_for_stop(10).frame.line == bp.line
    changed = relay.breakpoints.update(bp.id, condition="i == 6")
    assert (changed.id, changed.condition, changed.verified) == (bp.id, "i == 6", True)
    session.continue_(timeout=10)
    assert session.evaluate("i").value == "6"
    relay.breakpoints.update(bp.id, condition="", hit_condition="2")  # "" removes the condition
    assert session.continue_(timeout=10) is not None and session.evaluate("i").value == "8"
    relay.breakpoints.update(bp.id, hit_condition="", log_message="i is {i}")
    assert session.continue_(timeout=10) is None
    assert "i is 9" in session.output().text
    assert relay.breakpoints.get(bp.id).log_message == "i is {i}"


def test_a_bad_condition_in_an_update_is_refused_and_changes_nothing(relay, write):
    app = write("loop.py", LOOP)
    bp = relay.breakpoints.add(app, line_of(app, "# here"), condition="i == 1")
    with pytest.raises(RelayError) as bad:
        relay.breakpoints.update(bp.id, condition="i ==")
    assert bad.value.code == "invalid_condition"
    assert relay.breakpoints.get(bp.id).condition == "i == 1"


def test_the_magics_set_qualified_typed_and_edited_breakpoints(kernel, write):
    app = write("loop.py", LOOP + TICK)
    line = line_of(app, "# here")
    assert kernel.magic("%bp func __main__.tick").text == "breakpoint 1 at function __main__.tick — not verified yet " \
                                                          "(checked when a session starts)"
    assert kernel.magic("%bp exceptions raised KeyError,IndexError").text == \
        "stop on exceptions: raised (KeyError, IndexError only)"
    assert kernel.magic(f"%bp loop.py:{line}").text.startswith(f"breakpoint 2 at loop.py:{line}")
    assert "breakpoint 2" in kernel.magic("%dbg launch loop.py").text
    assert kernel.magic("%bp edit 2 if i == 4 log at {i}").text == \
        f"breakpoint 2 at loop.py:{line} if i == 4 log at {{i}} — verified"
    assert kernel.magic("%bp edit 2 log").text == f"breakpoint 2 at loop.py:{line} if i == 4 — verified"
    assert "breakpoint 2" in kernel.magic("%dbg continue").text
    assert kernel.magic("%dbg eval i").text == "4"
    assert kernel.magic("%bp edit 2 if").text == f"breakpoint 2 at loop.py:{line} — verified"
    kernel.magic("%bp disable 2")
    assert "in tick() — function breakpoint 1" in kernel.magic("%dbg continue").text
    assert "exception KeyError" in kernel.magic("%dbg continue").text
    assert kernel.magic("%bp edit 9 if x").text.startswith("error invalid_request: There is no breakpoint 9.")
    assert kernel.magic("%bp edit 2").text.startswith("error invalid_request: Usage: %bp edit ID")
    kernel.magic("%dbg stop")


PROBE = """
import sys
CHECKS = {checks!r}


def probe(name):
    return eval(CHECKS[name], sys._getframe(1).f_globals, sys._getframe(1).f_locals)


class Point:
    def norm(self):
        return [probe(n) for n in ("Point.norm", "__main__.Point.norm", "Vector.norm", "norm")]


def norm():
    return [probe(n) for n in ("Point.norm", "norm", "__main__.norm")]


def outer():
    def inner():
        return probe("outer.<locals>.inner")
    return inner()


print(Point().norm(), norm(), outer())
"""


@pytest.mark.parametrize("python", ["python3.10", "python3.11", "python3.12", "python3.13"])
def test_the_qualified_name_check_holds_on_every_python(python, tmp_path):
    """The condition pydevd evaluates, in the frames of each interpreter (3.10 has no co_qualname)."""
    import glob
    import os
    import shutil
    import subprocess

    from jupyter_debug_relay.backends.debugpy.backend import qualified_condition

    pyenv = os.path.expanduser(f"~/.pyenv/versions/{python[6:]}.*/bin/python")
    candidates = [shutil.which(python), *sorted(glob.glob(pyenv))]
    found = next((c for c in candidates if c and subprocess.run([c, "-c", ""], capture_output=True).returncode == 0),
                 None)
    if found is None:
        pytest.skip(f"{python} is not installed (on PATH or under pyenv)")
    names = ("Point.norm", "__main__.Point.norm", "Vector.norm", "norm", "__main__.norm", "outer.<locals>.inner")
    checks = {name: qualified_condition(name) if "." in name else "True" for name in names}
    script = tmp_path / "probe.py"
    script.write_text(PROBE.format(checks=checks))
    out = subprocess.run([found, str(script)], capture_output=True, text=True, timeout=60)
    nested = "False" if python == "python3.10" else "True"  # a nested function's qualified name needs co_qualname
    methods = "[True, False, False, True]" if python == "python3.10" else "[True, True, False, True]"
    assert out.stdout.strip() == f"{methods} [False, True, True] {nested}", out.stderr
