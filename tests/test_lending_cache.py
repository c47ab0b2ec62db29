"""The lending cache: scratch folders of installs that no live process fills are swept, and an exit mid-install
kills pip's process group and leaves no scratch folder behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from jupyter_debug_relay.backends.debugpy import lending
from jupyter_debug_relay.backends.debugpy.interpreter import Interpreter
from jupyter_debug_relay.transports import procfs
from tests.conftest import wait_until

INTERRUPTED = """
import asyncio
import sys

from jupyter_debug_relay.backends.debugpy import interpreter, lending

lending.start_install(asyncio.run(interpreter.probe(sys.executable)))
sys.stdin.readline()  # the test says when to exit, while pip runs
"""


def running(text: str) -> list[int]:
    """The live processes whose command line holds ``text``."""
    return [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and procfs.alive(int(pid))
            and text.encode() in procfs.read_bytes(f"/proc/{pid}/cmdline")]


@pytest.fixture(scope="module")
def wheels() -> Path:
    """A folder holding the debugpy wheel an install of the kernel's Python takes, downloaded once into the cache."""
    folder = Path(lending.cache_root()) / "test-wheels"
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    if not list(folder.glob(f"debugpy-{lending.VERSION}-{tag}-*.whl")):
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                               "-d", str(folder), f"debugpy=={lending.VERSION}"], capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            pytest.skip(f"no debugpy {lending.VERSION} wheel to be had: {done.stderr.strip()[-200:]}")
    return folder


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv(lending.CACHE_ENV, str(tmp_path / "cache"))
    (tmp_path / "cache" / "debugpy").mkdir(parents=True)
    return tmp_path / "cache" / "debugpy"


def test_a_look_at_the_cache_sweeps_every_scratch_folder_whose_process_is_gone(cache):
    other = (3, 99)  # a Python the kernel is not: its copy comes from the cache
    copy = Path(lending.cached_folder(other))
    (copy / "debugpy").mkdir(parents=True)
    (copy / "debugpy" / "__main__.py").touch()
    ended = subprocess.Popen(["true"])
    ended.wait(10)
    long_ago = time.time() - lending.ABANDONED_AFTER - 60
    folders = {
        "dead": f"{lending.VERSION}-py399.{ended.pid}.abcd1234",
        "dead, other version": f"1.8.20-py313.{ended.pid}.efgh5678",
        "live": f"{lending.VERSION}-py399.{os.getpid()}.ijkl9012",
        "live pid, older than any install": f"{lending.VERSION}-py312.{os.getpid()}.mnop3456",
        "no pid, young": f"{lending.VERSION}-py311.qrstuvwx",
        "no pid, old": f"{lending.VERSION}-py310.yzab_cde",
    }
    for name in folders.values():
        (cache / name / "debugpy").mkdir(parents=True)
        (cache / name / "debugpy" / "pydevd.py").write_text("# half installed\n")
    for key in ("live pid, older than any install", "no pid, old"):
        os.utime(cache / folders[key], (long_ago, long_ago))

    loan = lending.choose(Interpreter(sys.executable, other, sys.prefix, False))

    assert loan == lending.Loan(str(copy / "debugpy"))
    kept = {folders["live"], folders["no pid, young"], copy.name}
    wait_until(lambda: {p.name for p in cache.iterdir()} == kept, 10, "the abandoned scratch folders to go")
    assert lending.abandoned() == []


def test_an_exit_mid_install_kills_pip_and_removes_its_scratch_folder(wheels, cache):
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_CONFIG_FILE": os.devnull}
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(INTERRUPTED)], stdin=subprocess.PIPE, env=env,
                             cwd=Path(__file__).parent.parent)
    try:
        wait_until(lambda: running(str(cache)), 30, "pip installing into the cache")
        scratch = [p for p in cache.iterdir() if lending.SCRATCH.fullmatch(p.name)]
        assert [p.name.split(".")[-2] for p in scratch] == [str(child.pid)]  # the installer's pid names it
        child.stdin.close()
        assert child.wait(30) == 0
        wait_until(lambda: not running(str(cache)), 10, "pip's process group to end")
    finally:
        child.kill()
        child.wait(10)
        for pid in running(str(cache)):  # what a failure left running
            os.kill(pid, signal.SIGKILL)
    assert list(cache.iterdir()) == []
