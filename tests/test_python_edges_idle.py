"""The idle timeout: its kill says why in info(), and polling info() keeps a session alive (issue 16)."""

from __future__ import annotations

import time

from conftest import line_of

from jupyter_debug_relay import Relay

SLEEPER = """
import time
time.sleep(0.1)  # here
time.sleep(60)
"""


def test_the_idle_timeouts_kill_is_explained_in_info(write):
    app = write("sleeper.py", SLEEPER)
    with Relay(idle_timeout=1.0) as relay:
        session = relay.launch(app)
        deadline = time.monotonic() + 15
        while session.state != "terminated" and time.monotonic() < deadline:
            time.sleep(0.2)
        info = session._session.info()  # read without touching it: the facade's info() is activity
        assert info.state == "terminated"
        assert info.error and info.error["code"] == "timeout" and "idle" in info.error["message"]
        assert session.info().error["code"] == "timeout"


def test_polling_info_counts_as_activity(write):
    app = write("sleeper.py", SLEEPER)
    with Relay(idle_timeout=1.5) as relay:
        relay.breakpoints.add(app, line_of(app, "# here"))
        session = relay.launch(app)
        session.wait_for_stop(10)
        for _ in range(15):  # 3 s of polling, twice the idle timeout
            assert session.info().state == "paused"
            time.sleep(0.2)
        session.terminate()
