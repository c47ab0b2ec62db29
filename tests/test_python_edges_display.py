"""How values and frames read: bytes by length and base64 chunks, cycles marked, native frames said so, dropped output
counted in bytes (issue 16)."""

from __future__ import annotations

import base64

import pytest
from conftest import line_of
from test_dap_lldb import SOURCE as SQUARES
from test_dap_lldb import needs_lldb, squares  # noqa: F401 - a fixture
from test_panel import first_scope, panels, wait_until  # noqa: F401 - a fixture

from jupyter_debug_relay import Relay
from jupyter_debug_relay.kernel.results import OutputResult
from jupyter_debug_relay.widgets import DebuggerPanel

APP = """
class Node:
    def __init__(self, parent=None):
        self.parent = parent
        self.child = None


blob = bytes(range(256)) * 10
buffer = bytearray(b"abc")
loop = [1]
loop.append(loop)
root = Node()
root.child = Node(root)
print("ready")  # stop
"""


@pytest.fixture
def paused(relay, write):
    app = write("app.py", APP)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    return session, {v.name: v for v in session.variables(session.scopes()[0].ref).items}


def test_bytes_show_their_length_and_page_as_base64_chunks(paused):
    session, found = paused
    blob = found["blob"]
    assert blob.value.startswith("2,560 bytes: b'\\x00\\x01") and len(blob.value) < 100
    first = session.variables(blob.ref, 0, 2)
    assert first.total == 54 and [v.name for v in first.items] == ["0–47", "48–95"]
    assert base64.b64decode(first.items[0].value) == bytes(range(48))
    assert first.items[1].evaluate_name == "blob[48:96]" and first.items[1].type == "base64"
    whole = b"".join(base64.b64decode(v.value) for start in (0, 30)
                     for v in session.variables(blob.ref, start, 30).items)
    assert whole == bytes(range(256)) * 10
    small = found["buffer"]
    assert small.value == "3 bytes: bytearray(b'abc')"
    assert [(v.name, v.value) for v in session.variables(small.ref).items] == [("0–2", "YWJj")]


def test_a_reference_back_to_an_ancestor_is_marked_as_a_cycle(paused):
    session, found = paused
    assert not found["loop"].cycle
    children = {v.name: v for v in session.variables(found["loop"].ref).items}
    assert children["1"].cycle and not children["0"].cycle
    child = {v.name: v for v in session.variables(found["root"].ref).items}["child"]
    assert not child.cycle  # a new object under root
    parent = {v.name: v for v in session.variables(child.ref).items}["parent"]
    assert parent.cycle  # root again, two levels down


def test_the_magics_show_bytes_and_cycles(kernel, write):
    app = write("app.py", APP)
    kernel.magic(f"%bp app.py:{line_of(app, '# stop')}")
    kernel.magic("%dbg launch app.py")
    listed = kernel.magic("%dbg vars loop").text.splitlines()
    assert "1 = [1, [...]]  (list)  ↺ cycle: an ancestor again" in listed and "0 = 1  (int)" in listed
    assert kernel.magic("%dbg vars blob --count 1").text.splitlines() == [
        "0–47 = AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v  (base64)",
        "… 0–1 of 54 (use --start/--count for more)"]
    kernel.magic("%dbg stop")


def test_the_panel_marks_a_cycle_and_reads_bytes_by_length(relay, write, panels):  # noqa: F811 - the fixture
    app = write("app.py", APP)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    panel = DebuggerPanel(session)
    panels(panel)
    scope = first_scope(panel)
    assert "2,560 bytes: " in scope.child("blob").value
    loop = scope.child("loop")
    loop.expand()
    back = wait_until(lambda: loop.nodes and loop.child("1"), what="the children of loop")
    assert back.cycle and "↺ cycle" in back._value.value
    assert not loop.child("0").cycle and "↺ cycle" not in loop.child("0")._value.value


def test_dropped_output_is_counted_in_bytes(write):
    app = write("loud.py", "print('x' * 3000)\nprint('tail')\n")
    with Relay(output_cap=1024) as relay:
        session = relay.launch(app)
        wait_until(lambda: session.state == "terminated", what="the end of the target")
        page = session.output()
        assert page.dropped > 2000
        assert OutputResult(page).text.startswith(f"[{page.dropped:,} bytes of earlier output dropped]\n")


@needs_lldb
def test_a_frame_in_native_code_is_marked_as_such(relay, kernel, squares):  # noqa: F811 - the fixture
    relay.breakpoints.add(SQUARES, line_of(SQUARES, "square body"))
    session = relay.connect_dap(program=squares)
    session.wait_for_stop(15)
    frames = session.stack()
    assert [f.native for f in frames[:2]] == [False, False] and frames[-1].native
    assert frames[-1].path is None
    session.terminate()
    kernel.magic(f"%bp {SQUARES}:{line_of(SQUARES, 'square body')}")
    kernel.magic(f"%dbg connect dap {squares} --name c")
    where = kernel.magic("%dbg where").text.splitlines()
    assert where[0].startswith("→ #0 square() at ") and where[-1].endswith(f"{frames[-1].name}() [native code]")
    kernel.magic("%dbg stop")
