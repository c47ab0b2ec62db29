"""Feature ``awaiter_steps``: a step out of an asyncio task's own coroutine stops in the coroutine that awaits it.

pydevd steps out of a coroutine into its caller; a task's own coroutine is called by the event loop, which is not the
program's code, so the step went on to whatever line ran next: another task's, or the line after ``asyncio.run``.
Here the relay asks, at the stop, for the coroutine that awaits the task (``step_out_to``): a task awaiting it, one
whose gather holds it, or the task holding the ``TaskGroup`` it belongs to, while that one waits at the group's end.
That coroutine's frame is kept for the thread, and the relay steps over instead: when the thread resumes, the step
over is made in that frame, so it stops at the first line the awaiting coroutine runs once the task is done (and
not in the tasks that run in between). A task nothing awaits is stepped out of as pydevd does.
"""

import json
import os
import sys
import threading

AWAITERS: dict = {}  # thread ident -> the frame of the coroutine to step over in when that thread resumes
STEP_OVER: tuple = ()  # pydevd's step over commands


def step_out_to(name: str, line: int) -> str:
    """Keep, for this thread, the frame of the coroutine awaiting the task whose own coroutine is the stopped frame
    (``name`` at ``line``); JSON ``{"awaiter": "NAME at FILE:LINE"}``, or ``{"awaiter": null}`` where there is none."""
    import asyncio

    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop runs in this thread
        task = None
    frame = getattr(task.get_coro(), "cr_frame", None) if task is not None else None
    awaiter = None
    if frame is not None and frame.f_code.co_name == name and frame.f_lineno == line:
        awaiter = _awaiting_frame(asyncio, task)
    if awaiter is None:
        AWAITERS.pop(threading.get_ident(), None)
        return json.dumps({"awaiter": None})
    AWAITERS[threading.get_ident()] = awaiter
    code = awaiter.f_code
    return json.dumps({"awaiter": f"{code.co_name} at {code.co_filename}:{awaiter.f_lineno}"})


def _awaiting_frame(asyncio, task):  # noqa: ANN001, ANN202 - the module, a task -> a frame or None
    """The frame of the program's coroutine that goes on once ``task`` is done, if one waits for it."""
    gathering = getattr(getattr(asyncio, "tasks", None), "_GatheringFuture", None)
    for other in asyncio.all_tasks(task.get_loop()):
        waits_on = getattr(other, "_fut_waiter", None)
        if waits_on is task or (gathering is not None and isinstance(waits_on, gathering)
                                and task in getattr(waits_on, "_children", ())):
            return _innermost_own_frame(asyncio, other)
    for callback, _context in getattr(task, "_callbacks", None) or ():
        group = getattr(callback, "__self__", None)
        parent = getattr(group, "_parent_task", None)
        if type(group).__name__ == "TaskGroup" and parent is not None and getattr(group, "_exiting", False):
            return _innermost_own_frame(asyncio, parent)
    return None


def _innermost_own_frame(asyncio, task):  # noqa: ANN001, ANN202 - the module, a task -> a frame or None
    """The innermost frame of the task's chain of awaits that is not asyncio's own (where it goes on)."""
    own = os.path.dirname(os.path.abspath(asyncio.__file__)) + os.sep
    found, coro = None, task.get_coro()
    for _ in range(1000):
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            break
        if not os.path.abspath(frame.f_code.co_filename).startswith(own):
            found = frame
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return found


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    """A thread that resumes for a step over, with an awaiting coroutine kept for it, steps over in that one."""
    global STEP_OVER
    constants = change.module("_pydevd_bundle.pydevd_comm_constants")
    STEP_OVER = (constants.CMD_STEP_OVER, constants.CMD_STEP_OVER_MY_CODE)
    set_info = change.module("_pydevd_bundle.pydevd_additional_thread_info").set_additional_thread_info
    monitoring = change.module("_pydevd_bundle.pydevd_constants").PYDEVD_USE_SYS_MONITORING
    pydb = change.module("pydevd").PyDB
    wait = pydb.do_wait_suspend

    def do_wait_suspend(self, thread, frame, event, arg, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        try:
            return wait(self, thread, frame, event, arg, *args, **kwargs)
        finally:
            awaiter = AWAITERS.pop(thread.ident, None) if AWAITERS else None
            info = set_info(thread) if awaiter is not None else None
            if info is not None and info.pydev_step_cmd in STEP_OVER:
                info.pydev_step_stop = awaiter
                self.set_trace_for_frame_and_parents(thread.ident, awaiter)
                if monitoring:  # pydevd turns a code's lines on for a step into only: on for this one's code
                    watch = sys.monitoring
                    tool, lines = watch.DEBUGGER_ID, watch.events.LINE | watch.events.JUMP
                    watch.set_local_events(tool, awaiter.f_code, watch.get_local_events(tool, awaiter.f_code) | lines)

    change.replace(pydb, "do_wait_suspend", do_wait_suspend)
