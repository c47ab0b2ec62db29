"""Exceptions "raised" filtered by type: only a type a filter takes stops (its subclasses too), however many others
are raised and caught on the way, and a changed filter counts from the next raise."""

from __future__ import annotations

import pytest
from conftest import line_of

PROGRAM = """
class Missing(KeyError):
    pass

def work():
    for i in range(3000):
        try:
            raise ValueError(i)  # value
        except ValueError:
            pass
    for kind in (KeyError, Missing):
        try:
            raise kind("wanted")  # key
        except KeyError:
            pass
    try:
        raise ValueError("after")  # later
    except ValueError:
        pass

work()
print("done")
"""


@pytest.mark.every_target
def test_only_the_filtered_types_stop_and_a_changed_filter_takes_effect(relay, write):
    app = write("app.py", PROGRAM)
    relay.breakpoints.exceptions("raised", ["KeyError"])
    session = relay.launch(app)
    first = session.wait_for_stop(60)
    assert (first.reason, first.frame.line) == ("exception", line_of(app, "# key"))
    assert session.evaluate("kind.__name__").value == "'KeyError'"
    second = session.continue_(timeout=30)
    assert (second.reason, second.frame.line) == ("exception", line_of(app, "# key"))
    assert session.evaluate("kind.__name__").value == "'Missing'"  # a subclass of a filtered type
    relay.breakpoints.exceptions("raised", ["ValueError"])
    third = session.continue_(timeout=30)
    assert (third.reason, third.frame.line) == ("exception", line_of(app, "# later"))
    relay.breakpoints.exceptions("none")
    assert session.continue_(timeout=30) is None
    assert "done" in session.output().text
