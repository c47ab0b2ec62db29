"""An uncaught RecursionError stops, in uncaught and raised mode, on the deepest frame (issue 16 item 5)."""

from __future__ import annotations

import re

import pytest

from jupyter_debug_relay import RelayError

DIVE = """
def dive(n):
    return dive(n + 1)

dive(0)
"""


@pytest.mark.every_target
@pytest.mark.parametrize("mode", ["uncaught", "raised"])
def test_an_uncaught_recursion_error_stops_post_mortem(relay, write, mode):
    app = write("dive.py", DIVE)
    relay.breakpoints.exceptions(mode)
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    assert stop.reason == "exception" and stop.exception.type == "RecursionError"
    assert stop.frame.path == app and stop.frame.name == "dive"
    assert int(session.evaluate("n").value) > 100 and len(session.stack()) > 100
    session.continue_(wait=False)
    with pytest.raises(RelayError) as ended:
        session.wait_for_stop(20)
    assert ended.value.code == "target_exited" and session.exit_code == 1


def test_no_stop_when_exceptions_do_not_stop(relay, write):
    app = write("dive.py", DIVE)
    relay.breakpoints.exceptions("none")
    session = relay.launch(app)
    with pytest.raises(RelayError) as ended:
        session.wait_for_stop(30)
    assert ended.value.code == "target_exited" and session.exit_code == 1


def test_the_magic_shows_the_recursion_stop(kernel, write):
    write("dive.py", DIVE)
    kernel.magic("%bp exceptions uncaught")
    text = kernel.magic("%debug_session launch dive.py").text
    # the def's line where a trace function hit the limit, the call's line where the program itself did
    assert re.search(r"paused at dive\.py:[12] in dive\(\) — exception RecursionError", text), text
    kernel.magic("%debug_session stop")
