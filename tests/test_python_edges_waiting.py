"""Why a running target does not stop: it waits on stdin, or a pause waits on native code; end of file on stdin
(issue 16 items 10 and 14)."""

from __future__ import annotations

import time

import pytest

from jupyter_debug_relay import RelayError

READER = """
import sys
first = input()
rest = sys.stdin.read()  # reads to end of file
print(f"got {first!r} then {len(rest.splitlines())} lines")
"""

SLEEPER = """
import time
print("asleep")
time.sleep(6)
print("woke")
"""


def stdout(session) -> str:
    return "".join(c.text for c in session.output().chunks if c.category == "stdout")


def until(check, seconds: float = 15.0):
    deadline = time.monotonic() + seconds
    while not (found := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_waiting_for_input_is_shown_and_eof_ends_the_read(relay, write):
    app = write("reader.py", READER)
    session = relay.launch(app)
    assert until(lambda: session.info().waiting_for_input)
    with pytest.raises(RelayError) as still:
        session.wait_for_stop(0.5)
    assert still.value.code == "timeout" and "waits for input on stdin" in still.value.message
    session.send_input("hello\n")
    assert until(lambda: session.info().waiting_for_input)  # now in sys.stdin.read()
    session.send_input("a\nb\n")
    assert until(lambda: session.info().waiting_for_input)  # a read to end of file goes on after lines
    session.send_input(eof=True)
    with pytest.raises(RelayError) as ended:
        session.wait_for_stop(15)
    assert ended.value.code == "target_exited" and session.exit_code == 0
    assert "got 'hello' then 2 lines" in stdout(session)
    assert not session.info().waiting_for_input


def test_input_after_eof_is_refused(relay, write):
    app = write("sleeper.py", "import sys, time\nsys.stdin.read()\ntime.sleep(30)\n")
    session = relay.launch(app)
    session.send_input("x", eof=True)
    with pytest.raises(RelayError) as refused:
        session.send_input("more\n")
    assert refused.value.code == "invalid_request" and "end of file" in refused.value.message
    with pytest.raises(RelayError) as empty:
        session.send_input()
    assert empty.value.code == "invalid_request"
    session.terminate()


def test_a_pause_in_native_code_says_why_and_stops_when_the_call_returns(relay, write):
    app = write("sleeper.py", SLEEPER)
    session = relay.launch(app)
    assert until(lambda: "asleep" in stdout(session))
    with pytest.raises(RelayError) as late:
        session.pause(timeout=1.5)
    assert late.value.code == "timeout"
    assert "native code" in late.value.message and "sleeping" in late.value.message
    assert "pause is pending" in late.value.details["note"]
    stop = session.wait_for_stop(15)  # time.sleep returned: the pending pause stops it
    assert stop.reason == "pause" and "woke" not in stdout(session)
    session.terminate()


def test_the_magics_send_eof_and_say_why_still_running(kernel, write):
    write("reader.py", READER)
    write("sleeper.py", SLEEPER.replace("sleep(6)", "sleep(60)"))
    launched = kernel.magic("%debug_session launch reader.py --timeout 2").text
    assert "still running" in launched and "waits for input on stdin" in launched
    assert "waiting for input" in kernel.magic("%debug_session status").text
    assert kernel.magic("%debug_session input hello").text.startswith("sent 6 characters")
    assert "end of file" in kernel.magic("%debug_session input --eof").text
    assert "exited with code 0" in kernel.magic("%debug_session wait").text
    kernel.magic("%debug_session launch sleeper.py --no-wait")
    assert until(lambda: "asleep" in kernel.magic("%debug_session output").text)
    paused = kernel.magic("%debug_session pause --timeout 1.5").text
    assert "still running" in paused and "native code" in paused and "sleeping" in paused
    kernel.magic("%debug_session stop")
