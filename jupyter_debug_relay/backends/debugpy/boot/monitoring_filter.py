"""Feature ``monitoring_filter`` (Python 3.12+): only a breakpoint's line calls pydevd's ``sys.monitoring`` tracer back.

pydevd turns a code object's LINE (and JUMP) events on when it holds a breakpoint, and then
never answers ``DISABLE`` for any of its lines, nor for its PY_START: a breakpoint not yet
reached in a hot function made every line of every call run pydevd's callback (50-80x slower).
``sys.monitoring`` disables one location at a time, and pydevd already re-enables every
location (``restart_events``) when a thread stops, pauses or steps and when breakpoints change,
and never disables one while a thread steps or is suspended. So here, after pydevd has
registered its callbacks (``update_monitor_events``, called on every breakpoint change), each is
wrapped: a line that holds no breakpoint of its file, or a call of code whose lines already
call back, answers ``DISABLE`` when no thread steps. Breakpoint lines still reach pydevd every time.
The first call of code none of whose lines holds a breakpoint answers ``DISABLE`` at once when no thread steps
and no function breakpoint is set, as pydevd would after working out the code's filters and line table (most of
what a test suite under the debugger costs on 3.12+; 75 us per code object of a breakpoint's own file).
pydevd turns PY_RESUME on with no callback (it has none): every resume of a generator or coroutine paid for the
event, 20-30 ns each on 3.12 and 3.13; here a callback answers ``DISABLE``, and each location pays once. On 3.13
pydevd turns a code's JUMP events on with its LINE events but gives them no callback either (its LINE events cover
jumps there): every pass of a loop in code that held a breakpoint paid for its backward jump (10-30 ns), the
breakpoint removed or not; JUMP gets the same answer there.
An exception raised while pydevd watches raised ones reaches its RAISE callback only where one of the "raised"
filters takes its type (pydevd's own match, kept per type until the filters change): every other raise cost pydevd's
look at the frame and thread, 5-10 us each. An exception leaving a frame reaches pydevd's PY_UNWIND callback only
where pydevd could call it uncaught (the frame's caller starts the program or a thread), unless pydevd watches every
frame (``raised``): it looked up the
program's first frame for each.

pydevd's compiled tracer takes the program's frame as the top frame (``sys._getframe()``):
it is given a ``sys`` whose ``_getframe`` passes over the wrappers' own frames (the
pure-Python tracer's ``_getframe`` is replaced likewise). pydevd updates from any thread (the boot binding a
pending breakpoint in the program's, pydevd's reader in its own): a callback already ours is never wrapped again.
"""

import os
import sys

STARTERS = {  # file name without its extension -> what its functions that run the program or a thread start with
    "threading": ("__bootstrap", "_bootstrap", "run"), "pydev_monkey": ("__call__",),
    "pydevd": ("_exec", "run", "main"), "pydevd_runpy": ("run", "_run"), "<frozen runpy>": ("run", "_run"),
    "runpy": ("run", "_run"),
}
_starter_names: dict = {}  # co_filename -> what its functions that start the program start with ("": none)


def starts_program(code) -> bool:  # noqa: ANN001
    """Whether ``code`` is one that runs the program or a thread, as pydevd's ``_get_unhandled_exception_frame``
    knows them: an exception leaving a frame it called is uncaught."""
    names = _starter_names.get(code.co_filename)
    if names is None:
        names = _starter_names[code.co_filename] = STARTERS.get(
            os.path.splitext(os.path.basename(code.co_filename))[0], "")
    return bool(names) and code.co_name.startswith(names)


def watches_every_frame(py_db) -> bool:  # noqa: ANN001 - pydevd's PyDB
    """Whether pydevd looks at an exception in every frame it leaves (raised, user-uncaught, plugins' kinds)."""
    return bool(py_db.break_on_caught_exceptions or py_db.break_on_user_uncaught_exceptions
                or py_db.has_plugin_exception_breaks)


def holds_any(code, lines: frozenset) -> bool:  # noqa: ANN001
    """Whether one of ``lines`` is a line of ``code``'s own instructions (pydevd reads the same table,
    ``dis.findlinestarts``, to decide whether a code holds a breakpoint)."""
    return bool(lines) and any(line in lines for _, _, line in code.co_lines())


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    """Wrap the callbacks that ``update_monitor_events`` registers, each time it registers them."""
    wrapper = change.module("_pydevd_sys_monitoring.pydevd_sys_monitoring")
    any_thread_stepping = change.module("_pydevd_bundle.pydevd_additional_thread_info").any_thread_stepping
    canonical_normalized_path = change.module("pydevd_file_utils").canonical_normalized_path
    may_be_named = boot.may_be_named
    constants = change.module("_pydevd_bundle.pydevd_constants")
    jumps_unheard = getattr(constants, "IS_PY313_OR_GREATER", False)  # pydevd's own word: it needs no JUMP there
    get_exception_breakpoint = change.module("_pydevd_bundle.pydevd_breakpoints").get_exception_breakpoint

    monitor = sys.monitoring
    tool, events, disable = monitor.DEBUGGER_ID, monitor.events, monitor.DISABLE
    implementation = sys.modules.get(wrapper.update_monitor_events.__module__)
    compiled = implementation is not None and implementation.__name__.endswith("_cython")
    update = wrapper.update_monitor_events
    ours: set = set()  # the wrappers' code: their frames are never the program's
    getframe = sys._getframe

    def program_frame(depth: int = 0):  # noqa: ANN202
        frame = getframe(1 if compiled else depth + 1)  # the compiled tracer always means the top frame
        while frame.f_code in ours:
            frame = frame.f_back
        return frame

    class ProgramSys:
        """``sys`` as the compiled tracer sees it: its top frame is the program's, never a wrapper's."""

        _getframe = staticmethod(program_frame)

        def __getattr__(self, name: str):  # noqa: ANN204
            return getattr(sys, name)

    def wrapped(event: int, make) -> None:  # noqa: ANN001
        theirs = monitor.register_callback(tool, event, None)
        while getattr(theirs, "__code__", None) in ours:  # two threads updating at once: never wrap ours
            theirs = theirs.__wrapped__
        if theirs is not None:
            callback = make(theirs)
            callback.__wrapped__ = theirs
            ours.add(callback.__code__)
            monitor.register_callback(tool, event, callback)

    watching: list = [None, {}]  # pydevd's "raised" filters (it replaces them, never changes them), {type: watched?}

    def watched(filters: dict, exctype: type) -> bool:
        """Whether one of pydevd's "raised" filters takes an exception of ``exctype`` (pydevd's own match)."""
        if watching[0] is not filters:
            watching[:] = [filters, {}]
        found = watching[1].get(exctype)
        if found is None:
            found = watching[1][exctype] = get_exception_breakpoint(exctype, filters) is not None
        return found

    def unheard(*args):  # noqa: ANN002, ANN202
        return disable

    def heard(event: int) -> None:
        """An event pydevd turns on but gives no callback answers ``DISABLE`` (each location pays once)."""
        theirs = monitor.register_callback(tool, event, None)
        monitor.register_callback(tool, event, unheard if theirs is None else theirs)

    def update_monitor_events(*args, **kwargs) -> None:  # noqa: ANN002, ANN003 - pydevd's signature
        update(*args, **kwargs)
        py_db = sys.modules["pydevd"].get_global_debugger()
        if py_db is None or py_db.has_plugin_line_breaks:
            return
        lines_of: dict = {}  # co_filename -> its breakpoints' lines, until breakpoints change
        names = {os.path.basename(path).lower() for path in tuple(py_db.breakpoints)}  # a copy: pydevd changes it

        def breakpoint_lines(filename: str) -> frozenset:
            lines = lines_of.get(filename)
            if lines is None:  # pydevd's path of a file is worked out only where it may hold breakpoints
                lines = lines_of[filename] = frozenset(py_db.breakpoints.get(canonical_normalized_path(filename), ())
                                                       if may_be_named(filename, names) else ())
            return lines

        def quiet(filename: str, line: int) -> bool:
            return line not in breakpoint_lines(filename) and not any_thread_stepping()

        def on_line(theirs):  # noqa: ANN001, ANN202
            def line(code, number):  # noqa: ANN001, ANN202
                result = theirs(code, number)
                return disable if result is None and quiet(code.co_filename, number) else result
            return line

        def on_jump(theirs):  # noqa: ANN001, ANN202
            def jump(code, source, target):  # noqa: ANN001, ANN202
                result = theirs(code, source, target)
                if result is None and quiet(code.co_filename, getframe(1).f_lineno):
                    return disable
                return result
            return jump

        def on_start(theirs):  # noqa: ANN001, ANN202
            def start(code, offset):  # noqa: ANN001, ANN202
                if (not py_db.function_breakpoint_name_to_breakpoint and not any_thread_stepping()
                        and not holds_any(code, breakpoint_lines(code.co_filename))):
                    return disable  # pydevd's answer for code that holds no breakpoint, without its look-up
                result = theirs(code, offset)
                if (result is None and not py_db.function_breakpoint_name_to_breakpoint
                        and monitor.get_local_events(tool, code) & events.LINE and not any_thread_stepping()):
                    return disable  # its lines call back on their own
                return result
            return start

        def on_raise(theirs):  # noqa: ANN001, ANN202
            def raised(code, offset, exc):  # noqa: ANN001, ANN202
                if (py_db.break_on_user_uncaught_exceptions or py_db.has_plugin_exception_breaks
                        or watched(py_db.break_on_caught_exceptions, type(exc))):
                    return theirs(code, offset, exc)
                return None  # a type no "raised" filter names: pydevd's look would find nothing to stop on
            return raised

        def on_unwind(theirs):  # noqa: ANN001, ANN202
            def unwind(code, offset, exc):  # noqa: ANN001, ANN202
                caller = getframe(1).f_back
                if caller is None or starts_program(caller.f_code) or watches_every_frame(py_db):
                    return theirs(code, offset, exc)
                return None  # an exception leaving a frame the program called: not uncaught here
            return unwind

        wrapped(events.LINE, on_line)
        wrapped(events.JUMP, on_jump)
        wrapped(events.PY_START, on_start)
        wrapped(events.PY_UNWIND, on_unwind)
        wrapped(events.RAISE, on_raise)
        heard(events.PY_RESUME)
        if jumps_unheard:
            heard(events.JUMP)

    change.replace(wrapper, "update_monitor_events", update_monitor_events)
    if implementation is not None:
        change.replace(implementation, "update_monitor_events", update_monitor_events)
        if compiled:
            change.replace(implementation, "sys", ProgramSys())
        else:
            change.replace(implementation, "_getframe", program_frame)
