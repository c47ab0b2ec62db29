"""Runs debugpy in the debuggee with TCP_NODELAY on its socket to the adapter, and its secret off the command line.

debugpy's server writes each message as two small writes; without
TCP_NODELAY the second waits for the adapter's delayed ACK (40 ms, debugpy
issue #2054). This file stands in front of debugpy's own command line
(``python _nodelay_boot.py DEBUGPY_DIR --connect HOST:PORT ...``), sets the
option on that one connection only, then hands over to debugpy exactly as
``python DEBUGPY_DIR ...`` would: no sitecustomize, no PYTHONPATH, and
``sys.path`` as debugpy leaves it.

The relay passes its settings in the environment variable ``JUPYTER_DEBUG_RELAY_BOOT``
(JSON), never on the command line, which every local user can read:
``token`` is the secret pydevd must answer ``pydevdAuthorize`` with, handed to
debugpy as ``--adapter-access-token`` inside this process only; ``unset`` names
variables the relay added for its own sake. Both are removed from ``os.environ``
before the program runs, so it and its children see the environment of a plain run.
"""

import json
import os
import runpy
import socket
import sys

BOOT_VARIABLE = "JUPYTER_DEBUG_RELAY_BOOT"  # the relay's backends/debugpy.py sets it


def main() -> None:
    settings = json.loads(os.environ.pop(BOOT_VARIABLE, "{}"))
    for name in settings.get("unset", ()):
        os.environ.pop(name, None)
    args = sys.argv[1:]
    if args[:2] == ["-X", "frozen_modules=off"]:
        args = args[2:]
    if settings.get("token"):
        args[1:1] = ["--adapter-access-token", settings["token"]]
    debugpy_dir = args[0]
    adapter_port = int(args[args.index("--connect") + 1].rpartition(":")[2])
    original_connect = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        original_connect(self, address)
        if isinstance(address, tuple) and len(address) >= 2 and address[1] == adapter_port:
            self.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socket.socket.connect = original_connect  # type: ignore[method-assign]

    socket.socket.connect = connect  # type: ignore[method-assign]
    sys.argv[:] = args
    del sys.path[0]
    runpy.run_path(debugpy_dir, run_name="__main__")


main()
