"""Breakpoints that survive edits: given by the text of their line, found again when the file changes, and line
breakpoints moved with the lines added or removed above them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import line_of, wait_until

from jupyter_debug_relay import Relay, RelayError
from jupyter_debug_relay.kernel.parsing import parse_bp_line
from jupyter_debug_relay.source import anchors
from jupyter_debug_relay.text import breakpoint_text

APP = """
def add(items):
    total = 0
    for x in items:
        total += x
    return total

print("sum", add([1, 2, 3]))
"""


def edit(path: str, new: str) -> None:
    """Write ``new`` into ``path``, with a later modification time than before even on coarse clocks."""
    before = Path(path).stat().st_mtime_ns
    Path(path).write_text(new)
    if Path(path).stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_a_line_is_found_by_its_text_and_a_doubt_is_a_warning():
    text = "a = 1\nb = a + 1\nprint(b)\nb = a + 1\n"
    assert anchors.find(text, "print(b)") == anchors.Anchor(3)
    ambiguous = anchors.find(text, "b = a + 1", near=4)
    assert ambiguous.line == 4 and "2 lines hold" in ambiguous.warning
    weak = anchors.find(text, "prnt(b)")
    assert weak.line == 3 and weak.warning.startswith("weak match")
    assert anchors.find(text, "nothing like it at all").line is None


def test_a_line_follows_the_lines_added_and_removed_above_it():
    old = "a\nb\nc\nd\n"
    assert anchors.follow(old, "new\nnew\na\nb\nc\nd\n", 3).line == 5
    assert anchors.follow(old, "b\nc\nd\n", 3).line == 2
    deleted = anchors.follow(old, "a\nb\nd\n", 3)
    assert deleted.line == 3 and "deleted" in deleted.warning


def test_the_magic_takes_a_file_and_the_text_of_a_line():
    command = parse_bp_line('app.py:"total += x" if x > 1')
    assert (command.verb, command.spec.path, command.spec.content, command.spec.condition) == (
        "line", "app.py", "total += x", "x > 1")
    assert parse_bp_line("'my app.py':'print(\"sum\")'").spec.content == 'print("sum")'
    function = parse_bp_line("function:add")
    assert (function.verb, function.spec.name) == ("func", "add")


def test_the_api_reads_a_place_in_the_path_as_the_magic_does(relay, write):
    app = write("app.py", APP)
    add, back = line_of(app, "total += x"), line_of(app, "return total")
    for place, line, content in ((f"{app}:{add}", add, None), (f'{app}:"total += x"', add, "total += x"),
                                 (f"{app}:'return total'", back, "return total")):
        spec = parse_bp_line(place).spec
        assert (spec.path, spec.line or line, spec.content) == (app, line, content)
        bp = relay.breakpoints.add(place)
        assert (bp.path, bp.line, bp.content) == (app, line, content)
    odd = write("odd.py:3", "a = 1\nb = 2\n")  # a file whose name reads like FILE:LINE is that file
    assert relay.breakpoints.add(odd, 2).path == odd
    placed = relay.breakpoints.add(f"{odd}:1")
    assert (placed.path, placed.line) == (odd, 1)


def test_a_content_breakpoint_is_found_again_after_the_file_is_edited(relay, write):
    app = write("app.py", APP)
    bp = relay.breakpoints.add(app, content="total += x")
    first = bp.line
    assert first == line_of(app, "total += x") and bp.content == "total += x" and not bp.warning
    edit(app, '"""Sums."""\nimport sys\n\n' + Path(app).read_text().replace("    total = 0\n",
                                                                           "    total = 0\n    seen = []\n"))
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    moved = line_of(app, "total += x")
    assert stop.frame.line == moved == first + 4 and stop.breakpoint_ids == [bp.id]
    assert session.evaluate("x").value == "1"
    assert relay.breakpoints.get(bp.id).line == moved
    session.terminate()


def test_line_breakpoints_follow_edits_made_while_a_session_runs(relay, write):
    app = write("app.py", APP)
    line = line_of(app, "return total")
    bp = relay.breakpoints.add(app, line)
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.line == line
    edit(app, "# a comment\n# and another\n" + Path(app).read_text())
    wait_until(lambda: relay.breakpoints.get(bp.id).line == line + 2)
    session.restart()
    stop = session.wait_for_stop(30)
    assert stop.frame.line == line + 2 == line_of(app, "return total") and stop.breakpoint_ids == [bp.id]
    session.terminate()


def test_an_ambiguous_or_missing_text_is_a_warning_or_a_clear_error(relay, write):
    app = write("app.py", APP + "total = 0\n")
    bp = relay.breakpoints.add(app, content="total = 0")
    assert bp.line == line_of(app, "total = 0") and "2 lines hold 'total = 0'" in bp.warning
    assert "warning: 2 lines hold" in breakpoint_text(bp)
    with pytest.raises(RelayError) as missing:
        relay.breakpoints.add(app, content="no such line here at all")
    assert missing.value.code == "invalid_line" and "No line of app.py holds" in missing.value.message
    with pytest.raises(RelayError) as empty:
        relay.operations.call("add_breakpoint", {"path": app})
    assert "needs line" in empty.value.message


def test_the_cli_adds_a_breakpoint_by_content_to_a_session_another_process_owns(relay, write):
    app = write("app.py", APP)
    relay.breakpoints.add(app, content="total = 0")
    session = relay.launch(app)
    session.wait_for_stop(30)
    done = subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", "bp", "add", app, "--content",
                           "return total", "--session", session.info().uid, "--json"],
                          capture_output=True, text=True, timeout=60, start_new_session=True)
    added = json.loads(done.stdout)["breakpoint"]
    assert added["line"] == line_of(app, "return total") and added["content"] == "return total", done.stderr
    assert session.continue_(timeout=15).frame.line == added["line"]
    session.terminate()


def test_a_saved_content_breakpoint_loads_where_its_text_went(relay, write):
    app = write("app.py", APP)
    relay.breakpoints.add(app, content="return total")
    relay.breakpoints.save("edits")
    edit(app, "import sys\n\n" + Path(app).read_text())
    with Relay() as later:  # the next kernel, after the file was edited
        (loaded,) = later.breakpoints.load("edits")
        assert loaded.line == line_of(app, "return total") and loaded.content == "return total"


def test_an_edit_that_changes_the_text_leaves_a_warning_on_the_breakpoint(relay, write):
    app = write("app.py", APP)
    bp = relay.breakpoints.add(app, content="total += x")
    edit(app, Path(app).read_text().replace("total += x", "total += x * 2\n        total += x"))
    wait_until(lambda: "2 lines hold" in relay.breakpoints.list()[0].warning)  # listing looks at the file again
    edit(app, Path(app).read_text().replace("total += x * 2\n        total += x", "totl += x"))
    wait_until(lambda: relay.breakpoints.list()[0].warning.startswith("weak match"))
    assert bp.line == line_of(app, "totl += x")


def test_a_content_breakpoint_in_a_file_not_written_yet_lands_on_its_text_when_the_file_appears(relay, tmp_path):
    later = str(tmp_path / "later.py")
    bp = relay.breakpoints.add(later, content="total += x")
    assert bp.status == "pending" and "does not exist yet" in bp.warning
    Path(later).write_text(APP)
    listed = relay.breakpoints.list()[0]  # listing looks at the file again
    assert listed.line == line_of(later, "total += x") and listed.status == "unverified" and listed.warning == ""
