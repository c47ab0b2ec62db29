"""Feature ``pause_in_steps`` (Python 3.12+): a pause asked while a step over or a step out still runs stops the thread.

A pause sets tracing on the frames of the thread to suspend (``enable_code_tracing``), but pydevd turns a
code's LINE events on there only for a step into: a pause asked while a step over or a step out still runs
(the thread inside a call that has not returned) reached no line event, and the thread never stopped. Here a
code of a thread asked to suspend gets its LINE and JUMP events whatever the thread's step.
"""

import sys
import threading


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    """A thread asked to suspend gets line events in every frame pydevd sets tracing on, whatever its step."""
    wrapper = change.module("_pydevd_sys_monitoring.pydevd_sys_monitoring")
    STATE_SUSPEND = change.module("_pydevd_bundle.pydevd_constants").STATE_SUSPEND  # noqa: N806 - pydevd's name

    monitor = sys.monitoring
    tool, lines = monitor.DEBUGGER_ID, monitor.events.LINE | monitor.events.JUMP
    enable = wrapper.enable_code_tracing

    def enable_code_tracing(thread_ident, code, frame) -> bool:  # noqa: ANN001 - pydevd's signature
        added = enable(thread_ident, code, frame)
        info = getattr(threading._active.get(thread_ident), "additional_info", None)
        if info is None or info.pydev_state != STATE_SUSPEND:
            return added
        monitor.set_local_events(tool, code, monitor.get_local_events(tool, code) | lines)  # pydevd's own
        return True  # line callback suspends it, or disables the lines of code it always skips

    change.replace(wrapper, "enable_code_tracing", enable_code_tracing)
