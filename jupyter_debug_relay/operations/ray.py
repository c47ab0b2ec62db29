"""Ray's verbs: ``ray_tasks`` lists a cluster's paused tasks and actor methods, ``ray_attach`` makes each a session.

Every paused worker waits in debugpy on its node; attaching is the ``attach`` by port of any debugpy target, with
the session named after the task (``NAME:PID``). Listing also starts a watch that publishes ``ray_paused`` when a
task pauses later, until the relay closes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import weakref
from typing import Any

from pydantic import Field, StrictBool, StrictStr

from ..backends import factory
from ..backends.ray.cluster import RayTask, paused_tasks, pick
from ..engine.manager import SessionManager
from ..engine.session import Session
from ..errors import RelayError
from .base import Context, Operation
from .params import Params, Timeout

WATCH_EVERY = 1.0  # seconds between two looks at the cluster for newly paused tasks
_watching: dict[int, str] = {}  # id of a manager -> the address it watches
# A worker stops counting as paused once a debugger is attached: each manager's attached tasks, by worker id.
_attached: weakref.WeakKeyDictionary[SessionManager, dict[str, RayTask]] = weakref.WeakKeyDictionary()


class RayTasksParams(Params):
    """A Ray cluster to look at."""

    address: StrictStr = Field("auto", description="The cluster: auto (the one this process is the driver of, or "
                               "the local one) or its dashboard address, http://HOST:8265.")


class RayAttachParams(RayTasksParams):
    """Which paused Ray tasks to attach to: one by id, or all of them."""

    id: StrictStr | None = Field(None, description="A task id from ray_tasks (or its worker id, or its name).")
    all: StrictBool = Field(False, description="Attach to every paused task not attached yet.")
    timeout: Timeout = Field(20.0, description="Seconds to wait for each task's stop.")


def _session_name(task: RayTask) -> str:
    return f"{task.name}:{task.pid}"


def _listed(manager: SessionManager, paused: list[RayTask]) -> list[RayTask]:
    """The paused tasks, then those attached whose session lives (Ray no longer counts them as paused)."""
    attached = _attached.setdefault(manager, {})
    for worker_id, task in list(attached.items()):
        if _session_of(manager, task) is None:
            del attached[worker_id]
    waiting = {t.worker_id for t in paused}
    return [*paused, *(t for t in attached.values() if t.worker_id not in waiting)]


def _session_of(manager: SessionManager, task: RayTask) -> Session | None:
    live = [s for s in manager.sessions.values() if s.name == _session_name(task) and not s.ended]
    return live[-1] if live else None


def _row(manager: SessionManager, task: RayTask) -> dict[str, Any]:
    """A task as ray_tasks shows it: with its session, the line it is paused on and the exception once attached."""
    session = _session_of(manager, task)
    stop = session.stop if session is not None else None
    frame = stop.frame if stop is not None else None
    return {**dataclasses.asdict(task), "session": session.name if session else None,
            "where": f"{frame.path}:{frame.line}" if frame is not None else None,
            "exception": stop.exception.type + ": " + stop.exception.message
            if stop is not None and stop.exception is not None else None}


async def _look(address: str, timeout: float) -> list[RayTask]:
    return await asyncio.to_thread(paused_tasks, address, timeout)


async def _watch(manager: SessionManager, address: str) -> None:
    """Publish ``ray_paused`` for each task that pauses from now on, while the relay lives."""
    seen = {t.worker_id for t in await _look(address, 5)}
    try:
        while True:
            await asyncio.sleep(WATCH_EVERY)
            try:
                tasks = await _look(address, 5)
            except RelayError:
                continue  # a cluster restarting: look again
            for task in tasks:
                if task.worker_id not in seen:
                    manager.bus.publish("", "ray_paused", {"task": _row(manager, task)})
            seen = {t.worker_id for t in tasks}
    finally:
        _watching.pop(id(manager), None)


def _start_watch(manager: SessionManager, address: str) -> None:
    if _watching.get(id(manager)) != address:
        _watching[id(manager)] = address
        manager.spawn(_watch(manager, address))


async def _ray_tasks(ctx: Context, p: RayTasksParams) -> dict[str, Any]:
    tasks = _listed(ctx.manager, await _look(p.address, ctx.request_timeout))
    _start_watch(ctx.manager, p.address)
    return {"address": p.address, "tasks": [_row(ctx.manager, t) for t in tasks]}


async def _attach_one(ctx: Context, task: RayTask, timeout: float) -> Session:
    """Attach to a paused worker and wait for its stop: on the ``breakpoint()`` line, or on the exception."""
    # Ray's set_trace stops in its own frame and hands the stop to the caller: library code, which just-my-code
    # would step over without stopping.
    make = factory.attach(ctx.request_timeout, port=task.port, host=task.host, pid=None, just_my_code=False,
                          path_mappings=None)
    session = await ctx.manager.start(make, _session_name(task))
    _attached.setdefault(ctx.manager, {})[task.worker_id] = task
    await session.wait_for_stop(timeout)
    return session


async def _ray_attach(ctx: Context, p: RayAttachParams) -> dict[str, Any]:
    if (p.id is None) == (not p.all):
        raise RelayError("invalid_request", "ray_attach needs a task id or all (one of them).",
                         "e.g. %debug_session ray attach 3f2a9c0e1b7d, or ray attach --all.", {"field": "id"})
    tasks = await _look(p.address, ctx.request_timeout)
    _start_watch(ctx.manager, p.address)
    chosen = [t for t in tasks if _session_of(ctx.manager, t) is None] if p.all else [pick(tasks, p.id or "")]
    started = await asyncio.gather(*(_attach_one(ctx, t, p.timeout) for t in chosen), return_exceptions=True)
    failed = [f"{_session_name(t)}: {e}" for t, e in zip(chosen, started, strict=True) if isinstance(e, Exception)]
    if failed and len(failed) == len(chosen):
        first = next(e for e in started if isinstance(e, Exception))
        raise first if isinstance(first, RelayError) else RelayError("protocol_error", "; ".join(failed))
    return {"sessions": [s.info() for s in started if isinstance(s, Session)], "failed": failed}


OPERATIONS: tuple[Operation, ...] = (
    Operation("ray_tasks", RayTasksParams, _ray_tasks, "List a Ray cluster's paused tasks and actor methods.",
              ("address", "tasks"), ("invalid_request", "unsupported", "not_running"),
              when="Use it when a Ray task or actor hit breakpoint() (or raised, with post-mortem on) to find it.",
              http=("GET /ray/tasks",)),
    Operation("ray_attach", RayAttachParams, _ray_attach,
              "Attach to paused Ray tasks: each becomes a session named after it, paused on its line.",
              ("sessions", "failed"), ("invalid_request", "unsupported", "not_running", "timeout", "protocol_error",
                                       "target_exited"),
              budget=lambda p, t: p.timeout + 2 * t,
              when="Use it after ray_tasks, with a task id or all=true; then stack, evaluate, step and continue.",
              http=("POST /ray/attach",), example={"all": True}),
)

RESULT_TYPES: dict[str, Any] = {"address": str, "tasks": list[dict[str, Any]], "failed": list[str]}
