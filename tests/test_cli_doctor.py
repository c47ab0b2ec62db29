"""``jupyter-debug-relay doctor`` run as a user runs it: the features of a debugpy on this Python, on or off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import debugpy
import pytest

from jupyter_debug_relay.backends.debugpy.boot import table

pytestmark = pytest.mark.timeout(120)
HERE = tuple(sys.version_info[:2])
FOR_HERE = [feature for feature in table.FEATURES if feature.process == "target" and feature.for_python(HERE)]


def doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", "doctor", "--python", sys.executable,
                           *args], capture_output=True, text=True, timeout=90)


def changed_debugpy(folder: Path) -> Path:
    """A copy of the installed debugpy whose PyDB has no ``get_internal_queue_and_event``: the name
    ``wake_every_command`` replaces, which ``thread_visits`` reads too."""
    copy = folder / "debugpy"
    shutil.copytree(os.path.dirname(debugpy.__file__), copy, ignore=shutil.ignore_patterns("__pycache__"))
    pydevd = copy / "_vendored" / "pydevd" / "pydevd.py"
    source = pydevd.read_text()
    assert "def get_internal_queue_and_event(" in source
    pydevd.write_text(source.replace("def get_internal_queue_and_event(", "def get_internal_queue_and_event_was("))
    return copy


OFF = ("thread_visits", "wake_every_command")  # the features that need get_internal_queue_and_event, in table order


def test_the_kernels_debugpy_has_every_feature_on():
    done = doctor()
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert f"kernel's debugpy: {debugpy.__version__} in {os.path.dirname(debugpy.__file__)}, in the proven range " \
           f"({table.OLDEST} to {table.NEWEST})" in lines
    assert f"  debugpy {debugpy.__version__} in {os.path.dirname(debugpy.__file__)} (the kernel's)" in lines
    assert [line for line in lines if line.startswith(("  on ", "  OFF ", "  -- "))] == \
        [f"  on   {feature.name}" for feature in FOR_HERE]
    assert "  what to do: nothing" in lines
    assert lines[-1] == "result: every feature checked is on"
    assert done.stderr == ""


def test_a_debugpy_lacking_a_name_has_that_feature_off(tmp_path):
    copy = changed_debugpy(tmp_path)
    done = doctor("--debugpy", str(copy))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    why = "pydevd has no PyDB.get_internal_queue_and_event"
    assert sorted(line.split(None, 2)[1:] for line in lines if line.startswith("  OFF ")) == \
        [[name, f"{why}; so {table.BY_NAME[name].off}"] for name in OFF]
    assert f"  debugpy {debugpy.__version__} in {copy} (the one given to check)" in lines
    assert sum(line.startswith("  on ") for line in lines) == len(FOR_HERE) - len(OFF)
    assert any(line.startswith("  what to do: ") and "wake_every_command" in line and "--force-reinstall" in line
               for line in lines)
    here = ".".join(map(str, sys.version_info[:3]))
    assert lines[-1] == f"result: 2 features off: {', '.join(f'{name} (Python {here})' for name in said_order())}"

    as_json = doctor("--debugpy", str(copy), "--json")
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert (report["off"], report["exit_code"], report["kernel_debugpy"]["in_range"]) == (2, 1, True)
    [python] = report["pythons"]
    assert python["debugpy"]["folder"] == str(copy)
    states = {f["name"]: (f["state"], f["why"], f["loses"]) for f in python["features"]}
    for name in OFF:
        assert states.pop(name) == ("off", why, table.BY_NAME[name].off)
    assert set(states.values()) == {("on", None, None)}


def said_order() -> list[str]:
    """The features of ``OFF`` in the order the table (and so the doctor) lists them."""
    return [feature.name for feature in table.FEATURES if feature.name in OFF]


@pytest.mark.parametrize(("args", "says"), [
    (["--python", "/no/such/python"], ["error: file_not_found: The interpreter '/no/such/python' cannot be run: "
                                       "No such file or directory.",
                                       "hint: Give the full path of a Python interpreter."]),
    (["--debugpy", "/no/such/debugpy"], ["error: file_not_found: '/no/such/debugpy' is no debugpy package folder "
                                         "(a folder named debugpy, holding __init__.py and _vendored/).", "hint: Give "
                                         "the folder of a debugpy package, as printed by `python -c \"import debugpy, "
                                         "os; print(os.path.dirname(debugpy.__file__))\"`."]),
])
def test_a_wrong_path_is_an_error_with_a_hint(args, says):
    done = subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", "doctor", *args], capture_output=True,
                          text=True, timeout=90)
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (2, "", says)
