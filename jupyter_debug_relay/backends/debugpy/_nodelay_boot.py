"""The start of a debugged target: debugpy runs with TCP_NODELAY on its socket to the relay, its secret off the
command line, and the boot's changes inside pydevd (``boot/``, declared in ``boot/table.py``) each switched on only
where every name it needs is there.

debugpy's server writes each message as two small writes; without TCP_NODELAY the second waits for the adapter's
delayed ACK (40 ms, debugpy issue #2054). This file stands in front of debugpy's own command line (``python
_boot_script.py DEBUGPY_DIR --connect HOST:PORT ...`` runs it), sets the option on that one connection only, then
hands over to debugpy exactly as ``python DEBUGPY_DIR ...`` would: no sitecustomize, no PYTHONPATH, and ``sys.path``
as debugpy leaves it.

The relay passes its settings in the environment variable ``JUPYTER_DEBUG_RELAY_BOOT`` (JSON), never on the command
line, which every local user can read: ``token`` is the secret pydevd must answer ``pydevdAuthorize`` with, handed to
debugpy as ``--adapter-access-token`` inside this process only; ``unset`` names variables the relay added for its
own sake. Both are removed from ``os.environ`` before the program runs, so it and its children see the environment
of a plain run. ``debugpy`` names the debugpy folder to run instead of the one on the command line (the relay lends
one built for this Python); ``free_children`` and ``stack_with_stops`` ask for those features; ``log_marks``
(start, end) are what a log line written into a launched program's stdout goes between (``log_lines.py``).

As each module's code is read (``SourceLoader.get_code``: imports and ``-m``), the boot notes its file's modification
time (``LOADED``, which the relay reads to tell a file changed since it was loaded) and hands the code to the
features that look at it (``FIRST_READ``, ``CODE_HOOKS``). As each module has run, the features of ``boot/table.py``
that wait for it are checked and switched on (``boot/changes.py``); which are on, and why the others are off, is
told to the relay (``relayFeatures``) as pydevd gets its configuration. What the boot adds but cannot later (a
feature switched on after the report, a pending breakpoint that will not bind) is told as ``relayBootWarning``
(what, and the error). A ``SyntaxError`` that ends the program is told as ``relaySyntaxError`` (file, line, offset,
text, message) before Python prints it. The boot registers itself as ``_jupyter_debug_relay_boot`` in
``sys.modules`` so the relay can read ``LOADED``.

An exception the program does not catch is reported as ``python program.py`` would report it: ``sys.excepthook`` is
given its traceback from the program's own first frame on, without this file's, runpy's or debugpy's (a hook the
program installs itself gets them all). The exception still leaves this file's frame, where pydevd stops on it.
"""

import json
import os
import runpy
import socket
import sys
import time

BOOT_VARIABLE = "JUPYTER_DEBUG_RELAY_BOOT"  # the relay's backends/debugpy/backend.py sets it
BOOT_MODULE = "_jupyter_debug_relay_boot"  # this module's name in sys.modules, for the relay's evaluate
FEATURES_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot")
LOADED: dict = {}  # file -> its st_mtime_ns when its code first ran (None: not a file)
STARTUP = {"interpreter start": time.time()}  # phase -> when it ended (wall clock, the relay's too)
TRACE_ALL = "JUPYTER_DEBUG_RELAY_TRACE_ALL"  # in a 3.11 target's environment: every call traced from the start
CODE_HOOKS: list = []  # each gets a module's code as it is read, and returns the code to run
FIRST_READ: list = []  # each gets the file of a module whose code is read for the first time
AROUND_IMPORT: dict = {}  # module -> what runs its code, given the function that runs it
AFTER_IMPORT: dict = {}  # module -> the features switched on once it has run
SETTINGS: dict = {}  # the relay's settings (JUPYTER_DEBUG_RELAY_BOOT), without the token
UNTOLD: list = []  # what the boot could not do, kept until pydevd's connection is there to tell it
DEBUGPY_DIR: list = []  # the folder of the debugpy package this target runs


def tell_relay(name: str, body: dict, flush: bool = False) -> bool:
    """Send the relay an event on pydevd's own connection; ``flush`` waits (up to 2 s) until it is written.
    False when pydevd has no connection yet (or its messages are not the ones the boot knows)."""
    if STATE.get("relay_messages", "not yet") is not None:
        return False
    debugger = sys.modules["pydevd"].get_global_debugger()
    if debugger is None or getattr(debugger, "writer", None) is None:
        return False
    from _pydevd_bundle.pydevd_comm_constants import CMD_PROCESS_EVENT
    from _pydevd_bundle.pydevd_net_command import NetCommand

    event = {"type": "event", "event": name, "body": body}
    debugger.writer.add_command(NetCommand(CMD_PROCESS_EVENT, 0, event, is_json=True))
    deadline = time.monotonic() + 2.0
    while flush and not debugger.writer.empty() and time.monotonic() < deadline:
        time.sleep(0.01)
    if flush:
        time.sleep(0.05)  # the last message taken off the queue is on its way
    return True


def could_not(what: str, error: BaseException) -> None:
    """Tell the relay (``relayBootWarning``: what, error) that the boot could not do ``what``; the debugger works
    on without it. Told at once when pydevd is connected, else once it is."""
    UNTOLD.append({"what": what, "error": f"{type(error).__name__}: {error}"})
    tell_untold()


def tell_untold() -> None:
    while UNTOLD and tell_relay("relayBootWarning", UNTOLD[0]):
        UNTOLD.pop(0)


def report() -> None:
    """Tell the relay which features are on (None) and why the others are off, and when the start's phases ended."""
    debugpy = sys.modules.get("debugpy")
    waiting = {feature.name: module for module, features in AFTER_IMPORT.items() for feature in features}
    tell_relay("relayFeatures", {"debugpy": getattr(debugpy, "__version__", None),
                                 "python": ".".join(map(str, sys.version_info[:3])), "features": dict(STATE),
                                 "waiting": waiting})
    if STARTUP:
        tell_relay("relayStartup", dict(STARTUP))
        STARTUP.clear()
    tell_untold()


def hidden(filename: str, debugpy_dir: str) -> bool:
    """Whether a frame belongs to the machinery that starts the program (the boot's files, runpy, debugpy)."""
    path = os.path.normpath(filename)
    return (path in (os.path.normpath(runpy.__file__), "<frozen runpy>")
            or path.startswith((debugpy_dir + os.sep, os.path.dirname(os.path.normpath(__file__)) + os.sep)))


def hidden_from_the_program(filename: str) -> bool:
    """``hidden`` for this target's debugpy."""
    return hidden(filename, DEBUGPY_DIR[0])


def report_from_the_program(debugpy_dir: str) -> None:
    """Have ``sys.excepthook`` show an uncaught exception's traceback from the program's own first frame on."""
    python_hook = sys.excepthook

    def excepthook(kind: type, value: BaseException, tb: object) -> None:
        while tb is not None and tb.tb_next is not None and hidden(tb.tb_frame.f_code.co_filename, debugpy_dir):
            tb = tb.tb_next
        python_hook(kind, value.with_traceback(tb), tb)

    sys.excepthook = excepthook


def may_be_named(filename: str, names: set) -> bool:
    """Whether pydevd may name ``filename`` by a path whose file name is one of ``names`` (lower case): it has that
    name, or it is a link. pydevd names a file by its real path, which takes a look at each folder of the path to
    work out; a link of a folder leaves the file's name as it is."""
    return os.path.basename(filename).lower() in names or os.path.islink(filename)


def beside(name: str):  # noqa: ANN201 - a module object
    """The module ``boot/name.py``, loaded once."""
    from importlib.util import module_from_spec, spec_from_file_location

    full_name = f"{BOOT_MODULE}_{name}"
    if full_name not in sys.modules:
        spec = spec_from_file_location(full_name, os.path.join(FEATURES_FOLDER, f"{name}.py"))
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[full_name] = module
    return sys.modules[full_name]


table, changes = beside("table"), beside("changes")
STATE = changes.STATE  # feature -> None (on) or why it is off


def switch_on_after(module_name: str) -> None:
    """Switch on the features waiting for ``module_name``; one switched on after the report is told on its own."""
    for feature in AFTER_IMPORT.pop(module_name, ()):
        try:
            why = changes.switch_on(feature, beside(feature.module).apply, sys.modules[__name__])
        except Exception as error:  # noqa: BLE001 - the feature's own file did not load: it stays off
            why = STATE[feature.name] = f"its file did not load ({type(error).__name__}: {error})"
        if why and not STARTUP:  # the report went already
            could_not(f"switch on {feature.name}", RuntimeError(why))


def plan_features(settings: dict) -> None:
    """Which features of the table this target gets, each waiting for the module that switches it on."""
    for feature in table.FEATURES:
        if (feature.process != "target" or not feature.for_python(sys.version_info)
                or (feature.setting and not settings.get(feature.setting))):
            continue
        if feature.name.startswith("lazy_tracing") and os.environ.get(TRACE_ALL):
            continue  # the user asked for every call traced from the start
        AFTER_IMPORT.setdefault(feature.after, []).append(feature)


def watch_loads() -> None:
    """As a module's code is read from its file: note the file's mtime, hand it to ``FIRST_READ`` and the code to
    ``CODE_HOOKS``; once a module has run, switch on the features waiting for it."""
    from importlib._bootstrap_external import SourceLoader, _LoaderBasics

    read, run = SourceLoader.get_code, _LoaderBasics.exec_module

    def exec_module(self, module):  # noqa: ANN001, ANN202 - importlib's own signature
        AROUND_IMPORT.pop(module.__name__, lambda run_it: run_it())(lambda: run(self, module))
        if module.__name__ in AFTER_IMPORT:
            switch_on_after(module.__name__)

    def get_code(self, fullname):  # noqa: ANN001, ANN202 - importlib's own signature
        code = read(self, fullname)
        filename = getattr(code, "co_filename", None)
        if isinstance(filename, str) and filename not in LOADED:
            try:
                LOADED[filename] = os.stat(filename).st_mtime_ns
            except OSError:
                return code  # no file on disk (a loader of its own): nothing to note, no breakpoint to bind
            for on_read in FIRST_READ:
                try:
                    on_read(filename)
                except Exception as error:  # the import itself must not fail for the debugger's sake
                    could_not(f"bind the pending breakpoints of {filename}", error)
        for on_code in CODE_HOOKS:
            code = on_code(code)
        return code

    SourceLoader.get_code = get_code
    _LoaderBasics.exec_module = exec_module


def add_to_debugger(settings: dict, debugpy_dir: str) -> None:
    """What the boot adds to pydevd as its modules load: a launch's, and a process's attached by pid."""
    sys.modules[BOOT_MODULE] = sys.modules[__name__]
    DEBUGPY_DIR[:] = [os.path.normpath(os.path.abspath(debugpy_dir))]
    SETTINGS.update({key: value for key, value in settings.items() if key != "token"})
    plan_features(settings)
    watch_loads()
    for module_name in [name for name in AFTER_IMPORT if name in sys.modules]:  # attached where pydevd was loaded
        switch_on_after(module_name)


def nodelay_to(port: int, connected=lambda: None) -> None:  # noqa: ANN001 - called once connected
    """Set TCP_NODELAY on the first connection this process makes to ``port`` (pydevd's to the relay)."""
    original_connect = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        began = time.time()
        original_connect(self, address)
        if isinstance(address, tuple) and len(address) >= 2 and address[1] == port:
            STARTUP.setdefault("debugger import", began)
            connected()
            self.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socket.socket.connect = original_connect  # type: ignore[method-assign]

    socket.socket.connect = connect  # type: ignore[method-assign]


def main() -> None:
    settings = json.loads(os.environ.pop(BOOT_VARIABLE, "{}"))
    args = sys.argv[1:]
    if args[:2] == ["-X", "frozen_modules=off"]:
        args = args[2:]
    if settings.get("debugpy"):  # the relay lends one whose compiled parts load on this Python
        args[0] = settings["debugpy"]
    if settings.get("token"):
        args[1:1] = ["--adapter-access-token", settings["token"]]
    debugpy_dir = args[0]
    deferred = beside("deferred_imports")  # the standard modules debugpy imports but a launch never uses wait
    deferred.defer(AROUND_IMPORT)  # for their first use, until pydevd connects
    add_to_debugger(settings, debugpy_dir)
    for name in settings.get("unset", ()):
        os.environ.pop(name, None)
    nodelay_to(int(args[args.index("--connect") + 1].rpartition(":")[2]), deferred.stop_deferring)
    sys.argv[:] = args
    del sys.path[0]
    report_from_the_program(DEBUGPY_DIR[0])
    try:
        runpy.run_path(debugpy_dir, run_name="__main__")
    except SyntaxError as exc:  # the program did not compile: Python prints it as ever, the relay learns where
        tell_relay("relaySyntaxError", {"file": exc.filename, "line": exc.lineno, "offset": exc.offset,
                                        "text": exc.text, "message": exc.msg}, flush=True)
        raise
    except RecursionError as exc:
        beside("uncaught_recursion").stop_post_mortem(exc)
        raise
