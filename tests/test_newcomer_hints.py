"""What a newcomer is told when a place or a reference is wrong: each hint fits the error it follows."""

from __future__ import annotations

import argparse

import pytest

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.cli import build_parser
from jupyter_debug_relay.kernel.help import word_help
from jupyter_debug_relay.server import mcp

APP = "a = 1\nb = a + 1\nprint(b)\n"


def test_a_line_past_the_end_gets_the_lines_there_are_not_a_nearest_one_never_named(relay, write):
    app = write("app.py", APP)
    with pytest.raises(RelayError) as refused:
        relay.breakpoints.add(app, 200)
    assert refused.value.code == "invalid_line"
    assert refused.value.message == "app.py has 3 lines; line 200 does not exist."
    assert refused.value.hint == "Give a line from 1 to 3."


def test_a_variables_reference_the_stop_never_gave_is_named_not_the_adapters_words(relay, write):
    app = write("app.py", APP)
    relay.breakpoints.add(app, 3)
    session = relay.launch(app)
    try:
        assert session.wait_for_stop(10).frame.line == 3
        for ask in (lambda: session.variables(99999), lambda: session.set_variable(99999, "a", "2")):
            with pytest.raises(RelayError) as unknown:
                ask()
            assert unknown.value.code == "invalid_request" and "Wrong ID" not in unknown.value.message
            assert unknown.value.message == "There is no variables reference 99999 at this stop."
            assert unknown.value.details["ref"] == 99999 and "scopes" in unknown.value.hint
        ref = session.scopes()[0].ref  # a reference the stop gave still answers
        assert "a" in {v.name for v in session.variables(ref).items}
    finally:
        session.terminate()


def test_a_no_flag_says_it_turns_off_what_its_field_describes_in_the_magics_and_the_cli():
    launch = word_help("launch")
    assert "--no-just-my-code            Turn off what is on by default: step through and stop in your own" in launch
    [verbs] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    flags = {a.option_strings[0]: a.help for a in verbs.choices["launch"]._actions if a.option_strings}
    assert flags["--no-just-my-code"].startswith("Turn off what is on by default: step through")
    assert flags["--no-wait"].startswith("Turn off what is on by default: wait for the first stop")


def test_mcp_answers_sessions_a_statement_and_terminate_in_text_not_json():
    paused = {"id": "s1", "name": "calc", "backend": "debugpy", "state": "paused", "target": "/tmp/calc.py",
              "stop": {"reason": "breakpoint", "thread_id": 1, "breakpoint_ids": [1]}, "error": None}
    failed = {"id": "s2", "name": "s2", "backend": "debugpy", "state": "failed", "target": "/tmp/nope.py",
              "stop": None, "error": {"code": "file_not_found"}}
    assert mcp.summary({"sessions": [paused, failed]}) == ("session s1 (calc): paused (breakpoint 1) /tmp/calc.py\n"
                                                           "session s2 (s2): failed (file_not_found) /tmp/nope.py")
    assert mcp.summary({"sessions": []}) == "no sessions (start one with launch)"
    assert mcp.summary({"state": "terminated", "exit_code": -9}) == "terminated, exit code -9"
    ran = {"name": "import os", "value": "", "type": "", "ref": 0}
    assert mcp.summary({"variable": ran}) == "import os: ran, no value to show"
    assert mcp.summary({"variable": {**ran, "name": "x", "value": "5", "type": "int"}}) == "x = 5  (int)"


def test_the_terminals_launch_says_where_the_target_runs_not_the_kernels_folder():
    [verbs] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {a.dest: a.help for a in verbs.choices["launch"]._actions}
    assert helps["cwd"] == "The target's working directory; default: the folder you type in."
    assert "kernel" not in helps["python"] and "default: the server's" in helps["python"]


def test_setting_a_frames_variable_to_a_value_that_fails_says_why_rather_than_keeping_the_old_one(relay, write):
    app = write("app.py", "total = 0\nfor i in range(3):\n    total += i\nprint(total)\n")
    relay.breakpoints.add(app, 3)
    session = relay.launch(app)
    try:
        session.wait_for_stop(10)
        ref = session.scopes()[0].ref
        for value, error in (("1 +* 2", "SyntaxError: invalid syntax"),
                             ("undefined_name", "NameError: name 'undefined_name' is not defined"),
                             ("1/0", "ZeroDivisionError: division by zero")):
            with pytest.raises(RelayError) as failed:
                session.set_variable(ref, "total", value)
            assert failed.value.code == "evaluation_failed"
            assert failed.value.message == f"{value!r} failed in the target: {error}"
            assert session.evaluate("total").value == "0"
        changed = session.set_variable(ref, "total", "41 + 1  # the answer")
        assert (changed.name, changed.value, changed.type) == ("total", "42", "int")
        assert session.evaluate("total").value == "42"
        with pytest.raises(RelayError) as failed:  # an attribute or an item (set_expression) says why too
            session.set_expression("total.real", "1")
        assert failed.value.message == ("'total.real = 1' failed in the target: AttributeError: attribute 'real' of "
                                        "'int' objects is not writable")
    finally:
        session.terminate()
