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
``free_children`` makes a forked child run free of the debugger (its breakpoints would
wait for a client it cannot reach, hanging the program) and has the parent announce
it to the relay with a ``relayForked`` event on pydevd's connection. A ``SyntaxError``
that ends the program (a ``-m`` module or an imported file that does not compile) is
told to the relay as a ``relaySyntaxError`` event (file, line, offset, text, message)
before Python prints it and exits.

As each module's code is read (``SourceLoader.get_code``: imports and ``-m``), the boot
notes its file's modification time (``LOADED``, which the relay reads to tell a file
changed since it was loaded) and binds the breakpoints pydevd received for that file
while it did not exist yet, before its first line runs, telling the relay each one is
verified with a ``breakpoint`` event. (An audit hook would see more ways to run code,
but pydevd calls ``sys._getframe`` in its trace function, an audited call: the hook
would run, traced, on every traced call, and doubled the time to start under
``just_my_code=False``.)
"""

import json
import os
import runpy
import socket
import sys
import time

BOOT_VARIABLE = "JUPYTER_DEBUG_RELAY_BOOT"  # the relay's backends/debugpy.py sets it
BOOT_MODULE = "_jupyter_debug_relay_boot"  # this module's name in sys.modules, for the relay's evaluate
LOADED: dict = {}  # file -> its st_mtime_ns when its code first ran (None: not a file)


def stop_debugging() -> None:
    """In a forked child: undo pydevd's tracing, so no breakpoint of the parent's stops it."""
    tracing = sys.modules.get("pydevd_tracing")
    if tracing is not None:
        tracing.restore_sys_set_trace_func()  # pydevd swaps sys.settrace for a warning
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None and monitoring.get_tool(monitoring.DEBUGGER_ID) == "pydevd":
        for name in dir(monitoring.events):
            event = getattr(monitoring.events, name)
            if name.isupper() and isinstance(event, int) and event and not event & (event - 1):
                monitoring.register_callback(monitoring.DEBUGGER_ID, event, None)
        monitoring.set_events(monitoring.DEBUGGER_ID, 0)
    sys.settrace(None)
    threading = sys.modules.get("threading")
    if threading is not None:
        threading.settrace(None)
    frame = sys._getframe()
    while frame is not None:
        frame.f_trace = None
        frame = frame.f_back


def tell_relay(name: str, body: dict, flush: bool = False) -> None:
    """Send the relay an event on pydevd's own connection; ``flush`` waits (up to 2 s) until it is written."""
    pydevd = sys.modules.get("pydevd")
    debugger = pydevd.get_global_debugger() if pydevd is not None else None
    if debugger is None or getattr(debugger, "writer", None) is None:
        return
    from _pydevd_bundle.pydevd_comm_constants import CMD_PROCESS_EVENT
    from _pydevd_bundle.pydevd_net_command import NetCommand

    event = {"type": "event", "event": name, "body": body}
    debugger.writer.add_command(NetCommand(CMD_PROCESS_EVENT, 0, event, is_json=True))
    deadline = time.monotonic() + 2.0
    while flush and not debugger.writer.empty() and time.monotonic() < deadline:
        time.sleep(0.01)
    if flush:
        time.sleep(0.05)  # the last message taken off the queue is on its way


def announce_child(pid: int) -> None:
    """Tell the relay that this process forked ``pid``."""
    tell_relay("relayForked", {"pid": pid})


def free_children() -> None:
    """Children forked by the program run without the debugger; each is announced."""
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            announce_child(pid)
        return pid

    os.register_at_fork(after_in_child=stop_debugging)
    os.fork = fork


def bind_pending(filename: str) -> None:
    """Add the breakpoints pydevd refused for ``filename`` while it did not exist, now that its code runs."""
    get_debugger = getattr(sys.modules.get("pydevd"), "get_global_debugger", None)  # None while pydevd loads
    received = getattr(get_debugger() if get_debugger else None, "api_received_breakpoints", None)
    if not received:
        return
    debugger = get_debugger()
    from _pydevd_bundle.pydevd_api import PyDevdAPI
    from pydevd_file_utils import canonical_normalized_path

    canonical = canonical_normalized_path(filename)
    if canonical in debugger.breakpoints:
        return
    api = PyDevdAPI()
    for (_, bp_id), (their_file, params) in list(received.items()):
        if their_file != canonical:
            continue
        result = api.add_breakpoint(debugger, *params)
        if not result.error_code:
            tell_relay("breakpoint", {"reason": "changed", "breakpoint": {
                "id": bp_id, "verified": True, "line": result.translated_line, "source": {"path": filename}}})


def watch_loads() -> None:
    """As a module's code is read from its file: note the file's mtime, bind its pending breakpoints."""
    from importlib._bootstrap_external import SourceLoader

    read = SourceLoader.get_code

    def get_code(self, fullname):  # noqa: ANN001, ANN202 - importlib's own signature
        code = read(self, fullname)
        filename = getattr(code, "co_filename", None)
        if isinstance(filename, str) and filename not in LOADED:
            try:
                LOADED[filename] = os.stat(filename).st_mtime_ns
                bind_pending(filename)
            except Exception:  # the import itself must not fail for the debugger's sake
                pass
        return code

    SourceLoader.get_code = get_code


def main() -> None:
    settings = json.loads(os.environ.pop(BOOT_VARIABLE, "{}"))
    sys.modules[BOOT_MODULE] = sys.modules[__name__]
    watch_loads()
    for name in settings.get("unset", ()):
        os.environ.pop(name, None)
    args = sys.argv[1:]
    if args[:2] == ["-X", "frozen_modules=off"]:
        args = args[2:]
    if settings.get("token"):
        args[1:1] = ["--adapter-access-token", settings["token"]]
    if settings.get("free_children"):
        free_children()
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
    try:
        runpy.run_path(debugpy_dir, run_name="__main__")
    except SyntaxError as exc:  # the program did not compile: Python prints it as ever, the relay learns where
        tell_relay("relaySyntaxError", {"file": exc.filename, "line": exc.lineno, "offset": exc.offset,
                                        "text": exc.text, "message": exc.msg}, flush=True)
        raise


main()
