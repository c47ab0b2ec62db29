"""Runs debugpy in the debuggee with TCP_NODELAY on its socket to the adapter, and its secret off the command line.

debugpy's server writes each message as two small writes; without
TCP_NODELAY the second waits for the adapter's delayed ACK (40 ms, debugpy
issue #2054). This file stands in front of debugpy's own command line
(``python _boot_script.py DEBUGPY_DIR --connect HOST:PORT ...`` runs it), sets the
option on that one connection only, then hands over to debugpy exactly as
``python DEBUGPY_DIR ...`` would: no sitecustomize, no PYTHONPATH, and
``sys.path`` as debugpy leaves it.

The relay passes its settings in the environment variable ``JUPYTER_DEBUG_RELAY_BOOT``
(JSON), never on the command line, which every local user can read:
``token`` is the secret pydevd must answer ``pydevdAuthorize`` with, handed to
debugpy as ``--adapter-access-token`` inside this process only; ``unset`` names
variables the relay added for its own sake. Both are removed from ``os.environ``
before the program runs, so it and its children see the environment of a plain run.
``debugpy`` names the debugpy folder to run instead of the one on the command line (the relay lends one
built for this Python). ``free_children`` makes a forked child run free of the debugger (its breakpoints would
wait for a client it cannot reach, hanging the program) and has the parent announce
it to the relay with a ``relayForked`` event on pydevd's connection. A ``SyntaxError``
that ends the program (a ``-m`` module or an imported file that does not compile) is
told to the relay as a ``relaySyntaxError`` event (file, line, offset, text, message)
before Python prints it and exits. An uncaught ``RecursionError`` that killed pydevd's
tracing is stopped on after the fact (``stop_post_mortem``).

As each module's code is read (``SourceLoader.get_code``: imports and ``-m``), the boot
notes its file's modification time (``LOADED``, which the relay reads to tell a file
changed since it was loaded) and binds the breakpoints pydevd received for that file
while it did not exist yet, before its first line runs, telling the relay each one is
verified with a ``breakpoint`` event. (An audit hook would see more ways to run code,
but pydevd calls ``sys._getframe`` in its trace function, an audited call: the hook
would run, traced, on every traced call, and doubled the time to start under
``just_my_code=False``.)

A value whose text pydevd has been making for ``SLOW_VALUE`` seconds (a slow
``__repr__``, a property that blocks) is named to the relay with a ``relaySlowValue``
event (name, expression), so a variables or evaluate request that runs out of time
can say which value held it. A watcher thread of pydevd's kind looks four times a
second while values are being made and sleeps otherwise; each value costs a few
assignments. The boot registers itself as ``_jupyter_debug_relay_boot`` in ``sys.modules``
so the relay can read ``LOADED``.


The start is made quick without changing what the program sees: debugpy's description of the
environment (every installed distribution's metadata, read twice) is skipped unless a log takes
it, and pydevd's 0.1 s pause after starting its threads is skipped; the boot tells the relay when
the interpreter started and when debugpy connected (``relayStartup``). ``python -m`` gets the full
working directory first on ``sys.path``, as a plain run does. A paused thread's wake-up event stays
set while commands wait for it (``QueueEvent``), so commands posted together are answered together.
When the relay asks (``stack_with_stops``), a stopping thread sends its top frame (``relayStack``) just
before pydevd tells the stop: the relay shows the stop without a ``stackTrace`` round trip.
What the boot adds but cannot (a hook whose pydevd module changed, a pending breakpoint that will not bind)
leaves the debugger as it is, and is told to the relay (``relayBootWarning``: what, and the error), which
logs it and says it in the session's output.

An exception the program does not catch is reported as ``python program.py`` would
report it: ``sys.excepthook`` is given its traceback from the program's own first frame
on, without this file's, runpy's or debugpy's (a hook the program installs itself gets
them all). The exception still leaves this file's frame, where pydevd stops on it.
"""

import json
import os
import runpy
import socket
import sys
import time

BOOT_VARIABLE = "JUPYTER_DEBUG_RELAY_BOOT"  # the relay's backends/debugpy/backend.py sets it
BOOT_MODULE = "_jupyter_debug_relay_boot"  # this module's name in sys.modules, for the relay's evaluate
LOADED: dict = {}  # file -> its st_mtime_ns when its code first ran (None: not a file)
SLOW_VALUE = 1.0  # seconds of making one value's text before the relay is told its name
RESOLVING: dict = {"variable": None, "since": 0.0, "told": None}  # the value whose text pydevd is making
STARTUP = {"interpreter start": time.time()}  # phase -> when it ended (wall clock, the relay's too)
KEEP_FROM = 16_000  # bytes of a file whose code lines are kept between launches (about 10 ms to compile)
TRACE_ALL = "JUPYTER_DEBUG_RELAY_TRACE_ALL"  # in a 3.11 target's environment: every call traced from the start
CODE_HOOKS: list = []  # each gets a module's code as it is read, and returns the code to run
AROUND_IMPORT: dict = {}  # module -> what runs its code, given the function that runs it


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


def tell_relay(name: str, body: dict, flush: bool = False) -> bool:
    """Send the relay an event on pydevd's own connection; ``flush`` waits (up to 2 s) until it is written.
    False when pydevd has no connection yet."""
    pydevd = sys.modules.get("pydevd")
    debugger = pydevd.get_global_debugger() if pydevd is not None else None
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


UNTOLD: list = []  # what the boot could not do, kept until pydevd's connection is there to tell it


def could_not(what: str, error: BaseException) -> None:
    """Tell the relay (``relayBootWarning``: what, error) that the boot could not do ``what``; the debugger works
    on without it. Told at once when pydevd is connected, else once it is."""
    UNTOLD.append({"what": what, "error": f"{type(error).__name__}: {error}"})
    tell_untold()


def tell_untold() -> None:
    while UNTOLD and tell_relay("relayBootWarning", UNTOLD[0]):
        UNTOLD.pop(0)


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


def hidden(filename: str, debugpy_dir: str) -> bool:
    """Whether a frame belongs to the machinery that starts the program (the boot's files, runpy, debugpy)."""
    path = os.path.normpath(filename)
    return (path in (os.path.normpath(runpy.__file__), "<frozen runpy>")
            or path.startswith((debugpy_dir + os.sep, os.path.dirname(os.path.normpath(__file__)) + os.sep)))


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


def named_by(received: dict, filename: str) -> bool:
    """Whether a breakpoint pydevd received may be in ``filename``."""
    return may_be_named(filename, {os.path.basename(their_file).lower() for their_file, _ in received.values()})


def bind_pending(filename: str) -> None:
    """Add the breakpoints pydevd refused for ``filename`` while it did not exist, now that its code runs."""
    get_debugger = getattr(sys.modules.get("pydevd"), "get_global_debugger", None)  # None while pydevd loads
    received = getattr(get_debugger() if get_debugger else None, "api_received_breakpoints", None)
    if not received or not named_by(received, filename):
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


def stop_post_mortem(exc: BaseException) -> None:
    """Stop on an uncaught exception that pydevd could not see: at the recursion limit, its trace function
    raised RecursionError itself, and Python turns tracing off for a thread whose trace function raises.
    The stop is pydevd's own post-mortem one (its uncaught-exception filters apply), on the deepest frame
    of the program's traceback."""
    get_debugger = getattr(sys.modules.get("pydevd"), "get_global_debugger", None)
    debugger = get_debugger() if get_debugger else None
    monitoring = getattr(sys, "monitoring", None)  # 3.12+: pydevd's tracer there outlives the recursion limit
    if (debugger is None or sys.gettrace() is not None  # tracing alive: pydevd saw the exception itself
            or (monitoring is not None and monitoring.get_tool(monitoring.DEBUGGER_ID) == "pydevd")):
        return
    debugger.trigger_exception_handler((type(exc), exc, exc.__traceback__))


def watch_slow_values(module) -> None:  # noqa: ANN001 - pydevd's pydevd_suspended_frames
    """Note which value pydevd is making the text of, and since when; a watcher names it once it is slow."""
    from _pydev_bundle._pydev_saved_modules import ThreadingEvent
    from _pydevd_bundle.pydevd_daemon_thread import PyDBDaemonThread

    class SlowValueWatch(PyDBDaemonThread):
        """A thread of pydevd's kind (hidden from the program's threads, never traced) that names slow values."""

        def __init__(self, py_db) -> None:  # noqa: ANN001
            super().__init__(py_db)
            self.name = "pydevd.relay.SlowValueWatch"
            self.wake = ThreadingEvent()

        def _on_run(self) -> None:
            while not self._kill_received:
                self.wake.wait()
                variable, since = RESOLVING["variable"], RESOLVING["since"]
                if variable is None:
                    self.wake.clear()
                    continue  # a value begun since the clear is seen on the next round
                left = since + SLOW_VALUE - time.monotonic()
                if left <= 0 and RESOLVING["told"] is not variable:
                    RESOLVING["told"] = variable
                    tell_relay("relaySlowValue", {"name": str(getattr(variable, "name", "")),
                                                  "expression": getattr(variable, "evaluate_name", None)})
                time.sleep(min(max(left, 0.05), 0.25))

    abstract = module._AbstractVariable
    describe = abstract.get_var_data
    watch: list = []

    def get_var_data(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - pydevd's own signature
        RESOLVING["variable"], RESOLVING["since"] = self, time.monotonic()
        if not watch and getattr(self, "py_db", None) is not None:
            watch.append(SlowValueWatch(self.py_db))
            watch[0].start()
        if watch and not watch[0].wake.is_set():
            watch[0].wake.set()
        try:
            return describe(self, *args, **kwargs)
        finally:
            RESOLVING["variable"] = None

    abstract.get_var_data = get_var_data


def describe_only_when_logged(log) -> None:  # noqa: ANN001 - debugpy's common/log.py
    """debugpy describes the environment (every installed distribution's metadata, read twice: 0.5 s in a venv
    of 150 packages) and formats an exception's traceback and stack (a program ending by ``sys.exit``, as pytest
    does: 5-10 ms) before it knows whether a log will take them; each is made only when a log takes its level."""
    describe, exception = log.describe_environment, log._exception

    def describe_environment(header: str) -> None:
        if "info" in log._levels:
            describe(header)

    def _exception(*args, **kwargs) -> None:  # noqa: ANN002, ANN003 - debugpy's signature
        level = kwargs.get("level", "error")
        if level == "error" or level in log._levels:  # what log.write_format writes
            exception(*args, **kwargs)

    log.describe_environment, log._exception = describe_environment, _exception


def report_startup(pydevd) -> None:  # noqa: ANN001 - pydevd.py
    """Tell the relay when this process's phases of the start ended, once pydevd has its configuration."""
    configured = pydevd.PyDB.on_configuration_done

    def on_configuration_done(self):  # noqa: ANN001, ANN202 - pydevd's signature
        if STARTUP:
            tell_relay("relayStartup", dict(STARTUP))
            STARTUP.clear()
        tell_untold()
        return configured(self)

    pydevd.PyDB.on_configuration_done = on_configuration_done


class QueueEvent:
    """A suspended thread's wake-up event that stays set while commands wait in its queue.

    pydevd's suspended thread takes one command off its queue, then waits on the event and clears it: two
    commands posted together (an evaluate and a stack, twenty evaluates from twenty clients) set it once,
    so the second waited for the 0.2 s timeout, and each one after it 0.2 s more.
    """

    __slots__ = ("event", "queue")

    def __init__(self, event, queue) -> None:  # noqa: ANN001 - pydevd's threading.Event and queue.Queue
        self.event, self.queue = event, queue

    def set(self) -> None:
        self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()

    def wait(self, timeout=None) -> bool:  # noqa: ANN001 - threading.Event.wait
        return self.event.wait(timeout)

    def clear(self) -> None:
        self.event.clear()
        if not self.queue.empty():
            self.event.set()


def wake_for_every_command(pydevd) -> None:  # noqa: ANN001 - pydevd.py
    """Hand pydevd's suspended threads events that do not lose a wake-up (``QueueEvent``)."""
    queue_and_event = pydevd.PyDB.get_internal_queue_and_event

    def get_internal_queue_and_event(self, thread_id):  # noqa: ANN001, ANN202 - pydevd's signature
        queue, event = queue_and_event(self, thread_id)
        return queue, QueueEvent(event, queue)

    pydevd.PyDB.get_internal_queue_and_event = get_internal_queue_and_event


def adjust_pydevd(pydevd) -> None:  # noqa: ANN001 - pydevd.py
    beside("_pydevd_waits").shorten(pydevd)
    report_startup(pydevd)
    wake_for_every_command(pydevd)


def stack_with_every_stop(factory) -> None:  # noqa: ANN001 - pydevd's pydevd_net_command_factory_json
    """Once a stopped thread's frames are tracked, send its top frame (``relayStack``, the body of a ``stackTrace``
    answer for one level, plus ``threadId``): the relay shows a stop without asking for it, a round trip less."""
    from _pydevd_bundle._debug_adapter.pydevd_base_schema import BaseSchema
    from _pydevd_bundle.pydevd_comm_constants import CMD_PROCESS_EVENT
    from _pydevd_bundle.pydevd_net_command import NULL_NET_COMMAND, NetCommand

    factory_class = factory.NetCommandFactoryJson
    per_thread_message = factory_class.make_thread_suspend_message

    def make_thread_suspend_message(self, py_db, thread_id, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        message = per_thread_message(self, py_db, thread_id, *args, **kwargs)
        if message is not NULL_NET_COMMAND:  # pydevd sends a stop per thread itself (not the case under DAP)
            return message
        try:
            stack = self.make_get_thread_stack_message(py_db, 0, thread_id, None, None, must_be_suspended=True,
                                                       levels=1)
            body = {**stack.as_dict["body"], "threadId": BaseSchema._translate_id_to_dap(thread_id)}
        except Exception:  # the stop goes on without it: the relay then asks for the stack
            return message
        return NetCommand(CMD_PROCESS_EVENT, 0, {"type": "event", "event": "relayStack", "body": body}, is_json=True)

    factory_class.make_thread_suspend_message = make_thread_suspend_message


def module_path_as_python_sets_it(runner) -> None:  # noqa: ANN001 - pydevd's copy of runpy, which debugpy uses
    """``python -m`` puts the working directory's full path first on ``sys.path``; debugpy puts ``""`` (which
    would follow a later ``chdir``). The module runs with the full path, as in a plain run."""
    run_module_as_main = runner._run_module_as_main

    def run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - runpy's own signature
        runner._run_module_as_main = run_module_as_main
        if sys.path and sys.path[0] == "":
            sys.path[0] = os.getcwd()
        return run_module_as_main(*args, **kwargs)

    runner._run_module_as_main = run


def adjust_runpy(runner) -> None:  # noqa: ANN001 - pydevd's copy of runpy
    module_path_as_python_sets_it(runner)
    beside("_collector").freeze_as_the_program_starts(runner)


def keep_code_lines(api) -> None:  # noqa: ANN001 - pydevd's pydevd_api
    """pydevd compiles a breakpoint's whole file to check its line, at every launch: ``_code_lines.py`` keeps the
    answer between launches (loaded at the first breakpoint)."""
    compute = api._get_code_lines

    def _get_code_lines(code):  # noqa: ANN001, ANN202 - pydevd's signature: a code object or a file's path
        try:
            big = isinstance(code, str) and os.path.getsize(code) >= KEEP_FROM
        except OSError:
            big = False
        return beside("_code_lines").lines_of(code, compute) if big else compute(code)

    api._get_code_lines = _get_code_lines


AFTER_IMPORT = {  # module -> what to add to it
    "_pydevd_bundle.pydevd_api": keep_code_lines,
    "_pydevd_bundle.pydevd_suspended_frames": watch_slow_values,
    "debugpy.common.log": describe_only_when_logged,
    "pydevd": adjust_pydevd,
    "_pydevd_bundle.pydevd_runpy": adjust_runpy,
}


def watch_loads() -> None:
    """As a module's code is read from its file: note the file's mtime, bind its pending breakpoints; once a
    module of ``AFTER_IMPORT`` has run, add to it."""
    from importlib._bootstrap_external import SourceLoader, _LoaderBasics

    read, run = SourceLoader.get_code, _LoaderBasics.exec_module

    def exec_module(self, module):  # noqa: ANN001, ANN202 - importlib's own signature
        AROUND_IMPORT.pop(module.__name__, lambda run_it: run_it())(lambda: run(self, module))
        then = AFTER_IMPORT.pop(module.__name__, None)
        if then is not None:
            try:
                then(module)
            except Exception as error:  # the debugger works on without what the boot adds; the relay is told
                could_not(f"add {then.__name__} to {module.__name__}", error)

    def get_code(self, fullname):  # noqa: ANN001, ANN202 - importlib's own signature
        code = read(self, fullname)
        filename = getattr(code, "co_filename", None)
        if isinstance(filename, str) and filename not in LOADED:
            try:
                LOADED[filename] = os.stat(filename).st_mtime_ns
            except OSError:
                return code  # no file on disk (a loader of its own): nothing to note, no breakpoint to bind
            try:
                bind_pending(filename)
            except Exception as error:  # the import itself must not fail for the debugger's sake; the relay is told
                could_not(f"bind the pending breakpoints of {filename}", error)
        for on_code in CODE_HOOKS:
            code = on_code(code)
        return code

    SourceLoader.get_code = get_code
    _LoaderBasics.exec_module = exec_module


def beside(name: str):  # noqa: ANN201 - a module object
    """The module ``name``.py from beside this file, loaded once."""
    from importlib.util import module_from_spec, spec_from_file_location

    full_name = f"{BOOT_MODULE}_{name}"
    if full_name not in sys.modules:
        spec = spec_from_file_location(full_name, os.path.join(os.path.dirname(__file__), f"{name}.py"))
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[full_name] = module
    return sys.modules[full_name]


def monitoring_additions() -> dict:
    """Python 3.12+: what ``_monitoring_boot.py``, beside this file, adds to pydevd's ``sys.monitoring`` tracer."""
    tracer = beside("_monitoring_boot")
    tracer.MAY_BE_NAMED = may_be_named
    return tracer.AFTER_IMPORT


def add_to_debugger(settings: dict, debugpy_dir: str) -> None:
    """What the boot adds to pydevd as its modules load: a launch's, and a process's attached by pid."""
    sys.modules[BOOT_MODULE] = sys.modules[__name__]
    if sys.version_info >= (3, 12):
        AFTER_IMPORT.update(monitoring_additions())
    watch_loads()
    if sys.version_info[:2] == (3, 11) and not os.environ.get(TRACE_ALL):  # untraced until a breakpoint runs
        beside("_lazy_trace311").install(AFTER_IMPORT, CODE_HOOKS,
                                         lambda name: hidden(name, os.path.normpath(os.path.abspath(debugpy_dir))),
                                         may_be_named)
    if settings.get("stack_with_stops"):
        AFTER_IMPORT["_pydevd_bundle.pydevd_net_command_factory_json"] = stack_with_every_stop
    if settings.get("free_children"):
        free_children()


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
    deferred = beside("_deferred_imports")  # the standard modules debugpy imports but a launch never uses wait
    deferred.defer(AROUND_IMPORT)  # for their first use, until pydevd connects
    add_to_debugger(settings, debugpy_dir)
    for name in settings.get("unset", ()):
        os.environ.pop(name, None)
    nodelay_to(int(args[args.index("--connect") + 1].rpartition(":")[2]), deferred.stop_deferring)
    sys.argv[:] = args
    del sys.path[0]
    report_from_the_program(os.path.normpath(os.path.abspath(debugpy_dir)))
    try:
        runpy.run_path(debugpy_dir, run_name="__main__")
    except SyntaxError as exc:  # the program did not compile: Python prints it as ever, the relay learns where
        tell_relay("relaySyntaxError", {"file": exc.filename, "line": exc.lineno, "offset": exc.offset,
                                        "text": exc.text, "message": exc.msg}, flush=True)
        raise
    except RecursionError as exc:
        stop_post_mortem(exc)
        raise
