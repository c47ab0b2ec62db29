"""A launch whose program got one of launch's own options (written after the script) says so when it fails."""

from __future__ import annotations

import pytest

from jupyter_debug_relay import RelayError
from tests.server_fixtures import ok

STRICT = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--count", type=int, default=1)
print("count", parser.parse_args().count)
"""


def ended(session) -> RelayError:
    with pytest.raises(RelayError) as info:
        session.wait_for_stop(20)
    return info.value


def test_the_python_api_says_the_first_argument_was_an_option_of_launch(relay, write, tmp_path):
    app = write("app.py", STRICT)
    error = ended(relay.launch(app, args=["--no-just-my-code"]))  # argparse: exit code 2
    assert error.code == "target_exited" and error.details["exit_code"] == 2
    assert "its first argument --no-just-my-code is launch's option just_my_code" in error.message
    assert f"launch --no-just-my-code {app}" in error.hint and "just_my_code" in error.hint
    valued = relay.launch(app, args=["--cwd", str(tmp_path), "--count", "3"])
    assert f"launch --cwd {tmp_path} {app} --count 3" in ended(valued).details["note"]  # its value moves with it
    assert valued.info().error["code"] == "target_exited"  # the session's error says it too
    for args in (["--count", "x"], ["--frobnicate"]):  # not ours: the plain end
        error = ended(relay.launch(app, args=args))
        assert error.message == "The target exited with code 2." and "note" not in error.details
    fine = relay.launch(app, args=["--count", "4"])
    assert ended(fine).details["exit_code"] == 0 and fine.info().error is None
    ignored = write("ignores.py", "print('fine')\n")  # takes no arguments: ends well, nothing to say
    quiet = relay.launch(ignored, args=["--stop-on-entry"])
    assert ended(quiet).message == "The target exited with code 0." and quiet.info().error is None


def test_the_http_launch_answer_says_it_with_a_note(api, tmp_path):
    app = tmp_path / "app.py"
    app.write_text(STRICT)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    answer = ok(api.post(f"/sessions/{sid}/launch", json={"program": str(app), "args": ["--stop-on-entry"],
                                                          "timeout": 20}))
    assert answer["state"] == "terminated" and answer["exit_code"] == 2
    assert answer["note"].startswith("--stop-on-entry went to the program as its first argument")
    assert f"launch --stop-on-entry {app}" in answer["note"]
    error = answer["session"]["error"]
    assert error["code"] == "target_exited" and "stop_on_entry" in error["hint"]
