"""Every stop's text shows the source line it stopped on (issue 14 item 3): debugpy, Mycel and EZ, via the magics."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import line_of

from tests.peers.mycel_peer import start_peer

PEERS = Path(__file__).resolve().parent / "peers"
CALLS = str(PEERS / "ez_programs" / "calls.ez")

NESTED = """
def inner(x):
    y = x * 2  # inner line
    return y

def outer():
    return inner(20) + 1  # outer line

print(outer())
"""


@pytest.fixture
def peer():
    runtime = start_peer()
    yield runtime
    runtime.stop()


def test_a_python_stop_its_steps_and_the_stack_show_their_lines(kernel, write):
    app = write("nested.py", NESTED)
    inner, ret, outer = line_of(app, "# inner line"), line_of(app, "return y"), line_of(app, "# outer line")
    kernel.magic(f"%bp nested.py:{inner}")
    launched = kernel.magic("%dbg launch nested.py")
    assert launched.text.splitlines()[1:] == [f"{inner} │ y = x * 2  # inner line"], launched.text
    assert f"{inner} │ y = x * 2" not in launched.html.split("</b>")[0]  # the HTML shows the line in its excerpt
    assert kernel.magic("%dbg next").text.splitlines()[1] == f"{ret} │ return y"
    assert kernel.magic("%dbg wait").text.splitlines()[1] == f"{ret} │ return y"
    assert kernel.magic("%dbg where").text.splitlines()[:4] == [
        f"→ #0 inner() at nested.py:{ret}", f"      {ret} │ return y",
        f"  #1 outer() at nested.py:{outer}", f"      {outer} │ return inner(20) + 1  # outer line"]
    assert kernel.magic("%dbg frame 1").text.splitlines()[1] == f"{outer} │ return inner(20) + 1  # outer line"
    assert kernel.magic("%dbg out").text.splitlines()[1] == f"{outer} │ return inner(20) + 1  # outer line"
    kernel.magic("%bp clear")
    assert kernel.magic("%dbg continue").text == "exited with code 0"  # an end has no line


def test_a_mycel_rule_stop_shows_its_rule(kernel, peer):
    kernel.magic("%bp stage create_user transform rule 0")
    assert kernel.magic(f"%dbg connect mycel {peer.url}").text.endswith("running")
    reply = peer.request("create_user", {"name": "Alice", "email": " ALICE@EXAMPLE.COM "})
    stop = kernel.magic("%dbg wait").text.splitlines()
    assert stop[0].startswith("paused at flow:create_user:") and "in transform rule 0 (email)" in stop[0], stop
    line = stop[0].split("flow:create_user:")[1].split()[0]
    assert stop[1:] == [f"{line} │ email = lower(trim(input.email))"]
    kernel.magic("%bp clear")
    kernel.magic("%dbg continue --no-wait")
    assert reply.result(10)
    kernel.magic("%dbg stop")


def test_an_ez_stop_shows_its_line(kernel):
    in_add = line_of(CALLS, "temp total")
    kernel.magic(f"%bp {CALLS}:{in_add}")
    entry = kernel.magic(f"%dbg connect ez {CALLS} --ez {PEERS / 'ez'}").text.splitlines()
    assert len(entry) == 2 and " │ " in entry[1], entry
    stop = kernel.magic("%dbg continue").text.splitlines()
    assert stop[1:] == [f"{in_add} │ temp total int = a + b"], stop
    kernel.magic("%bp clear")
    assert kernel.magic("%dbg continue").text == "exited with code 0"
