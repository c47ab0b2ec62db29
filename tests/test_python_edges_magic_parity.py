"""What the panel and the API could do and the magics could not: set on attributes and items, completions, paging a
deep stack, clearing output (issue 16)."""

from __future__ import annotations

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError

APP = """
import numpy as np


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5


def dive(depth):
    if depth == 0:
        print("bottom")
        return 0  # bottom
    return dive(depth - 1) + 1


p = Point(3, 4)
d = {"k": 0}
arr = np.arange(10)
items = [1, 2, 3]
print("before")
dive(30)
print(p.x, d["k"], int(arr[3]), items[1])  # after
"""


@pytest.fixture
def app(write) -> str:
    return write("app.py", APP)


def test_set_expression_assigns_attributes_and_items_in_place(relay, app):
    relay.breakpoints.add(app, line_of(app, "# after"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    assert session.set_expression("p.x", "0").value == "0"
    assert session.set_expression("d['k']", "1").value == "1"
    assert session.set_expression("arr[3]", "7").value in ("7", "np.int64(7)")  # NumPy 2 reprs its scalars
    assert session.set_expression("items[1]", "p.y * 10").value == "40"
    with pytest.raises(RelayError) as failed:
        session.set_expression("p.nothing.x", "1")
    assert failed.value.code == "evaluation_failed" and "nothing" in failed.value.message
    assert session.continue_(timeout=10) is None
    assert "0 1 7 40" in session.output().text


def test_clear_output_forgets_what_was_printed_and_counts_nothing_as_dropped(relay, app):
    relay.breakpoints.add(app, line_of(app, "# bottom"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    assert "before" in session.output().text
    cursor = session.clear_output()
    page = session.output()
    assert (page.text, page.dropped) == ("", 0)
    assert session.continue_(timeout=10) is None
    after = session.output(since=cursor)
    assert "before" not in after.text and "3 0 3 2" in after.text and after.dropped == 0


def test_the_magics_set_attributes_and_items_complete_page_the_stack_and_clear_output(kernel, app):
    kernel.magic(f"%bp app.py:{line_of(app, '# bottom')}")
    assert "in dive()" in kernel.magic("%dbg launch app.py").text
    kernel.magic("%dbg frame 31")  # the module's frame: p, d, arr live there
    assert kernel.magic("%dbg set p.x = 0").text == "0"
    assert kernel.magic("%dbg set d['k'] = 1").text == "1"
    assert kernel.magic("%dbg set arr[3] = 7").text in ("7", "np.int64(7)")
    assert kernel.magic("%dbg eval (p.x, d['k'], int(arr[3]))").text == "(0, 1, 7)"
    assert kernel.magic("%dbg set p.nothing.x = 1").text.startswith("error evaluation_failed:")
    completions = kernel.magic("%dbg complete p.").text.splitlines()
    assert {"x", "y", "norm"} <= set(completions) and len(completions) == len(set(completions))
    page = [line for line in kernel.magic("%dbg where --start 10 --levels 3").text.splitlines()
            if "│" not in line]  # each frame's source line stands under it
    assert page[:3] == [f"  #{n} dive() at app.py:{line_of(app, 'return dive(depth - 1)')}" for n in (10, 11, 12)]
    assert page[3] == "… frames 10–12 of 32 (use --start/--levels for more)"
    last = kernel.magic("%dbg where --start 31").text.splitlines()
    assert last == [f"→ #31 <module>() at app.py:{line_of(app, 'dive(30)')}",  # the frame chosen with `frame 31`
                    f"      {line_of(app, 'dive(30)')} │ dive(30)",
                    "… frames 31–31 of 32 (use --start/--levels for more)"]
    assert "bottom" in kernel.magic("%dbg output").text
    assert kernel.magic("%dbg output --clear").text.startswith("cleared the output of s1")
    assert kernel.magic("%dbg output").text == ""
    assert "exited with code 0" in kernel.magic("%dbg continue").text
    assert kernel.magic("%dbg output").text == "0 1 7 2"
