"""Rapid stop/continue cycles over four threads: every hit is reported once and the relay keeps answering."""

from __future__ import annotations

import ast
import time

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError

# debugpy's open issue 2048: after many quick suspend/resume cycles of a multithreaded program, debugpy stops
# answering. Four threads pass one breakpoint line PASSES times each, printing nothing on the way.
WORKERS = 4
PASSES = 125
HITS = WORKERS * PASSES
PROBE_EVERY = 50  # cycles between two checks that the relay still answers other requests
ANSWER_WITHIN = 5.0  # seconds a probe may take
CYCLES_WITHIN = 120.0  # seconds all the cycles may take (two slow CI cores); the timeout mark is the backstop

RAPID = f"""
import threading

start = threading.Barrier({WORKERS})
finish = threading.Barrier({WORKERS})  # no worker ends before every one has passed the line {PASSES} times

def step(index, n):
    seen = (index, n)  # hit
    return seen

def work(index):
    start.wait()
    for n in range({PASSES}):
        step(index, n)
    finish.wait()

workers = [threading.Thread(target=work, args=(i,), name=f"worker-{{i}}") for i in range({WORKERS})]
for t in workers:
    t.start()
for t in workers:
    t.join()
print("all passes done")
"""


def answered(call):
    """``call()``'s result and how many seconds it took."""
    began = time.monotonic()
    result = call()
    return result, time.monotonic() - began


@pytest.mark.every_target
@pytest.mark.timeout(240)
@pytest.mark.parametrize("condition", [None, "n >= 0", "n >= 0 or (stock := 1)"],  # the second a guard in the code,
                         ids=["plain", "compiled", "stock"])  # the third pydevd's (a := never goes in the code)
def test_five_hundred_stops_over_four_threads_each_hit_reported_once_and_the_relay_keeps_answering(
        relay, write, condition):
    app = write("rapid.py", RAPID)
    line = line_of(app, "# hit")
    bp = relay.breakpoints.add(app, line, condition=condition)
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    workers = {t.id: t.name for t in session.threads() if t.name.startswith("worker-")}
    assert len(workers) == WORKERS, session.threads()

    seen: list[tuple[int, int]] = []
    deadline = time.monotonic() + CYCLES_WITHIN
    index_of: dict[int, int] = {}  # thread id -> the worker index it reports: one thread, one index
    expected_next: int | None = None  # the thread the previous stop said also sat at the breakpoint
    while stop is not None:  # continue_ returns None once the target has run to its end
        cycle = len(seen) + 1
        assert cycle <= HITS, f"stop {cycle} of a program with {HITS} hits: {stop}"
        assert stop.reason == "breakpoint" and stop.breakpoint_ids == [bp.id], (cycle, stop)
        assert stop.frame is not None and stop.frame.path == app and stop.frame.line == line, (cycle, stop)
        assert stop.thread_id in workers, (cycle, stop.thread_id, workers)
        if expected_next is not None:
            assert stop.thread_id == expected_next, (cycle, stop.thread_id, expected_next)
        expected_next = stop.also_hit[0] if stop.also_hit else None
        assert set(stop.also_hit) <= set(workers) - {stop.thread_id}, (cycle, stop.also_hit)

        index, n = ast.literal_eval(session.evaluate("(index, n)").value)
        assert index_of.setdefault(stop.thread_id, index) == index, (cycle, stop.thread_id, index, index_of)
        assert (index, n) not in seen, f"stop {cycle}: pass {n} of worker {index} reported twice"
        seen.append((index, n))

        if cycle % PROBE_EVERY == 0:
            threads, took = answered(session.threads)
            assert took < ANSWER_WITHIN, f"threads took {took:.1f} s at stop {cycle}"
            assert {t.id for t in threads if t.name.startswith("worker-")} == set(workers), (cycle, threads)
            counter, took = answered(lambda: session.evaluate("n"))
            assert took < ANSWER_WITHIN, f"evaluate took {took:.1f} s at stop {cycle}"
            assert counter.value == str(n), (cycle, counter)
        if time.monotonic() > deadline:
            pytest.fail(f"only {cycle} of {HITS} stops within {CYCLES_WITHIN:g} s")
        try:
            stop = session.continue_(timeout=15)
        except RelayError as exc:
            pytest.fail(f"no stop after the continue from stop {cycle}: {exc}")

    missing = sorted({(i, n) for i in range(WORKERS) for n in range(PASSES)} - set(seen))
    assert len(seen) == HITS and not missing, f"passes never reported: {missing}"
    assert sorted(index_of.values()) == list(range(WORKERS))
    assert session.info().exit_code == 0
    assert "all passes done" in session.output().text
