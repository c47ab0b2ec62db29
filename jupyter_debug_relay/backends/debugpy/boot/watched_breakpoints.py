"""Feature ``watched_breakpoints`` (Python 3.12+): a condition, hit count or log message set on code already
running is checked by a ``sys.monitoring`` LINE callback of that one location, its parts compiled once.

A guard (``compiled_breakpoints``) is written into code as its file is read; a breakpoint set later, or changed
after its guard was compiled, was pydevd's: its tracer at every pass of the line, the condition compiled again each
time (11-16 us a pass). Here, when breakpoints change, each such breakpoint whose file has code loaded (functions of
it, frames running it) is taken out of pydevd's table, and the code objects holding its line get the guards' tool's
LINE event: the callback answers ``DISABLE`` for every other line of that code, and on the breakpoint's line runs its
test as pydevd does (the hit count first, then the condition, in the frame's scope) and, when true, stops, logs or
says a condition's failure through ``compiled_breakpoints.Stops``, inside the callback as pydevd stops inside its
own. A breakpoint changed again or removed is dropped at once; one whose file has no code loaded yet is pydevd's
until its file is read (then a guard holds it).
The guards' tool is called before pydevd's for the same LINE event: a thread that goes on from a watch's stop with a
step (one that landed there, or one asked at the stop) would meet pydevd's callback of that same event, which would
stop it again at the same line; that one stop of pydevd's is skipped (``ONE_STOP``), as a step that lands on a line
of pydevd's own breakpoint stops there once.
"""

import gc
import itertools
import sys
import threading

WATCHES: dict = {}  # (canonical file, line, the breakpoint's parts) -> Watch, kept while its breakpoint is so
BY_LOCATION: dict = {}  # (code, line) -> the Watch its LINE events are for
ONE_STOP: dict = {}  # thread ident -> (frame, offset) of the LINE event a watch stopped it at, then a step went on
SKIPPING: set = set()  # idents of the threads whose stop pydevd is starting now is that event's second


class Watch:
    """One breakpoint's test at one line, and the code objects whose LINE events run it."""

    __slots__ = ("bp", "codes", "condition", "count", "hit_test", "line", "message", "on")

    def __init__(self, bp, parts, codes: list) -> None:  # noqa: ANN001 - pydevd's LineBreakpoint, compiled's parts
        condition, hit_condition, message = parts
        self.bp, self.codes, self.line, self.on = bp, codes, bp.line, True
        self.condition = compile(condition, "<condition>", "eval") if condition else None
        self.hit_test = eval(compile(f"lambda hits: {hit_condition.replace('@HIT@', 'hits')}", "<hit condition>",
                                     "eval")) if hit_condition else None  # noqa: S307 - checked by guards.check
        self.message = compile(message, "<log message>", "eval") if message else None
        self.count = itertools.count(1)


def holding(line: int, files: set, canonical_path) -> dict:  # noqa: ANN001 - pydevd's canonical_normalized_path
    """{canonical file of ``files``: its code objects now loaded whose instructions include ``line``}: the code of
    its functions (and the code nested in them) and of the frames running now."""
    found: dict = {}
    seen: set = set()

    def take(code) -> None:  # noqa: ANN001
        if code in seen:
            return
        seen.add(code)
        canonical = canonical_path(code.co_filename)
        if canonical in files:
            found.setdefault(canonical, []).append(code)
            for const in code.co_consts:
                if type(const) is type(code):
                    take(const)

    names = {file.rsplit("/", 1)[-1].lower() for file in files}
    for function in gc.get_objects():
        code = getattr(function, "__code__", None) if type(function).__name__ == "function" else None
        if code is not None and code.co_filename.rsplit("/", 1)[-1].lower() in names:
            take(code)
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code.co_filename.rsplit("/", 1)[-1].lower() in names:
                take(frame.f_code)
            frame = frame.f_back
    return {file: [c for c in codes if any(at == line for _, _, at in c.co_lines())] for file, codes in found.items()}


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    compiled = boot.beside("compiled_breakpoints")
    canonical_path = change.module("pydevd_file_utils").canonical_normalized_path
    monitoring = sys.monitoring
    stops = compiled.STOPS[0]
    tool, line_event, disable = stops.tool, monitoring.events.LINE, monitoring.DISABLE
    getframe = sys._getframe

    guards = boot.beside("guards")

    def check(parts) -> bool:  # noqa: ANN001
        try:
            guards.check(guards.Guard(0, *parts))
            return True
        except (SyntaxError, ValueError):
            return False

    def on_line(code, line):  # noqa: ANN001, ANN202 - sys.monitoring's LINE callback
        watch = BY_LOCATION.get((code, line))
        if watch is None or not watch.on:
            return disable
        frame, bp = getframe(1), watch.bp
        try:
            stop = watch.hit_test is not None and watch.hit_test(next(watch.count))
            if not stop and watch.condition is not None:
                stop = eval(watch.condition, frame.f_globals, frame.f_locals)  # noqa: S307 - the user's condition
            elif watch.hit_test is None and watch.condition is None:
                stop = True  # a log point alone
        except Exception as error:  # noqa: BLE001 - the condition's failure, said as pydevd says it
            stops.safely(stops.condition_failed, frame, bp, error, True)
            return None
        if stop and watch.message is not None:
            try:
                stops.log(eval(watch.message, frame.f_globals, frame.f_locals))  # noqa: S307 - the user's message
            except Exception as error:  # noqa: BLE001 - pydevd prints the error in its place
                stops.log(error)
        elif stop:
            stops.safely(stops.stop, frame, bp, True)
        return None

    def settle(py_db, held: set) -> None:  # noqa: ANN001 - pydevd's PyDB
        """Watch each breakpoint a guard does not hold (``held``) whose file has code loaded, and add its line to
        ``held``; drop the watches of breakpoints changed or removed."""
        wanted: dict = {}
        for file, by_id in tuple(py_db.file_to_id_to_line_breakpoint.items()):
            for bp in tuple(by_id.values()):
                parts = compiled.parts(bp)
                if parts is not None and (file, bp.line) not in held and check(parts):
                    wanted[(file, bp.line, parts)] = bp
        for key, watch in list(WATCHES.items()):
            if wanted.get(key) is None:
                watch.on = False
                del WATCHES[key]
                for code in watch.codes:
                    BY_LOCATION.pop((code, watch.line), None)
        started = False
        for key, bp in wanted.items():
            watch = WATCHES.get(key)
            if watch is None:
                file, line, parts = key
                codes = holding(line, {file}, canonical_path).get(file)
                if not codes:
                    continue  # nothing of it loaded yet: pydevd's, until its file is read
                watch = WATCHES[key] = Watch(bp, parts, codes)
                for code in codes:
                    BY_LOCATION[(code, line)] = watch
                    monitoring.set_local_events(tool, code, monitoring.get_local_events(tool, code) | line_event)
                compiled.HELD.add(file)
                started = True
            elif watch.bp is not bp:  # set again: pydevd counts its hits from 0 again
                watch.bp, watch.count = bp, itertools.count(1)
            lines = py_db.breakpoints.get(key[0])
            if lines is not None and lines.get(key[1]) is bp:
                del lines[key[1]]
            held.add(key[:2])
        if started:
            monitoring.restart_events()  # a location of this code answered DISABLE before: it calls back again

    pydevd = change.module("pydevd")
    set_info = change.module("_pydevd_bundle.pydevd_additional_thread_info").set_additional_thread_info
    suspend, wait = pydevd.PyDB.set_suspend, pydevd.PyDB.do_wait_suspend
    get_ident = threading.get_ident

    def second_stop(thread, stop_reason) -> bool:  # noqa: ANN001 - a threading.Thread, pydevd's stop reason
        """Whether pydevd ends a step of ``thread`` (its own) at the LINE event a watch has just stopped it at."""
        ident = get_ident()
        if thread.ident != ident or stop_reason not in compiled.STEPS:
            return False
        frame, offset = ONE_STOP.pop(ident, (None, None))
        caller = getframe(2)
        for _ in range(8):  # pydevd's own frames (its pure-Python tracer, wrappers of its callbacks) lie between
            if caller is None or caller is frame:
                break
            caller = caller.f_back
        return frame is not None and caller is frame and frame.f_lasti == offset

    def set_suspend(self, thread, stop_reason, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - pydevd's
        if ONE_STOP and second_stop(thread, stop_reason):
            SKIPPING.add(thread.ident)
            return None
        return suspend(self, thread, stop_reason, *args, **kwargs)

    def do_wait_suspend(self, thread, frame, event, arg, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if SKIPPING and thread.ident in SKIPPING:
            SKIPPING.discard(thread.ident)
            return None  # the step goes on: it stops at the next line
        watched = thread.ident in compiled.STOPPING and (frame.f_code, frame.f_lineno) in BY_LOCATION
        try:
            return wait(self, thread, frame, event, arg, *args, **kwargs)
        finally:
            if watched and set_info(thread).pydev_step_cmd in compiled.STEPS:
                ONE_STOP[thread.ident] = (frame, frame.f_lasti)

    if tool is None:
        raise RuntimeError("compiled_breakpoints claimed no sys.monitoring tool")
    change.replace(pydevd.PyDB, "set_suspend", set_suspend)
    change.replace(pydevd.PyDB, "do_wait_suspend", do_wait_suspend)
    monitoring.register_callback(tool, line_event, on_line)
    compiled.SETTLED.append(settle)
