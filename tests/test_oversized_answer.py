"""A value too big for one DAP message fails the request that asked for it; the session stays paused."""

from __future__ import annotations

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.protocols import dap

TARGET = """
big = "x" * 3_000_000
small = 41
print("ready")  # stop
"""


def test_a_clipboard_evaluate_over_the_cap_fails_alone_and_the_session_goes_on(relay, write, monkeypatch):
    monkeypatch.setattr(dap, "MAX_BODY", 1 << 20)  # a 3 MB answer is then over the cap of one message
    app = write("big.py", TARGET)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app)
    session.wait_for_stop(20)
    with pytest.raises(RelayError) as caught:
        session.evaluate("big", context="clipboard")
    assert caught.value.code == "invalid_request"
    assert "The answer to evaluate is" in caught.value.message and "over the 1,048,576-byte cap" in caught.value.message
    assert session.state == "paused"
    assert session.evaluate("small + 1").value == "42"  # the stream is still in step
    assert session.evaluate("len(big)").value == "3000000"
    assert session.info().state == "paused" and session.stack()[0].line == line_of(app, "# stop")
    session.terminate()
