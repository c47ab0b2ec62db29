"""Shared fixtures: a relay per test, target programs, and a check that no process is left behind."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.transports import procfs

T = TypeVar("T")
MARKERS = ("debugpy", "_nodelay_boot", "lldb")
# Each pytest process (each pytest-xdist worker) has a mark of its own, inherited by every process its tests start:
# the leftover check of one worker never sees another's targets.
RUN_MARK = f"JUPYTER_DEBUG_RELAY_TEST_RUN={os.getpid()}".encode()
os.environ["JUPYTER_DEBUG_RELAY_TEST_RUN"] = str(os.getpid())
# Recordings and profiles go to a folder of this run, never the user's home (kernels inherit it too).
os.environ["JUPYTER_DEBUG_RELAY_HOME"] = tempfile.mkdtemp(prefix="jdr-home-")
atexit.register(shutil.rmtree, os.environ["JUPYTER_DEBUG_RELAY_HOME"], True)


def marked_processes() -> dict[int, str]:
    """Live processes started by this test run (they carry its mark in their environment), except this one."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        if procfs.state(int(entry)) in (None, "Z") or RUN_MARK not in procfs.read_bytes(
                f"/proc/{entry}/environ").split(b"\0"):
            continue
        found[int(entry)] = procfs.read_bytes(f"/proc/{entry}/cmdline").replace(b"\0", b" ").decode(errors="replace")
    return found


def debug_processes() -> dict[int, str]:
    """The debug adapters and targets among the marked processes."""
    return {pid: cmd for pid, cmd in marked_processes().items()
            if any(m in cmd for m in MARKERS) and "pytest" not in cmd}


@pytest.fixture(autouse=True)
def no_leftover_processes():
    """Fail a test that leaves a debug adapter or target running (and kill what it left)."""
    before = set(debug_processes())
    yield
    assert_none_left(debug_processes, before, 5.0)


def wait_until(check: Callable[[], T], timeout: float = 15.0, what: str = "", poll: float = 0.02) -> T:
    """Poll ``check`` until it returns something true (returned); fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what or check}")
        time.sleep(poll)
    return found


def assert_none_left(find, before: set[int], seconds: float) -> None:
    """Wait up to ``seconds`` for processes ``find()`` lists (and ``before`` did not) to end; kill and fail if not."""
    deadline = time.monotonic() + seconds
    while (left := {pid: cmd for pid, cmd in find().items() if pid not in before}) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"processes left behind: {left}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "every_target: run the test with its targets on the kernel's Python and on "
                            "the newest Python 3.12+ found (tests/targets.py)")
    config.addinivalue_line("markers", "smoke: in the set run on every other Python 3.10+ found (tests/smoke.py)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("every_target"):
        from tests import targets

        newest = targets.newest_monitoring()
        missing = pytest.mark.skip(reason=f"no Python 3.12+ found ({targets.WHERE})")
        newer = pytest.param(newest, id="newest") if newest else pytest.param(None, id="newest", marks=missing)
        metafunc.parametrize("target_python", [pytest.param(None, id="own"), newer], indirect=True)


@pytest.fixture
def target_python(request: pytest.FixtureRequest) -> str | None:
    """The interpreter of the test's targets: None for the tests' own, or (``every_target``) a Python 3.12+."""
    python = getattr(request, "param", None)
    if python:
        from tests import targets

        targets.prepared(python)  # its debugpy copy is installed before the test measures anything
    return python


@pytest.fixture
def relay(request: pytest.FixtureRequest, target_python: str | None):
    """A relay; a test module may give its options as ``RELAY_OPTIONS``."""
    with Relay(**getattr(request.module, "RELAY_OPTIONS", {})) as r:
        if target_python:
            r.launch = functools.partial(r.launch, python=target_python)
        yield r


@pytest.fixture
def kernel(tmp_path: Path):
    """A python3 kernel in the test's folder with ``%load_ext jupyter_debug_relay`` done."""
    from tests.kernels import Kernel

    k = Kernel("python3", cwd=str(tmp_path))
    k.magic("%load_ext jupyter_debug_relay")
    yield k
    k.close()


@pytest.fixture
def peer():
    """A Mycel runtime (the demo's) serving its debug protocol on a free loopback port."""
    from tests.peers.mycel_peer import start_peer

    runtime = start_peer()
    yield runtime
    runtime.stop()


@pytest.fixture
def busy_machine():
    """Two busy processes per core while the test runs: the target, its pipes and the relay compete for the CPU."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(2 * (os.cpu_count() or 2))]
    yield
    for proc in busy:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture
def write(tmp_path: Path):
    """Write a target program into the test's folder; returns its path as a string."""

    def write(name: str, source: str) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"))
        return str(path)

    return write


def line_of(path: str, marker: str) -> int:
    """The line number of the first line containing ``marker``."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if marker in line:
                return number
    raise AssertionError(f"{marker!r} not in {path}")


@pytest.fixture
def api():
    """An httpx client of a live relay server on a free port (``tests/server_fixtures.py``)."""
    from tests.server_fixtures import live_server

    with live_server() as (_, client):
        yield client
