"""A launched target's stdin, the pipe the relay holds the write end of: input, end of file, and whether it waits.

Waiting (Linux): a thread of the target is waiting for input when the kernel shows it inside a ``read`` system call on
file descriptor 0 (``/proc/PID/task/TID/syscall``) and that descriptor is the very pipe whose write end the
relay holds (the same ``pipe:[inode]``). Anywhere else (no ``/proc``, another architecture, a process the
relay cannot inspect) the answer is "not known to wait", never a guess.
"""

from __future__ import annotations

import asyncio
import os
import platform

from ...errors import RelayError
from ...transports import procfs

READ_SYSCALLS = {"x86_64": {0, 19}, "aarch64": {63, 65}}  # read, readv


def _pipe(proc: asyncio.subprocess.Process | None) -> asyncio.StreamWriter:
    if proc is None or proc.stdin is None or proc.returncode is not None:
        raise RelayError("unsupported", "The target has no stdin to write to: it was not started by this relay.",
                         "Only targets launched here take input; give an attached process its input yourself.")
    return proc.stdin


async def send(proc: asyncio.subprocess.Process | None, text: str, eof: bool) -> None:
    """Write ``text`` to the target's stdin; with ``eof``, close it after (its reads then return end of file)."""
    pipe = _pipe(proc)
    if pipe.is_closing():
        raise RelayError("invalid_request", "The target's stdin was closed (end of file was sent).",
                         "It takes no more input; restart the session to give it input again.")
    if text:
        pipe.write(text.encode())
        await pipe.drain()
    if eof:
        pipe.close()


def waiting(proc: asyncio.subprocess.Process | None, pid: int | None) -> bool:
    """Whether the launched target (``pid``, under ``proc``) is blocked reading the stdin the relay holds."""
    if proc is None or proc.stdin is None or proc.stdin.is_closing():
        return False
    pipe = proc.stdin.get_extra_info("pipe")
    return reading_stdin(pid or proc.pid, pipe.fileno() if pipe is not None else None)


def reading_stdin(pid: int | None, our_fd: int | None) -> bool:
    """Whether a thread of ``pid`` is in a read of its fd 0 and that fd is the pipe whose write end is ``our_fd``."""
    reads = READ_SYSCALLS.get(platform.machine())
    if not pid or our_fd is None or not reads:
        return False
    try:
        if os.readlink(f"/proc/{pid}/fd/0") != os.readlink(f"/proc/self/fd/{our_fd}"):
            return False
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in threads:
        fields = procfs.read_text(f"{procfs.PROC}/{pid}/task/{tid}/syscall").split()
        if len(fields) > 1 and fields[0].isdigit() and int(fields[0]) in reads and int(fields[1], 16) == 0:
            return True
    return False
