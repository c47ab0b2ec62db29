"""Python 3.11, exception breakpoints on raised exceptions (``boot/exception_lines.py``): a frame traced for its
exceptions only gets no line events, yet every stop, step, pause and breakpoint that needs its lines still has them."""

from __future__ import annotations

import sys

import pytest
from conftest import line_of, wait_until

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="exception_lines is for Python 3.11 targets")

PROGRAM = """
import sys
import time


def lines_on():
    return sys._getframe(1).f_trace_lines


def helper(n):
    a = n + 1  # helper first
    b = a * 2
    return b


def counting(n):
    for i in range(n):  # counting loop
        yield i


def raising(n):
    total = 0
    print("lines of a raising frame", lines_on(), flush=True)
    gen = counting(5)
    next(gen)  # its frame's lines turned off: the generator's frame is traced for its exceptions only
    for i in range(n):  # raising loop
        try:
            if i == n - 1:
                raise KeyError(i)  # key
            raise ValueError(i)
        except (KeyError, ValueError):  # except
            total += 1  # caught
        total += helper(i)  # after
    total += next(gen)  # sum
    return total  # end of raising


def spin(every):
    n = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        n += 1  # spin
        if n == 100000:
            print("spinning", flush=True)
        if n % every == 0:
            try:
                raise ValueError(n)
            except ValueError:
                pass
    return n


print("result", raising(3), flush=True)
print("spun", spin(int(sys.argv[1]) if len(sys.argv) > 1 else 1000), flush=True)  # raises every 1000th pass
"""


def printed(session) -> str:  # noqa: ANN001
    return "".join(chunk.text for chunk in session.output().chunks)


@pytest.fixture
def app(write) -> str:  # noqa: ANN001
    return write("app.py", PROGRAM)


@pytest.mark.parametrize("cython", ["YES", "NO"], ids=["compiled pydevd", "pure pydevd"])
def test_a_frame_traced_for_its_exceptions_has_no_lines_yet_steps_from_its_exception_stop(relay, app, cython) -> None:
    relay.breakpoints.exceptions("raised", ["KeyError"])
    session = relay.launch(app, env={"PYDEVD_USE_CYTHON": cython})
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.line) == ("exception", line_of(app, "# key"))
    assert "lines of a raising frame False" in printed(session)
    stop = session.next(timeout=30)  # the frame's lines are on again from the stop
    assert stop.frame.line == line_of(app, "# except")
    stop = session.next(timeout=30)
    assert stop.frame.line == line_of(app, "# caught")
    stop = session.next(timeout=30)
    assert stop.frame.line == line_of(app, "# after")
    stop = session.step_in(timeout=30)
    assert (stop.frame.name, stop.frame.line) == ("helper", line_of(app, "# helper first"))
    stop = session.step_out(timeout=30)
    assert (stop.frame.name, stop.frame.line) == ("raising", line_of(app, "# after"))
    stop = session.next(timeout=30)
    assert stop.frame.line == line_of(app, "# raising loop")
    stop = session.next(timeout=30)
    assert stop.frame.line == line_of(app, "# sum")
    stop = session.step_in(timeout=30)  # into the generator resumed, whose lines were turned off at its start
    assert (stop.frame.name, stop.frame.line) == ("counting", line_of(app, "# counting loop"))
    relay.breakpoints.exceptions("none")
    session.terminate()


@pytest.mark.parametrize("cython", ["YES", "NO"], ids=["compiled pydevd", "pure pydevd"])
def test_a_step_out_of_a_stop_lands_in_a_caller_traced_for_its_exceptions_and_steps_on(relay, app, cython) -> None:
    relay.breakpoints.exceptions("raised", ["KeyError"])
    relay.breakpoints.add(app, line_of(app, "# helper first"))
    session = relay.launch(app, env={"PYDEVD_USE_CYTHON": cython})
    stop = session.wait_for_stop(30)
    assert (stop.frame.name, stop.frame.line) == ("helper", line_of(app, "# helper first"))
    stop = session.step_out(timeout=30)
    assert (stop.frame.name, stop.frame.line) == ("raising", line_of(app, "# after"))
    stop = session.next(timeout=30)  # a line of the caller, whose lines were off until the stop
    assert (stop.frame.name, stop.frame.line) == ("raising", line_of(app, "# raising loop"))
    session.terminate()


def test_a_pause_and_a_breakpoint_added_stop_a_loop_traced_for_its_exceptions(relay, app) -> None:
    # compiled pydevd only: with pure pydevd (PYDEVD_USE_CYTHON=NO) a breakpoint added after a pause and a step in this
    # loop does not stop, with this feature off as well
    relay.breakpoints.exceptions("raised", ["KeyError"])
    session = relay.launch(app)
    stop = session.wait_for_stop(30)  # the KeyError
    assert stop.frame.line == line_of(app, "# key")
    session.continue_(wait=False)
    wait_until(lambda: "spinning" in printed(session), what="the loop")
    paused = session.pause(timeout=30)
    assert (paused.reason, paused.frame.name) == ("pause", "spin")
    stop = session.next(timeout=30)  # a step over from a pause: the loop's next line
    assert stop.frame.name == "spin"
    session.continue_(wait=False)
    relay.breakpoints.add(app, line_of(app, "# spin"))  # in the loop's running frame, whose lines were off
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.line) == ("breakpoint", line_of(app, "# spin"))
    session.terminate()


def test_a_breakpoint_added_stops_a_loop_that_raises_at_every_pass(relay, app) -> None:
    """pydevd gives the running frame its tracer while the loop's thread is inside ``trace_exception``, which then
    puts itself back over it: before ``Retrace``, 7 launches in 15 never stopped."""
    relay.breakpoints.exceptions("raised", ["KeyError"])
    for _ in range(5):
        session = relay.launch(app, args=["1"])  # spin raises at every pass
        session.wait_for_stop(30)  # raising's KeyError
        session.continue_(wait=False)
        wait_until(lambda: "spinning" in printed(session), what="the loop")  # noqa: B023 - waited for here
        bp = relay.breakpoints.add(app, line_of(app, "# spin"))
        stop = session.wait_for_stop(10)
        assert (stop.reason, stop.frame.line) == ("breakpoint", line_of(app, "# spin"))
        session.terminate()
        relay.breakpoints.remove(bp.id)


def test_a_step_from_a_compiled_condition_goes_on_in_a_frame_traced_for_its_exceptions(relay, app) -> None:
    relay.breakpoints.exceptions("raised", ["KeyError"])
    relay.breakpoints.add(app, line_of(app, "# after"), condition="i == 0")  # compiled into the code: pydevd sees none
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.line) == ("breakpoint", line_of(app, "# after"))
    assert "lines of a raising frame False" in printed(session)
    stop = session.next(timeout=30)
    assert (stop.frame.name, stop.frame.line) == ("raising", line_of(app, "# raising loop"))
    stop = session.next(timeout=30)  # into the loop's body again
    assert stop.frame.name == "raising" and stop.frame.line > line_of(app, "# raising loop")
    session.terminate()
