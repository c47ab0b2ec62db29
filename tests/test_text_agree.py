"""The text answers say what the JSON holds, in the same words on every front end: an exception stop names the
exception, a breakpoint that will not stop says why, an ended session's hint names its recording."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.cli import operations as cli
from jupyter_debug_relay.cli.render import Printer, summary
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.kernel.commands import Commands
from jupyter_debug_relay.model import as_dict
from jupyter_debug_relay.server import mcp
from jupyter_debug_relay.store.recording import EVENTS, Home, read_events
from jupyter_debug_relay.store.replay import Recording
from tests.server_fixtures import line_of, write

APP = """
def check(value):

    if value < 0:  # test
        raise ValueError(f"bad value {value}\\nsecond line")  # raise
    return value


check(-1)
"""
REASON = "exception ValueError: bad value -1 …"  # the first line of the message, and a mark that it goes on


def test_an_exception_stop_and_a_refused_breakpoint_read_the_same_on_every_front_end(tmp_path, capsys):
    app = write(tmp_path, "app.py", APP)
    home = tmp_path / "home"
    blank = line_of(app, "# test") - 1
    why = f"not verified: line {blank} has no code"
    with Relay(home=str(home)) as relay:
        refused = relay.breakpoints.add(app, blank)
        assert refused.status == "refused" and refused.message.startswith(f"line {blank} has no code")

        magic = Commands(relay).run_session(f"launch {app}").text
        assert f"— {REASON} [thread " in magic.splitlines()[0] and f"breakpoint {refused.id} at " in magic
        assert why in magic

        started = asyncio.run(mcp.call(relay, "launch", {"program": app}))
        assert started["stop"]["exception"]["type"] == "ValueError" and started["unverified"][0]["id"] == refused.id
        told = mcp.summary(started)
        assert told.startswith(f"paused ({REASON}) at {app}:{line_of(app, '# raise')} in check"), told
        assert why in told
        status = mcp.summary(asyncio.run(mcp.call(relay, "status", {})))
        assert f"paused ({REASON})" in status, status
        snapshot = mcp.summary(asyncio.run(mcp.call(relay, "snapshot", {})))
        assert snapshot.startswith(f"paused ({REASON}) at "), snapshot
        assert mcp.summary({"breakpoint": as_dict(refused)}).startswith(f"breakpoint {refused.id} at ")
        assert why in mcp.summary({"breakpoint": as_dict(refused)})

        assert cli.stop_line(started) == f"paused: {REASON} in check() at {app}:{line_of(app, '# raise')}"
        cli.show(Printer(color=False), "add_breakpoint", {"breakpoint": as_dict(refused)})
        row = capsys.readouterr().out.splitlines()[1]
        assert why in row, row

        uid = started["session"]["uid"]
        relay.operations.call("terminate", {"session": started["session"]["id"]})
        relay.flush_recordings()

    events, _ = read_events(home / "sessions" / uid / EVENTS, 0)
    stopped = next(e for e in events if e["type"] == "stopped")
    assert summary(stopped).startswith(f"{REASON} in check() at "), summary(stopped)
    assert why in summary({"type": "breakpoint", "data": {"breakpoint": as_dict(refused)}})
    replayed = Recording.open(uid, Home(home)).stops[0].describe()
    assert f"s {REASON} in check() at " in replayed, replayed


def test_an_ended_session_is_told_to_replay_by_its_own_uid(tmp_path):
    home = tmp_path / "home"
    with Relay(home=str(home)) as relay:
        created = relay.operations.call("create", {"name": "later"})
        uid = created["session"].uid
        relay.operations.call("terminate", {"session": created["session"].id})
        relay.flush_recordings()
    with pytest.raises(RelayError) as ended:
        cli.send(Home(home), uid, "next", {})
    assert ended.value.code == "not_running"
    assert f"`jupyter-debug-relay replay {uid}`" in ended.value.hint and "UID" not in ended.value.hint
