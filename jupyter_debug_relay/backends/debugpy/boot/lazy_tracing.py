"""Feature ``lazy_tracing`` (Python 3.11): nothing traces until the code of a breakpoint runs.

On 3.11 pydevd traces every call of every thread through ``sys.settrace``; any trace function, even one that
returns at once, puts the interpreter in its slow tracing mode. Here pydevd's trace functions are taken but not
installed (``pydevd_tracing.SetTrace`` and ``set_trace_to_threads`` note them per thread), and a call to
``breakpoint_code_runs`` is put at the start of each code object that holds a breakpoint's line: as modules are
read (``on_code``: imports, ``-m``, the program's file, pytest's rewritten tests) and in the functions already
loaded when breakpoints change. That call turns pydevd's tracing on for its thread and hands pydevd the frame;
the thread drops tracing again when the frame that turned it on returns (after ``STAY_ON_AFTER`` times, a thread
that keeps calling such code keeps pydevd's tracing).

A stop (a breakpoint hit, a step, a pause, an exception) turns pydevd's full tracing on (``go_full``), as it
was, until a ``continue`` leaves no thread stopped or stepping (``go_lazy``): then threads drop tracing again,
except those running the code of a breakpoint's file, which keep it until they leave that code. What cannot be
made lazy keeps full tracing on while it lasts (function breakpoints, exception modes that look at caught
exceptions, plugin breakpoints) or for good: a breakpoint's line inside a generator or coroutine (whose resumes
skip the code's start), and code of a file holding breakpoints that runs without having passed here (an
``exec`` audit event tells). An exception that no code catches is stopped on from ``sys.excepthook`` and
``threading.excepthook``. A forked child leaves pydevd as it was (the boot then frees it, or pydevd follows it).
"""

import gc
import os
import sys
import threading
import types
from importlib.util import module_from_spec, spec_from_file_location

_spec = spec_from_file_location("_jupyter_debug_relay_boot_code311", os.path.join(os.path.dirname(__file__),
                                                                                  "code311.py"))
_code311 = module_from_spec(_spec)
_spec.loader.exec_module(_code311)
Unsafe, insert_call = _code311.Unsafe, _code311.insert_call

CALL_ONLY_AT_START = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
REAL_SETTRACE = sys.settrace
STATE: dict = {"full": False, "why": None, "db": None, "for_good": False,  # full: every thread traces now
               "forked": False}
HOT: dict = {}  # canonical file -> frozenset of its breakpoints' lines
HOT_NAMES: set = set()  # co_filename of code seen in a file of HOT
CANONICAL: dict = {}  # co_filename -> pydevd's canonical path
ORIGINAL: dict = {}  # patched code -> the code it was made from
OURS: set = set()  # module code that passed through on_code
LAST: dict = {}  # thread ident -> the trace function pydevd gave that thread
TURNED_ON: dict = {}  # thread ident -> how many times a breakpoint's code turned its tracing on
STAY_ON_AFTER = 1000  # past this, turning tracing on and off costs more than pydevd's tracing: it stays on
STAY_ON: set = set()  # threads traced by pydevd as without this module
ACTIVE: dict = {}  # ident of a thread tracing now -> the tracer of the frame whose return ends it
STOPPED = 2  # pydevd_constants.STATE_SUSPEND: a thread's state while it is stopped
SWITCH = threading.RLock()  # held while tracing goes full or lazy: a stop marked meanwhile is seen by either
MAY_BE_NAMED = None  # the boot's may_be_named(file, names): whether pydevd may name the file by one of the names
WATCHING_EXEC: list = []  # holds on_exec once it is an audit hook (watch_exec: at the first breakpoint's line)


def patch_tree(code: types.CodeType, lines: frozenset) -> types.CodeType:
    """``code`` (and the code nested in it) with the call put into each one holding one of ``lines``."""
    code = ORIGINAL.get(code, code)
    consts = tuple(patch_tree(c, lines) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    own = lines.intersection(line for _, _, line in code.co_lines() if line)
    if not own and all(a is b for a, b in zip(consts, code.co_consts, strict=True)):
        return code
    made = code.replace(co_consts=consts)
    if own:
        if code.co_flags & CALL_ONLY_AT_START:
            raise Unsafe(f"{code.co_name} resumes past its start")
        made = insert_call(made, breakpoint_code_runs)
    ORIGINAL[made] = code
    return made


def canonical(filename: str) -> str:
    found = CANONICAL.get(filename)
    if found is None:
        from pydevd_file_utils import canonical_normalized_path

        found = CANONICAL[filename] = canonical_normalized_path(filename)
    return found


def on_code(code: object) -> object:
    """A module's code as it is read: with the call where it holds a breakpoint's line."""
    if not HOT or STATE["for_good"] or not isinstance(code, types.CodeType):
        return code
    lines = HOT.get(canonical(code.co_filename))
    if lines is not None:
        HOT_NAMES.add(code.co_filename)
        try:
            code = patch_tree(code, lines)
        except Unsafe as why:
            go_full(f"breakpoint in {why}")
            return code
        OURS.add(code)
    return code


def on_exec(event: str, args: tuple) -> None:
    """Audit hook: code of a file holding breakpoints that runs without having passed ``on_code``."""
    if event == "exec" and HOT and not STATE["for_good"]:
        code = args[0]
        if isinstance(code, types.CodeType) and code not in OURS and code not in ORIGINAL:
            if canonical(code.co_filename) in HOT:
                go_full(f"code of {code.co_filename} read elsewhere")


def watch_exec() -> None:
    """Make ``on_exec`` an audit hook, once: from the first breakpoint's line on, before ``HOT`` holds it.

    Not at the start: a hook is called at every audited event, and on 3.11 each read of a frame's ``f_code`` or a
    traceback's ``tb_frame`` is one; pydevd's tracer reads them at each exception it looks at, so a program traced
    for exception breakpoints alone paid a call of the hook for nothing (5% more than raw debugpy in a loop that
    raises). An ``exec`` before the first breakpoint found ``HOT`` empty and was left be all the same."""
    if WATCHING_EXEC:
        return
    with SWITCH:
        if WATCHING_EXEC:
            return
        WATCHING_EXEC.append(on_exec)
        try:  # the program's own hooks are asked first: one may refuse (RuntimeError: the hook is not added)
            sys.audit("sys.addaudithook")
            sys.addaudithook(on_exec)
        except Exception:  # noqa: BLE001 - no way to see code read elsewhere: every call traced, as without this
            go_full("an audit hook of the program refuses the boot's")


def pydevd_threads() -> set:
    """The idents of pydevd's own threads, which are never traced."""
    return {t.ident for t in threading.enumerate()
            if getattr(t, "is_pydev_daemon_thread", False) or getattr(t, "pydev_do_not_trace", False)}


def outermost_hot(frame: object) -> object:
    """The outermost frame of a file holding breakpoints on the stack of ``frame``, or None."""
    outermost = None
    while frame is not None:
        if frame.f_code.co_filename in HOT_NAMES:
            outermost = frame
        frame = frame.f_back
    return outermost


class UntilReturn:
    """The frame tracer of the outermost frame that turned tracing on: pydevd's, and at its return, tracing off
    (``left``: put on the frame below it, tracing goes off at that frame's first event, once the code was left)."""

    __slots__ = ("ident", "left", "local", "natively")

    def __init__(self, local: object, ident: int, natively: bool, left: bool = False) -> None:
        self.local, self.ident, self.natively, self.left = local, ident, natively, left

    def trace(self, trace: object) -> None:
        """Install ``trace`` for the thread: pydevd's C trampoline for a long frame (one slow call to set, faster
        events), else ``sys.settrace``."""
        if self.natively:
            trace_natively(self.ident, trace)
        else:
            REAL_SETTRACE(trace)

    def __call__(self, frame, event, arg):  # noqa: ANN001, ANN204 - a frame tracer's signature
        local = self.local
        if local is not None:
            local = local(frame, event, arg)
            self.local = local if callable(local) else None
        if (self.left or event == "return") and not STATE["full"] and ACTIVE.get(self.ident) is self:
            del ACTIVE[self.ident]
            if stepping(self.ident):  # a step began while no stop had turned full tracing on: it needs tracing
                go_full("a step", for_good=False)
            else:
                REAL_SETTRACE(None)
        return self


def drop_tracing(frame, event, arg):  # noqa: ANN001, ANN201 - a trace function's signature
    """The trace function ``go_lazy`` gives another thread: at its next call, that thread stops tracing."""
    ident = threading.get_ident()
    if stepping(ident):
        go_full("a step", for_good=False)
    if STATE["full"] or ident in ACTIVE:
        inner = LAST.get(ident) or debugger().trace_dispatch
        REAL_SETTRACE(inner)
        return inner(frame, event, arg)
    REAL_SETTRACE(None)
    return None


def trace_natively(ident: int, trace: object) -> None:
    """Install pydevd's trace function for thread ``ident`` (its own C trampoline when it can)."""
    with SWITCH:  # one at a time: a thread tracing all threads must not reach the helper thread of another's
        done = ORIGINALS["set_trace_to_threads"](trace, thread_idents=[ident], create_dummy_thread=False)
    if done != 0:
        if ident != threading.get_ident():
            raise RuntimeError("no tracing for another thread")
        REAL_SETTRACE(trace)


def breakpoint_code_runs() -> None:
    """Put at the start of code holding a breakpoint: turn pydevd's tracing on for this thread and frame."""
    if sys.gettrace() is not None or STATE["forked"]:
        return
    try:
        frame = sys._getframe(1)
        db = debugger()
        if db is None:
            return
        ident = threading.get_ident()
        thread = db.threading_active.get(ident)
        if getattr(thread, "is_pydev_daemon_thread", False) or getattr(thread, "pydev_do_not_trace", False):
            return
        inner = LAST.get(ident) or db.trace_dispatch
        if STATE["full"]:  # go_full is turning tracing on thread by thread: this one may come after this frame began
            trace_from_here(frame, inner, REAL_SETTRACE)
            return
        turned_on = TURNED_ON[ident] = TURNED_ON.get(ident, 0) + 1
        if turned_on > STAY_ON_AFTER:  # a hot function: pydevd's own tracing for this thread, as without this module
            STAY_ON.add(ident)
            trace_from_here(frame, inner, lambda trace: trace_natively(ident, trace))
            return
        exit_watch = ACTIVE[ident] = UntilReturn(None, ident, frame.f_code.co_name == "<module>")
        exit_watch.trace(inner)
        exit_watch.local = inner(frame, "call", None)
        frame.f_trace = exit_watch
    except Exception:  # noqa: BLE001 - the program's call must not fail for the debugger's sake
        go_full("tracing could not start lazily")


def trace_from_here(frame: object, trace: object, install: object) -> None:
    """pydevd's tracing for this thread (``install``) from ``frame`` on, for as long as pydevd keeps it."""
    install(trace)
    local = trace(frame, "call", None)
    if local is not None:
        frame.f_trace = local


def debugger() -> object:
    """pydevd's debugger, or None before it exists."""
    if STATE["db"] is None and "pydevd" in sys.modules:
        STATE["db"] = sys.modules["pydevd"].get_global_debugger()
    return STATE["db"]


def go_full(why: str, for_good: bool = True) -> None:
    """Turn pydevd's tracing on in every thread and frame, as without this module (until ``go_lazy``, unless
    ``for_good``)."""
    with SWITCH:
        if for_good and not STATE["for_good"]:
            STATE["for_good"], STATE["why"] = True, why
        if not STATE["full"]:
            _go_full(why)


def _go_full(why: str) -> None:
    STATE["full"] = True
    STATE["why"] = STATE["why"] if STATE["for_good"] else why
    db = debugger()
    if db is None:
        return
    ACTIVE.clear()
    tracing = sys.modules["pydevd_tracing"]
    skip = pydevd_threads()
    idents = [ident for ident in sys._current_frames() if ident not in skip]
    threading.settrace(db.trace_dispatch)
    if idents:
        tracing.set_trace_to_threads(db.trace_dispatch, thread_idents=idents)
    if threading.get_ident() not in skip:
        tracing.SetTrace(LAST.get(threading.get_ident()) or db.trace_dispatch)
    db.set_tracing_for_untraced_contexts()


def stepping(ident: int) -> bool:
    """Whether thread ``ident`` is stopped or has a step under way."""
    info = getattr(threading._active.get(ident), "additional_info", None)
    return info is not None and (info.pydev_step_cmd != -1 or info.pydev_state == STOPPED)


def resumed(db: object) -> None:
    """A stopped thread goes on: back to lazy tracing when no thread is stopped or stepping any more."""
    with SWITCH:
        if not STATE["full"] or STATE["for_good"] or needs_full(db):
            return
        if not any(stepping(ident) for ident in list(threading._active)):
            go_lazy(db)


def go_lazy(db: object) -> None:
    """Every thread drops tracing, except those running code of a breakpoint's file: they drop it when they leave."""
    STATE["full"], STATE["why"] = False, None
    threading.settrace(None)
    ACTIVE.clear()
    skip = pydevd_threads() | STAY_ON
    here = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        outermost = None if ident in skip else outermost_hot(frame)
        if outermost is not None:
            watch_until_left(ident, outermost)
        elif ident in skip:
            continue
        elif ident == here:
            REAL_SETTRACE(None)
        else:
            ORIGINALS["set_trace_to_threads"](drop_tracing, thread_idents=[ident], create_dummy_thread=False)


def watch_until_left(ident: int, outermost: object) -> None:
    """Thread ``ident`` drops tracing when it leaves ``outermost``, its outermost frame of a file holding breakpoints.
    The watch goes on the frame below: the thread may be inside the tracer of ``outermost`` itself, which sets that
    frame's tracer as it returns."""
    below = outermost.f_back if outermost.f_back is not None else outermost
    local = below.f_trace
    while isinstance(local, UntilReturn):  # a watch of an earlier continue: one watch, not a chain that grows
        local = local.local
    exit_watch = ACTIVE[ident] = UntilReturn(local, ident, True, left=below is not outermost)
    below.f_trace = exit_watch


def needs_full(db: object) -> object:
    """Why pydevd's breakpoints need every call traced, or None."""
    if db.function_breakpoint_name_to_breakpoint:
        return "function breakpoints"
    if db.break_on_caught_exceptions or db.break_on_user_uncaught_exceptions:
        return "exception breakpoints on raised exceptions"
    if db.has_plugin_line_breaks or db.has_plugin_exception_breaks:
        return "plugin breakpoints"
    return None


def refresh(db: object) -> None:
    """After breakpoints changed: patch the loaded functions of changed files, trace threads running them."""
    STATE["db"] = db
    why = needs_full(db)
    if why:
        go_full(why, for_good=False)
    if STATE["for_good"]:
        return
    new = {path: frozenset(lines) for path, lines in tuple(db.breakpoints.items()) if lines}  # a copy, as above
    if new:
        watch_exec()
        if STATE["for_good"]:
            return
    changed = {path for path in set(new) | set(HOT) if new.get(path) != HOT.get(path)}
    HOT.clear()
    HOT.update(new)
    # a file that holds no breakpoint any more: its running frames no longer keep their thread traced
    HOT_NAMES.intersection_update([name for name in HOT_NAMES if canonical(name) in HOT])
    if not changed:
        resumed(db)
        return
    if gc.get_freeze_count():  # the program's start froze the functions there were (_collector.py): list them too
        gc.unfreeze()
    names = {os.path.basename(path).lower() for path in changed}
    in_changed: dict = {}  # co_filename -> whether it is a changed file's (pydevd's path worked out only if it may be)
    try:
        for function in [f for f in gc.get_objects() if type(f) is types.FunctionType]:
            filename = function.__code__.co_filename
            if filename not in in_changed:
                in_changed[filename] = ((filename in CANONICAL or MAY_BE_NAMED(filename, names))
                                        and canonical(filename) in changed)
            if in_changed[filename]:
                made = patch_tree(function.__code__, new.get(canonical(filename), frozenset()))
                if made is not function.__code__:
                    function.__code__ = made
        for name in list(CANONICAL):
            if CANONICAL[name] in new:
                HOT_NAMES.add(name)
    except Unsafe as why:
        go_full(f"breakpoint in {why}")
        return
    if STATE["full"]:
        resumed(db)
    else:
        trace_running(db)


def trace_running(db: object) -> None:
    """Turn tracing on in each thread whose stack holds a frame of a file holding breakpoints."""
    skip = pydevd_threads()
    for ident, frame in sys._current_frames().items():
        outermost = None if ident in skip or ident in ACTIVE else outermost_hot(frame)
        if outermost is None:
            continue
        db.set_trace_for_frame_and_parents(ident, frame)
        watch_until_left(ident, outermost)
        ACTIVE[ident].trace(LAST.get(ident) or db.trace_dispatch)


ORIGINALS: dict = {}
STOP_UNCAUGHT: list = []  # the boot's way to have pydevd stop on an uncaught exception (uncaught_recursion.py)


def take_tracing(change, tracing: object) -> None:  # noqa: ANN001 - changes.Changes
    """pydevd_tracing: its trace functions are noted per thread, installed only when tracing is on."""
    set_trace, to_threads = tracing.SetTrace, tracing.set_trace_to_threads
    ORIGINALS["set_trace_to_threads"] = to_threads

    def SetTrace(tracing_func):  # noqa: N802, ANN001, ANN202 - pydevd's name and signature
        ident = threading.get_ident()
        if tracing_func is None:
            ACTIVE.pop(ident, None)
        else:
            LAST[ident] = tracing_func
        if STATE["full"] or tracing_func is None or ident in STAY_ON:
            return set_trace(tracing_func)
        tracing._last_tracing_func_thread_local.tracing_func = tracing_func
        if ident in ACTIVE:
            ACTIVE[ident].trace(tracing_func)
        return None

    def set_trace_to_threads(tracing_func, thread_idents=None, create_dummy_thread=True):  # noqa: ANN001, ANN202
        if STATE["full"]:
            with SWITCH:
                return to_threads(tracing_func, thread_idents=thread_idents, create_dummy_thread=create_dummy_thread)
        for ident in thread_idents if thread_idents is not None else list(sys._current_frames()):
            LAST[ident] = tracing_func
        return 0

    change.replace(tracing, "SetTrace", SetTrace)
    change.replace(tracing, "set_trace_to_threads", set_trace_to_threads)


def take_debugger(change, pydevd: object) -> None:  # noqa: ANN001 - changes.Changes
    """pydevd: breakpoints changed, a stop, the program's file read."""
    changed, suspend, wait = pydevd.PyDB.on_breakpoints_changed, pydevd.PyDB.set_suspend, pydevd.PyDB.do_wait_suspend
    patch_threads = pydevd.PyDB.patch_threads

    def threads_start_untraced(self):  # noqa: ANN001, ANN202 - pydevd's signature
        result = patch_threads(self)
        if not STATE["full"]:
            threading.settrace(None)  # pydevd's trace function for every new thread: the thread notes it instead
        return result

    def on_breakpoints_changed(self, removed=False):  # noqa: ANN001, ANN202 - pydevd's signature
        result = changed(self, removed)
        refresh(self)
        return result

    def set_suspend(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        STATE["db"] = self
        try:
            return suspend(self, *args, **kwargs)
        finally:  # after the thread is marked stopped: a continue of other threads going lazy meanwhile sees it
            go_full("a stop", for_good=False)

    def do_wait_suspend(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        result = wait(self, *args, **kwargs)
        resumed(self)
        return result

    settrace = pydevd.settrace

    def settrace_fully(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - pydevd's signature
        if kwargs.get("suspend", True):  # breakpoint() in the program: a step to its caller's next line, no set_suspend
            go_full("breakpoint()", for_good=False)
        return settrace(*args, **kwargs)

    api = change.module("_pydevd_bundle.pydevd_api").PyDevdAPI
    entry = api.stop_on_entry

    def stop_on_entry(self):  # noqa: ANN001, ANN202 - pydevd's signature
        go_full("a stop on entry", for_good=False)
        return entry(self)

    runner = change.module("_pydevd_bundle.pydevd_runpy")
    from_file = runner._get_code_from_file

    def _get_code_from_file(run_name, fname):  # noqa: ANN001, ANN202 - pydevd's runpy
        code, fname = from_file(run_name, fname)
        return on_code(code), fname

    change.replace(api, "stop_on_entry", stop_on_entry)
    change.replace(pydevd.PyDB, "on_breakpoints_changed", on_breakpoints_changed)
    change.replace(pydevd.PyDB, "patch_threads", threads_start_untraced)
    change.replace(pydevd.PyDB, "set_suspend", set_suspend)
    change.replace(pydevd.PyDB, "do_wait_suspend", do_wait_suspend)
    change.replace(pydevd, "settrace", settrace_fully)
    change.replace(runner, "_get_code_from_file", _get_code_from_file)


def stop_uncaught(excinfo: tuple) -> None:
    """Stop on an exception no code caught while tracing was lazy (pydevd's full tracing stops on its own)."""
    db = debugger()
    if db is None or STATE["full"]:
        return
    info = db.set_additional_thread_info(threading.current_thread())
    if not info.suspended_at_unhandled:
        STOP_UNCAUGHT[0](db, excinfo)


def take_excepthooks(boot: object) -> None:
    """``sys.excepthook`` and ``threading.excepthook`` stop on the exception first (a stop that fails is told to the
    relay; Python's report of the exception follows all the same)."""
    python_hook, thread_hook = sys.excepthook, threading.excepthook

    def stop(excinfo: tuple) -> None:
        try:
            stop_uncaught(excinfo)
        except Exception as error:  # noqa: BLE001 - the program's own report of its exception must come
            boot.could_not("stop on the uncaught exception", error)

    def excepthook(kind, value, tb):  # noqa: ANN001, ANN202
        start = tb
        while start is not None and start.tb_next is not None and boot.hidden_from_the_program(
                start.tb_frame.f_code.co_filename):
            start = start.tb_next
        stop((kind, value, start))
        python_hook(kind, value, tb)

    def threading_excepthook(args):  # noqa: ANN001, ANN202
        stop((args.exc_type, args.exc_value, args.exc_traceback))
        thread_hook(args)

    sys.excepthook, threading.excepthook = excepthook, threading_excepthook


def in_forked_child() -> None:
    """A forked child leaves pydevd as it was: the boot frees it, or pydevd follows the child with its own tracing."""
    global SWITCH
    SWITCH = threading.RLock()  # another thread of the parent may have held it
    STATE.update(full=True, for_good=True, why="a forked child", forked=True)


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    """pydevd's tracing taken (``take_tracing``, ``take_debugger``), then what cannot be undone: the code hook, the
    fork handler and the exception hooks (the audit hook waits for the first breakpoint's line: ``watch_exec``)."""
    global MAY_BE_NAMED
    MAY_BE_NAMED = boot.may_be_named
    STOP_UNCAUGHT.append(boot.beside("uncaught_recursion").stop_on_uncaught)
    take_tracing(change, change.module("pydevd_tracing"))
    take_debugger(change, change.module("pydevd"))
    boot.CODE_HOOKS.append(on_code)
    os.register_at_fork(after_in_child=in_forked_child)
    take_excepthooks(boot)
