"""Feature ``uncaught_recursion``: stop on an uncaught exception that pydevd could not see. At the recursion limit,
pydevd's trace function raised RecursionError itself, and Python turns tracing off for a thread whose trace function
raises. The stop is pydevd's own post-mortem one (its uncaught-exception filters apply), on the deepest frame of the
program's traceback. (On 3.12+ pydevd's ``sys.monitoring`` tracer outlives the recursion limit.)"""

import sys
import threading

STOP: list = []  # the function that stops on an uncaught exception, once the feature is on


def stop_on_uncaught(debugger, excinfo: tuple) -> None:  # noqa: ANN001 - pydevd's PyDB
    """Have pydevd stop on ``excinfo`` as on an uncaught exception, in this thread (what debugpy 1.8.22's
    ``trigger_exception_handler`` does, through the function every 1.8 release has)."""
    thread = threading.current_thread()
    info = debugger.set_additional_thread_info(thread)
    info.suspended_at_unhandled = True
    info.is_tracing += 1
    try:
        sys.modules["_pydevd_bundle.pydevd_breakpoints"].stop_on_unhandled_exception(debugger, thread, info, excinfo)
    finally:
        info.is_tracing -= 1


def stop_post_mortem(exc: BaseException) -> None:
    """Stop on ``exc``, which ends the program, when pydevd's tracing died of it."""
    debugger = sys.modules["pydevd"].get_global_debugger() if STOP else None
    if debugger is None or sys.gettrace() is not None:  # tracing alive: pydevd saw the exception itself
        return
    STOP[0](debugger, (type(exc), exc, exc.__traceback__))


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    STOP.append(stop_on_uncaught)
