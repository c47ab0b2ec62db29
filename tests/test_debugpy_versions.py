"""Every kind of breakpoint, a step, evaluations, a crash stop, ``sys.exit`` as an end and the demo, with the debugpy a
kernel's environment holds: the oldest of the range the boot is proven on, releases inside it, the newest on the
package index, and an older one outside it (lent the proven one; offline, run as it is, each feature it lacks off and
said). The relay runs in a process of its own (``every_kind_driver.py``) in a virtualenv holding that debugpy and
seeing the tests' environment for the rest, its targets on the virtualenv's Python and every 3.12+ found."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from jupyter_debug_relay.backends.debugpy import lending
from jupyter_debug_relay.backends.debugpy.boot import table
from tests import targets

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "every_kind_driver.py"
PROGRAM = HERE / "programs" / "every_kind.py"
OUTSIDE = "1.8.0"  # the first 1.8 release: older than the range
pytestmark = pytest.mark.timeout(600)


def line_of(text: str) -> int:
    return next(n for n, line in enumerate(PROGRAM.read_text().splitlines(), 1) if line.rstrip().endswith(f"# {text}"))


EXPECTED_STOPS = [["breakpoint", "count", line_of("condition")], ["step", "count", line_of("after")],
                  ["breakpoint", "hits", line_of("hits")], ["function breakpoint", "add", line_of("function")],
                  ["exception", "caught", line_of("raise")]]


def newest_on_the_index() -> str:
    done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "debugpy"], capture_output=True,
                          text=True, timeout=120)
    found = re.search(r"debugpy \(([0-9.]+)\)", done.stdout)
    if not found:
        pytest.skip(f"the package index did not answer: {done.stderr.strip()[-300:]}")
    return found.group(1)


def kernel_environment(version: str) -> Path:
    """The Python of a virtualenv whose own debugpy is ``version`` and which sees this environment's packages after
    its own (as a kernel's environment holding that debugpy would), made once per environment and kept (another
    checkout's environment gets its own: the .pth names this one's packages)."""
    ours = sysconfig.get_paths()["purelib"]  # its .pth files (the project's editable install) are read too
    which = hashlib.sha256(ours.encode()).hexdigest()[:10]
    python_version = f"py{sys.version_info[0]}{sys.version_info[1]}"
    folder = Path(lending.cache_root()) / "test-debugpy" / f"{version}-{python_version}-{which}"
    python = folder / "bin" / "python"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two tests of one version (xdist workers) make it once, not over each other
        if not (folder / ".made").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
            site = next((folder / "lib").glob("python3.*")) / "site-packages"
            done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                   "--no-deps", "--only-binary=:all:", "--target", str(site), f"debugpy=={version}"],
                                  capture_output=True, text=True, timeout=300)
            if done.returncode != 0:
                pytest.skip(f"pip could not get debugpy {version}: {done.stderr.strip()[-300:]}")
            (site / "zz_tests_environment.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
            (folder / ".made").touch()
    return python


def pythons(newest: tuple[int, int] = (3, 99)) -> list[str]:
    """The kernel's own Python and every 3.12+ found up to ``newest``."""
    return ["kernel", *(path for version, path in targets.found().items() if (3, 12) <= version <= newest)]


def run(version: str, newest: tuple[int, int] = (3, 99), **env: str) -> tuple[dict, subprocess.CompletedProcess]:
    """The driver's and the demo's runs with debugpy ``version`` in the kernel's environment, side by side."""
    python, environment = str(kernel_environment(version)), {**os.environ, **env}
    environment.pop("VIRTUAL_ENV", None)
    demo = subprocess.Popen([python, "-m", "jupyter_debug_relay.cli", "demo"], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        driven = subprocess.run([python, str(DRIVER), *pythons(newest)], env=environment, capture_output=True,
                                text=True, timeout=400, start_new_session=True)
        shown, _ = demo.communicate(timeout=300)
    finally:
        demo.kill()
        demo.wait()
    assert driven.returncode == 0, driven.stderr[-3000:]
    return json.loads(driven.stdout.strip().splitlines()[-1]), subprocess.CompletedProcess(demo.args, demo.returncode,
                                                                                           shown)


def assert_every_kind(seen: dict) -> None:
    """What a user of each kind of breakpoint checks, on one target."""
    assert "error" not in seen, seen.get("error")
    assert seen["stops"] == EXPECTED_STOPS
    assert seen["values"] == {"i": "7", "j": "2"}
    assert seen["exception"] == "KeyError"
    assert seen["end"] == ["terminated", 3]  # sys.exit(3) ends the program; it never stops it
    assert seen["crash"] == ["exception", "main", line_of("crash"), "ValueError"]
    if "awaiter_steps" in seen["features"] and not seen["features"]["awaiter_steps"]:  # on for this target
        assert seen["await_step"] == ["step", "report", line_of("resumed")]
    logged = [line for line in seen["output"].splitlines() if line.startswith("log k=")]
    assert logged == ["log k=0", "log k=1", "log k=2"] and "pass 9" in seen["output"]


def assert_demo(demo: subprocess.CompletedProcess) -> None:
    assert demo.returncode == 0, demo.stdout[-3000:]
    assert "demo finished (the example exits with 1 because of its bug)" in demo.stdout


@pytest.mark.parametrize("version", [table.OLDEST, "1.8.11", "1.8.20", "newest"])
def test_a_proven_debugpy_stops_at_every_kind_with_every_feature_on(version: str) -> None:
    version = newest_on_the_index() if version == "newest" else version
    found, demo = run(version)
    assert found["kernel_debugpy"] == version
    for python, seen in found["results"].items():
        assert_every_kind(seen)
        assert seen["debugpy"] == version, python
        if table.in_range(version):
            assert seen["warnings"] == [], (python, seen["warnings"])
            proven = {f.name for f in table.FEATURES if table.version_tuple(f.proven[0]) <= table.version_tuple(
                version) <= table.version_tuple(f.proven[1])}
            assert {name for name, why in seen["features"].items() if why is not None} & proven == set(), python
        else:  # a release newer than the range: each feature it lacks is off and said, every breakpoint stops
            assert all("outside the range" in w or w.split(" is off: ")[0] in seen["features"]
                       for w in seen["warnings"]), seen["warnings"]
    assert_demo(demo)


def test_an_older_debugpy_in_the_kernel_lends_its_targets_the_proven_one() -> None:
    found, demo = run(OUTSIDE)
    assert (found["kernel_debugpy"], found["lent_version"]) == (OUTSIDE, table.NEWEST)
    for python, seen in found["results"].items():
        assert_every_kind(seen)
        assert seen["debugpy"] == table.NEWEST and seen["warnings"] == [], (python, seen["warnings"])
    assert_demo(demo)


def test_offline_an_older_debugpy_runs_as_it_is_with_what_it_lacks_off_and_said(tmp_path: Path) -> None:
    """No copy of the proven debugpy, and pip cannot get one: the target runs the kernel's, every breakpoint stops,
    and the start's warnings say why it runs slower. (debugpy 1.8.0 predates Python 3.13: its own pydevd fails there
    on the first caught exception, 'FrameLocalsProxy' object has no attribute 'pop', which is why targets are lent
    the proven debugpy; this runs 3.11 and 3.12 targets.)"""
    found, demo = run(OUTSIDE, (3, 12), JUPYTER_DEBUG_RELAY_CACHE=str(tmp_path / "cache"), PIP_NO_INDEX="1",
                      PIP_FIND_LINKS=str(tmp_path / "no-links"))
    for python, seen in found["results"].items():
        assert_every_kind(seen)
        assert seen["debugpy"] == OUTSIDE, python
        told = " ".join(seen["warnings"])
        assert f"The kernel's debugpy {OUTSIDE} is outside the range" in told and "could not be installed" in told
        off = {name for name, why in seen["features"].items() if why is not None}
        assert off, python  # 1.8.0 lacks pydevd's ThreadingEvent, the queue of a stopped thread, ...
        assert all(f"{name} is off: " in told for name in off), told  # each with its reason
    assert_demo(demo)
