"""Feature ``free_children``: a child the program forks runs free of the debugger (its breakpoints would wait for a
client it cannot reach, hanging the program), and the parent announces it to the relay with a ``relayForked``
event on pydevd's connection."""

import os
import sys
import threading

ON: list = []  # True once the feature is on: the fork handlers act only then


def stop_debugging() -> None:
    """In a forked child: undo pydevd's tracing, so no breakpoint of the parent's stops it."""
    if not ON:
        return
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
    threading.settrace(None)
    frame = sys._getframe()
    while frame is not None:
        frame.f_trace = None
        frame = frame.f_back


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid and ON:
            boot.tell_relay("relayForked", {"pid": pid})
        return pid

    os.register_at_fork(after_in_child=stop_debugging)
    change.replace(os, "fork", fork)
    ON.append(True)
