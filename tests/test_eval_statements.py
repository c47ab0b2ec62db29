"""A statement evaluated in a target's frame changes the names the frame has and adds none to it."""

from __future__ import annotations

import pytest

from jupyter_debug_relay import RelayError
from tests.conftest import line_of

APP = """
import json

def work(a):
    x = a + 1
    return x  # stop

print("result", work(1))  # module
"""


@pytest.mark.every_target
def test_a_statement_adds_no_name_to_the_frame_and_changes_the_names_it_has(relay, write):
    app = write("app.py", APP)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app)
    session.wait_for_stop(30)

    def names() -> set[str]:
        return {v.name for v in session.variables(session.scopes()[0].ref).items}

    before = names()
    assert session.evaluate("import os").value == ""
    assert session.evaluate("y = 3; x = y * 10").value == ""
    assert names() == before and session.evaluate("x").value == "30"
    with pytest.raises(RelayError) as info:
        session.evaluate("import sys; z = 1; 1 / 0")
    assert info.value.code == "evaluation_failed" and "ZeroDivisionError" in info.value.message
    assert names() == before
    assert session.step_out().frame.line == line_of(app, "# module")
    assert session.evaluate("import os").value == ""
    assert session.evaluate("'os' in globals(), json.__name__").value == "(False, 'json')"
    assert session.continue_() is None
    assert "result 30" in "".join(chunk.text for chunk in session.output().chunks)
