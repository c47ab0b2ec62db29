"""The local Python processes a session could attach to, read from ``/proc``: by pid, or by the port debugpy listens on.

A process is listed when it is the user's own and its executable is a Python interpreter. debugpy is "loaded"
when its command line names it or its memory maps hold one of its files. ``debugpy.listen()`` (and ``python -m
debugpy --listen``) hands the listening to an adapter process of its own (``debugpy/adapter --for-server ...
--port PORT``); that adapter is not listed, its port is given to the process connected to it. Command lines are
shown with secret-looking values masked (``--token``, ``--server-access-token``, ``API_KEY=...``).
"""

from __future__ import annotations

import os
import re

from ...model import ProcessInfo
from ...redact import mask_args, mask_text
from ...transports.procfs import PROC, read_bytes, read_text

PYTHON_EXE = re.compile(r"^(python|pypy)[\d.]*[a-z]?$")
LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp
ESTABLISHED = "01"


def _sockets() -> tuple[dict[int, int], dict[int, int]]:
    """{inode: local port} of listening TCP sockets and {inode: remote port} of loopback connections."""
    listening: dict[int, int] = {}
    connected: dict[int, int] = {}
    for table in ("tcp", "tcp6"):
        for line in read_text(f"{PROC}/net/{table}").splitlines()[1:]:
            fields = line.split()
            if len(fields) < 10:
                continue
            local, remote, state, inode = fields[1], fields[2], fields[3], int(fields[9])
            if state == LISTEN:
                listening[inode] = int(local.rsplit(":", 1)[1], 16)
            elif state == ESTABLISHED:
                connected[inode] = int(remote.rsplit(":", 1)[1], 16)
    return listening, connected


def _inodes(pid: int) -> set[int]:
    """The socket inodes among a process's open files."""
    found = set()
    try:
        names = os.listdir(f"{PROC}/{pid}/fd")
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(f"{PROC}/{pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(int(target[8:-1]))
    return found


def _option(argv: list[str], flag: str) -> str | None:
    """The value of ``flag`` in ``argv`` (``--flag V`` or ``--flag=V``)."""
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1:]
    return None


def _port(value: str | None) -> int | None:
    """The port of ``PORT`` or ``HOST:PORT``."""
    text = (value or "").rsplit(":", 1)[-1]
    return int(text) if text.isdigit() else None


def _is_adapter(argv: list[str]) -> bool:
    return "--for-server" in argv and any(re.search(r"debugpy[/.]adapter$", arg) for arg in argv[1:3])


def python_processes(exclude: set[int] | None = None) -> list[ProcessInfo]:
    """The user's own Python processes but ``exclude`` (and debugpy's adapters), by pid."""
    listening, connected = _sockets()
    found: list[tuple[ProcessInfo, set[int]]] = []
    adapters: dict[int, int] = {}  # a debugpy adapter's listening port (any) -> the port it serves clients on
    uid = os.getuid()
    for entry in os.listdir(PROC):
        if not entry.isdigit() or int(entry) in (exclude or set()):
            continue
        pid = int(entry)
        try:
            if os.stat(f"{PROC}/{pid}").st_uid != uid:
                continue
            if not PYTHON_EXE.match(os.path.basename(os.readlink(f"{PROC}/{pid}/exe"))):
                continue
            argv = [a.decode(errors="replace") for a in read_bytes(f"{PROC}/{pid}/cmdline").split(b"\0") if a]
            maps = read_bytes(f"{PROC}/{pid}/maps")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if not argv:
            continue  # a zombie, or exiting
        inodes = _inodes(pid)
        ports = sorted({listening[i] for i in inodes if i in listening})
        if _is_adapter(argv):
            serves = _port(_option(argv, "--port"))
            if serves is not None:
                adapters.update(dict.fromkeys(ports, serves))
            continue
        command = " ".join(mask_text(arg) for arg in mask_args(argv))
        loaded = any("debugpy" in arg for arg in argv) or b"/debugpy/" in maps
        port = _port(_option(argv, "--listen")) if "debugpy" in " ".join(argv[:3]) else None
        found.append((ProcessInfo(pid=pid, command=command, debugpy=loaded, port=port, listening=ports),
                      {connected[i] for i in inodes if i in connected}))
    for info, peers in found:
        served = [adapters[p] for p in peers if p in adapters]
        if info.port is None and served:
            info.port = served[0]
    return [info for info, _ in sorted(found, key=lambda item: item[0].pid)]
