"""Threads that hit one breakpoint together: every hit is reported (issue 16)."""

from __future__ import annotations

import pytest
from conftest import line_of

BARRIER = """
import threading

barrier = threading.Barrier(3)
hits = []

def work(n):
    barrier.wait()
    hits.append(n)  # together

threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("hits", sorted(hits))
"""


@pytest.mark.every_target
def test_three_threads_released_onto_one_breakpoint_each_report_their_stop(relay, write):
    app = write("barrier.py", BARRIER)
    bp = relay.breakpoints.add(app, line_of(app, "# together"))
    session = relay.launch(app)
    stop = session.wait_for_stop(20)
    first_stopped = set(stop.stopped_threads)
    stops = []
    while stop is not None:  # continue_ returns None when the target runs to its end
        assert stop.reason == "breakpoint" and stop.frame.line == bp.line and stop.breakpoint_ids == [bp.id]
        stops.append(stop.thread_id)
        stop = session.continue_(timeout=10)
    assert len(stops) == 3 and len(set(stops)) == 3, stops
    assert set(stops) <= first_stopped  # the first stop listed every thread as stopped
    assert "hits [0, 1, 2]" in session.output().text


OUTLIVES = """
import threading
import time

def later():
    time.sleep(0.3)  # the main thread has ended by now: Python is shutting down, waiting for this thread
    left = "still here"  # after main
    print("thread says", left, flush=True)

threading.Thread(target=later).start()
print("main ends", flush=True)
"""


@pytest.mark.every_target
def test_a_thread_that_outlives_the_main_thread_still_stops_and_the_program_then_ends(relay, write):
    app = write("outlives.py", OUTLIVES)
    relay.breakpoints.add(app, line_of(app, "# after main"))
    session = relay.launch(app)
    stop = session.wait_for_stop(20)
    assert stop.frame.line == line_of(app, "# after main") and "main ends" in session.output().text
    assert session.evaluate("threading.main_thread().is_alive()").value == "False"
    assert session.continue_(timeout=10) is None  # runs to the end
    assert session.info().exit_code == 0 and "thread says still here" in session.output().text
