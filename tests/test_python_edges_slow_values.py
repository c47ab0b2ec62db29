"""A value whose __repr__ outlasts the request timeout: the session stays paused and the timeout names it
(issue 16 item 8)."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import line_of

from jupyter_debug_relay import Relay, RelayError

SLOW = """
import asyncio
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


def test_a_look_at_the_old_stop_sent_after_a_step_does_not_hide_the_steps_stop(write):
    """A panel following a cell that steps fast evaluates its watches on the stop the cell has just left: pydevd's
    ``continued`` for the step must not be taken for the one it sends when an inspection runs long."""
    app = write("spin.py", "total = 0\nfor i in range(1000):\n    total += i  # spin\n")
    with Relay(request_timeout=5) as relay:
        relay.breakpoints.add(app, line_of(app, "# spin"))
        session = relay.launch(app)
        old = session.wait_for_stop(30)
        relay.breakpoints.clear()
        engine = relay.manager.get(session.id)

        async def step_then_look() -> object:
            step = asyncio.ensure_future(engine.resume("next", None, True, 5))
            await asyncio.sleep(0)  # the next is sent; its continued and stopped are not read yet
            try:
                await engine.backend.evaluate("i", old.frame.id, "watch")
            except RelayError:
                pass  # pydevd may refuse a frame that is running: what matters is the step's stop
            return await step

        stop = relay.submit(step_then_look()).result(15)
        assert stop is not None and stop.reason == "step" and stop.frame.line == line_of(app, "# spin") - 1
        assert session.state == "paused"
        session.terminate()
