"""Runs debugpy in the debuggee with TCP_NODELAY on its socket to the adapter.

debugpy's server writes each message as two small writes; without
TCP_NODELAY the second waits for the adapter's delayed ACK (40 ms, debugpy
issue #2054). This file stands in front of debugpy's own command line
(``python _nodelay_boot.py DEBUGPY_DIR --connect HOST:PORT ...``), sets the
option on that one connection only, then hands over to debugpy exactly as
``python DEBUGPY_DIR ...`` would: no sitecustomize, no PYTHONPATH, and
``sys.path`` as debugpy leaves it.
"""

import runpy
import socket
import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:2] == ["-X", "frozen_modules=off"]:
        args = args[2:]
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
