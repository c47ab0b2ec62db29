"""Feature ``exception_lines`` (Python 3.11): a frame pydevd traces only for its exceptions gets no line events.

With exception breakpoints on raised (or user-unhandled) exceptions, pydevd traces every call on 3.11 and gives each
frame that holds no breakpoint and no step its ``trace_exception``, which looks at ``exception`` and ``return``
events only: every line of such a frame still called it, for nothing (two thirds of what pydevd adds to a loop that
raises and catches). Here the thread's trace function sees what pydevd gives a frame at its call event:
``trace_exception`` turns the frame's line events off (``frame.f_trace_lines = False``), anything else turns them
back on (a generator resumed in a step). Wherever pydevd wants the lines of frames already running (a stop, a step,
a pause, a jump, a breakpoint added, a ``breakpoint()`` call) it calls ``set_trace_for_frame_and_parents``: the
lines of that frame and its parents are turned on again there. A thread that turns a frame's lines off while that
runs turns them back on itself (``ASKED``: a new stamp before the frames are changed).

A frame of another thread, running, can lose the tracer pydevd just gave it: if that thread is inside the frame's
``trace_exception`` (an exception raised and caught in a loop) when pydevd sets ``frame.f_trace``, CPython then
stores what ``trace_exception`` returns, itself, over it, and a breakpoint added there never stops. A thread of the
debugger's (``Retrace``, started only while exception breakpoints look at raised exceptions: elsewhere pydevd gives
no frame ``trace_exception``) looks every 5 ms for the next 0.5 s and gives such a frame pydevd's tracer back (each time
it may be put over again, as long as the thread raises); a frame whose file holds no breakpoint takes
``trace_exception`` again at its next line, as pydevd gives it.

A thread's trace function is wrapped only when pydevd sets it while exception breakpoints look at raised exceptions
(with ``lazy_tracing``, turning them on makes every thread set its trace function again): elsewhere each call would
pay for the wrapper, pydevd's own calls in a stopped thread too. Exception breakpoints turned on while every thread
already traces (during a stop) leave the lines on until a thread sets its trace function again: slower, not wrong.
"""

import threading
import time
from types import FrameType

ASKED = [object()]  # a new object each time pydevd asks for the lines of running frames
TRACE_EXCEPTION = "trace_exception"  # the name of pydevd's frame tracer that looks at exceptions only
RETRACE_EVERY, RETRACE_FOR = 0.005, 0.5  # seconds: the looks at frames of another thread given pydevd's tracer


def exceptions_only(tracer: object) -> bool:
    """Whether ``tracer`` is pydevd's ``trace_exception`` (compiled pydevd wraps it in a SafeCallWrapper)."""
    unwrapped = getattr(tracer, "get_method_object", None)
    return getattr(unwrapped() if unwrapped is not None else tracer, "__name__", None) == TRACE_EXCEPTION


class Retrace(threading.Thread):
    """Gives pydevd's tracer back to the frames whose own thread put ``trace_exception`` over it meanwhile: one thread
    of the debugger's, started at the first frame given to it, asleep while it has none."""

    def __init__(self, mark) -> None:  # noqa: ANN001 - pydevd's marking function
        super().__init__(name="pydevd.retrace", daemon=True)
        self.watched: dict = {}  # id(frame) -> (frame, the tracer it was given, until when it is looked at)
        self.lock, self.woken = threading.Lock(), threading.Event()
        mark(self)  # a thread of the debugger's: not traced, not listed to the program or the client

    def watch(self, frames: list, tracer: object) -> None:
        until = time.monotonic() + RETRACE_FOR
        with self.lock:
            self.watched.update((id(frame), (frame, tracer, until)) for frame in frames)
        self.woken.set()

    def run(self) -> None:
        while True:
            self.woken.wait()
            time.sleep(RETRACE_EVERY)
            now = time.monotonic()
            with self.lock:
                for key, (frame, tracer, until) in list(self.watched.items()):
                    if exceptions_only(frame.f_trace):
                        frame.f_trace = tracer
                    if now > until:
                        del self.watched[key]
                if not self.watched:
                    self.woken.clear()


def lines_seen(thread_tracer: object) -> object:
    """``thread_tracer`` (pydevd's for one thread) turning off the line events of the frames it traces for their
    exceptions only."""

    def call(frame, event, arg):  # noqa: ANN001, ANN202 - a trace function's signature
        asked = ASKED[0]
        local = thread_tracer(frame, event, arg)
        if local is None:  # not traced (pydevd's own calls while it stops, a skipped file): no line events either
            return None
        if exceptions_only(local):
            frame.f_trace_lines = False
            if ASKED[0] is not asked:  # pydevd asked for lines meanwhile: it may have passed this frame already
                frame.f_trace_lines = True
        elif not frame.f_trace_lines:
            frame.f_trace_lines = True
        return local

    call.lines_seen = thread_tracer
    return call


def apply(change, boot) -> None:  # noqa: ANN001, ARG001 - changes.Changes, the boot module
    """pydevd's thread trace functions wrapped as they are set; its frames' lines on again where it sets tracing."""
    tracing, pydevd = change.module("pydevd_tracing"), change.module("pydevd")
    mark = change.module("_pydevd_bundle.pydevd_daemon_thread").mark_as_pydevd_daemon_thread
    retrace: list = []  # the one Retrace, once a frame of another thread was given pydevd's tracer
    set_trace, for_frames = tracing.SetTrace, pydevd.PyDB.set_trace_for_frame_and_parents

    def SetTrace(tracing_func):  # noqa: N802, ANN001, ANN202 - pydevd's name and signature
        if tracing_func is not None and getattr(tracing_func, "lines_seen", None) is None and exceptions_looked_at():
            tracing_func = lines_seen(tracing_func)
        return set_trace(tracing_func)

    def exceptions_looked_at() -> bool:
        """Whether pydevd gives frames ``trace_exception`` now: else the thread's trace function is left as it is
        (each call would pay for the wrapper, pydevd's own calls in a stopped thread too)."""
        db = pydevd.get_global_debugger()
        return db is not None and bool(db.break_on_caught_exceptions or db.break_on_user_uncaught_exceptions
                                       or db.has_plugin_exception_breaks)

    def set_trace_for_frame_and_parents(self, thread_ident, frame, **kwargs):  # noqa: ANN001, ANN003, ANN202
        ASKED[0] = object()
        try:
            return for_frames(self, thread_ident, frame, **kwargs)
        finally:
            given = []  # the frames pydevd gave its tracer
            while type(frame) is FrameType:  # pydevd's own stand-ins for frames have no lines to turn on
                if not frame.f_trace_lines:
                    frame.f_trace_lines = True
                if frame.f_trace is self.trace_dispatch:
                    given.append(frame)
                frame = frame.f_back
            if given and thread_ident not in (None, threading.get_ident()) and exceptions_looked_at():
                if not retrace:
                    retrace.append(Retrace(mark))
                    retrace[0].start()
                retrace[0].watch(given, self.trace_dispatch)

    change.replace(tracing, "SetTrace", SetTrace)
    change.replace(pydevd.PyDB, "set_trace_for_frame_and_parents", set_trace_for_frame_and_parents)
