"""What Linux's ``/proc`` says about a process: its files read whole, and the fields of ``/proc/PID/stat``.

Every reader answers "nothing" (``""``, ``b""``, None) where ``/proc`` is missing or the process is gone or not
ours to read: the callers then say less, never fail.
"""

from __future__ import annotations

import os

PROC = "/proc"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def read_bytes(path: str) -> bytes:
    """The whole file, or ``b""`` when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def read_text(path: str) -> str:
    """The whole file as text, or ``""`` when it cannot be read."""
    return read_bytes(path).decode(errors="replace")


def alive(pid: int | None) -> bool:
    """Whether the process ``pid`` still runs (a zombie counts as gone; another user's counts as running)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return state(pid) != "Z"  # None (no /proc to tell) counts as running


def stat_fields(pid: int | None) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (``state``, ``ppid``, ... ``starttime`` at 19), or
    None. The name is skipped by its last ``)``: it may hold spaces and parentheses of its own."""
    if not isinstance(pid, int) or pid <= 0:
        return None
    text = read_text(f"{PROC}/{pid}/stat")
    _, paren, rest = text.rpartition(")")
    return rest.split() if paren else None


def state(pid: int | None) -> str | None:
    """The process's state letter (``R`` running, ``S`` sleeping, ``D`` in I/O, ``Z`` zombie ...), or None."""
    fields = stat_fields(pid)
    return fields[0] if fields else None


def parent(pid: int | None) -> int | None:
    """The process's parent pid, or None."""
    fields = stat_fields(pid)
    return int(fields[1]) if fields else None


def start_ns(pid: int | None) -> int | None:
    """When the process started, in ns since the epoch (to the clock tick, rounded up to the next second), or
    None."""
    fields = stat_fields(pid)
    boot = next((line.split()[1] for line in read_text(f"{PROC}/stat").splitlines() if line.startswith("btime ")),
                None)
    if not fields or len(fields) < 20 or boot is None:
        return None
    return int((int(boot) + int(fields[19]) / CLOCK_TICKS + 1) * 1e9)
