"""Feature ``compiled_breakpoints``: a breakpoint's condition, hit count and log message run as an ``if`` in the
program's own code.

pydevd checks such a breakpoint by calling its tracer at every pass of the line and evaluating the condition there
(11-16 us a pass: a loop of one second takes half a minute). Here, as a file's code is read (an import, ``-m``, the
program's file), each of its breakpoints that has a condition, a hit count (``== N``, ``>= N``, ``% N``, ...) or a
log message and sits on the first line of a simple statement or an ``if`` is compiled into the code before that
statement (``guards.py``), and taken out of pydevd's table of lines (``PyDB.breakpoints``), so pydevd never traces
that line; the guard calls back only when its test is true: ``hit`` stops the thread there as pydevd's breakpoint
would, ``log`` prints the message, ``failed`` reports a condition's error (and stops, unless asked not to) as pydevd
does. A guard belongs to one breakpoint as it was compiled (its condition, hit count and message): once that
breakpoint is changed or removed, its guard is off at once and pydevd checks the breakpoint as it is now.
Breakpoints of code read another way, or set after the file's code was read, are pydevd's, as without this module.
A step that ends at the start of a guarded line stops there once, as on a line of pydevd's breakpoint: as the thread
goes on, that pass of the guard is not tested (``Passing``), so it does not stop again at the same line.
"""

import ast
import itertools
import os
import sys
import threading
import types
from importlib.util import decode_source

NAMESPACE = types.SimpleNamespace(on=[], count=[])  # the guards' builtin; the functions are added by apply
SLOTS: list = []  # slot -> (canonical file, line, the breakpoint's parts the guard was compiled from)
BREAKPOINTS: list = []  # slot -> pydevd's LineBreakpoint the guard stands for now
HELD: set = set()  # canonical files some of whose breakpoints are held outside pydevd's table (here, or watched)
SETTLED: list = []  # more of settle's work: each is given pydevd's PyDB, under LOCK (watched_breakpoints)
STOPS: list = []  # the Stops of the feature, once it is on
STOPPING: set = set()  # idents of the threads a guard or a watch is stopping now
BEGIN = threading.Lock()  # held to add to STOPPING, and by a resume from its look at STOPPING until it has resumed
HELD_LINES: frozenset = frozenset()  # (canonical file, line) of every breakpoint a guard or a watch holds now
CANONICAL: list = []  # pydevd's canonical_normalized_path, once the feature is on
LOCK = threading.RLock()  # pydevd's reader thread changes breakpoints while a program thread reads a file's code
STEP_NAMES = ("CMD_STEP_INTO", "CMD_STEP_INTO_MY_CODE", "CMD_STEP_INTO_COROUTINE", "CMD_SMART_STEP_INTO",
              "CMD_STEP_OVER", "CMD_STEP_OVER_MY_CODE", "CMD_STEP_RETURN", "CMD_STEP_RETURN_MY_CODE")
STEPS: tuple = ()  # pydevd's stop reasons of a step's end


def parts(bp) -> object:  # noqa: ANN001 - pydevd's LineBreakpoint
    """(condition, hit condition, log message) of a breakpoint a guard can stand for, or None."""
    logged = bp.expression if bp.is_logpoint else None
    if bp.func_name not in (None, "None", "") or (bp.expression is not None and not bp.is_logpoint):
        return None
    found = (bp.condition or None, bp.hit_condition or None, logged)
    return found if any(found) else None


def same_code(read, made) -> bool:  # noqa: ANN001 - two code objects
    """Whether ``made`` (compiled from the file's source here) is the code that was read (not changed by a loader's
    own transformation, as pytest's assertion rewriting)."""
    if read.co_code != made.co_code or read.co_names != made.co_names or len(read.co_consts) != len(made.co_consts):
        return False
    return all(same_code(a, b) for a, b in zip(read.co_consts, made.co_consts, strict=True)
               if isinstance(a, types.CodeType) or isinstance(b, types.CodeType))


def settle(py_db) -> None:  # noqa: ANN001 - pydevd's PyDB
    """Each guard on while its breakpoint is as it was compiled, and then out of pydevd's table; else off."""
    global HELD_LINES
    with LOCK:
        for slot, (canonical, line, compiled_from) in enumerate(SLOTS):
            current = [bp for bp in tuple(py_db.file_to_id_to_line_breakpoint.get(canonical, {}).values())
                       if bp.line == line]  # a copy: pydevd's reader thread changes it
            if not current or parts(current[0]) != compiled_from:
                NAMESPACE.on[slot], NAMESPACE.count[slot] = False, COUNTS_NOTHING
                continue
            lines = py_db.breakpoints.get(canonical)
            if lines is not None and lines.get(line) is current[0]:
                del lines[line]
            if BREAKPOINTS[slot] is not current[0] or NAMESPACE.count[slot] is COUNTS_NOTHING:  # set again: pydevd
                BREAKPOINTS[slot], NAMESPACE.count[slot] = current[0], COUNTER[0](compiled_from[1])  # counts afresh
            if type(NAMESPACE.on[slot]) is not Passing:
                NAMESPACE.on[slot] = True
        held = {(file, line) for slot, (file, line, _) in enumerate(SLOTS) if NAMESPACE.on[slot] is not False}
        for more in SETTLED:
            more(py_db, held)
        HELD_LINES = frozenset(held)


class _NoCount:
    """The count of a pass a hit count does not test: false, and no comparison with a number holds."""

    __hash__ = None

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return False

    __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __mod__(self, other: object) -> "_NoCount":
        return self


NO_COUNT = _NoCount()
COUNTS_NOTHING = itertools.repeat(NO_COUNT).__next__  # the counter of a guard turned off
COUNTER: list = []  # guards.counter, once the feature is on: a guard's counter for its hit condition


class Passing:
    """Stands in a guard's ``on[K]`` (or its ``count[K]``, for a hit count alone) while threads whose step ended at
    the start of its line, before it, have not passed it: their pass is counted but not tested (the step's stop
    stood for it); every other pass is tested as ever. Put back once they have passed."""

    __slots__ = ("counter", "frames", "slot")

    def __init__(self, slot: int, counter) -> None:  # noqa: ANN001 - the guard's counter, or None for on[K]
        self.slot, self.counter, self.frames = slot, counter, {}

    def _passing(self) -> bool:
        """Whether the guard running now (two frames up) is the pass of a thread whose step ended before it."""
        frame = self.frames.pop(threading.get_ident(), None)
        if frame is None:
            return False
        with LOCK:  # as step_ended_before_guard adds threads
            if not self.frames and self.counter is None and NAMESPACE.on[self.slot] is self:
                NAMESPACE.on[self.slot] = True
            elif not self.frames and self.counter is not None and NAMESPACE.count[self.slot] is self:
                NAMESPACE.count[self.slot] = self.counter
        return frame is sys._getframe(2)

    def __bool__(self) -> bool:
        if not self._passing():
            return True
        if SLOTS[self.slot][2][1]:  # a hit count with a condition: the pass counts, as pydevd counts it
            NAMESPACE.count[self.slot]()
        return False

    def __call__(self) -> object:
        count = self.counter()
        return NO_COUNT if self._passing() else count


def step_ended_before_guard(thread, frame) -> None:  # noqa: ANN001 - a threading.Thread, the frame it stopped in
    """A thread goes on from a stop at the end of a step: if that was at the start of a line a guard holds, that pass
    of the guard is not tested (``Passing``)."""
    line, canonical = frame.f_lineno, CANONICAL[0](frame.f_code.co_filename)
    if (canonical, line) not in HELD_LINES:
        return
    if next((start for start, _, at in frame.f_code.co_lines() if at == line), None) != frame.f_lasti:
        return  # past the guard's start: the guard ran already
    with LOCK:
        for slot, (file, at, (condition, _, message)) in enumerate(SLOTS):
            if file != canonical or at != line or message is not None or NAMESPACE.on[slot] is False:
                continue
            if condition:
                passing = NAMESPACE.on[slot]
                if type(passing) is not Passing:
                    passing = NAMESPACE.on[slot] = Passing(slot, None)
            else:
                passing = NAMESPACE.count[slot]
                if type(passing) is not Passing:
                    passing = NAMESPACE.count[slot] = Passing(slot, passing)
            passing.frames[thread.ident] = frame


def holds(frame) -> bool:  # noqa: ANN001 - a frame
    """Whether a guard or a watch holds a breakpoint of ``frame``'s line: a thread suspended there before its test
    ran meets the test when it goes on, unless a step ended there (the relay need not report its hit)."""
    return bool(HELD_LINES) and (CANONICAL[0](frame.f_code.co_filename), frame.f_lineno) in HELD_LINES


UNTRACED = threading.local()  # the call a thread runs inside the tool's callback (``untraced``)


# Its start is the one event the tool watches (Python 3.12+): calling it runs the tool's callback. Its file name is one
# pydevd never traces (it starts with "<builtin"): no thread is ever suspended in it.
_enter_callback = {}
exec(compile("def enter():\n    pass\n", "<builtin jupyter_debug_relay guards>", "exec"), _enter_callback)  # noqa: S102
_enter_callback = _enter_callback["enter"]


def _run_in_callback(code, offset) -> None:  # noqa: ANN001 - sys.monitoring's PY_START callback
    call, UNTRACED.call = UNTRACED.call, None
    call()


def claim_tool() -> object:
    """A ``sys.monitoring`` tool of the guards' own (3.12+), or None before 3.12; RuntimeError if none is free."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return None
    for tool in (4, 3):
        if monitoring.get_tool(tool) is None:
            monitoring.use_tool_id(tool, "jupyter_debug_relay breakpoints")
            monitoring.register_callback(tool, monitoring.events.PY_START, _run_in_callback)
            monitoring.set_local_events(tool, _enter_callback.__code__, monitoring.events.PY_START)
            return tool
    raise RuntimeError("sys.monitoring has no free tool id (3 and 4 are taken)")


def untraced(call, tool) -> None:  # noqa: ANN001 - a function of no arguments, claim_tool's tool
    """Run ``call`` as pydevd runs its own stops: inside a ``sys.monitoring`` callback on 3.12+, where no event
    reaches a debugger (pydevd stops a suspended thread at the next call it sees, the debugger's own included)."""
    if tool is None:
        call()
        return
    UNTRACED.call = call
    _enter_callback()


def _past_the_guard(tracer, line: int, stopped_at: int):  # noqa: ANN001, ANN202 - a frame's trace function
    """Python 3.11 tells a line event when the guard hands over to its statement, on the line of the stop: a step
    over from the stop would stop there again. This tracer drops that one event and gives the frame back its own."""

    def first_event(frame, event, arg):  # noqa: ANN001, ANN202 - a trace function
        frame.f_trace = tracer
        if event == "line" and frame.f_lineno == line and frame.f_lasti > stopped_at:
            return tracer
        return tracer(frame, event, arg)

    return first_event


def _relays_stdout(marks):  # noqa: ANN001, ANN202 - [start, end] or None; (stream, identity, marks) or None
    """The stdout the relay reads (launched: its pipe), that file's identity, and the marks the relay gave for a log
    line in it (``log_lines.marks``); None when it gave none (attached)."""
    stream = sys.__stdout__
    if not marks or stream is None:
        return None
    try:
        return stream, _identity(stream), tuple(marks)
    except (OSError, ValueError, AttributeError):
        return None


def _identity(stream):  # noqa: ANN001, ANN202 - a text stream; (device, inode)
    status = os.fstat(stream.fileno())
    return status.st_dev, status.st_ino


class Stops:
    """What a breakpoint held outside pydevd's table does when its test is true, as pydevd's own breakpoint would:
    stop the thread, print a log point's message, say a condition's failure."""

    def __init__(self, change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
        self.boot = boot
        self.pydevd = change.module("pydevd")
        self.set_info = change.module("_pydevd_bundle.pydevd_additional_thread_info").set_additional_thread_info
        self.stop_reason = change.module("_pydevd_bundle.pydevd_comm_constants").CMD_SET_BREAK
        self.monitoring = change.module("_pydevd_bundle.pydevd_constants").PYDEVD_USE_SYS_MONITORING
        self.api = change.module("_pydevd_bundle.pydevd_api").PyDevdAPI
        self.tool = None  # claim_tool's, once the feature is on
        self.log_to = _relays_stdout(boot.SETTINGS.get("log_marks"))

    def stop(self, frame, bp, in_callback: bool = False) -> None:  # noqa: ANN001 - a frame, a LineBreakpoint
        """Stop the thread at ``frame``'s line (from a guard, or from a ``sys.monitoring`` callback)."""
        py_db = self.pydevd.get_global_debugger()
        if py_db is None:
            return
        thread = threading.current_thread()
        info = self.set_info(thread)
        if hasattr(info, "hit_breakpoint_ids"):  # debugpy 1.8.22 tells it with the stop; the relay finds it by line
            info.hit_breakpoint_ids = [bp.breakpoint_id]
        info.trace_suspend_type = "sys_monitor" if self.monitoring else "trace"

        def suspend() -> None:
            py_db.set_trace_for_frame_and_parents(thread.ident, frame)  # a step from here goes on in this frame
            with BEGIN:
                STOPPING.add(thread.ident)  # its own hit, though another thread's stop may rename its reason meanwhile
            try:
                py_db.set_suspend(thread, self.stop_reason, suspend_other_threads=bp.suspend_policy == "ALL")
                py_db.do_wait_suspend(thread, frame, "line", None)
            finally:
                STOPPING.discard(thread.ident)

        info.is_tracing += 1  # as in pydevd's tracer (3.11): the debugger's own calls from here are not traced
        try:
            untraced(suspend, None if in_callback else self.tool)
        finally:
            info.is_tracing -= 1
        if not self.monitoring and frame.f_trace is not None:
            frame.f_trace = _past_the_guard(frame.f_trace, frame.f_lineno, frame.f_lasti)

    def log(self, message: object) -> None:
        """A log point's message, after what the program wrote before it: into the stdout the relay reads, between
        its marks, so it comes in the order the program ran; else as pydevd sends it, a message of its own."""
        py_db = self.pydevd.get_global_debugger()
        if py_db is None or message is None or not str(message):
            return
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - None, closed or the program's own: its output as it is
                pass
        text = f"{message}{os.linesep}"
        if not self._in_stdout(text):
            py_db.writer.add_command(py_db.cmd_factory.make_io_message(text, "1"))

    def _in_stdout(self, text: str) -> bool:
        """Write a log line into the relay's stdout between its marks; False where that stdout is not the relay's
        any more (the program moved its file descriptor 1) or cannot take it."""
        if self.log_to is None:
            return False
        stream, identity, (start, end) = self.log_to
        try:
            if _identity(stream) != identity:
                return False
            stream.write(start + text + end)
            stream.flush()
        except Exception:  # noqa: BLE001 - closed, or the text does not encode: a message of its own then
            return False
        return True

    def condition_failed(self, frame, bp, error: BaseException, in_callback: bool = False) -> None:  # noqa: ANN001
        """A condition that raised: said, and stopped on, as pydevd's ``handle_breakpoint_condition`` does."""
        import traceback

        py_db = self.pydevd.get_global_debugger()
        if py_db is None:
            return
        if not isinstance(error, py_db.skip_print_breakpoint_exception):
            trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            self.api().send_error_message(py_db, f"Error while evaluating expression in conditional breakpoint: "
                                                 f"{bp.condition}\n{trace}")
        if not isinstance(error, py_db.skip_suspend_on_breakpoint_exception):
            self.set_info(threading.current_thread()).conditional_breakpoint_exception = (
                "Condition:\n" + str(bp.condition) + "\n\nError:\n"
                + "".join(traceback.format_exception_only(type(error), error)), traceback.extract_stack(f=frame))
            self.stop(frame, bp, in_callback)

    def safely(self, call, frame, *args) -> None:  # noqa: ANN001, ANN002 - stop or condition_failed, its arguments
        """The debugger's part never raises into the program: a failure is tried once more (pydevd's reader thread
        may be changing its tables), then told to the relay."""
        for attempt in (1, 2):
            try:
                return call(frame, *args)
            except Exception as error:  # noqa: BLE001
                if attempt == 2:
                    self.boot.could_not(f"stop at the breakpoint of line {frame.f_lineno}", error)


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    import builtins

    guards = boot.beside("guards")
    pydevd = change.module("pydevd")
    canonical_path = change.module("pydevd_file_utils").canonical_normalized_path
    CANONICAL[:] = [canonical_path]
    COUNTER[:] = [guards.counter]
    stops = Stops(change, boot)

    def hit(slot: int) -> None:
        if NAMESPACE.on[slot]:
            stops.safely(stops.stop, sys._getframe(1), BREAKPOINTS[slot])

    def log(slot: int, message: object) -> None:
        if NAMESPACE.on[slot]:
            stops.log(message)

    def failed(slot: int, error: BaseException) -> None:
        stops.safely(stops.condition_failed, sys._getframe(1), BREAKPOINTS[slot], error)

    def guarded(code: object) -> object:
        """A file's code as it is read, with a guard for each of its breakpoints that can have one."""
        filename = getattr(code, "co_filename", None)
        py_db = pydevd.get_global_debugger()
        if not isinstance(code, types.CodeType) or py_db is None or not os.path.isfile(filename):
            return code
        canonical = canonical_path(filename)
        with LOCK:
            wanted = {bp.line: bp for bp in tuple(py_db.file_to_id_to_line_breakpoint.get(canonical, {}).values())
                      if parts(bp) is not None}
            if not wanted:
                return code
            with open(filename, "rb") as source:
                tree = ast.parse(decode_source(source.read()), filename)
            if not same_code(code, compile(tree, filename, "exec", dont_inherit=True)):
                return code
            made = {}
            for line in guards.compilable(tree) & wanted.keys():
                guard = guards.Guard(len(SLOTS) + len(made), *parts(wanted[line]))
                try:
                    guards.check(guard)
                except (SyntaxError, ValueError):
                    continue  # pydevd evaluates it, and says what is wrong with it
                made[line] = guard
            if not made:
                return code
            code = guards.guarded(tree, filename, made)
            for line in sorted(made, key=lambda line: made[line].slot):
                SLOTS.append((canonical, line, parts(wanted[line])))
                BREAKPOINTS.append(wanted[line])
                NAMESPACE.on.append(False)
                NAMESPACE.count.append(COUNTS_NOTHING)
            HELD.add(canonical)
            settle(py_db)
        py_db.on_breakpoints_changed()  # its lines left pydevd's table: what traces what is worked out again
        return code

    consolidate, changed = pydevd.PyDB.consolidate_breakpoints, pydevd.PyDB.on_breakpoints_changed

    def consolidate_breakpoints(self, canonical_normalized_filename, id_to_breakpoint,  # noqa: ANN001, ANN202
                                file_to_line_to_breakpoints):  # noqa: ANN001 - pydevd's signature
        consolidate(self, canonical_normalized_filename, id_to_breakpoint, file_to_line_to_breakpoints)
        if canonical_normalized_filename in HELD and file_to_line_to_breakpoints is self.breakpoints:
            settle(self)

    def on_breakpoints_changed(self, removed=False):  # noqa: ANN001, ANN202 - pydevd's signature
        settle(self)
        return changed(self, removed)

    evaluate_condition = pydevd.PyDB.handle_breakpoint_condition
    conditions: dict = {}  # a condition's text -> its code, compiled once (pydevd compiled it at every pass)

    def handle_breakpoint_condition(self, info, pybreakpoint, new_frame):  # noqa: ANN001, ANN202 - pydevd's
        """A breakpoint pydevd still checks itself (its code was loaded before; 3.11): the same test, its condition
        compiled once; a hit count, or a condition that fails, goes pydevd's way (which says the failure)."""
        condition = pybreakpoint.condition
        if condition and not pybreakpoint.hit_condition:
            try:
                code = conditions.get(condition) or conditions.setdefault(condition, compile(condition, "<string>",
                                                                                             "eval"))
                return eval(code, new_frame.f_globals, new_frame.f_locals)  # noqa: S307 - the user's condition
            except Exception:  # noqa: BLE001, S110 - pydevd evaluates it again and says why it fails
                pass
        return evaluate_condition(self, info, pybreakpoint, new_frame)

    runner = change.module("_pydevd_bundle.pydevd_runpy")
    from_file = runner._get_code_from_file

    def _get_code_from_file(run_name, fname):  # noqa: ANN001, ANN202 - pydevd's runpy
        code, fname = from_file(run_name, fname)
        return guarded(code), fname

    pydev_file = change.module("_pydevd_bundle.pydevd_dont_trace_files").PYDEV_FILE
    file_type = pydevd.PyDB._internal_get_file_type
    boot_files = (os.path.realpath(boot.FEATURES_FOLDER) + os.sep, os.path.realpath(boot.__file__))

    def _internal_get_file_type(self, abs_real_path_and_basename):  # noqa: ANN001, ANN202 - pydevd's signature
        """The boot's files are the debugger's: no thread stops in them (a guard's stop runs its code in the
        program's thread, where pydevd, told to suspend every thread, would stop it at its next line)."""
        if abs_real_path_and_basename[0].startswith(boot_files):
            return pydev_file
        return file_type(self, abs_real_path_and_basename)

    global STEPS
    constants = change.module("_pydevd_bundle.pydevd_comm_constants")
    STEPS = tuple(getattr(constants, name) for name in STEP_NAMES)
    wait = pydevd.PyDB.do_wait_suspend

    def do_wait_suspend(self, thread, frame, event, arg, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        step = getattr(thread, "stop_reason", None) in STEPS and thread.ident not in STOPPING  # another stop may
        try:  # rename the reason while it waits
            return wait(self, thread, frame, event, arg, *args, **kwargs)
        finally:
            if step and HELD_LINES:
                step_ended_before_guard(thread, frame)

    stops.tool = claim_tool()
    STOPS[:] = [stops]
    NAMESPACE.hit, NAMESPACE.log, NAMESPACE.failed = hit, log, failed
    change.replace(pydevd.PyDB, "consolidate_breakpoints", consolidate_breakpoints)
    change.replace(pydevd.PyDB, "on_breakpoints_changed", on_breakpoints_changed)
    change.replace(pydevd.PyDB, "handle_breakpoint_condition", handle_breakpoint_condition)
    change.replace(runner, "_get_code_from_file", _get_code_from_file)
    change.replace(pydevd.PyDB, "_internal_get_file_type", _internal_get_file_type)
    change.replace(pydevd.PyDB, "do_wait_suspend", do_wait_suspend)
    setattr(builtins, guards.NAME, NAMESPACE)
    boot.CODE_HOOKS.append(guarded)
