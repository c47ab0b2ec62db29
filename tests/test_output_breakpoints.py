"""Output breakpoints (``%bp output REGEX``): a printing loop paused just after a matching line, through the magics;
and breakpoint kinds an EZ session lacks said on the breakpoint, yet taken by a backend that has them."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_debug_relay import RelayError

PEERS = Path(__file__).resolve().parent / "peers"
EZ, CALLS = str(PEERS / "ez"), str(PEERS / "ez_programs" / "calls.ez")

LOOP = """
import sys
import time

for i in range(3000):
    print(f"tick {i}", flush=True)
    if i % 7 == 0:
        print(f"warning at {i}", file=sys.stderr, flush=True)
    time.sleep(0.005)
"""


def test_an_output_breakpoint_pauses_a_printing_loop_just_after_the_line(kernel, write):
    write("loop.py", LOOP)
    added = kernel.magic("%bp output ^tick 40$").text
    assert added == "breakpoint 1 at output matching '^tick 40$' — not verified yet (checked when a session starts)"
    assert kernel.magic("%bp output ^tick 40$").text.startswith("breakpoint 1 at ")  # the same spec: the same one
    stop = kernel.magic("%dbg launch loop.py").text
    assert stop.startswith("s1: paused at ") and "— breakpoint 1 (just after the output line 'tick 40')" in stop, stop
    assert int(kernel.magic("%dbg eval i").text) >= 40  # output is asynchronous: just after, not at
    status = kernel.magic("%dbg status")
    assert kernel.run("(_.stop.output_line, _.stop.breakpoint_ids)").text == "('tick 40', [1])", status.text
    assert kernel.magic("%bp list").text == "breakpoint 1 at output matching '^tick 40$' — verified"
    last = kernel.magic("%dbg output --tail 1").text  # a tick, or the warning of a multiple of 7 printed just after
    assert last.startswith(("tick ", "warning at ")) and int(last.split()[-1]) >= 40, last

    assert kernel.magic("%bp output warning at \\d*5$").text.startswith("breakpoint 2 at output matching ")
    stderr_stop = kernel.magic("%dbg continue").text  # stderr is watched too: 105 is the next multiple of 7 ending in 5
    assert "breakpoint 2 (just after the output line 'warning at 105')" in stderr_stop, stderr_stop
    assert kernel.magic("%bp rm 2").text == "removed breakpoint 2"
    bad = kernel.magic("%bp output (unclosed").text
    assert bad.startswith("error invalid_request: The output pattern '(unclosed' is not a regular expression: "
                          "missing ), unterminated subpattern at position 0."), bad
    assert kernel.magic("%bp output").text.startswith("error invalid_request: Usage: %bp output REGEX.")
    assert kernel.magic("%bp clear").text == "removed 1 breakpoint"
    assert kernel.magic("%dbg continue --timeout 0.5").text.startswith("still running after 0.5 s")
    kernel.magic("%dbg stop")


def test_an_output_breakpoint_through_the_comm_field(kernel):
    from tests.test_kernel_comm import open_frontend

    front = open_frontend(kernel)
    answer = front.request("setBreakpoint", None, kind="output", pattern="^done$")  # the schema has the field
    assert answer["ok"] and answer["body"]["breakpoint"]["pattern"] == "^done$", answer
    refused = front.request("setBreakpoint", None, kind="output")
    assert not refused["ok"] and refused["error"]["code"] == "invalid_request"
    assert "needs pattern" in refused["error"]["message"]


@pytest.mark.every_target
def test_ez_lacks_function_and_output_breakpoints_and_says_so_and_debugpy_takes_them(relay, tmp_path):
    function = relay.breakpoints.add_function("work")
    output = relay.breakpoints.add_output("^go$")
    session = relay.connect_ez(CALLS, ez=EZ)
    session.wait_for_stop(10)
    assert "no function breakpoints" in relay.breakpoints.get(function.id).message
    assert relay.breakpoints.get(output.id).message == "ez sessions cannot pause, so output breakpoints do not apply " \
                                                      "to them"
    session.terminate()
    app = tmp_path / "app.py"
    app.write_text("import time\n\ndef work():\n    print('go', flush=True)\n    time.sleep(5)\n\nwork()\n")
    launched = relay.launch(str(app))
    assert launched.wait_for_stop(10).breakpoint_ids == [function.id]  # refused by EZ, still sent to debugpy
    stop = launched.continue_()
    assert stop.breakpoint_ids == [output.id] and stop.output_line == "go"
    assert relay.breakpoints.get(output.id).verified
    launched.terminate()


def test_a_bad_output_pattern_is_invalid_request_naming_the_field(relay):
    with pytest.raises(RelayError) as caught:
        relay.breakpoints.add_output("[a-")
    assert caught.value.code == "invalid_request" and caught.value.details["field"] == "pattern"
