"""Ray's verbs: ``ray_tasks`` lists a cluster's paused tasks and actor methods, ``ray_attach`` makes each a session.

Every paused worker waits in debugpy on its node; attaching is the ``attach`` by port of any debugpy target, with
the session named after the task (``NAME:PID``). Listing also starts a watch that publishes ``ray_paused`` when a
task pauses later, until the relay closes; with ``join`` the watch also attaches to every worker that listens from
its start (a job started with ``ray_runtime_env()``), so the relay's breakpoints stop its tasks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import weakref
from typing import Any

from pydantic import Field, StrictBool, StrictStr

from ..backends.ray.backend import worker
from ..backends.ray.cluster import NO_TASK, RayTask, last_task, listening, pick, worker_end
from ..engine.manager import SessionManager
from ..engine.session import Session
from ..errors import RelayError
from .base import Context, Operation
from .params import Params, Timeout

log = logging.getLogger(__name__)
WATCH_EVERY = 1.0  # seconds between two looks at the cluster for newly paused tasks and newly started workers


@dataclasses.dataclass
class _Cluster:
    """What one relay knows of the Ray cluster it watches: the session on each worker it attached to."""

    address: str = "auto"
    join: bool = False
    request_timeout: float = 10.0
    watching: bool = False
    sessions: dict[str, Session] = dataclasses.field(default_factory=dict)  # worker id -> its session
    tasks: dict[str, RayTask] = dataclasses.field(default_factory=dict)  # worker id -> the worker as last seen
    joined: set[str] = dataclasses.field(default_factory=set)  # worker ids attached by joining, not by a pause
    refused: set[str] = dataclasses.field(default_factory=set)  # worker ids a join failed on: not tried again
    # worker id -> when its session was first seen ended with the worker alive: a detach, or a death not known yet
    ended: dict[str, float] = dataclasses.field(default_factory=dict)


_clusters: weakref.WeakKeyDictionary[SessionManager, _Cluster] = weakref.WeakKeyDictionary()


class RayTasksParams(Params):
    """A Ray cluster to look at."""

    address: StrictStr = Field("auto", description="The cluster: auto (the one this process is the driver of, or "
                               "the local one) or its dashboard address, http://HOST:8265.")
    join: StrictBool = Field(False, description="From now on, also attach to every worker that listens from its "
                             "start (a job started with ray_runtime_env()), so the relay's breakpoints stop its "
                             "tasks; such a worker is listed only while paused.")


class RayAttachParams(RayTasksParams):
    """Which paused Ray tasks to attach to: one by id, or all of them."""

    id: StrictStr | None = Field(None, description="A task id from ray_tasks (or its worker id, or its name).")
    all: StrictBool = Field(False, description="Attach to every paused task not attached yet.")
    timeout: Timeout = Field(20.0, description="Seconds to wait for each task's stop.")


def _session_name(task: RayTask) -> str:
    """``TASK:PID``, one word however the task was named (a name is given as ``--session NAME`` in magics)."""
    return f"{'-'.join(task.name.split()) or NO_TASK}:{task.pid}"


def _cluster(manager: SessionManager) -> _Cluster:
    return _clusters.setdefault(manager, _Cluster())


def _session_of(manager: SessionManager, worker_id: str) -> Session | None:
    session = _cluster(manager).sessions.get(worker_id)
    return session if session is not None and not session.ended else None


def _follow(manager: SessionManager, task: RayTask) -> None:
    """Name a worker's paused session after the task paused now: a worker runs one task after another."""
    session = _session_of(manager, task.worker_id)
    if session is None or session.state != "paused" or task.name == NO_TASK:
        return
    name = _session_name(task)
    if not any(s.name == name and not s.ended for s in manager.sessions.values()):  # this one's already, or another's
        session.rename(name)  # attached before the cluster named its task: the name it was given still finds it


def _shown(manager: SessionManager, workers: list[RayTask]) -> list[RayTask]:
    """The workers ray_tasks lists: paused in Ray's breakpoint() and not attached, or attached and paused."""
    rows = []
    for task in workers:
        session = _session_of(manager, task.worker_id)
        if session is None and task.paused_threads or session is not None and session.state == "paused":
            _follow(manager, task)
            rows.append(task)
    return rows


def _row(manager: SessionManager, task: RayTask) -> dict[str, Any]:
    """A task as ray_tasks shows it: with its session, the line it is paused on and the exception once attached."""
    session = _session_of(manager, task.worker_id)
    stop = session.stop if session is not None else None
    frame = stop.frame if stop is not None else None
    return {**dataclasses.asdict(task), "session": session.name if session else None,
            "where": f"{frame.path}:{frame.line}" if frame is not None else None,
            "exception": stop.exception.type + ": " + stop.exception.message
            if stop is not None and stop.exception is not None else None}


ALIVE_AFTER_END = 5.0  # seconds a worker lives on after its session ended before it counts as detached, not dead


async def _look(manager: SessionManager, address: str, timeout: float, tasks: bool = True) -> list[RayTask]:
    """The cluster's listening workers; each attached one whose worker is gone gets the reason on its session."""
    workers = await asyncio.to_thread(listening, address, timeout, tasks)
    cluster = _cluster(manager)
    alive = {t.worker_id: t for t in workers}
    for worker_id, session in list(cluster.sessions.items()):
        now = alive.get(worker_id)
        if now is not None and now.name != NO_TASK:  # a look that skipped the tasks keeps the name last seen
            cluster.tasks[worker_id] = now
        if not session.ended:
            continue
        if now is not None and time.monotonic() - cluster.ended.setdefault(worker_id, time.monotonic()) \
                < ALIVE_AFTER_END:
            continue
        gone, joined = cluster.tasks.pop(worker_id, None), worker_id in cluster.joined
        del cluster.sessions[worker_id]
        cluster.ended.pop(worker_id, None)
        cluster.joined.discard(worker_id)
        if joined and not session.stops:
            manager.forget(session)  # a joined worker that ended without stopping: nothing to look at
        elif now is None and gone is not None and session.error is None and not session.stopped_by_user:
            await _say_why(manager, session, gone, address)
    return workers


async def _say_why(manager: SessionManager, session: Session, task: RayTask, address: str) -> None:
    """Put on an ended session why its worker went away, as Ray tells it (killed, its node lost, ...)."""
    why, ran = await asyncio.gather(asyncio.to_thread(worker_end, address, task.worker_id),
                                    asyncio.to_thread(last_task, address, task.worker_id))
    session.error = RelayError("target_exited", f"The Ray worker {task.pid} running {ran or task.name} ended: {why}.",
                               "Its task fails in the driver (ray.get raises); run it again to debug it.",
                               {"worker_id": task.worker_id, "pid": task.pid})
    session.backend.end_error = session.error  # what a wait on the session answers
    session.emit("error", session.error.to_dict())


async def _join(manager: SessionManager, task: RayTask) -> None:
    """Attach to a worker that listens without being paused: the relay's breakpoints go to it as to any session."""
    cluster = _cluster(manager)
    cluster.joined.add(task.worker_id)
    try:
        await _attach(manager, task, f"ray-worker:{task.pid}")
    except RelayError as exc:  # e.g. another debugger holds the worker: leave it to that one
        log.warning("Ray worker %s not joined: %s", task.pid, exc)
        cluster.joined.discard(task.worker_id)
        cluster.refused.add(task.worker_id)
        failed = cluster.sessions.pop(task.worker_id, None)
        if failed is not None:
            manager.forget(failed)


async def _watch(manager: SessionManager) -> None:
    """Publish ``ray_paused`` for each task that pauses from now on and, joining, attach to new workers."""
    cluster = _cluster(manager)
    seen: set[str] = set()
    try:
        while True:
            try:
                paused_session = any(s.state == "paused" for s in cluster.sessions.values())
                workers = await _look(manager, cluster.address, 5, tasks=paused_session)
            except RelayError:
                await asyncio.sleep(WATCH_EVERY)
                continue  # a cluster restarting: look again
            rows = _shown(manager, workers)
            for task in rows:
                if task.worker_id not in seen:
                    manager.bus.publish("", "ray_paused", {"task": _row(manager, task)})
            seen = {t.worker_id for t in rows}
            if cluster.join:
                for task in workers:
                    if not task.paused_threads and task.worker_id not in cluster.sessions \
                            and task.worker_id not in cluster.refused:
                        manager.spawn(_join(manager, task))
            await asyncio.sleep(WATCH_EVERY)
    finally:
        cluster.watching = False


def _start_watch(ctx: Context, address: str, join: bool) -> None:
    cluster = _cluster(ctx.manager)
    cluster.address, cluster.join, cluster.request_timeout = address, cluster.join or join, ctx.request_timeout
    if not cluster.watching:
        cluster.watching = True
        ctx.manager.spawn(_watch(ctx.manager))


async def _ray_tasks(ctx: Context, p: RayTasksParams) -> dict[str, Any]:
    _start_watch(ctx, p.address, p.join)
    tasks = _shown(ctx.manager, await _look(ctx.manager, p.address, ctx.request_timeout))
    return {"address": p.address, "tasks": [_row(ctx.manager, t) for t in tasks]}


async def _attach(manager: SessionManager, task: RayTask, name: str) -> Session:
    cluster = _cluster(manager)
    make = worker(cluster.request_timeout, task.host, task.port)
    session = manager.create(make, name)
    cluster.sessions[task.worker_id], cluster.tasks[task.worker_id] = session, task
    cluster.ended.pop(task.worker_id, None)
    await session.start()
    return session


async def _attach_one(ctx: Context, task: RayTask, timeout: float) -> Session:
    """Attach to a paused worker and wait for its stop: on the ``breakpoint()`` line, or on the exception."""
    session = await _attach(ctx.manager, task, _session_name(task))
    await session.wait_for_stop(timeout)
    return session


async def _ray_attach(ctx: Context, p: RayAttachParams) -> dict[str, Any]:
    if (p.id is None) == (not p.all):
        raise RelayError("invalid_request", "ray_attach needs a task id or all (one of them).",
                         "e.g. %debug_session ray attach 3f2a9c0e1b7d, or ray attach --all.", {"field": "id"})
    _start_watch(ctx, p.address, p.join)
    waiting = [t for t in await _look(ctx.manager, p.address, ctx.request_timeout)
               if t.paused_threads and _session_of(ctx.manager, t.worker_id) is None]
    chosen = waiting if p.all else [pick(waiting, p.id or "")]
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
