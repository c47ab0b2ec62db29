"""Breakpoints of every kind, owned by the relay and applied live to every session."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import line_of, wait_until

from jupyter_debug_relay import RelayError

LOOP = """
def work(i):
    total = i * 2  # body
    return total

# a comment

for i in range(10):
    print("tick", i)  # tick
    work(i)
try:
    {}["missing"]  # caught
except KeyError:
    pass
raise ValueError("bad value 42")  # uncaught
"""


def test_comment_and_blank_lines_are_unverified_with_the_nearest_executable_line(relay, write):
    app = write("loop.py", LOOP)
    comment = line_of(app, "# a comment")
    bp = relay.breakpoints.add(app, comment)
    assert not bp.verified
    assert "nearest executable line is" in bp.message
    nearest = int(bp.message.rsplit(" ", 1)[1])
    assert nearest == line_of(app, "for i in range(10)")
    blank = relay.breakpoints.add(app, comment + 1)
    assert not blank.verified and "nearest executable line" in blank.message


def test_line_past_the_end_is_invalid_line(relay, write):
    app = write("loop.py", LOOP)
    with pytest.raises(RelayError) as info:
        relay.breakpoints.add(app, 500)
    assert info.value.code == "invalid_line" and "lines" in info.value.message


def test_bad_condition_is_invalid_condition_with_the_syntax_error(relay, write):
    app = write("loop.py", LOOP)
    with pytest.raises(RelayError) as info:
        relay.breakpoints.add(app, line_of(app, "# body"), condition="i ==")
    assert info.value.code == "invalid_condition" and "invalid syntax" in info.value.message
    with pytest.raises(RelayError) as info:
        relay.breakpoints.add(app, line_of(app, "# body"), hit_condition="sometimes")
    assert info.value.code == "invalid_condition"
    assert relay.breakpoints.list() == []


def test_missing_file_is_pending_and_verifies_when_the_file_appears(relay, write, tmp_path):
    later = str(tmp_path / "later.py")
    bp = relay.breakpoints.add(later, 2)
    assert not bp.verified and bp.message.startswith("file not found")
    main = write("main.py", f"""
        import os, runpy, time
        while not os.path.exists({later!r}):
            time.sleep(0.05)
        time.sleep(1.5)
        runpy.run_path({later!r})
    """)
    session = relay.launch(main)
    wait_until(lambda: session.state == "running", what="the target to run")
    write("later.py", "x = 1\ny = x + 1\nprint(y)\n")
    stop = session.wait_for_stop(15)
    assert stop.frame.path == later and stop.frame.line == 2
    assert relay.breakpoints.get(bp.id).verified


@pytest.mark.every_target
def test_condition_and_hit_condition_choose_the_stop(relay, write):
    app = write("loop.py", LOOP)
    line = line_of(app, "# body")
    relay.breakpoints.add(app, line, condition="i == 7")
    session = relay.launch(app)
    session.wait_for_stop(10)
    assert session.evaluate("i").value == "7"
    session.terminate()
    relay.breakpoints.clear(app)
    relay.breakpoints.add(app, line, hit_condition="== 4")
    session = relay.launch(app)
    session.wait_for_stop(10)
    assert session.evaluate("i").value == "3"


@pytest.mark.every_target
def test_logpoint_text_arrives_as_output_without_stopping(relay, write):
    app = write("loop.py", LOOP)
    relay.breakpoints.add(app, line_of(app, "# body"), log_message="work got {i}")
    session = relay.launch(app, exceptions="none")  # it ends with an uncaught ValueError: no stop there either
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    text = session.output().text
    assert "work got 0\n" in text and "work got 9\n" in text
    assert text.index("work got 3") < text.index("work got 4")
    logged = {c.category for c in session.output().chunks if "work got" in c.text}
    assert logged == {"console"}  # apart from the program's own stdout, as in a debug console


@pytest.mark.every_target
def test_function_breakpoint(relay, write):
    app = write("loop.py", LOOP)
    bp = relay.breakpoints.add_function("work")
    session = relay.launch(app)
    stop = session.wait_for_stop(10)
    assert stop.frame.name == "work" and stop.reason == "function breakpoint"
    assert bp.id in stop.breakpoint_ids


@pytest.mark.every_target
def test_exception_breakpoints_raised_and_uncaught(relay, write):
    app = write("loop.py", LOOP)
    relay.breakpoints.exceptions("raised")
    session = relay.launch(app)
    stop = session.wait_for_stop(10)
    assert stop.reason == "exception" and stop.frame.line == line_of(app, "# caught")
    assert stop.exception.type == "KeyError"
    session.terminate()
    relay.breakpoints.exceptions("uncaught")
    session = relay.launch(app)
    stop = session.wait_for_stop(10)
    assert stop.exception.type == "ValueError" and stop.exception.message == "bad value 42"
    assert "line" in stop.exception.traceback and "ValueError: bad value 42" in stop.exception.traceback
    with pytest.raises(RelayError):
        relay.breakpoints.exceptions("sometimes")


@pytest.mark.every_target
def test_breakpoints_change_live_while_the_target_runs(relay, write):
    app = write("slow.py", """
        import time
        for i in range(600):
            print(i, flush=True)
            time.sleep(0.01)
            x = i  # here
    """)
    session = relay.launch(app)
    wait_until(lambda: session.output().text.count("\n") >= 3, what="the loop to run")
    bp = relay.breakpoints.add(app, line_of(app, "# here"))
    stop = session.wait_for_stop(10)
    assert stop.frame.line == bp.line
    relay.breakpoints.enable(bp.id, False)
    first = int(session.evaluate("i").value)
    session.continue_(wait=False)
    wait_until(lambda: f"\n{first + 10}\n" in session.output().text, what="ten turns past the disabled breakpoint")
    assert session.state == "running"
    relay.breakpoints.enable(bp.id, True)
    session.wait_for_stop(10)
    assert int(session.evaluate("i").value) > first + 5
    relay.breakpoints.remove(bp.id)
    assert relay.breakpoints.list() == []
    assert session.continue_(timeout=15) is None  # the end of the program: no stop, no error
    assert session.state == "terminated" and session.exit_code == 0


NEIGHBOURS = """
def before(i):
    return i + 1  # before


def holder(values):
    def double(v):
        return v * 2  # inside a nested function
    return sum(map(double, values))


for i in range(50):
    before(i)
print(holder([1, 2, 3]))
for i in range(3):
    before(i)
print("done")
"""


@pytest.mark.every_target
def test_functions_beside_a_breakpoint_run_freely_yet_still_stop_once_one_is_set_in_them(relay, write):
    app = write("neighbours.py", NEIGHBOURS)
    relay.breakpoints.add(app, line_of(app, "# inside a nested function"))
    session = relay.launch(app)
    stop = session.wait_for_stop(20)  # the nested function's own code holds the line, not holder's
    assert (stop.frame.line, stop.frame.name) == (line_of(app, "# inside a nested function"), "double")
    assert session.evaluate("v").value == "1"
    relay.breakpoints.clear()
    relay.breakpoints.add(app, line_of(app, "# before"))  # in a function that already ran 50 times
    stop = session.continue_(timeout=20)
    assert stop is not None and stop.frame.name == "before" and session.evaluate("i").value == "0"
    relay.breakpoints.clear()
    assert session.continue_(timeout=20) is None
    assert session.output().text.splitlines()[-2:] == ["12", "done"]


@pytest.mark.every_target
def test_a_breakpoint_set_while_the_program_runs_stops_in_a_module_loaded_before_it_started(
        relay, write, target_python):
    found = subprocess.run([target_python or sys.executable, "-c", "import json; print(json.__file__)"],
                           capture_output=True, text=True, check=True, timeout=30)
    library = found.stdout.strip()  # json: imported by the debugger itself, before the program's first line
    app = write("uses_json.py", """
        import json
        import time
        for i in range(600):
            time.sleep(0.01)
            print(json.dumps({"i": i}), flush=True)
    """)
    session = relay.launch(app, just_my_code=False)
    wait_until(lambda: session.output().text.count("\n") >= 3, what="the loop to run")
    relay.breakpoints.add(library, line_of(library, "return _default_encoder.encode(obj)"))
    stop = session.wait_for_stop(20)
    assert (stop.frame.path, stop.frame.name) == (library, "dumps")
    session.terminate()


@pytest.mark.every_target
def test_a_breakpoint_set_while_the_program_runs_stops_in_a_module_it_imported_through_a_link_of_another_name(
        relay, write):
    real = write("real_helper.py", """
        def tick(i):
            return i + 1  # in the helper
    """)
    os.symlink(real, os.path.join(os.path.dirname(real), "shortcut.py"))
    app = write("through_link.py", """
        import time
        import shortcut
        for i in range(600):
            time.sleep(0.01)
            print(shortcut.tick(i), flush=True)
    """)
    session = relay.launch(app)
    wait_until(lambda: session.output().text.count("\n") >= 3, what="the loop to run")
    relay.breakpoints.add(real, line_of(real, "# in the helper"))
    stop = session.wait_for_stop(20)
    assert (stop.frame.name, stop.frame.line) == ("tick", line_of(real, "# in the helper"))
    session.terminate()


RESUMED = """
import asyncio


def numbers():
    for i in range(3):
        x = i * 10  # in the generator
        yield x


async def later(n):
    await asyncio.sleep(0)
    return n + 1  # after an await


total = sum(numbers())
print("total", total, asyncio.run(later(total)))
"""


@pytest.mark.every_target
def test_breakpoints_in_a_generator_and_after_an_await_stop_at_every_resume(relay, write):
    app = write("resumed.py", RESUMED)
    for marker in ("# in the generator", "# after an await"):
        relay.breakpoints.add(app, line_of(app, marker))
    session, seen = relay.launch(app), []
    stop = session.wait_for_stop(20)
    while stop is not None:
        seen.append((stop.frame.name, session.evaluate("i" if stop.frame.name == "numbers" else "n").value))
        stop = session.continue_(timeout=20)
    assert seen == [("numbers", "0"), ("numbers", "1"), ("numbers", "2"), ("later", "30")]
    assert "total 30 31" in session.output().text


def test_breakpoints_apply_to_every_session(relay, write):
    app = write("loop.py", LOOP)
    bp = relay.breakpoints.add(app, line_of(app, "# tick"))
    one, two = relay.launch(app), relay.launch(app)
    assert one.wait_for_stop(10).frame.line == bp.line
    assert two.wait_for_stop(10).frame.line == bp.line
    assert os.path.samefile(one.stop.frame.path, app)


def test_the_same_spec_twice_is_the_same_breakpoint_and_a_new_condition_replaces_the_old(relay, write):
    app = write("loop.py", LOOP)
    line = line_of(app, "# body")
    first = relay.breakpoints.add(app, line, condition="i == 1")
    again = relay.breakpoints.add(app, line, condition="i == 1")  # re-running a cell is harmless
    assert again.id == first.id and again.message == ""
    replaced = relay.breakpoints.add(app, line, condition="i == 3", log_message="at {i}")
    assert replaced.id == first.id and (replaced.condition, replaced.log_message) == ("i == 3", "at {i}")
    assert replaced.message == f"replaced breakpoint {first.id} on this line (it had condition 'i == 1')"
    replaced = relay.breakpoints.add(app, line, condition="i == 3")
    assert replaced.log_message is None and "log_message 'at {i}'" in replaced.message
    assert [bp.id for bp in relay.breakpoints.list()] == [first.id]
    session = relay.launch(app)
    assert session.wait_for_stop(10).frame.line == line
    assert session.evaluate("i").value == "3"  # the new condition reached the target
    session.terminate()


def test_a_breakpoints_status_is_a_field_through_its_life(relay, write, tmp_path):
    app = write("loop.py", LOOP)
    body = relay.breakpoints.add(app, line_of(app, "# body"))
    comment = relay.breakpoints.add(app, line_of(app, "# a comment"))
    later = relay.breakpoints.add(str(tmp_path / "later.py"), 1)
    bad_python = relay.breakpoints.add_function("work", condition="i ->> 3")  # a Python session judges it
    assert [bp.status for bp in (body, comment, later, bad_python)] == ["pending", "refused", "pending", "pending"]
    session = relay.launch(app)
    session.wait_for_stop(20)
    status = {bp.id: (bp.status, bp.message) for bp in relay.breakpoints.list()}
    assert status[body.id] == ("verified", "")
    assert status[comment.id][0] == "refused" and "nearest executable line" in status[comment.id][1]
    assert status[later.id][0] == "pending" and status[later.id][1].startswith("file not found")
    assert status[bad_python.id][0] == "refused" and "not a valid expression" in status[bad_python.id][1]
    session.terminate()
