"""What a target prints before it stops is told before the stop, even on a busy machine."""

from __future__ import annotations

from conftest import line_of

PROGRAM = """\
for i in range(60):
    print("x" * 3000, i, flush=True)
    j = i  # stop
"""


def test_each_stop_comes_after_the_output_printed_before_it(relay, write, busy_machine):
    program = write("order.py", PROGRAM)
    relay.breakpoints.add(program, line_of(program, "# stop"))
    seen: list = []
    session = relay.operations.call("launch", {"program": program})["session"]
    relay.operations.call("wait", {"session": session.name})
    unsubscribe = relay.subscribe(seen.append, session.id)
    for _ in range(59):
        relay.operations.call("continue", {"session": session.name})
    unsubscribe()
    printed, late, stops = "", [], 0
    for event in seen:
        if event.event == "output":
            printed += event.body["text"]
        elif event.event == "stopped":
            stops += 1  # the launch answered the first: this is the stop after the line that ends with {stops}
            late += [] if f" {stops}\n" in printed else [stops]
    assert stops == 59 and not late, f"{len(late)} of {stops} stops were told before their own output: {late}"
