"""3.11 targets: after a stop and a continue with no step under way, the program runs untraced again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import wait_until

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="lazy tracing is the 3.11 boot's")

LIB = (Path(__file__).parent / "programs" / "lazy_lib.py").read_text()

MAIN = """
import sys
import threading
import time

import lib


def traced():  # a call here, not in lib.py: a thread stopped inside lib.py traces until it leaves it
    return sys.gettrace() is not None


def report(label):
    print(label, "traced", traced(), flush=True)
    worker = threading.Thread(target=lambda: print(label, "thread traced", traced(), flush=True))
    worker.start()
    worker.join()


report("start")
lib.target(1)
report("after one hit")
lib.target(2)
report("after a step")
print("loop", lib.loop(3), flush=True)
report("after the loop")
n = 0
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    n = lib.tick(n)
    if n % 100000 == 0:
        report(f"tick {n}")
"""


def printed(session) -> str:  # noqa: ANN001
    return "".join(chunk.text for chunk in session.output().chunks)


def line_of_text(path: str, text: str) -> int:
    with open(path) as source:
        return next(k for k, line in enumerate(source, 1) if text in line)


def untraced_after(session, label: str) -> None:  # noqa: ANN001
    """The program printed, at ``label``, that neither its main thread nor a new thread traces."""
    wait_until(lambda: f"{label} thread traced" in printed(session), what=f"the program's report {label!r}")
    assert f"{label} traced False" in printed(session) and f"{label} thread traced False" in printed(session)


@pytest.fixture
def program(relay, write):  # noqa: ANN001, ANN201
    """The program launched with a breakpoint in ``target`` and a log point in ``loop``, stopped at the first hit."""
    lib, main = write("lib.py", LIB), write("main.py", MAIN)
    relay.breakpoints.add(lib, line_of_text(lib, "# target"))
    relay.breakpoints.add(lib, line_of_text(lib, "total = 0"), log_message="loop of {n}")
    session = relay.launch(main)
    stop = session.wait_for_stop(30)
    assert (stop.frame.path, stop.frame.line) == (lib, line_of_text(lib, "# target"))
    yield session, lib
    session.terminate()


def test_after_a_continue_nothing_traces_and_the_next_hit_and_a_step_still_stop(program) -> None:
    session, lib = program
    untraced_after(session, "start")
    again = session.continue_(timeout=30)
    untraced_after(session, "after one hit")
    assert (again.frame.line, session.evaluate("x").value) == (line_of_text(lib, "# target"), "2")
    stepped = session.next(timeout=30)
    assert (stepped.frame.name, stepped.frame.line) == ("target", line_of_text(lib, "return y"))
    assert session.evaluate("y").value == "3"
    session.continue_(wait=False)
    untraced_after(session, "after a step")


def test_a_loop_holding_a_breakpoint_stops_each_time_and_tracing_ends_with_it(program, relay) -> None:
    session, lib = program
    session.continue_(timeout=30)
    relay.breakpoints.add(lib, line_of_text(lib, "# each"), hit_condition=">= 2")
    session.continue_(wait=False)
    stops = [session.wait_for_stop(30)]
    assert (stops[0].frame.name, session.evaluate("i").value) == ("loop", "1")
    stops.append(session.continue_(timeout=30))
    assert (stops[1].frame.name, session.evaluate("i").value) == ("loop", "2")
    session.continue_(wait=False)
    untraced_after(session, "after the loop")
    assert "loop of 3" in printed(session) and "loop 3" in printed(session)


def test_a_pause_while_nothing_traces_stops_and_a_continue_leaves_it_untraced(program) -> None:
    session, _ = program
    session.continue_(timeout=30)
    session.continue_(wait=False)
    untraced_after(session, "after a step")
    wait_until(lambda: "tick 100000 " in printed(session), what="the program's loop")
    paused = session.pause(timeout=30)
    assert paused.reason == "pause"
    session.continue_(wait=False)
    seen = printed(session).count("thread traced")
    wait_until(lambda: printed(session).count("thread traced") > seen + 1, what="two reports after the pause")
    last = printed(session).rpartition("\n")[0].splitlines()[-2:]  # whole lines: the program may be printing one
    assert all(line.endswith("traced False") for line in last), last


TOGETHER = """
import threading

import lib

barrier = threading.Barrier(2)


def work(name):
    barrier.wait()
    lib.target(1)
    print(f"{name} traced {lib.traced()}\\n", end="", flush=True)  # one write: the two threads print at once


workers = [threading.Thread(target=work, args=(f"w{k}",)) for k in range(2)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
print("main traced", lib.traced(), flush=True)
"""


def test_threads_hitting_together_each_stop_and_then_run_untraced(relay, write) -> None:
    lib, main = write("lib.py", LIB), write("main.py", TOGETHER)
    relay.breakpoints.add(lib, line_of_text(lib, "# target"))
    session = relay.launch(main)
    stops = [session.wait_for_stop(30)]
    while (stop := session.continue_(timeout=30)) is not None:
        stops.append(stop)
    assert {(s.frame.name, s.frame.line) for s in stops} == {("target", line_of_text(lib, "# target"))}
    assert len({s.thread_id for s in stops}) == 2  # each thread's hit is shown (one may show twice, as with debugpy)
    assert all(f"{who} traced False" in printed(session) for who in ("w0", "w1", "main")), printed(session)


def test_six_hundred_continues_leave_the_program_its_exit_code(relay, write) -> None:
    """Each continue watches the frame below the breakpoint's file once: a watch of every earlier continue kept under
    it made a chain that ran past the recursion limit after about 490 (the program then exited with 1)."""
    app = write("loop.py", """
        def step(n):
            return n  # hit

        for n in range(600):
            step(n)
        print("done")
    """)
    relay.breakpoints.add(app, 2)
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    for _ in range(599):
        stop = session.continue_(timeout=15)
        assert stop is not None and stop.frame.line == 2
    relay.breakpoints.clear()
    session.continue_(timeout=15)
    assert (session.state, session.exit_code) == ("terminated", 0)
    assert "RecursionError" not in session.output().text and "done" in session.output().text


REMOVED = """
import sys


def run():
    total = 0
    for i in range(1000):
        total += i  # hit
    print("after the loop traced", sys.gettrace() is not None, flush=True)


run()
"""


def test_a_function_whose_last_breakpoint_is_removed_runs_untraced_on(relay, write) -> None:
    """The loop's frame was traced for its breakpoint; once that is removed, a continue leaves its thread untraced
    though the frame goes on (it was 3x slower for the rest of its run)."""
    app = write("removed.py", REMOVED)
    bp = relay.breakpoints.add(app, line_of_text(app, "# hit"))
    session = relay.launch(app)
    session.wait_for_stop(30)
    for _ in range(2):
        session.continue_(timeout=30)
    assert session.evaluate("i").value == "2"
    relay.breakpoints.remove(bp.id)
    assert session.continue_(timeout=30) is None
    assert "after the loop traced False" in printed(session)
