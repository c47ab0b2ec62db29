"""Which debugpy a launched target runs: one the relay is proven on, whose compiled parts load on the target's Python.

The relay's boot changes pydevd from the inside (``boot/table.py``), proven on debugpy ``OLDEST`` to ``NEWEST``.
The version targets run (``VERSION``) is the kernel's debugpy when it is in that range, else ``NEWEST`` (an
environment whose debugpy came with an older ipykernel, kept by pip because it satisfied an older requirement).
debugpy's compiled tracer (``pydevd_cython``, and on 3.12+ the ``sys.monitoring`` one) is built for
one Python version. The kernel's debugpy is built for the kernel's: lent to a target of another
version, it runs its pure-Python parts, several times slower between stops. So a target runs:

- the kernel's debugpy when it is ``VERSION`` and the kernel's Python version;
- its own debugpy when its interpreter has one of ``VERSION``;
- else a copy of ``VERSION`` installed for its Python into the cache
  (``$JUPYTER_DEBUG_RELAY_CACHE``, by default ``~/.cache/jupyter-debug-relay``), by the kernel's
  pip at the first launch on that version. Until the copy is there (or when pip cannot get
  it: offline), the target runs the kernel's, and the session says so once on its console and in its
  warnings (the boot then switches on only the features whose names that debugpy has).

An install fills a scratch folder beside the copy, named after the installing process
(``VERSION-pyXY.PID.random``), and renames it into place when done. A process that exits mid-install kills
pip's or compileall's process group and removes its scratch folder (atexit); one that dies without that
leaves its folder to the next look at the cache, which removes every scratch folder whose process is gone.

``$JUPYTER_DEBUG_RELAY_DEBUGPY``, when set, names the debugpy package every target runs instead (a build of one's
own); the boot checks its features as any other's.

A process attached by pid is given the debugpy of the folder chosen likewise for the Python it runs: the
path it was started by when that leads to its executable (a virtualenv's ``bin/python``), else its
executable (the kernel's when that is no Python the probe can run).

debugpy releases from 1.8.22 on have no wheels for Python 3.8 and 3.9: those targets run the
kernel's debugpy in pure Python.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

import debugpy

from ...errors import RelayError
from ...transports import procfs
from . import interpreter as interpreters
from .boot import table
from .interpreter import Interpreter

KERNEL_VERSION = debugpy.__version__
VERSION = KERNEL_VERSION if table.in_range(KERNEL_VERSION) else table.NEWEST  # the debugpy targets run
KERNEL_DEBUGPY = os.path.dirname(os.path.abspath(debugpy.__file__))
CACHE_ENV = "JUPYTER_DEBUG_RELAY_CACHE"
CHOSEN_ENV = "JUPYTER_DEBUG_RELAY_DEBUGPY"  # a debugpy package folder every target runs, whatever its Python
OLDEST_WHEELS = (3, 10)  # the oldest Python the relay's debugpy version has wheels for
INSTALL_TIMEOUT = 300.0  # seconds for each step of an install: pip, then compileall
ABANDONED_AFTER = 4 * INSTALL_TIMEOUT  # twice a whole install: a scratch folder this old is no running install's
SCRATCH = re.compile(r".+-py\d+\.(?:(\d+)\.)?[^.]+")  # VERSION-pyXY.PID.random (without PID: made by older relays)
log = logging.getLogger(__name__)
_installs: dict[str, threading.Thread] = {}  # cache folder -> the install making it
_failures: dict[str, str] = {}  # cache folder -> why pip could not make it (not tried again in this process)
_scratches: dict[str, subprocess.Popen[str]] = {}  # scratch folder of an install under way -> its step running
_ending = False  # this process exits: no install step starts, no scratch folder is renamed into place
_lock = threading.Lock()


@dataclass
class Loan:
    """The debugpy folder a target runs, and a note for its console when it is not the fast one."""

    folder: str
    note: str | None = None


def cache_root() -> str:
    """Where debugpy copies for other Python versions are kept."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jupyter-debug-relay")


def cached_folder(version: tuple[int, int]) -> str:
    """The folder of the debugpy copy for Python ``version`` (its ``debugpy`` package is inside)."""
    return os.path.join(cache_root(), "debugpy", f"{VERSION}-py{version[0]}{version[1]}")


def debugpy_in(folder: str) -> str | None:
    """The ``debugpy`` package of a complete copy in ``folder``, or None."""
    package = os.path.join(folder, "debugpy")
    return package if os.path.isfile(os.path.join(package, "__main__.py")) else None


def chosen_by_the_user() -> str | None:
    """The debugpy package folder ``$JUPYTER_DEBUG_RELAY_DEBUGPY`` names for every target (a build of one's own), or
    None; a folder that holds no debugpy is an error that says so."""
    folder = os.environ.get(CHOSEN_ENV)
    if not folder:
        return None
    folder = os.path.abspath(os.path.expanduser(folder))
    if not os.path.isfile(os.path.join(folder, "__main__.py")):
        nested = debugpy_in(folder)
        if nested is None:
            raise RelayError("file_not_found", f"${CHOSEN_ENV} names {folder}, which holds no debugpy package.",
                             f"Name the folder of a debugpy package (its __main__.py inside), or unset {CHOSEN_ENV}.",
                             {"path": folder})
        folder = nested
    return folder


def lends_to_the_kernels_python() -> bool:
    """Whether a target of the kernel's own Python runs another debugpy than the kernel's."""
    return VERSION != KERNEL_VERSION or bool(os.environ.get(CHOSEN_ENV))


def choose(interpreter: Interpreter) -> Loan:
    """The debugpy the target of ``interpreter`` runs (starting the install of a copy when there is none yet); a look
    at the cache sweeps the scratch folders of abandoned installs."""
    chosen = chosen_by_the_user()
    if chosen is not None:
        return Loan(chosen)
    if interpreter.same_version and VERSION == KERNEL_VERSION:
        return Loan(KERNEL_DEBUGPY)
    if interpreter.debugpy is not None and interpreter.debugpy[1] == VERSION:
        return Loan(interpreter.debugpy[0])
    shown = ".".join(map(str, interpreter.version))
    if interpreter.version < OLDEST_WHEELS and VERSION == KERNEL_VERSION:
        return Loan(KERNEL_DEBUGPY, f"Python {shown}: debugpy {VERSION} runs here in pure Python (it has no "
                    f"build for {shown}), slower between stops than on Python 3.10 and newer.\n")
    sweep()
    folder = cached_folder(interpreter.version)
    package = debugpy_in(folder)
    if package is not None:
        return Loan(package)
    failure = _failures.get(folder)
    if failure is None:
        start_install(interpreter)
    state = f"could not be installed in {folder} ({failure})" if failure else f"is being installed in {folder}"
    if VERSION != KERNEL_VERSION:
        return Loan(KERNEL_DEBUGPY, f"The kernel's debugpy {KERNEL_VERSION} is outside the range the relay is proven "
                    f"on ({table.OLDEST} to {table.NEWEST}); debugpy {VERSION} for Python {shown} {state}; "
                    "meanwhile this target runs the kernel's, with only the speed-ups whose names it has "
                    f"(`pip install \"debugpy>={table.OLDEST},<1.9\"` in the kernel's environment ends this).\n")
    return Loan(KERNEL_DEBUGPY, f"Python {shown}: debugpy {VERSION} for {shown} {state}; meanwhile this target "
                "runs the kernel's debugpy in pure Python, slower between stops.\n")


def started_as(pid: int, executable: str) -> str:
    """The path process ``pid`` was started by (a virtualenv's ``bin/python``, whose own debugpy counts) when it is
    ``executable`` (``/proc/PID/exe`` names the interpreter the link leads to); else ``executable``."""
    argv0 = procfs.read_bytes(f"/proc/{pid}/cmdline").split(b"\0")[0].decode(errors="replace")
    if not argv0:
        return executable
    if os.sep in argv0:
        try:
            path = os.path.join(os.readlink(f"/proc/{pid}/cwd"), argv0)
        except OSError:
            return executable
    else:  # found on the process's PATH
        variables = dict(v.partition(b"=")[::2] for v in procfs.read_bytes(f"/proc/{pid}/environ").split(b"\0"))
        path = shutil.which(argv0, path=variables.get(b"PATH", b"").decode(errors="replace")) or ""
    return path if path and os.path.realpath(path) == os.path.realpath(executable) else executable


async def for_process(pid: int) -> Loan:
    """The debugpy to inject into process ``pid``, chosen for the Python it runs (its virtualenv's, if any)."""
    try:
        executable = started_as(pid, os.readlink(f"/proc/{pid}/exe"))
        found = await interpreters.probe(executable) if os.path.isfile(executable) else None
    except (OSError, RelayError):  # no /proc, not ours, or not a Python run as a program (embedded)
        found = None
    return choose(found) if found is not None else Loan(KERNEL_DEBUGPY)


def start_install(interpreter: Interpreter) -> None:
    """Install the copy for ``interpreter`` in a thread of its own, unless one is making it already."""
    folder = cached_folder(interpreter.version)
    with _lock:
        running = _installs.get(folder)
        if running is None or not running.is_alive():
            _installs[folder] = threading.Thread(target=install, args=(interpreter,), daemon=True,
                                                 name=f"debugpy install {folder}")
            _installs[folder].start()


def wait_for_installs(timeout: float = INSTALL_TIMEOUT) -> None:
    """Wait until the installs started are over (tests and benches, before they measure or end)."""
    with _lock:
        threads = list(_installs.values())
    for thread in threads:
        thread.join(timeout)


def abandoned(now: float | None = None) -> list[str]:
    """The scratch folders of the cache that no install under way fills: their process is gone, or they are older
    than any install lasts (a reused pid; a folder without a pid, by its age alone)."""
    old = (time.time() if now is None else now) - ABANDONED_AFTER
    found = []
    for scratch in glob.glob(os.path.join(glob.escape(cache_root()), "debugpy", "*-py*.*")):
        match = SCRATCH.fullmatch(os.path.basename(scratch))
        with contextlib.suppress(OSError):
            if match and (os.path.getmtime(scratch) < old or (match[1] and not procfs.alive(int(match[1])))):
                found.append(scratch)
    return found


def sweep() -> None:
    """Remove the abandoned scratch folders of the cache, in a thread (15-20 MB each: no launch waits for that)."""
    found = abandoned()
    if found:
        threading.Thread(target=_remove, args=(found,), daemon=True, name="debugpy cache sweep").start()


def _remove(folders: list[str]) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def install(interpreter: Interpreter) -> str | None:
    """Install the relay's debugpy version for ``interpreter``'s Python into the cache, compiled by it; its package,
    or None."""
    version = interpreter.version
    folder = cached_folder(version)
    if debugpy_in(folder):
        return debugpy_in(folder)
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=f"{os.path.basename(folder)}.{os.getpid()}.", dir=os.path.dirname(folder))
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
               "--no-compile", "--only-binary=:all:", "--python-version", f"{version[0]}.{version[1]}",
               "--target", scratch, f"debugpy=={VERSION}"]
    try:
        done = _step(scratch, command)
        if done.returncode != 0 or not debugpy_in(scratch):
            errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
            raise OSError((errors or done.stderr.strip().splitlines() or ["pip failed"])[-1])
        _step(scratch, [interpreter.path, "-m", "compileall", "-q", "-j", "0", scratch])  # no compiling at launch
        with _lock:
            _go_on()
            os.replace(scratch, folder)
    except (OSError, subprocess.SubprocessError) as exc:
        if not debugpy_in(folder) and not _ending:  # another process may have made it meanwhile
            _failures[folder] = str(exc)
            log.warning("Could not install debugpy %s for Python %d.%d: %s", VERSION, *version, exc)
    finally:
        with _lock:
            _scratches.pop(scratch, None)
        shutil.rmtree(scratch, ignore_errors=True)
    return debugpy_in(folder)


def _step(scratch: str, command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a step of the install into ``scratch`` in a process group of its own, killed whole when it outlasts
    ``INSTALL_TIMEOUT`` or this process exits."""
    with _lock:
        _go_on()
        step = _scratches[scratch] = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                      text=True, start_new_session=True)
    try:
        out, err = step.communicate(timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        _kill(step)
        step.communicate(timeout=10.0)  # its pipes close with its group
        raise
    return subprocess.CompletedProcess(command, step.returncode, out, err)


def _go_on() -> None:
    """Refuse to go on with an install once this process exits (under ``_lock``)."""
    if _ending:
        raise OSError("this process is exiting")


def _kill(step: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(step.pid, signal.SIGKILL)


def _forked() -> None:
    """A child forked from this process owns none of its installs."""
    global _lock
    _lock = threading.Lock()
    _scratches.clear()


os.register_at_fork(after_in_child=_forked)


@atexit.register
def _end_installs() -> None:
    """The process exits: kill the installs' steps under way and remove their scratch folders."""
    global _ending
    with _lock:
        _ending = True
        steps = dict(_scratches)
    for step in steps.values():
        _kill(step)
        with contextlib.suppress(subprocess.TimeoutExpired):
            step.wait(5.0)  # gone before its folder is removed: it writes nothing more there
    _remove(list(steps))
