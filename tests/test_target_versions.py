"""Targets on every Python from 3.8 on: the debugpy each runs, older ones refused, 3.12+ quiet between stops."""

from __future__ import annotations

import os
import sys

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.backends.debugpy import lending
from tests import targets

HOT = """
import sys

def hot(x):
    if x < 0:
        return -x  # never
    y = x + 1  # later
    return y

total = 0
for i in range(int(sys.argv[1]) if sys.argv[1:] else 20000):
    total += hot(i)
print("total", total)  # end
"""
MONITORING_BUILT = ("'_pydevd_sys_monitoring._pydevd_sys_monitoring_cython' in __import__('sys').modules "
                    "or '_pydevd_bundle.pydevd_cython' in __import__('sys').modules")
PYDEVD_FILE = "__import__('sys').modules['pydevd'].__file__"


def console(session) -> str:
    return "".join(c.text for c in session.output().chunks if c.category == "console")


def versions(low: tuple[int, int], high: tuple[int, int] = (99, 0)) -> list:
    found = [pytest.param(path, id=f"py{v[0]}.{v[1]}") for v, path in targets.found().items() if low <= v <= high]
    return found or [pytest.param(None, marks=pytest.mark.skip(reason=f"no Python {low[0]}.{low[1]}+ besides "
                                                                   f"the tests' own ({targets.WHERE})"))]


@pytest.mark.parametrize("python", versions((3, 8)))
def test_a_target_on_each_python_stops_steps_and_evaluates(relay, write, python):
    app = write("hot.py", HOT)
    relay.breakpoints.add(app, line_of(app, "# later"))
    targets.prepared(python)
    session = relay.launch(app, python=python)
    stop = session.wait_for_stop(30)
    assert stop.frame.name == "hot" and session.evaluate("x").value == "0"
    assert session.next().frame.line == line_of(app, "# later") + 1
    assert session.evaluate("y").value == "1"
    assert session.evaluate("__import__('sys').executable").value == repr(python)
    session.terminate()


@pytest.mark.parametrize("python", versions((3, 0), (3, 7)))
def test_a_python_older_than_3_8_is_refused_as_unsupported(relay, write, python):
    app = write("hot.py", HOT)
    with pytest.raises(RelayError) as info:
        relay.launch(app, python=python)
    assert info.value.code == "unsupported" and "Python 3.8 and newer" in info.value.message


@pytest.mark.every_target
def test_lines_run_before_a_breakpoint_was_there_still_stop_and_step(relay, write):
    """On 3.12+ the lines of code holding a breakpoint stop calling back once run; they must wake for a new one."""
    app = write("hot.py", HOT)
    relay.breakpoints.add(app, line_of(app, "# never"))
    relay.breakpoints.add(app, line_of(app, "# end"))
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.line == line_of(app, "# end")
    assert session.evaluate("total").value == str(sum(range(1, 20001)))
    session.terminate()
    relay.breakpoints.clear()
    never = relay.breakpoints.add(app, line_of(app, "# never"))
    session = relay.launch(app, args=["1000000000"])
    session.pause()
    later = relay.breakpoints.add(app, line_of(app, "# later"))  # a line hot() ran many times already
    stop = session.continue_()
    assert stop.frame.line == later.line and stop.breakpoint_ids == [later.id]
    relay.breakpoints.remove(later.id)
    assert session.next().frame.line == later.line + 1
    step = session.step_out()
    assert step.frame.name == "<module>"
    assert session.step_in().frame.name in ("hot", "<module>")
    assert never.verified
    session.terminate()


@pytest.mark.skipif(targets.newest_monitoring() is None, reason=f"no Python 3.12+ found ({targets.WHERE})")
def test_a_python_of_another_version_runs_a_debugpy_built_for_it(relay, write):
    python = targets.newest_monitoring()
    folder = targets.prepared(python)
    app = write("hot.py", HOT)
    relay.breakpoints.add(app, line_of(app, "# end"))
    session = relay.launch(app, python=python)
    session.wait_for_stop(30)
    assert session.evaluate(MONITORING_BUILT).value == "True"
    assert session.evaluate(PYDEVD_FILE).value.strip("'").startswith(folder + os.sep)
    assert console(session) == ""
    session.terminate()


@pytest.mark.skipif(targets.newest_monitoring() is None, reason=f"no Python 3.12+ found ({targets.WHERE})")
def test_without_a_copy_for_its_version_a_target_runs_the_kernels_debugpy_and_says_why(
        relay, write, tmp_path, monkeypatch):
    monkeypatch.setenv(lending.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # as offline: pip finds nothing to install
    python = targets.newest_monitoring()
    app = write("hot.py", HOT)
    relay.breakpoints.add(app, line_of(app, "# end"))
    first = relay.launch(app, python=python)
    first.wait_for_stop(30)
    assert first.evaluate(PYDEVD_FILE).value.strip("'").startswith(lending.KERNEL_DEBUGPY + os.sep)
    assert "is being installed in" in console(first) and "kernel's debugpy in pure Python" in console(first)
    first.terminate()
    lending.wait_for_installs()
    second = relay.launch(app, python=python)
    second.wait_for_stop(30)
    assert "could not be installed" in console(second) and second.evaluate("total").value
    second.terminate()
    assert not os.listdir(tmp_path / "cache" / "debugpy")  # no half-made copy is left


@pytest.mark.skipif(targets.newest_monitoring() is None, reason=f"no Python 3.12+ found ({targets.WHERE})")
def test_a_venv_with_debugpy_of_the_relays_version_runs_its_own(relay, write, tmp_path):
    python = targets.newest_monitoring()
    venv_python, own = targets.venv_with_relays_debugpy(python, tmp_path / "venv")
    app = write("hot.py", HOT)
    relay.breakpoints.add(app, line_of(app, "# end"))
    session = relay.launch(app, python=venv_python)
    session.wait_for_stop(30)
    assert session.evaluate(PYDEVD_FILE).value.strip("'").startswith(str(own) + os.sep)
    session.terminate()


def test_the_tests_own_python_is_lent_the_kernels_debugpy(relay, write):
    app = write("hot.py", HOT)
    relay.breakpoints.add(app, line_of(app, "# end"))
    session = relay.launch(app, python=sys.executable)
    session.wait_for_stop(30)
    assert session.evaluate(PYDEVD_FILE).value.strip("'").startswith(lending.KERNEL_DEBUGPY + os.sep)
    session.terminate()
