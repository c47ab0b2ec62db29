"""Child processes in their own process group, tracked so none outlives the relay."""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence

from ..errors import RelayError

_live_groups: set[int] = set()

# A watchdog process, in a session of its own, holds a pipe from this process. When this
# process ends in any way (SIGKILL included, when atexit never runs), the pipe closes and
# the watchdog kills every group still registered with it.
_WATCHDOG_CODE = """
import os, signal, sys
groups = set()
for line in sys.stdin:
    (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""
_watchdog: subprocess.Popen | None = None
_watchdog_lock = threading.Lock()


def _tell_watchdog(line: str) -> None:
    global _watchdog
    with _watchdog_lock:
        if _watchdog is None or _watchdog.poll() is not None:
            _watchdog = subprocess.Popen(
                [sys.executable, "-S", "-c", _WATCHDOG_CODE], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, text=True,
            )
        try:
            _watchdog.stdin.write(line + "\n")
            _watchdog.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a whole process group, ignoring one that is already gone."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def track_group(pgid: int) -> None:
    """Remember a process group so it is killed when this process exits, however it exits."""
    _live_groups.add(pgid)
    _tell_watchdog(f"+{pgid}")


def own_processes() -> set[int]:
    """This process, its watchdog and the leaders of the process groups it tracks (adapters, targets)."""
    watchdog = _watchdog.pid if _watchdog is not None and _watchdog.poll() is None else None
    return {os.getpid(), *_live_groups, *([watchdog] if watchdog else [])}


def untrack_group(pgid: int) -> None:
    if pgid in _live_groups:
        _live_groups.discard(pgid)
        _tell_watchdog(f"-{pgid}")


@atexit.register
def _kill_all_groups() -> None:
    for pgid in list(_live_groups):
        kill_group(pgid)
    _live_groups.clear()


async def spawn(
    argv: Sequence[str],
    *,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    what: str = "process",
) -> asyncio.subprocess.Process:
    """Start ``argv`` with piped stdio in a new process group (session)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            limit=1 << 20,
        )
    except FileNotFoundError as exc:
        raise RelayError(
            "connection_failed",
            f"Cannot start the {what}: {argv[0]!r} was not found.",
            "Install it or give its full path.",
            {"path": argv[0]},
        ) from exc
    except OSError as exc:
        raise RelayError("connection_failed", f"Cannot start the {what} {argv[0]!r}: {exc}.") from exc
    track_group(proc.pid)
    return proc


async def reap(proc: asyncio.subprocess.Process, grace: float = 1.0) -> int | None:
    """End a spawned process and its group: SIGTERM, then SIGKILL after ``grace`` seconds."""
    if proc.returncode is None:
        kill_group(proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except asyncio.TimeoutError:
            pass
    kill_group(proc.pid, signal.SIGKILL)
    untrack_group(proc.pid)
    if proc.returncode is None:
        try:
            await asyncio.wait_for(proc.wait(), 2.0)
        except asyncio.TimeoutError:
            pass
    for pipe in (proc.stdin,):
        if pipe is not None and not pipe.is_closing():
            pipe.close()
    return proc.returncode
