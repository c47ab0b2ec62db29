"""Forked children of a target launched with subprocess=False run free and are announced (issue 16)."""

from __future__ import annotations

import pytest
from conftest import line_of

FORKS = """
import multiprocessing
import os

def work(n):
    return n * 2  # in the child

if __name__ == "__main__":
    pid = os.fork()
    if pid == 0:
        work(1)
        os._exit(7)
    print("forked child exited with", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        print("pool", pool.map(work, [1, 2]))
    print("parent done")  # in the parent
"""


@pytest.mark.every_target
def test_forked_children_with_a_breakpoint_run_free_and_are_announced(relay, write):
    app = write("forks.py", FORKS)
    relay.breakpoints.add(app, line_of(app, "# in the child"))
    relay.breakpoints.add(app, line_of(app, "# in the parent"))
    announced = []
    relay.subscribe(lambda event: event.event == "subprocess" and announced.append(event.body))
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    assert stop.frame.line == line_of(app, "# in the parent")
    chunks = session.output().chunks
    printed = "".join(c.text for c in chunks if c.category == "stdout")
    assert "forked child exited with 7" in printed and "pool [2, 4]" in printed
    assert "runs without the debugger" in "".join(c.text for c in chunks if c.category == "console")
    assert len(announced) >= 2 and all(a["debugged"] is False and a["pid"] > 0 for a in announced)
    assert session.continue_(timeout=10) is None
    assert session.state == "terminated" and session.exit_code == 0
