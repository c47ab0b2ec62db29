"""What a session's recording holds, and what the CLI shows of it: each breakpoint change once, no DAP ``module``
events, a raw event as a readable line, locals without debugpy's groups."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.cli.render import summary
from tests.conftest import line_of
from tests.test_session_store import cli, events_of

PROGRAM = """
import json

def double(n):
    return n * 2

total = 0
for i in range(3):
    total += double(i)  # add
print("total", total)  # end
"""
GROUPS = {"special variables", "function variables"}  # what debugpy shows of a module's frame besides its names


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def program(write) -> str:
    return write("prog.py", PROGRAM)



def paused_at_add(relay: Relay, program: str) -> tuple:
    """A breakpoint at ``# add``, and a session of ``program`` stopped there: the breakpoint, the session, its uid."""
    bp = relay.breakpoints.add(program, line_of(program, "# add"))
    session = relay.launch(program)
    session.wait_for_stop(30)
    return bp, session, session.info().uid

def test_a_breakpoint_changed_during_a_session_is_recorded_once_per_change(home, program):
    with Relay(home=str(home)) as relay:
        first, session, uid = paused_at_add(relay, program)
        later = relay.breakpoints.add(program, line_of(program, "# end"))
        relay.breakpoints.remove(later.id)
        session.terminate()
    told = [(b["id"], b["status"]) for e in events_of(home, uid) if e["type"] == "breakpoint"
            and (b := e["data"]["breakpoint"])]
    assert told == [(first.id, "verified"), (later.id, "verified"), (later.id, "removed")]
    for verb in ("replay", "watch"):
        shown = [row.split()[2:] for row in cli(verb, uid, "--filter", "breakpoint", home=home).stdout.splitlines()]
        assert [(int(row[0]), row[-1]) for row in shown] == told, verb


def test_module_events_stay_inside_and_a_raw_event_reads_as_a_line(home, program):
    with Relay(home=str(home)) as relay:
        _, session, uid = paused_at_add(relay, program)
        session.stack()  # debugpy tells the modules of the frames it shows
        session.terminate()
    raw = [e["data"] for e in events_of(home, uid) if e["type"] == "raw"]
    assert raw and {r["name"] for r in raw} == {"process"}, raw
    process = next(e for e in events_of(home, uid) if e["type"] == "raw")
    assert summary(process).startswith('dap process {"systemProcessId":')
    shown = cli("replay", uid, "--filter", "raw", home=home).stdout.splitlines()
    assert len(shown) == 1 and shown[0].split(None, 2)[2].startswith("dap process {")


def test_a_snapshot_and_a_recorded_stop_leave_out_debugpys_groups(home, program):
    with Relay(home=str(home)) as relay:
        _, session, uid = paused_at_add(relay, program)
        assert GROUPS <= {v.name for v in session.variables(session.scopes()[0].ref).items}  # there to leave out
        snap = session.snapshot()
        names = [v.name for v in snap.locals]
        assert names == ["i", "json", "total"]  # as `vars` shows them: ``double`` is in "function variables"
        assert snap.locals_total == len(names)
        session.terminate()
    recorded = [e["data"] for e in events_of(home, uid) if e["type"] == "snapshot"]
    assert [v["name"] for v in recorded[0]["variables"]] == names and recorded[0]["more"] is False
