"""A thread that reaches its breakpoint while a continue is on its way to the target: its hit is reported."""

from __future__ import annotations

import ast
import asyncio

import pytest
from conftest import line_of

from jupyter_debug_relay.backends.debugpy.backend import DebugpyBackend

WORKERS = 3
PASSES = 40

STEP = """
def step(index, n):
    seen = (index, n)  # hit
    return seen
"""
START = f"""
workers = [threading.Thread(target=work, args=(i,), name=f"worker-{{i}}") for i in range({WORKERS})]
for t in workers:
    t.start()
for t in workers:
    t.join()
"""
SLEEPY = "import threading, time\n" + STEP + f"""
def work(index):
    for n in range({PASSES}):
        time.sleep(0.001 * ((index * 7 + n * 3) % 23))  # each thread comes back to its line at its own moment
        step(index, n)
""" + START


def every_stop(session, expression: str, hits: int) -> list:  # noqa: ANN001 - a SessionHandle
    """``expression``'s value at each stop until the target ends (continue_ returns None then), at most ``hits``."""
    seen = []
    stop = session.wait_for_stop(30)
    while stop is not None:
        assert len(seen) < hits, f"more stops than hits: {stop}"
        seen.append(ast.literal_eval(session.evaluate(expression).value))
        stop = session.continue_(timeout=15)
    return seen


@pytest.mark.every_target
@pytest.mark.timeout(120)
def test_no_hit_is_lost_to_a_continue_in_flight(relay, write, monkeypatch):
    """Each continue reaches the target 20 ms late, as on a loaded machine: threads coming back from their sleeps
    reach the breakpoint in between, after the relay last looked. Each such hit is still a stop of its own."""
    move = DebugpyBackend._move

    async def late_move(self, command, arguments):  # noqa: ANN001, ANN202
        await asyncio.sleep(0.02)
        await move(self, command, arguments)

    monkeypatch.setattr(DebugpyBackend, "_move", late_move)
    app = write("sleepy.py", SLEEPY)
    relay.breakpoints.add(app, line_of(app, "# hit"))
    session = relay.launch(app)
    seen = every_stop(session, "(index, n)", WORKERS * PASSES)
    assert sorted(seen) == [(i, n) for i in range(WORKERS) for n in range(PASSES)]
    assert session.info().exit_code == 0



ONE_WORKER = f"""
import threading

def step(n):
    seen = n  # hit
    return seen

def work():
    for n in range({PASSES}):
        step(n)

worker = threading.Thread(target=work, name="worker")
worker.start()
worker.join()  # the main thread waits in a call of C, far from the breakpoint
"""


@pytest.mark.every_target
@pytest.mark.timeout(120)
def test_a_hit_reported_before_the_boot_numbered_it_is_not_reported_again(relay, write, monkeypatch):
    """The boot's answer at a stop may not come (the look times out on a loaded machine): the stop is reported
    without its suspension's number. The next continue's look sees that same suspension, its own hit: it is the hit
    shown, not one to report again."""
    told_at_stop = DebugpyBackend._threads_at_breakpoints

    async def unanswered(frame_id):  # noqa: ANN001, ANN202
        return None

    async def blind_at_stop(self, stop):  # noqa: ANN001, ANN202
        self._suspended = unanswered  # this stop's look only; the continue's look is answered
        try:
            return await told_at_stop(self, stop)
        finally:
            del self._suspended

    monkeypatch.setattr(DebugpyBackend, "_threads_at_breakpoints", blind_at_stop)
    app = write("one_worker.py", ONE_WORKER)
    relay.breakpoints.add(app, line_of(app, "# hit"))
    session = relay.launch(app)
    assert every_stop(session, "n", PASSES) == list(range(PASSES))


FOUR_PASSES = f"""
together = threading.Barrier({WORKERS})
""" + STEP + """
def work(index):
    for n in range(4):
        together.wait()
        step(index, n)
""" + START


LATE_WORD = """
import sys, threading, time

single = sys.modules["pydevd"].ThreadsSuspendedSingleNotification
told = single.on_thread_suspend

def told_late(self, thread_id, thread, stop_reason):
    if self._suspended_thread_id_to_thread:  # another stop is told: this thread's word comes 0.3 s late
        time.sleep(0.3)
        return told(self, thread_id, thread, stop_reason)
    told(self, thread_id, thread, stop_reason)
    time.sleep(0.2)  # the first stop's thread answers the relay's look once the others are at their hits

single.on_thread_suspend = told_late
""" + FOUR_PASSES


@pytest.mark.every_target
@pytest.mark.timeout(120)
@pytest.mark.parametrize("condition", ["__import__('time').sleep(0.03 * index) or n >= 0",
                                       "__import__('time').sleep(0.03 * index) or n >= 0 or (stock := 1)"],
                         ids=["compiled", "stock"])
def test_a_hit_told_after_a_look_reported_it_is_not_reported_again(relay, write, condition):
    """pydevd tells a thread's own hit when that thread gets to it: the look at another thread's stop can find the
    hit first and report it, then pydevd's word of it comes while it is shown. That word is not a stop again."""
    told: list = []
    relay.subscribe(lambda event: told.append(event.body.get("thread_id")) if event.event == "stopped" else None)
    app = write("late_word.py", LATE_WORD)
    relay.breakpoints.add(app, line_of(app, "# hit"), condition=condition)
    session = relay.launch(app)
    seen = every_stop(session, "(index, n)", WORKERS * 4)
    assert sorted(seen) == [(i, n) for i in range(WORKERS) for n in range(4)]
    assert len(told) == len(seen), f"{len(told)} stops told for {len(seen)} hits, threads {told}"
    assert session.info().exit_code == 0


SLOW_TO_WAIT = """
import sys, threading, time

pydevd = sys.modules["pydevd"]
suspend, told = pydevd.PyDB.set_suspend, pydevd.ThreadsSuspendedSingleNotification.on_thread_suspend

def slow_to_wait(self, thread, *args, **kwargs):
    suspend(self, thread, *args, **kwargs)
    if thread is threading.current_thread() and thread.name != "worker-0":
        time.sleep(0.2)  # marked suspended by its own hit, the thread waits 0.2 s later

def answers_late(self, thread_id, thread, stop_reason):
    told(self, thread_id, thread, stop_reason)
    if thread.name == "worker-0":
        time.sleep(0.2)  # its stop is told; it answers the relay's look once the others are marked, not waiting

pydevd.PyDB.set_suspend = slow_to_wait
pydevd.ThreadsSuspendedSingleNotification.on_thread_suspend = answers_late
""" + FOUR_PASSES


@pytest.mark.every_target
@pytest.mark.timeout(120)
def test_a_thread_a_guard_is_stopping_is_not_resumed_past_its_hit(relay, write):
    """A guard's hit marks its thread suspended, then the thread waits: a continue that comes in between resumed it
    before it waited, and it ran past its hit. The continue waits for it, and the relay reports its hit."""
    app = write("slow_to_wait.py", SLOW_TO_WAIT)
    relay.breakpoints.add(app, line_of(app, "# hit"), condition="__import__('time').sleep(0.03 * index) or n >= 0")
    session = relay.launch(app)
    seen = every_stop(session, "(index, n)", WORKERS * 4)
    assert sorted(seen) == [(i, n) for i in range(WORKERS) for n in range(4)]
    assert session.info().exit_code == 0
