"""Runs in a paused Python target, never in the kernel: the target's asyncio tasks on every open event loop, as JSON.

The debugpy backend sends this file's text to the stopped frame and calls ``gather`` there (``tasks.py``); the
relay reads the answer as data only. Loops are found among the objects the garbage collector tracks, their tasks
with ``asyncio.all_tasks(loop)``. A suspended task's chain of awaits follows ``cr_await`` from its coroutine; a
task running a step now (its thread is paused in it) is read from its thread's frames. What a task awaits is its
``_fut_waiter``: a task, a gathering future's children, or another future; a TaskGroup's tasks are awaited by the
task that holds the group open. It reads and never changes: no task's exception is marked retrieved and no
``__repr__`` of the program's objects runs. Python 3.8+, standard library only.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import types

DEBUGGER_FOLDERS = {"debugpy", "pydevd", "jupyter_debug_relay"}  # frames of these are the debugger's, not the program's
MAX_DEPTH = 8  # frames of a task's chain kept, the innermost
MAX_PATH = 1000  # characters of a file's path
LONGEST_CHAIN = 1000  # links of a chain of awaits followed, at most


def gather(max_tasks: int, max_chars: int) -> str:
    """Every task of every open event loop, as JSON text: ``tasks``, ``loops``, ``total`` and ``note``."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return _answer([], [], 0, "the target has not imported asyncio")
    probe = Probe(asyncio, max_chars, sys._getframe().f_code.co_filename, sys._getframe(1))
    try:
        return probe.answer(max_tasks)
    finally:
        probe.tops.clear()  # this thread's frames hold the probe: no cycle is left for the collector to find


def _answer(tasks: list, loops: list, total: int, note: str) -> str:
    """The answer's JSON text."""
    return json.dumps({"tasks": tasks, "loops": loops, "total": total, "note": note})


def _asked(ask, otherwise):
    """What ``ask()`` answers, or ``otherwise`` when it raises."""
    try:
        return ask()
    except Exception:
        return otherwise


class Probe:
    """The look at one stop: the tasks met so far and how to describe each."""

    def __init__(self, asyncio, max_chars: int, own: str, caller) -> None:
        self.asyncio = asyncio
        self.max_chars = max_chars
        self.own, self.caller = own, caller  # this probe's file name, and the frame of the expression that called it
        self.tops = sys._current_frames()  # each thread's innermost frame
        self.runs: dict = {}  # id(task) -> (its loop's thread, whether that is the stopped one) for running tasks
        self.groups: list = []
        self.waiters: dict = {}  # id(task) -> the future it waits on, for each task shown
        self.library = _folder(getattr(asyncio, "__file__", "") or "")

    def answer(self, max_tasks: int) -> str:
        """The JSON text of the look: at most ``max_tasks`` tasks, and a note when there are more or none."""
        loops = self.open_loops()
        if not loops:
            return _answer([], [], 0, "the target has no open asyncio event loop")
        described, found = self.tasks_of(loops)
        shown = [self.task(task, index) for index, task in found[:max_tasks]]
        self.link(shown, max_tasks)
        total = len(found) + len(shown) - min(len(found), max_tasks)  # and the finished tasks shown as awaited
        note = f"the first {max_tasks} of {total} tasks" if len(found) > max_tasks else \
            "" if shown else "no asyncio tasks on the target's open event loops"
        return _answer(shown, described, total, note)

    def open_loops(self) -> list:
        """The event loops not closed, and the TaskGroups (kept for ``link``), from the garbage collector's objects."""
        loop_type = self.asyncio.AbstractEventLoop
        group_type = getattr(self.asyncio, "TaskGroup", None)
        loops = []
        for obj in gc.get_objects():
            kind = type(obj)
            if issubclass(kind, loop_type):
                if not _asked(obj.is_closed, True):
                    loops.append(obj)
            elif group_type is not None and issubclass(kind, group_type):
                self.groups.append(obj)
        return loops

    def tasks_of(self, loops: list) -> tuple:
        """Each loop as data (the stopped thread's first), and its (loop index, task) pairs, by name in each loop."""
        me = threading.get_ident()
        loops.sort(key=lambda loop: getattr(loop, "_thread_id", None) != me)
        # threading._active, not threading.enumerate(): a paused thread may hold the lock that one takes
        names = {ident: thread.name for ident, thread in list(threading._active.items())}
        described, found = [], []
        for index, loop in enumerate(loops):
            running = bool(_asked(loop.is_running, False))
            thread = getattr(loop, "_thread_id", None) if running else None
            current = _asked(lambda loop=loop: self.asyncio.current_task(loop), None)
            if current is not None:
                self.runs[id(current)] = (thread, thread == me)
            tasks = sorted(_asked(lambda loop=loop: list(self.asyncio.all_tasks(loop)), []), key=self.name)
            described.append({"index": index, "thread": self.cut(names.get(thread, "")) if running else "",
                              "running": running, "tasks": len(tasks)})
            found += [(index, task) for task in tasks]
        return described, found

    def name(self, task) -> str:
        """A task's name, cut short."""
        return self.cut(_asked(task.get_name, "?"))

    def cut(self, text: object) -> str:
        """``text`` cut to ``max_chars`` characters, an ellipsis last when cut."""
        text = str(text)
        return text if len(text) <= self.max_chars else text[:self.max_chars - 1] + "…"

    def is_task(self, obj) -> bool:
        """Whether ``obj`` is an asyncio task (by its type: no attribute of it is read)."""
        return issubclass(type(obj), self.asyncio.Task)

    def task(self, task, loop: int) -> dict:
        """One task as data; ``awaits`` is filled in by ``link``."""
        cancelled, done = bool(_asked(task.cancelled, False)), bool(_asked(task.done, False))
        coro = _asked(task.get_coro, None)
        runs = self.runs.get(id(task))
        chain = self.running_chain(coro, runs[0]) if runs and not done else self.awaited_chain(coro)
        frames = [self.frame(f) for f in chain]
        at = next((f for f in reversed(frames) if _folder(f["path"]) != self.library), frames[-1] if frames else {})
        waiter = None if done else getattr(task, "_fut_waiter", None)
        self.waiters[id(task)] = waiter
        error = getattr(task, "_exception", None) if done and not cancelled else None
        named = type(coro) in (types.CoroutineType, types.GeneratorType)
        return {
            "id": format(id(task), "x"), "name": self.name(task),
            "state": "cancelled" if cancelled else "done" if done else "pending",
            "coroutine": self.cut(coro.__qualname__ if named else type(coro).__name__),
            "path": at.get("path"), "line": at.get("line"), "stack": frames[-MAX_DEPTH:], "depth": len(frames),
            "awaits": [], "future": self.future(waiter), "loop": loop, "running": bool(runs) and not done,
            "stopped": bool(runs and runs[1]) and not done, "exception": self.error(error) if error is not None else ""}

    def frame(self, frame) -> dict:
        """A frame as data: its function's qualified name, its file and its line."""
        code = frame.f_code
        return {"name": self.cut(getattr(code, "co_qualname", code.co_name)), "path": code.co_filename[:MAX_PATH],
                "line": frame.f_lineno or code.co_firstlineno}

    def awaited_chain(self, coro) -> list:
        """A suspended task's frames, outermost first: its coroutine, the one it awaits, and so on inwards."""
        frames, link = [], coro
        for _ in range(LONGEST_CHAIN):
            kind = type(link)
            if kind is types.CoroutineType:
                frame, link = link.cr_frame, link.cr_await
            elif kind is types.GeneratorType:
                frame, link = link.gi_frame, link.gi_yieldfrom
            elif kind is types.AsyncGeneratorType:
                frame, link = link.ag_frame, getattr(link, "ag_await", None)
            else:
                break
            if frame is None:
                break
            frames.append(frame)
        return frames

    def running_chain(self, coro, thread) -> list:
        """A running task's frames, outermost first: from its coroutine's frame to the innermost frame of the program
        on its thread (the debugger's frames above that left out)."""
        outer = coro.cr_frame if type(coro) is types.CoroutineType else None
        if outer is None:
            return []
        frames, frame = [], self.tops.get(thread)
        while frame is not None and frame is not outer:
            frames.append(frame)
            frame = frame.f_back
        if frame is None:  # not on that thread's stack: its own frame only
            return [outer]
        frames.append(outer)
        frames.reverse()
        for index, frame in enumerate(frames):
            if index and self.debugger(frame):
                return frames[:index]
        return frames

    def debugger(self, frame) -> bool:
        """Whether a frame is the debugger's (pydevd, debugpy, the relay's boot) or this look's own."""
        parts = frame.f_code.co_filename.replace("\\", "/").split("/")
        return frame is self.caller or frame.f_code.co_filename == self.own or not DEBUGGER_FOLDERS.isdisjoint(parts)

    def future(self, waiter) -> str:
        """What a task waits on when it is no task: ``Future pending``, ``gather pending``; "" for a task or nothing."""
        if waiter is None or self.is_task(waiter):
            return ""
        kind = type(waiter).__name__
        state = waiter._state if issubclass(type(waiter), self.asyncio.Future) else ""
        return self.cut(("gather" if kind == "_GatheringFuture" else kind)
                        + (f" {state.lower()}" if isinstance(state, str) and state else ""))

    def error(self, error: BaseException) -> str:
        """A finished task's exception: its type, and its message when that is plain text or a number."""
        args = _asked(lambda: tuple(error.args), ())
        said = type(error).__name__
        if len(args) == 1 and type(args[0]) in (str, int, float):
            said += f": {args[0]}"
        return self.cut(said)

    def link(self, shown: list, max_tasks: int) -> None:
        """Fill in what each task awaits: a task, a gathering future's tasks, the tasks of a TaskGroup it holds open;
        a finished task still awaited is shown too (within ``max_tasks``)."""
        gathering = getattr(getattr(self.asyncio, "tasks", None), "_GatheringFuture", None)
        edges: dict = {}
        for key, waiter in self.waiters.items():
            if self.is_task(waiter):
                edges[key] = [waiter]
            elif gathering is not None and issubclass(type(waiter), gathering):
                edges[key] = [c for c in _asked(lambda w=waiter: list(w._children), []) if self.is_task(c)]
        for group in self.groups:
            parent = getattr(group, "_parent_task", None)
            if parent is not None and id(parent) in self.waiters:
                edges.setdefault(id(parent), []).extend(_asked(lambda g=group: list(g._tasks), []))
        by_id = {task["id"]: task for task in shown}
        for key, awaited in edges.items():
            task = by_id[format(key, "x")]
            for child in awaited:
                child_id = format(id(child), "x")
                if child_id not in by_id and len(shown) < max_tasks:
                    shown.append(self.task(child, task["loop"]))
                    by_id[child_id] = shown[-1]
                if child_id in by_id and child_id not in task["awaits"] and child_id != task["id"]:
                    task["awaits"].append(child_id)
            task["awaits"].sort(key=lambda child_id: by_id[child_id]["name"])


def _folder(path: str) -> str:
    """The folder of a file's path, with ``/`` between its parts."""
    return path.replace("\\", "/").rpartition("/")[0]
