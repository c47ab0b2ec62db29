"""A virtualenv without debugpy: the relay lends its own and activates the venv for the target (issue 16 item 15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import debugpy
import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError

REPORT = """
import json, os, sys
found = {"prefix": sys.prefix, "virtual_env": os.environ.get("VIRTUAL_ENV"),
         "path0": os.environ["PATH"].split(os.pathsep)[0], "sys_path": sys.path}
try:
    import pydantic  # noqa: F401  (beside debugpy in the kernel's site-packages)
    found["relay_packages_visible"] = True
except ImportError:
    found["relay_packages_visible"] = False
print(json.dumps(found))  # here
"""


def make_venv(tmp_path) -> str:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import debugpy"], capture_output=True).returncode != 0
    return str(python)


def reported(session) -> dict:
    """What REPORT printed, once the target has ended."""
    if session.state == "paused":
        assert session.continue_(timeout=30) is None
    else:
        with pytest.raises(RelayError) as ended:
            session.wait_for_stop(30)
        assert ended.value.code == "target_exited"
    assert session.exit_code == 0
    text = "".join(c.text for c in session.output().chunks if c.category == "stdout")
    return json.loads(text.strip().splitlines()[-1])


def test_a_venv_without_debugpy_is_debugged_and_activated(relay, write, tmp_path):
    python = make_venv(tmp_path)
    venv = str(tmp_path / "venv")
    app = write("report.py", REPORT)
    relay.breakpoints.add(app, line_of(app, "# here"))
    session = relay.launch(app, python=python)
    stop = session.wait_for_stop(30)
    assert stop.frame.line == line_of(app, "# here")
    assert session.evaluate("found['prefix']").value == repr(venv)
    found = reported(session)
    assert found["prefix"] == venv and found["virtual_env"] == venv
    assert found["path0"] == os.path.join(venv, "bin")
    lent = os.path.dirname(os.path.dirname(debugpy.__file__))
    assert not found["relay_packages_visible"] and lent not in found["sys_path"]  # the loan is invisible


def test_an_environment_given_to_the_launch_wins_over_the_activation(relay, write, tmp_path):
    python = make_venv(tmp_path)
    app = write("report.py", REPORT)
    session = relay.launch(app, python=python, env={"VIRTUAL_ENV": "/elsewhere"})
    assert reported(session)["virtual_env"] == "/elsewhere"


def test_the_system_python_of_the_same_version_is_lent_debugpy(relay, write, monkeypatch):
    system = "/usr/bin/python3.11"
    if not os.path.exists(system) or subprocess.run([system, "-c", "import debugpy"]).returncode == 0:
        pytest.skip("needs a python3.11 without debugpy")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)  # an activated shell passes it on, as to a plain run
    app = write("report.py", REPORT)
    found = reported(relay.launch(app, python=system))
    assert found["virtual_env"] is None and not found["relay_packages_visible"]
