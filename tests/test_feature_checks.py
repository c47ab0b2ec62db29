"""Each change the boot makes inside pydevd is checked before it is made: a debugpy that lacks one of a feature's names
gets that feature off, the breakpoint still stops, and the start's warnings name the feature and why."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import debugpy
import pytest

from jupyter_debug_relay.backends.debugpy import backend, features, lending
from jupyter_debug_relay.backends.debugpy.boot import changes, table
from tests import targets

# feature -> an identifier of its names, renamed in every Python file of a copy of debugpy (its callers too, so stock
# pydevd works on), and the Pythons the feature is for
BROKEN = {
    "relay_messages": "on_configuration_done",
    "quiet_log": "describe_environment",
    "pydevd_waits": "initialize_network",
    "wake_every_command": "get_internal_queue_and_event",
    "slow_values": "get_var_data",
    "code_lines_cache": "_get_code_lines",
    "module_path": "_run_module_as_main",
    "gc_freeze": "_run_code",
    "exit_is_an_end": "ignore_system_exit_code",
    "pending_breakpoints": "api_received_breakpoints",
    "uncaught_recursion": "stop_on_unhandled_exception",
    "free_children": "restore_sys_set_trace_func",
    "compiled_breakpoints": "consolidate_breakpoints",
    "stack_with_stops": "make_thread_suspend_message",
    "thread_visits": "request_resume_thread",
    "awaiter_steps": "CMD_STEP_OVER_MY_CODE",
    "monitoring_filter": "any_thread_stepping",
    "pause_in_steps": "enable_code_tracing",
    "lazy_tracing": "set_tracing_for_untraced_contexts",
    "exception_lines": "trace_exception",
}
# more names each feature reads from pydevd's objects (an instance's attribute, one a function sets on a thread, a
# parameter passed by keyword): renamed, the feature is off as well
MORE_BROKEN = [
    ("relay_messages", "add_command"),
    ("slow_values", "evaluate_name"),
    ("pending_breakpoints", "translated_line"),
    ("uncaught_recursion", "suspended_at_unhandled"),
    ("stack_with_stops", "as_dict"),
    ("thread_visits", "stop_reason"),
    ("compiled_breakpoints", "suspend_other_threads"),
    ("pause_in_steps", "pydev_state"),
    ("lazy_tracing", "pydev_do_not_trace"),
]
PROGRAM = """
import sys
total = 0
for i in range(3):
    total += i  # here
print("done", total)
sys.exit(3)
"""


def test_every_feature_of_the_table_has_a_broken_name_test() -> None:
    # watched_breakpoints has no name of its own: it needs compiled_breakpoints and goes off with it
    assert set(BROKEN) | {"lazy_tracing_pytest", "launcher_token", "watched_breakpoints"} == set(table.BY_NAME)


def renamed_copy(folder: Path, name: str) -> Path:
    """A copy of the kernel's debugpy (its Python files only: pydevd runs them pure) with ``name`` renamed."""
    copy = folder / "debugpy"
    shutil.copytree(Path(debugpy.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.dll", "*.dylib"))
    word = re.compile(rf"\b{re.escape(name)}\b")
    found = 0
    for path in copy.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if word.search(text):
            path.write_text(word.sub(name + "_renamed", text), encoding="utf-8")
            found += 1
    assert found, f"no file of debugpy holds {name}"
    return copy


def python_for(feature: table.Feature) -> str | None:
    """A Python the feature is for: the tests' own, or the newest 3.12+ found (None: none here)."""
    if feature.for_python(sys.version_info):
        return sys.executable
    newest = targets.newest_monitoring()
    return newest if newest and feature.for_python((3, 12)) else None


def sharing(identifier: str, python: str) -> set[str]:
    """The features for ``python`` that declare a name holding ``identifier``, and those that need one of them."""
    version = (3, 11) if python == sys.executable else (3, 12)
    found = {f.name for f in table.FEATURES if f.for_python(version) and (not f.setting or f.setting in SETTINGS)
             and any(re.search(rf"\b{identifier}\b", n) for names in f.names.values() for n in names)}
    return found | {f.name for f in table.FEATURES if set(f.needs) & found and f.after in ("pydevd",)
                    and f.for_python(version)}


SETTINGS = ("free_children", "stack_with_stops")  # what a launch asks the boot for


@pytest.mark.parametrize(("name", "identifier"), sorted(BROKEN.items()) + MORE_BROKEN)
def test_a_feature_whose_name_is_gone_is_off_and_said_while_the_breakpoint_stops(relay, write, tmp_path, monkeypatch,
                                                                                 name: str, identifier: str) -> None:
    feature = table.BY_NAME[name]
    python = python_for(feature)
    if python is None:
        pytest.skip(f"no Python {feature.name} is for was found ({targets.WHERE})")
    monkeypatch.setenv(lending.CHOSEN_ENV, str(renamed_copy(tmp_path, identifier)))
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, 4)
    session = relay.launch(app, python=python, env={"PYDEVD_USE_CYTHON": "NO"})
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.line) == ("breakpoint", 4)
    assert session.evaluate("i").value == "0"
    if name == "relay_messages":  # nothing could be said from the target: the relay says it heard nothing
        assert session.warnings == [features.NO_REPORT]
    else:
        off = {w.split(" is off: ")[0]: w for w in session.warnings}
        assert set(off) == sharing(identifier, python), session.warnings
        assert identifier in off[name]
    relay.breakpoints.clear()
    session.continue_(timeout=30)
    assert (session.state, session.exit_code) == ("terminated", 3)  # sys.exit ends it, whatever is off
    assert "done 3" in session.output().text


def test_an_optional_name_that_is_gone_leaves_its_feature_on(relay, write, tmp_path, monkeypatch) -> None:
    """``hit_breakpoint_ids`` is new in debugpy 1.8.22 and looked for before it is set: without it, a compiled
    breakpoint's stop still comes, and nothing is off."""
    if not table.BY_NAME["compiled_breakpoints"].for_python(sys.version_info):
        pytest.skip("compiled breakpoints are for Python 3.11+ targets")
    monkeypatch.setenv(lending.CHOSEN_ENV, str(renamed_copy(tmp_path, "hit_breakpoint_ids")))
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, 4, condition="i == 1")
    session = relay.launch(app, env={"PYDEVD_USE_CYTHON": "NO"})
    stop = session.wait_for_stop(30)
    assert (stop.reason, stop.frame.line, session.evaluate("i").value) == ("breakpoint", 4, "1")
    assert session.warnings == []
    relay.breakpoints.clear()
    session.continue_(timeout=30)
    assert (session.state, session.exit_code) == ("terminated", 3)


def test_pytests_own_reading_of_test_files_is_checked_as_it_loads(relay, write) -> None:
    """``lazy_tracing_pytest`` waits for pytest's rewriting module; one without its names is off, said in the output."""
    if not table.BY_NAME["lazy_tracing_pytest"].for_python(sys.version_info):
        pytest.skip("lazy tracing is for Python 3.11 targets")
    write("_pytest/__init__.py", "")
    write("_pytest/assertion/__init__.py", "")
    write("_pytest/assertion/rewrite.py", "def _rewrite_test(*args):\n    return None\n")
    app = write("app.py", "import _pytest.assertion.rewrite\nvalue = 1\nprint('value', value)  # here\n")
    relay.breakpoints.add(app, 3)
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.line == 3
    assert "switch on lazy_tracing_pytest" in session.output().text
    assert "_pytest.assertion.rewrite has no _read_pyc" in session.output().text
    session.continue_(timeout=30)


def test_a_launcher_whose_spawn_moved_is_not_run_rather_than_put_the_secret_on_a_command_line(tmp_path) -> None:
    """``launcher_token`` is made in debugpy's launcher (a launch with subprocess=True): without it, no launch."""
    copy = renamed_copy(tmp_path, "spawn")
    done = subprocess.run([sys.executable, backend.LAUNCHER_BOOT, str(copy / "launcher"), "--", "app.py"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "launcher_token is off (debugpy.launcher.debuggee has no spawn)" in done.stderr
    assert "such a launch is refused, rather than put the secret on the target's command line" in done.stderr


# -- the checks themselves, without a target ------------------------------------------------------------------------

class Owner:
    """A class of a module of this file's own, to check names against."""

    def __init__(self, size: int) -> None:
        self.size = size

    def grow(self, by: int, twice: bool = False) -> int:
        return self.size + by


MODULE = types.ModuleType("owners")
MODULE.Owner = Owner
Owner.__module__ = "owners"


def feature(**names: tuple[str, ...]) -> table.Feature:
    return table.Feature("a_feature", "a_feature", "owners", {"owners": names["names"]}, "what", "off")


@pytest.fixture
def owners(monkeypatch):
    monkeypatch.setitem(sys.modules, "owners", MODULE)
    yield MODULE
    changes.STATE.pop("a_feature", None)


def test_a_name_is_checked_by_attribute_parameters_and_instance_attribute(owners) -> None:
    assert changes.check(feature(names=("Owner.grow(self, by)", "Owner().size"))) is None
    assert changes.check(feature(names=("Owner.shrink",))) == "owners has no Owner.shrink"
    assert changes.check(feature(names=("Owner.grow(self, amount)",))) == (
        "owners.Owner.grow takes (self, by, twice), not (self, amount)")
    assert changes.check(feature(names=("Owner().colour",))) == "owners.Owner instances have no colour"
    assert changes.check(feature(names=("Missing.grow",))) == "owners has no Missing"


def test_a_name_a_function_sets_and_an_optional_name(owners, monkeypatch) -> None:
    def count(owner: Owner) -> None:
        owner.counted = True

    monkeypatch.setattr(owners, "count", count, raising=False)
    assert changes.check(feature(names=("count().counted",))) is None
    assert changes.check(feature(names=("count().tallied",))) == "owners.count sets no tallied"
    assert changes.check(feature(names=("?Owner().colour", "?Owner.shrink", "?count().tallied"))) is None
    assert changes.check(feature(names=("?Owner.grow(self, amount)",))) == (
        "owners.Owner.grow takes (self, by, twice), not (self, amount)")
    assert changes.check(feature(names=("?Missing.grow",))) == "owners has no Missing"
    assert changes.Changes(feature(names=("?Owner.shrink",))).declared == {("owners", "Owner.shrink")}


def test_a_feature_that_fails_halfway_is_undone_whole(owners) -> None:
    grow = Owner.grow

    def apply(change, boot) -> None:  # noqa: ANN001
        change.replace(Owner, "grow", lambda self, by: 0)
        change.replace(Owner, "shrink", lambda self: 0)  # not declared: the feature fails here

    why = changes.switch_on(feature(names=("Owner.grow",)), apply, None)
    assert "replaces owners.Owner.shrink, which its row of the table does not declare" in why
    assert Owner.grow is grow and not hasattr(Owner, "shrink")
    assert changes.STATE["a_feature"] == why


def test_a_feature_whose_check_fails_touches_nothing(owners) -> None:
    touched = []
    why = changes.switch_on(feature(names=("Owner.gone",)), lambda change, boot: touched.append(1), None)
    assert why == "owners has no Owner.gone" and touched == []


def test_every_feature_names_what_the_user_loses_and_its_module_is_there() -> None:
    folder = Path(table.__file__).parent
    for each in table.FEATURES:
        assert each.what and each.off, each.name
        assert (folder / f"{each.module}.py").is_file(), each.module
        assert all(needed in table.BY_NAME for needed in each.needs)


def test_the_proven_range_is_what_the_package_asks_for() -> None:
    pyproject = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert f'"debugpy>={table.OLDEST},<1.9"' in pyproject
    assert table.in_range(table.OLDEST) and table.in_range(table.NEWEST)
    assert not table.in_range("1.8.7") and not table.in_range("1.9.0") and not table.in_range("1.7.0")
