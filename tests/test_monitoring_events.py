"""3.12+ targets: the ``sys.monitoring`` events pydevd turns on but never hears answer ``DISABLE`` (each location pays
once), so a loop in code that held a breakpoint runs at plain speed once the breakpoint is gone, and a breakpoint still
stops at each pass while it is there."""

from __future__ import annotations

import pytest
from conftest import line_of

from tests import targets

LOOP = """
def loop(n):
    total = 0
    for i in range(n):
        total += i  # each pass
    return total

print("first", loop(3))
print("second", loop(3))
"""
HEARD = ("(lambda M: [(lambda theirs: (M.register_callback(0, event, theirs), theirs is not None)[1])("
         "M.register_callback(0, event, None)) for event in (M.events.PY_RESUME, M.events.JUMP)])"
         "(__import__('sys').monitoring)")  # whether pydevd's tool has a callback of each (put back as it was)


@pytest.mark.parametrize("minor", [12, 13], ids=["3.12", "3.13"])
def test_events_pydevd_turns_on_are_heard_and_a_loops_breakpoint_stops_each_pass(relay, write, minor: int):
    app = write("app.py", LOOP)
    bp = relay.breakpoints.add(app, line_of(app, "# each pass"))
    session = relay.launch(app, python=targets.python_for(minor))
    for i in range(3):
        assert (session.wait_for_stop(30).frame.line, session.evaluate("i").value) == (bp.line, str(i))
        assert session.evaluate(HEARD).value == "[True, True]"  # PY_RESUME, and JUMP (pydevd's own on 3.12)
        if i < 2:
            session.continue_(wait=False)
    relay.breakpoints.remove(bp.id)
    relay.breakpoints.add(app, line_of(app, "return total"))  # pydevd updates its events once more
    assert session.continue_(timeout=30).frame.name == "loop"
    assert session.evaluate(HEARD).value == "[True, True]"
    assert session.continue_(timeout=30).frame.name == "loop"  # the second call stops at the return only
    assert session.evaluate("total").value == "3"
    assert session.continue_(timeout=30) is None
    assert "first 3\nsecond 3\n" in session.output().text
