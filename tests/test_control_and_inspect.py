"""Stepping, threads, stacks, variables, evaluation, output and input against real debugpy targets."""

from __future__ import annotations

import time

import pytest
from conftest import line_of, wait_until

from jupyter_debug_relay import Relay, RelayError

PROGRAM = """
import threading

class Bad:
    def __repr__(self):
        raise RuntimeError("no repr")

def inner(x):
    y = x + 1  # inner
    return y

def outer(n):
    value = inner(n)  # call
    return value * 2  # after

big = list(range(1000000))
medium = {f"k{n}": n for n in range(150)}
cyclic = {"a": 1}
cyclic["self"] = cyclic
bad = Bad()
text = "héllo ☃" + "x" * 5000
raw = b"\\x00\\xffabc"
result = outer(3)  # main
print("result", result)
"""


@pytest.fixture
def paused(relay, write):
    app = write("prog.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# main"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    return app, session


@pytest.mark.smoke
@pytest.mark.every_target
def test_step_in_over_and_out(paused):
    app, session = paused
    stop = session.step_in()
    assert (stop.frame.name, stop.frame.line) == ("outer", line_of(app, "# call"))
    stop = session.step_in()
    assert (stop.frame.name, stop.frame.line) == ("inner", line_of(app, "# inner"))
    stop = session.step_out()
    assert stop.frame.name == "outer" and stop.reason == "step"
    stop = session.next()
    assert stop.frame.line == line_of(app, "# after")


def test_stack_is_paged(paused):
    app, session = paused
    session.step_in()
    session.step_in()
    frames = session.stack()
    assert [f.name for f in frames] == ["inner", "outer", "<module>"]
    assert [f.name for f in session.stack(start=1, levels=1)] == ["outer"]


@pytest.mark.smoke
def test_variables_of_every_kind_come_back_readable(paused):
    _, session = paused
    scope = session.scopes()[0]
    assert scope.name == "Locals"
    page = session.variables(scope.ref, count=1000)
    values = {v.name: v for v in page.items}
    assert values["cyclic"].value == "{'a': 1, 'self': {...}}"
    assert "Bad object" in values["bad"].value
    assert values["raw"].value == "5 bytes: b'\\x00\\xffabc'"  # bytes read by their length (issue 16)
    assert values["text"].value.startswith("'héllo ☃xxx") and values["text"].truncated
    assert len(values["text"].value) <= 1001
    children = session.variables(values["cyclic"].ref).items
    assert [c.name for c in children if not c.name.endswith("variables")] == ["'a'", "'self'", "len()"]
    short = session.variables(scope.ref, start=1, count=2)
    assert len(short.items) == 2 and short.start == 1 and short.total == page.total


def test_a_million_element_list_is_paged_with_its_total(paused):
    _, session = paused
    scope = session.scopes()[0]
    big = next(v for v in session.variables(scope.ref, count=1000).items if v.name == "big")
    page = session.variables(big.ref, start=0, count=100)
    assert page.total == 1_000_000 and len(page.items) == 100
    assert page.items[0].name == "0" and page.items[99].value == "99"
    last = session.variables(big.ref, start=999_990, count=100)
    assert [v.value for v in last.items] == [str(n) for n in range(999_990, 1_000_000)]
    assert last.items[0].evaluate_name == "big[999990]"


def test_a_container_of_a_hundred_and_more_pages_past_debugpys_first_hundred(paused):
    _, session = paused
    scope = session.scopes()[0]
    medium = next(v for v in session.variables(scope.ref, count=1000).items if v.name == "medium")
    page = session.variables(medium.ref, start=120, count=10)
    assert page.total == 150
    assert [(v.name, v.value) for v in page.items][:2] == [("'k120'", "120"), ("'k121'", "121")]


def test_a_page_of_a_small_list_counts_its_elements_only(paused):
    app, session = paused
    small = session.evaluate("[10, 20, 30, 40, 50, 60, 70, 80]")
    page = session.variables(small.ref, start=2, count=3)
    assert (page.start, page.total) == (2, 8)
    assert [(v.name, v.value) for v in page.items] == [("2", "30"), ("3", "40"), ("4", "50")]


def test_value_length_is_configurable(write):
    app = write("prog.py", PROGRAM)
    with Relay(max_value_length=20) as relay:
        relay.breakpoints.add(app, line_of(app, "# main"))
        session = relay.launch(app)
        session.wait_for_stop(10)
        value = session.evaluate("big")
        assert value.truncated and len(value.value) == 21


def test_evaluate_contexts_set_variable_completions_and_errors(paused):
    _, session = paused
    assert session.evaluate("len(big)").value == "1000000"
    assert session.evaluate("cyclic['a']", context="watch").value == "1"
    assert session.evaluate("raw", context="hover").value == "b'\\x00\\xffabc'"
    assert session.evaluate("text[:5]", context="clipboard").value == "'héllo'"
    with pytest.raises(RelayError) as info:
        session.evaluate("undefined_name + 1")
    assert "undefined_name" in info.value.message
    scope = session.scopes()[0]
    changed = session.set_variable(scope.ref, "raw", "b'new'")
    assert changed.value == "b'new'"
    assert session.evaluate("raw").value == "b'new'"
    assert "outer" in session.completions("out")


def test_source_of_a_frame_without_a_file(relay, write):
    app = write("dyn.py", """
        code = compile("a = 1\\nb = a + 1\\n", "<generated>", "exec")
        exec(code)
    """)
    relay.breakpoints.add_function("<module>")
    session = relay.launch(app, stop_on_entry=True, just_my_code=False)
    session.wait_for_stop(10)
    stop = session.step_in()
    while stop.frame.path and "dyn.py" in stop.frame.path:
        stop = session.step_in()
    assert stop.frame.path in (None, "<generated>")
    source = session.source()  # debugpy rebuilds what it can of code that has no file
    assert "a = 1" in source and "STORE_NAME(b)" in source


@pytest.mark.every_target
def test_a_multithreaded_stop_lists_every_stopped_thread(relay, write):
    app = write("threads.py", """
        import threading, time
        def worker(n):
            time.sleep(0.2)
            x = n  # worker
            return x
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    """)
    relay.breakpoints.add(app, line_of(app, "# worker"))
    session = relay.launch(app)
    stop = session.wait_for_stop(10)
    threads = session.threads()
    assert len(threads) >= 4 and {t.name for t in threads} >= {"MainThread"}
    assert set(stop.stopped_threads) == {t.id for t in threads}
    assert all(t.stopped for t in threads)
    other = next(t.id for t in threads if t.id != stop.thread_id and t.name != "MainThread")
    assert session.stack(thread_id=other)[0].name == "worker"


@pytest.mark.every_target
def test_step_reports_still_running_after_its_timeout_and_pause_stops_it(relay, write):
    app = write("spin.py", """
        import time
        def spin():
            while True:
                time.sleep(0.01)
        x = 1  # start
        spin()
    """)
    relay.breakpoints.add(app, line_of(app, "# start"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    session.next()
    with pytest.raises(RelayError) as info:
        session.next(timeout=1)
    assert info.value.code == "timeout" and "still running" in info.value.message
    assert session.state == "running"
    assert session.pause().reason == "pause"


@pytest.mark.every_target
def test_pause_stops_a_step_out_still_running_where_the_program_is(relay, write):
    app = write("spin_out.py", """
        import time
        def spin():
            while True:
                time.sleep(0.01)
        def work():
            x = 1  # start
            spin()
            return x
        work()
    """)
    relay.breakpoints.add(app, line_of(app, "# start"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    with pytest.raises(RelayError) as info:
        session.step_out(timeout=1)
    assert info.value.code == "timeout"
    stop = session.pause()
    assert stop.reason == "pause" and stop.frame.name == "spin"


def test_output_by_cursor_with_categories_and_timestamps(relay, write):
    app = write("out.py", """
        import sys
        print("one")
        print("two", file=sys.stderr)
        print("three")
    """)
    session = relay.launch(app)
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    page = session.output()
    assert "".join(c.text for c in page.chunks if c.category == "stdout") == "one\nthree\n"
    assert "two\n" in "".join(c.text for c in page.chunks if c.category == "stderr")
    assert all(c.ts > time.time() - 60 for c in page.chunks)
    later = session.output(since=page.cursor)
    assert later.chunks == [] and later.cursor == page.cursor
    assert session.output(since=page.chunks[1].seq).chunks == page.chunks[1:]


def test_input_reaches_the_target(relay, write):
    app = write("ask.py", """
        name = input("name? ")
        print("hello", name)
    """)
    session = relay.launch(app)
    wait_until(lambda: "name? " in session.output().text, what="the prompt")
    session.send_input("ada\n")
    with pytest.raises(RelayError):
        session.wait_for_stop(10)
    assert session.output().text == "name? hello ada\n"


def test_a_flood_of_output_stays_bounded_and_counts_what_was_dropped(write):
    app = write("flood.py", """
        import sys
        line = "x" * 1023 + "\\n"
        for _ in range(100 * 1024):
            sys.stdout.write(line)
        print("END")
    """)
    with Relay(output_cap=256 * 1024) as relay:
        session = relay.launch(app)
        with pytest.raises(RelayError):
            session.wait_for_stop(120)
        page = session.output()
        size = sum(len(c.text) for c in page.chunks)
        assert size <= 256 * 1024
        assert page.dropped >= 100 * 1024 * 1024 - 256 * 1024
        assert page.text.endswith("END\n")


def test_events_reach_subscribers(relay, write):
    app = write("prog.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# main"))
    seen = []
    relay.subscribe(lambda event: seen.append(event.event))
    session = relay.launch(app)
    session.wait_for_stop(10)
    session.continue_(wait=False)
    with pytest.raises(RelayError):
        session.wait_for_stop(10)
    names = ("session", "stopped", "continued", "output", "exited", "terminated")
    wait_until(lambda: all(name in seen for name in names), what=f"the events {names}")
    assert seen.index("stopped") < seen.index("continued") < seen.index("exited")
