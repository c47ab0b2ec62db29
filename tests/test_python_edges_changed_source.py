"""A file changed on disk after the target loaded it: the stop and source() say so (issue 16 item 9)."""

from __future__ import annotations

import os
import time

from conftest import line_of

APP = """
import helper
total = helper.add(1, 2)  # main
print(total)
"""

HELPER = """
def add(a, b):
    result = a + b  # add
    return result
"""


def touch_later(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
    later = time.time() + 5
    os.utime(path, (later, later))  # a clearly later mtime, whatever the clock's resolution


def test_the_stop_and_source_say_the_file_changed_since_it_loaded(relay, write):
    app = write("app.py", APP)
    helper = write("helper.py", HELPER)
    relay.breakpoints.add(helper, line_of(helper, "# add"))
    session = relay.launch(app)
    stop = session.wait_for_stop(30)
    assert not stop.source_changed and stop.source_note == ""
    source = session.source()
    assert not source.changed and "result = a + b" in source
    touch_later(helper, "# rewritten\n" + HELPER)
    source = session.source()
    assert source.changed and "helper.py changed on disk" in source.note and "# rewritten" in source
    stop = session.next()
    assert stop.source_changed and "after the target loaded it" in stop.source_note
    touch_later(app, APP + "# more\n")  # the main script: loaded when the target started
    session.step_out()
    stop = session.wait_for_stop(10)
    assert stop.frame.path == app and stop.source_changed and "app.py changed on disk" in stop.source_note
    session.terminate()


def test_a_module_written_before_it_is_imported_is_not_changed(relay, write, tmp_path):
    app = write("app.py", """
        import os, sys, time
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        time.sleep(1.2)  # the module is written after the target started
        with open(os.path.join(sys.path[0], "late.py"), "w") as f:
            f.write("def f():\\n    return 1\\n")
        import late
        late.f()  # call
    """)
    relay.breakpoints.add(app, line_of(app, "# call"))
    session = relay.launch(app)
    session.wait_for_stop(30)
    stop = session.step_in()
    assert stop.frame.path == str(tmp_path / "late.py") and not stop.source_changed
    session.terminate()


def test_the_magic_shows_the_note_with_the_stop(kernel, write):
    write("app.py", APP)
    helper = write("helper.py", HELPER)
    assert "paused at helper.py" in kernel.magic(f"%bp helper.py:{line_of(helper, '# add')}\n"
                                                 "%debug_session launch app.py").text
    touch_later(helper, "# rewritten\n" + HELPER)
    stepped = kernel.magic("%debug_session next").text
    assert "note: helper.py changed on disk" in stepped
    assert kernel.magic("%debug_session source").text.startswith("# note: helper.py changed on disk")
    kernel.magic("%debug_session stop")
