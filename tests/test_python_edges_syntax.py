"""A syntax error in a ``-m`` module or an imported file is the session's ``syntax_error`` (issue 16 item 12)."""

from __future__ import annotations

import pytest

from jupyter_debug_relay import RelayError

BROKEN = """
x = 1
if x = 2:
    pass
"""


def assert_syntax_error(error: RelayError, path: str) -> None:
    assert error.code == "syntax_error", error
    assert error.details["file"] == path and error.details["line"] == 2
    assert error.details["text"] == "if x = 2:" and error.details["offset"]
    assert error.details["exit_code"] == 1 and "Fix the syntax error" in error.hint


@pytest.mark.parametrize("mode", ["none", "uncaught"])
def test_a_module_that_does_not_compile_is_a_syntax_error(relay, write, tmp_path, mode):
    broken = write("badmod.py", BROKEN)
    relay.breakpoints.exceptions(mode)
    session = relay.launch(module="badmod", cwd=str(tmp_path))
    with pytest.raises(RelayError) as failed:
        while True:  # an exception stop first, when exceptions stop the target
            session.wait_for_stop(20)
            session.continue_(wait=False)
    assert_syntax_error(failed.value, broken)
    assert session.info().error["code"] == "syntax_error" and session.exit_code == 1
    assert "SyntaxError" in "".join(c.text for c in session.output().chunks if c.category == "stderr")


def test_an_imported_file_that_does_not_compile_is_a_syntax_error(relay, write):
    broken = write("helper.py", BROKEN)
    app = write("app.py", "print('start')\nimport helper\n")
    relay.breakpoints.exceptions("none")
    session = relay.launch(app)
    with pytest.raises(RelayError) as failed:
        session.wait_for_stop(20)
    assert_syntax_error(failed.value, broken)


def test_a_program_that_runs_to_its_end_has_no_error(relay, write):
    app = write("app.py", "compile('1 +', 'snippet', 'exec') if False else print('fine')\n")
    session = relay.launch(app)
    with pytest.raises(RelayError) as ended:
        session.wait_for_stop(20)
    assert ended.value.code == "target_exited" and session.info().error is None


def test_the_launch_magic_shows_the_syntax_error(kernel, write):
    write("badmod.py", BROKEN)
    kernel.magic("%bp exceptions none")
    text = kernel.magic("%debug_session launch -m badmod").text
    assert "syntax_error" in text and "badmod.py:2" in text
