"""A log point flushes the program's output before it sends its line: what the program printed before it is out of
the program first, even where its stdout is a buffered pipe (one that would keep it until the program ends), for a
log point compiled into the code and a watched one alike. The relay reads the program's pipes and the debugger's
messages apart: the order of lines in the session's output is not tested here."""

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
