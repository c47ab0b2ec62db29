"""A breakpoint condition that fails at run time is reported once, and stops or not as the user chose (issue 16)."""

from __future__ import annotations

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError

LOOP = """
total = 0
for i in range(5):
    total += i  # here
print("total", total)
"""


def test_a_condition_naming_an_undefined_name_stops_and_says_why_once(relay, write):
    app = write("loop.py", LOOP)
    bp = relay.breakpoints.add(app, line_of(app, "# here"), condition="undefined_name > 3")
    events = []
    relay.subscribe(lambda e: e.event == "breakpoint" and events.append(e.body["breakpoint"]["message"]))
    session = relay.launch(app)
    assert session.wait_for_stop(10).frame.line == bp.line
    assert session.continue_(timeout=10).frame.line == bp.line
    message = relay.breakpoints.get(bp.id).message
    assert "undefined_name > 3" in message and "NameError" in message and "stops" in message
    assert any("NameError" in m for m in events)
    assert session.output().text.count("NameError") == 1


def test_a_failing_condition_can_let_the_target_run_without_a_flood(relay, write):
    app = write("loop.py", LOOP)
    bp = relay.breakpoints.add(app, line_of(app, "# here"), condition="i + 'a'")
    assert relay.breakpoints.condition_errors(stop=False) is False
    session = relay.launch(app)
    with pytest.raises(RelayError) as ended:
        session.wait_for_stop(10)
    assert ended.value.code == "target_exited"
    chunks = session.output().chunks
    assert "total 10" in "".join(c.text for c in chunks if c.category == "stdout")
    assert "".join(c.text for c in chunks).count("TypeError") == 1
    assert "TypeError" in relay.breakpoints.get(bp.id).message
