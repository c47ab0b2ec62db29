"""What a Python target's main thread is doing in native code, read from ``/proc`` (Linux), to explain a late pause.

pydevd stops a thread only when it runs Python code again: a thread in ``time.sleep``, a blocking read
or a long C call keeps running until that call returns. The kernel's wait channel and state of the
main thread say which; where ``/proc`` cannot be read the description is general.
"""

from __future__ import annotations

from ...transports import procfs

WAITS = (  # a substring of the kernel's wait channel -> what the thread waits for
    ("nanosleep", "sleeping (time.sleep or a C sleep)"),
    ("pipe_read", "reading a pipe (e.g. input() or a child's output)"),
    ("futex", "waiting on a lock, a queue or a join"),
    ("poll", "waiting for I/O (select, poll)"),
    ("select", "waiting for I/O (select, poll)"),
    ("wait", "waiting (for a child process, a socket or I/O)"),
    ("sk_", "waiting on a socket"),
    ("tcp", "waiting on a socket"),
)


def describe(pid: int | None) -> str:
    """A sentence on what the main thread of ``pid`` is doing in native code."""
    state = procfs.state(pid)
    if state == "R":
        return "its main thread is running native code (a C extension or a builtin)"
    if state in ("S", "D"):
        channel = procfs.read_text(f"{procfs.PROC}/{pid}/wchan").strip()
        for key, what in WAITS:
            if key in channel:
                return f"its main thread is {what}, in native code ({channel})"
        return f"its main thread is blocked in a system call{f' ({channel})' if channel not in ('', '0') else ''}"
    return "its threads are in native code"
