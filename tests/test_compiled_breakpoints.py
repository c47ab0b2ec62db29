"""Conditions, hit counts and log points compiled into the program's code: the same stops, counts and lines as
pydevd's own checks, and a change to the breakpoint takes effect at once."""

from __future__ import annotations

import pytest
from conftest import line_of, wait_until

from jupyter_debug_relay import RelayError
from tests import targets

LOOP = """
import helper

N = 50

def loop():
    total = 0
    for i in range(N):
        total += i  # here
        after = total  # next
    return total

print("loop", loop())
print("helper", helper.run(30))
"""

HELPER = """
def run(n):
    acc = 0
    for j in range(n):
        acc += j  # count
    return acc
"""

GUARDS_ON = "__import__('builtins').__jupyter_debug_relay__.on"  # the guards compiled in the target, on or off


def program(write) -> tuple[str, str]:
    app = write("app.py", LOOP)
    return app, write("helper.py", HELPER)


@pytest.mark.every_target
def test_a_condition_stops_at_its_pass_and_a_step_goes_on_from_there(relay, write):
    app, _ = program(write)
    bp = relay.breakpoints.add(app, line_of(app, "# here"), condition="i == N - 1")
    session = relay.launch(app, just_my_code=False)  # the debugger's own calls in the standard library stop nowhere
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.line, stop.breakpoint_ids) == ("breakpoint", bp.line, [bp.id])
    assert session.evaluate("i").value == "49"
    assert session.evaluate(GUARDS_ON).value == "[True]"  # the guard in the code holds it, not pydevd
    assert session.next(timeout=30).frame.line == line_of(app, "# next")  # past the guard: the line below
    assert session.evaluate("total").value == str(sum(range(50)))  # the line of the stop ran, once
    assert session.continue_(timeout=30) is None
    assert "loop 1225" in session.output().text and session.info().exit_code == 0


@pytest.mark.every_target
def test_hit_counts_count_every_pass_in_an_imported_module(relay, write):
    app, helper = program(write)
    every_tenth = relay.breakpoints.add(helper, line_of(helper, "# count"), hit_condition="% 10")
    session = relay.launch(app)
    seen = []
    stop = session.wait_for_stop(30)
    while stop is not None:
        assert stop.breakpoint_ids == [every_tenth.id]
        seen.append(int(session.evaluate("j").value))
        stop = session.continue_(timeout=30)
    assert seen == [9, 19, 29]  # the 10th, 20th and 30th pass


@pytest.mark.every_target
def test_a_hit_count_or_a_condition_stops_as_pydevd_has_them(relay, write):
    app, _ = program(write)
    relay.breakpoints.add(app, line_of(app, "# here"), hit_condition="== 3", condition="i == 40")
    session = relay.launch(app)
    first = session.wait_for_stop(30)
    assert session.evaluate("i").value == "2"  # the third pass, by the count
    assert session.continue_(timeout=30).breakpoint_ids == first.breakpoint_ids
    assert session.evaluate("i").value == "40"  # then by the condition
    assert session.continue_(timeout=30) is None


@pytest.mark.every_target
def test_a_log_point_prints_each_true_pass_in_order_and_never_stops(relay, write):
    app, _ = program(write)
    relay.breakpoints.add(app, line_of(app, "# next"), condition="i % 20 == 0", log_message="at {i} total {total}")
    session = relay.launch(app)
    with pytest.raises(RelayError) as ended:
        session.wait_for_stop(30)
    assert ended.value.code == "target_exited" and session.info().exit_code == 0
    logged = [c.text for c in session.output().chunks if c.category == "console" and c.text.startswith("at ")]
    assert "".join(logged).splitlines() == ["at 0 total 0", "at 20 total 210", "at 40 total 820"]


@pytest.mark.every_target
def test_a_condition_that_raises_is_said_once_and_stops(relay, write):
    app, _ = program(write)
    bp = relay.breakpoints.add(app, line_of(app, "# here"), condition="undefined_name > 3")
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.line == bp.line
    assert session.evaluate("i").value == "0"
    assert session.continue_(timeout=30).frame.line == bp.line
    assert session.evaluate("i").value == "1"
    message = relay.breakpoints.get(bp.id).message
    assert "undefined_name > 3" in message and "NameError" in message
    assert session.output().text.count("NameError") == 1


@pytest.mark.every_target
def test_a_changed_or_removed_breakpoint_takes_effect_at_once(relay, write):
    app, _ = program(write)
    bp = relay.breakpoints.add(app, line_of(app, "# here"), condition="i == 10")
    session = relay.launch(app)
    session.wait_for_stop(30)
    relay.breakpoints.update(bp.id, condition="i == 30")  # the running frame holds the old guard
    assert session.evaluate(GUARDS_ON).value == "[False]"
    session.continue_(timeout=30)
    assert session.evaluate("i").value == "30"
    relay.breakpoints.update(bp.id, condition="i == 10")  # as compiled: the guard holds it again
    assert session.evaluate(GUARDS_ON).value == "[True]"
    relay.breakpoints.remove(bp.id)
    assert session.evaluate(GUARDS_ON).value == "[False]"
    assert session.continue_(timeout=30) is None
    assert "loop 1225" in session.output().text


def test_what_cannot_be_compiled_is_left_to_pydevd(relay, write):
    app = write("app.py", """
        total = 0
        for i in range(5):  # header
            total += i
        print("total", total)
        """)
    header = relay.breakpoints.add(app, line_of(app, "# header"), condition="total == 3")  # runs again each pass
    session = relay.launch(app)
    assert session.wait_for_stop(30).breakpoint_ids == [header.id]
    assert session.evaluate("i").value == "2"
    assert session.evaluate("hasattr(__import__('builtins'), '__jupyter_debug_relay__') and "
                            f"{GUARDS_ON}").value == "[]"
    assert session.continue_(timeout=30) is None


RUNNING = """
import os
import sys
import time

def loop(n, ready, go):
    total = 0
    for i in range(n):
        total += i  # running
        if i == 10:
            open(ready, "w").close()
            while not os.path.exists(go):
                time.sleep(0.01)
    return total

print("loop", loop(50000, sys.argv[1], sys.argv[2]))
"""
WATCHES = "len(__import__('sys').modules['_jupyter_debug_relay_boot_watched_breakpoints'].WATCHES)"


@pytest.mark.every_target
def test_a_condition_set_while_its_loop_runs_stops_at_its_pass(relay, write, tmp_path, target_python):
    app = write("running.py", RUNNING)
    ready, go = tmp_path / "ready", tmp_path / "go"
    session = relay.launch(app, args=[str(ready), str(go)])
    wait_until(ready.exists, what="the loop's first passes")
    bp = relay.breakpoints.add(app, line_of(app, "# running"), condition="i == 40000")
    go.touch()
    stop = session.wait_for_stop(60)
    assert (stop.frame.line, stop.breakpoint_ids, session.evaluate("i").value) == (bp.line, [bp.id], "40000")
    if target_python:  # 3.12+: a callback of that one line holds it (3.11: pydevd's tracer, as before)
        assert session.evaluate(WATCHES).value == "1"
    relay.breakpoints.update(bp.id, condition="i == 40010")
    assert session.continue_(timeout=60).frame.line == bp.line and session.evaluate("i").value == "40010"
    relay.breakpoints.update(bp.id, hit_condition="% 5000", condition="")  # counted from its change
    assert session.continue_(timeout=60) is not None and session.evaluate("i").value == "45010"
    relay.breakpoints.remove(bp.id)
    if target_python:
        assert session.evaluate(WATCHES).value == "0"
    assert session.continue_(timeout=60) is None
    assert f"loop {sum(range(50000))}" in session.output().text


STEP_ONTO = """
total = 0
for i in range(6):
    total += 1  # before
    total += i  # guarded
    after = total  # after
print("total", total)
"""


def steps_onto(session, before: int, guarded: int, after: int) -> None:  # noqa: ANN001 - a facade session
    """From the stop at ``before`` (i == 2), with ``guarded`` held by ``i in (2, 4)``: a step onto it stops there
    once whether the condition holds (i == 2) or not (i == 3); a continue stops at it by itself (i == 4), and a step
    from there goes on to ``after``."""
    for i in ("2", "3"):
        if i == "3":
            assert session.continue_(timeout=30).frame.line == before
        assert session.next(timeout=30).frame.line == guarded
        assert session.evaluate("i").value == i
        stop = session.next(timeout=30)
        assert (stop.frame.line, session.evaluate("i").value) == (after, i)
    stop = session.continue_(timeout=30)  # no step: the breakpoint's own stop, once
    assert (stop.reason, stop.frame.line, session.evaluate("i").value) == ("breakpoint", guarded, "4")
    stop = session.next(timeout=30)
    assert (stop.frame.line, session.evaluate("i").value) == (after, "4")
    assert session.continue_(timeout=30) is None
    assert "total 21" in session.output().text


@pytest.mark.parametrize("version", [(3, 11), (3, 12), (3, 13)], ids=["3.11", "3.12", "3.13"])
def test_a_step_onto_a_guarded_line_stops_there_once(relay, write, version: tuple[int, int]):
    """As in pydevd (and VS Code): a step that lands on a breakpoint's line is one stop there, whether its condition
    holds or not; the next step goes on to the line below."""
    python = targets.python_for(version[1])
    app = write("app.py", STEP_ONTO)
    before, after = line_of(app, "# before"), line_of(app, "# after")
    relay.breakpoints.add(app, before, condition="i in (2, 3)")
    guarded = relay.breakpoints.add(app, line_of(app, "# guarded"), condition="i in (2, 4)")
    session = relay.launch(app, python=python)
    assert session.wait_for_stop(30).frame.line == before
    assert (session.evaluate("i").value, session.evaluate(GUARDS_ON).value) == ("2", "[True, True]")
    steps_onto(session, before, guarded.line, after)


def steps_over_the_counted_pass(session, guarded: int, after: int) -> None:  # noqa: ANN001 - a facade session
    """From the stop before ``guarded`` (i == 2), whose hit count matches at this pass: a step onto it stops there
    once, the next goes on to ``after``, and the program ends without stopping there again (the pass was the
    step's: counted, and not stopped at again)."""
    assert session.next(timeout=30).frame.line == guarded
    stop = session.next(timeout=30)
    assert (stop.frame.line, session.evaluate("i").value) == (after, "2")
    assert session.continue_(timeout=30) is None
    assert "total 21" in session.output().text


@pytest.mark.parametrize("version", [(3, 11), (3, 12), (3, 13)], ids=["3.11", "3.12", "3.13"])
def test_a_step_onto_a_hit_count_counts_its_pass_and_stops_there_once(relay, write, version: tuple[int, int]):
    python = targets.python_for(version[1])
    app = write("app.py", STEP_ONTO)
    relay.breakpoints.add(app, line_of(app, "# before"), condition="i == 2")
    guarded = relay.breakpoints.add(app, line_of(app, "# guarded"), hit_condition="== 3")  # the pass of i == 2
    session = relay.launch(app, python=python)
    assert session.wait_for_stop(30).frame.line == line_of(app, "# before")
    steps_over_the_counted_pass(session, guarded.line, line_of(app, "# after"))


@pytest.mark.parametrize("version", [(3, 12), (3, 13)], ids=["3.12", "3.13"])
def test_a_step_onto_a_watched_line_stops_there_once(relay, write, version: tuple[int, int]):
    """A condition set while its code runs (3.12+: a callback of its line) is one stop with a step that lands there,
    whether it holds or not, and a step from its own stop goes on to the line below."""
    python = targets.python_for(version[1])
    app = write("app.py", STEP_ONTO)
    before, after = line_of(app, "# before"), line_of(app, "# after")
    relay.breakpoints.add(app, before, condition="i in (2, 3)")
    session = relay.launch(app, python=python)
    assert session.wait_for_stop(30).frame.line == before
    guarded = relay.breakpoints.add(app, line_of(app, "# guarded"), condition="i in (2, 4)")
    assert session.evaluate(WATCHES).value == "1"
    steps_onto(session, before, guarded.line, after)


@pytest.mark.parametrize("version", [(3, 12), (3, 13)], ids=["3.12", "3.13"])
def test_a_step_onto_a_watched_hit_count_counts_its_pass_and_stops_there_once(relay, write,
                                                                              version: tuple[int, int]):
    python = targets.python_for(version[1])
    app = write("app.py", STEP_ONTO)
    relay.breakpoints.add(app, line_of(app, "# before"), condition="i == 2")
    session = relay.launch(app, python=python)
    assert session.wait_for_stop(30).frame.line == line_of(app, "# before")
    guarded = relay.breakpoints.add(app, line_of(app, "# guarded"), hit_condition="== 1")  # counted from now on
    steps_over_the_counted_pass(session, guarded.line, line_of(app, "# after"))


@pytest.mark.parametrize("version", [(3, 12), (3, 13)], ids=["3.12", "3.13"])
def test_a_step_from_a_watched_stop_goes_on_to_the_line_below(relay, write, version: tuple[int, int]):
    """pydevd's own callback of the same LINE event comes after the watch's: the step asked at the watch's stop does
    not stop there again."""
    python = targets.python_for(version[1])
    app = write("app.py", STEP_ONTO)
    relay.breakpoints.add(app, line_of(app, "# before"), condition="i == 1")
    session = relay.launch(app, python=python)
    assert session.wait_for_stop(30).frame.line == line_of(app, "# before")
    guarded = relay.breakpoints.add(app, line_of(app, "# guarded"), condition="i in (1, 4)")
    stop = session.continue_(timeout=30)  # the first pass since the stop: pydevd's callback of that line is on
    assert (stop.reason, stop.frame.line, session.evaluate("i").value) == ("breakpoint", guarded.line, "1")
    stop = session.next(timeout=30)
    assert (stop.frame.line, session.evaluate("i").value) == (line_of(app, "# after"), "1")
    stop = session.continue_(timeout=30)
    assert (stop.reason, stop.frame.line, session.evaluate("i").value) == ("breakpoint", guarded.line, "4")
    assert session.continue_(timeout=30) is None
