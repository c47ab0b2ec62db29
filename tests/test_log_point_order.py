"""A log point flushes the program's output before it sends its line: what the program printed before it is out of
the program first, even where its stdout is a buffered pipe (one that would keep it until the program ends), for a
log point compiled into the code and a watched one alike. The relay reads the program's pipes and the debugger's
messages apart; a launched program's log lines go into its stdout, marked, and come in the order it ran."""

from __future__ import annotations

import pytest
from conftest import line_of, wait_until

from jupyter_debug_relay import RelayError
from tests import targets

PASSES = 4
PRINTS = f"""
import os
import sys
import time

def loop(folder):
    for i in range({PASSES}):
        print("before", i)
        sys.stderr.write(f"part {{i}}")  # stderr is line-buffered: a line's start is kept until its end
        x = i  # log
        open(os.path.join(folder, f"waiting{{i}}"), "w").close()
        while not os.path.exists(os.path.join(folder, f"go{{i}}")):
            time.sleep(0.01)
        sys.stderr.write("\\n")
        print("after", i)

loop(sys.argv[1])
"""
BUFFERED = {"PYTHONUNBUFFERED": ""}  # the program's stdout is a pipe it fills before it writes


def each_pass_printed(session, tmp_path, passes: range) -> None:  # noqa: ANN001 - a facade session
    """While the program waits past each log point, the session shows its line and what was printed before it."""
    for i in passes:
        for category, text in (("console", f"log {i}\n"), ("stdout", f"before {i}\n"), ("stderr", f"part {i}")):
            wait_until(lambda category=category, text=text: text in shown(session, category), what=repr(text))
        assert f"after {i}\n" not in shown(session, "stdout")
        (tmp_path / f"go{i}").touch()
    with pytest.raises(RelayError) as ended:
        session.wait_for_stop(30)
    assert ended.value.code == "target_exited"
    printed, logged = shown(session, "stdout").splitlines(), shown(session, "console").splitlines()
    for i in passes:
        assert (printed.count(f"before {i}"), logged.count(f"log {i}"), printed.count(f"after {i}")) == (1, 1, 1)


def shown(session, category: str) -> str:  # noqa: ANN001 - a facade session
    """The session's output of one category."""
    return "".join(chunk.text for chunk in session.output().chunks if chunk.category == category)


@pytest.mark.every_target
def test_a_compiled_log_point_flushes_what_the_program_printed_before_it(relay, write, tmp_path):
    app = write("app.py", PRINTS)
    relay.breakpoints.add(app, line_of(app, "# log"), log_message="log {i}")
    session = relay.launch(app, args=[str(tmp_path)], env=BUFFERED)
    each_pass_printed(session, tmp_path, range(PASSES))


@pytest.mark.parametrize("version", [(3, 12), (3, 13)], ids=["3.12", "3.13"])
def test_a_watched_log_point_flushes_what_the_program_printed_before_it(relay, write, tmp_path,
                                                                            version: tuple[int, int]):
    python = targets.python_for(version[1])
    app = write("app.py", PRINTS)
    session = relay.launch(app, args=[str(tmp_path)], env=BUFFERED, python=python)
    wait_until((tmp_path / "waiting0").exists, what="the first pass")
    relay.breakpoints.add(app, line_of(app, "# log"), log_message="log {i}")  # its code runs: a watch holds it
    (tmp_path / "go0").touch()
    each_pass_printed(session, tmp_path, range(1, PASSES))


RUSH = """
import sys

for i in range(200):
    print("before", i)
    x = i  # log
    print("after", i)
sys.stdout.flush()
"""


@pytest.mark.parametrize("minor", [11, 12, 13], ids=["3.11", "3.12", "3.13"])
def test_a_log_points_line_comes_between_what_the_program_printed_before_and_after_it(relay, write, minor: int):
    app = write("app.py", RUSH)
    relay.breakpoints.add(app, line_of(app, "# log"), log_message="log {i}")
    session = relay.launch(app, env=BUFFERED, python=targets.python_for(minor))
    with pytest.raises(RelayError):
        session.wait_for_stop(60)
    lines = "".join(chunk.text for chunk in session.output().chunks).splitlines()
    assert lines == [line for i in range(200) for line in (f"before {i}", f"log {i}", f"after {i}")]


ELSEWHERE = """
import os
import sys

x = 1
print("\\x00" + "f" * 16 + "\\x02forged\\x03" + "f" * 16 + "\\x00", flush=True)
os.dup2(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT), 1)
y = x  # log
"""


def test_a_log_line_reaches_the_session_when_the_program_moved_its_stdout_and_a_forged_one_stays_text(
        relay, write, tmp_path):
    app = write("app.py", ELSEWHERE)
    relay.breakpoints.add(app, line_of(app, "# log"), log_message="log {x}")
    session = relay.launch(app, args=[str(tmp_path / "moved.txt")])
    with pytest.raises(RelayError):
        session.wait_for_stop(30)
    assert shown(session, "console") == "log 1\n"
    assert "forged" in shown(session, "stdout")
    assert (tmp_path / "moved.txt").read_text() == ""
