"""A value whose __repr__ outlasts the request timeout: the session stays paused and the timeout names it
(issue 16 item 8)."""

from __future__ import annotations

import time

import pytest
from conftest import line_of

from jupyter_debug_relay import Relay, RelayError

SLOW = """
import time

class Slow:
    def __repr__(self):
        time.sleep(8)
        return "Slow()"

slow = Slow()
fast = 42
print("here")  # here
print("after")
"""


def test_a_slow_repr_times_out_naming_the_value_and_the_session_stays_paused(write):
    app = write("slow.py", SLOW)
    with Relay(request_timeout=3) as relay:
        relay.breakpoints.add(app, line_of(app, "# here"))
        session = relay.launch(app)
        stop = session.wait_for_stop(30)
        seen = []
        session.subscribe(lambda event: seen.append(event.event))
        locals_ref = session.scopes()[0].ref
        with pytest.raises(RelayError) as slow:
            session.variables(locals_ref)
        assert slow.value.code == "timeout" and "'slow'" in slow.value.message
        assert slow.value.details["slow_value"] == "slow" and "__repr__" in slow.value.message
        assert slow.value.hint
        deadline = time.monotonic() + 9  # pydevd lets other threads run at 3 s and suspends them at 8 s
        while time.monotonic() < deadline:
            assert session.state == "paused" and session.stop is stop
            time.sleep(0.2)
        assert "continued" not in seen and "stopped" not in seen
        assert session.evaluate("fast").value == "42"
        with pytest.raises(RelayError) as named:
            session.evaluate("[slow, fast]")
        assert named.value.code == "timeout" and named.value.details["expression"] == "[slow, fast]"
        time.sleep(6)  # the repr ends in the target
        assert session.next().frame.line == line_of(app, "# here") + 1
        session.terminate()
