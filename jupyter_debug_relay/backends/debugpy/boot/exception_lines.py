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

A thread's trace function is wrapped only when pydevd sets it while exception breakpoints look at raised exceptions
(with ``lazy_tracing``, turning them on makes every thread set its trace function again): elsewhere each call would
pay for the wrapper, pydevd's own calls in a stopped thread too. Exception breakpoints turned on while every thread
already traces (during a stop) leave the lines on until a thread sets its trace function again: slower, not wrong.
"""

from types import FrameType

ASKED = [object()]  # a new object each time pydevd asks for the lines of running frames
TRACE_EXCEPTION = "trace_exception"  # the name of pydevd's frame tracer that looks at exceptions only


def lines_seen(thread_tracer: object) -> object:
    """``thread_tracer`` (pydevd's for one thread) turning off the line events of the frames it traces for their
    exceptions only."""

    def call(frame, event, arg):  # noqa: ANN001, ANN202 - a trace function's signature
        asked = ASKED[0]
        local = thread_tracer(frame, event, arg)
        if local is None:  # not traced (pydevd's own calls while it stops, a skipped file): no line events either
            return None
        unwrapped = getattr(local, "get_method_object", None)  # compiled pydevd's SafeCallWrapper around its tracer
        if getattr(unwrapped() if unwrapped is not None else local, "__name__", None) == TRACE_EXCEPTION:
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
            while type(frame) is FrameType:  # pydevd's own stand-ins for frames have no lines to turn on
                if not frame.f_trace_lines:
                    frame.f_trace_lines = True
                frame = frame.f_back

    change.replace(tracing, "SetTrace", SetTrace)
    change.replace(pydevd.PyDB, "set_trace_for_frame_and_parents", set_trace_for_frame_and_parents)
