"""Each breakpoint change reaches a live subscriber as one ``breakpoint`` event, on a running debugpy session.

The session used to say it (its peer's answer) and the relay to say it again, so a comm, the panel, the DAP
server and ``relay.subscribe`` saw every change twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from conftest import line_of, wait_until

from jupyter_debug_relay import Relay
from jupyter_debug_relay.facade.events import Event

RUNNING = """
import time

deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    time.sleep(0.01)  # loop
print("never here")  # after
"""
QUIET = 0.5  # how long a change is watched for a second event after its first


class Heard:
    """The ``breakpoint`` events a subscriber gets, as (breakpoint id, status)."""

    def __init__(self) -> None:
        self.events: list[tuple[int, str]] = []
        self.result: Any = None  # what the last change answered

    def __call__(self, event: Event) -> None:
        if event.event == "breakpoint":
            bp = event.body["breakpoint"]
            self.events.append((bp["id"], bp["status"]))

    def after(self, change: Callable[[], Any]) -> list[tuple[int, str]]:
        """The events ``change()`` brings: at least one within 10 s, then whatever comes in a quiet while."""
        start = len(self.events)
        self.result = change()
        wait_until(lambda: len(self.events) > start, 10, "a breakpoint event")
        time.sleep(QUIET)
        return self.events[start:]


@pytest.fixture
def running(relay: Relay, write: Callable[[str, str], str]) -> tuple[Relay, Any, str]:
    app = write("running.py", RUNNING)
    session = relay.launch(app)
    wait_until(lambda: session.state == "running", 30, "the session to run")
    return relay, session, app


def test_a_subscriber_hears_each_change_to_a_global_breakpoint_once(running):
    relay, session, app = running
    heard = Heard()
    unsubscribe = relay.subscribe(heard)
    try:
        line = line_of(app, "# after")
        added = heard.after(lambda: relay.breakpoints.add(app, line))
        bp = heard.result
        assert added == [(bp.id, "verified")]
        assert heard.after(lambda: relay.breakpoints.update(bp.id, condition="False")) == [(bp.id, "verified")]
        assert heard.after(lambda: relay.breakpoints.enable(bp.id, False)) == [(bp.id, "verified")]
        assert heard.after(lambda: relay.breakpoints.remove(bp.id)) == [(bp.id, "removed")]
        assert session.state == "running"  # all of it while the target ran
    finally:
        unsubscribe()
        session.terminate()


def test_a_sessions_own_breakpoint_is_heard_once_by_its_sessions_subscriber_and_by_all(running):
    relay, session, app = running
    everyone, its_own = Heard(), Heard()
    unsubscribe = [relay.subscribe(everyone), session.subscribe(its_own)]
    try:
        line = line_of(app, "# after")
        made = its_own.after(lambda: relay.operations.call(
            "add_breakpoint", {"path": app, "line": line, "session": session.id}))
        bp = its_own.result["breakpoint"]
        assert bp.session == session.id and made == [(bp.id, "verified")]
        assert its_own.after(lambda: relay.operations.call(
            "update_breakpoint", {"id": bp.id, "condition": "False", "session": session.id})) == [(bp.id, "verified")]
        assert its_own.after(lambda: relay.operations.call(
            "remove_breakpoint", {"id": bp.id, "session": session.id})) == [(bp.id, "removed")]
        assert everyone.events == its_own.events
    finally:
        for stop in unsubscribe:
            stop()
        session.terminate()
