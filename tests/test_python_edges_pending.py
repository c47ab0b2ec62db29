"""A breakpoint in a file that does not exist yet binds as the file's code first runs, however fast (issue 16
item 6)."""

from __future__ import annotations

import os

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError

WRITER = """
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(sys.path[0], "fresh.py"), "w") as f:
    f.write("def work(n):\\n    doubled = n * 2\\n    return doubled\\n")
import fresh  # written and imported at once
print("result", fresh.work(21))
"""


@pytest.mark.every_target
def test_a_file_written_and_imported_at_once_stops_at_its_breakpoint(relay, write, tmp_path):
    app = write("writer.py", WRITER)
    fresh = str(tmp_path / "fresh.py")
    bp = relay.breakpoints.add(fresh, 2)
    assert bp.status == "pending" and not bp.verified
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    assert stop.frame.path == fresh and stop.frame.line == 2 and stop.breakpoint_ids == [bp.id]
    assert session.evaluate("n").value == "21"
    listed = {b.id: b for b in relay.breakpoints.list()}[bp.id]
    assert listed.verified and listed.status == "verified"
    assert session.continue_(timeout=15) is None and session.state == "terminated"


@pytest.mark.every_target
def test_a_pending_breakpoint_added_while_the_target_runs_binds_too(relay, write, tmp_path):
    # 4 s asleep: the breakpoint added at the stop reaches pydevd before the import, on a busy machine too
    app = write("writer.py", "import time\ntime.sleep(4)  # wait\n" + WRITER.lstrip("\n"))
    relay.breakpoints.add(app, line_of(app, "# wait"))
    session = relay.launch(app)
    session.wait_for_stop(30)
    bp = relay.breakpoints.add(str(tmp_path / "fresh.py"), 3)
    stop = session.continue_(timeout=15)
    assert stop.frame.path == str(tmp_path / "fresh.py") and stop.frame.line == 3
    assert stop.breakpoint_ids == [bp.id]
    session.terminate()


@pytest.mark.every_target
def test_a_file_written_then_imported_through_a_link_of_another_name_stops_at_its_breakpoint(
        relay, write, tmp_path):
    app = write("linker.py", WRITER.replace(
        "import fresh  # written and imported at once",
        "os.symlink('fresh.py', os.path.join(sys.path[0], 'alias.py'))\nimport alias as fresh"))
    bp = relay.breakpoints.add(str(tmp_path / "fresh.py"), 2)
    session = relay.launch(app)
    stop = session.wait_for_stop(30)  # pydevd knows a file by its real path: the link's leads to fresh.py
    assert stop.frame.line == 2 and stop.breakpoint_ids == [bp.id]
    assert session.evaluate("n").value == "21"
    assert session.continue_(timeout=15) is None


def test_a_file_that_never_appears_stays_pending(relay, write, tmp_path):
    app = write("app.py", "print('done')\n")
    bp = relay.breakpoints.add(str(tmp_path / "never.py"), 1)
    session = relay.launch(app)
    with pytest.raises(RelayError):
        session.wait_for_stop(20)
    listed = {b.id: b for b in relay.breakpoints.list()}[bp.id]
    assert listed.status == "pending" and "pending until it exists" in listed.message
    assert not os.path.exists(tmp_path / "never.py")


def test_the_magics_pending_breakpoint_stops_in_the_fresh_file(kernel, write):
    write("writer.py", WRITER)
    assert "pending" in kernel.magic("%bp fresh.py:2").text
    assert "paused at fresh.py:2 in work()" in kernel.magic("%debug_session launch writer.py").text
    kernel.magic("%debug_session stop")
