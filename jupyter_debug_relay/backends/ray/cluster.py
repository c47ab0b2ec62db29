"""A Ray cluster's paused workers: each one a task or an actor method waiting in debugpy for a client.

Ray's ``breakpoint()`` (``RAY_DEBUG=1``, the default since 2.39) and its post-mortem (``RAY_DEBUG_POST_MORTEM=1``)
make the worker listen with debugpy, record the port in the GCS worker table and wait. The state API finds them;
nothing here imports Jupyter, and Ray itself is imported only when a cluster is asked.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from ...errors import RelayError

ALIVE = [("is_alive", "=", "True")]
NO_TASK = "ray-worker"  # the name of a worker whose task was not looked up, or that runs none


@dataclass
class RayTask:
    """One paused Ray worker: the task or actor method it runs, where, and the debugpy port it waits on."""

    id: str  # the worker id's first 12 hex digits: unique enough to type, stable while the worker lives
    worker_id: str
    name: str  # the task's function or the actor's Class.method
    kind: str  # task | actor
    job: str
    node: str
    pid: int
    host: str
    port: int
    paused_threads: int


def ray_available() -> bool:
    """Whether Ray can be imported here (the ``[ray]`` extra)."""
    return importlib.util.find_spec("ray") is not None


def _state():
    if not ray_available():
        raise RelayError("unsupported", "Ray is not installed in the kernel's environment.",
                         "pip install \"jupyter_debug_relay[ray]\"")
    from ray.util import state  # here, not at the top: loading Ray costs a second and most kernels never do

    return state


def _address(address: str | None) -> str | None:
    """The state API's address: None (the connected driver's or the local cluster's) for ``auto``."""
    return None if address in (None, "", "auto") else address


def _current(tasks: list) -> dict[str, object]:
    """Each worker's task now: the latest started of those the state API still calls running on it.

    A worker runs one task after another and the state API hears of a task's end a moment late, so a reused worker
    may have two running tasks listed, the one that ended and the one it runs now.
    """
    current: dict[str, object] = {}
    for task in sorted(tasks, key=lambda t: getattr(t, "start_time_ms", None) or 0):
        if getattr(task, "worker_id", None):
            current[task.worker_id] = task
    return current


def _task_name(task: object) -> str:
    return getattr(task, "name", None) or getattr(task, "func_or_class_name", None) or "ray task"


def listening(address: str | None = "auto", timeout: float = 10, tasks: bool = True) -> list[RayTask]:
    """The live workers of the cluster at ``address`` that listen with debugpy, oldest first, each with its task.

    A worker listens once a task reached ``breakpoint()`` (it is paused then) or, in a job started with
    ``ray_runtime_env()``, from its start. ``tasks=False`` skips the look at the tasks when no worker is paused.
    """
    state = _state()
    where = _address(address)
    wait = int(max(timeout, 1))
    try:
        workers = [w for w in state.list_workers(address=where, filters=ALIVE, detail=True, timeout=wait,
                                                 raise_on_missing_output=False) if w.debugger_port]
        running = state.list_tasks(address=where, filters=[("state", "=", "RUNNING")], detail=True, timeout=wait,
                                   raise_on_missing_output=False) if workers and (
            tasks or any(w.num_paused_threads for w in workers)) else []
    except Exception as exc:  # the state API raises bare ConnectionErrors, RayStateApiExceptions, ValueErrors
        raise RelayError("not_running", f"Cannot read the Ray cluster at {address or 'auto'}: "
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}.",
                         "Start it (ray start --head) or give its dashboard address, e.g. http://127.0.0.1:8265."
                         ) from None
    by_worker = _current(running)
    found = []
    for w in sorted(workers, key=lambda w: w.start_time_ms or 0):
        task = by_worker.get(w.worker_id)
        name = _task_name(task) if task else NO_TASK
        found.append(RayTask(
            id=w.worker_id[:12], worker_id=w.worker_id, name=name,
            kind="actor" if task is not None and getattr(task, "actor_id", None) else "task",
            job=getattr(task, "job_id", "") or "", node=w.node_id[:12], pid=w.pid, host=w.ip or "127.0.0.1",
            port=w.debugger_port, paused_threads=w.num_paused_threads or 0))
    return found


def worker_end(address: str | None, worker_id: str, timeout: float = 5) -> str:
    """Why a worker is gone, as the cluster tells it: its exit type and detail."""
    try:
        found = _state().list_workers(address=_address(address), filters=[("worker_id", "=", worker_id)],
                                      detail=True, timeout=int(max(timeout, 1)), raise_on_missing_output=False)
    except Exception:  # the cluster itself may be gone with the worker
        return "the cluster does not say why (it may be gone too)"
    if not found:
        return "the cluster no longer knows it"
    said = [str(part).split(". ")[0].strip().rstrip(".") for part in (found[0].exit_type, found[0].exit_detail)
            if part]
    return ", ".join(said) or "the cluster gives no reason"


def last_task(address: str | None, worker_id: str, timeout: float = 5) -> str | None:
    """The name of the task a worker started last, as the cluster's task table has it (None if it has none).

    What a worker ran when it died: a worker runs one task after another, so the one seen when it last paused may
    have ended long before.
    """
    try:
        tasks = _state().list_tasks(address=_address(address), filters=[("worker_id", "=", worker_id)], detail=True,
                                    timeout=int(max(timeout, 1)), raise_on_missing_output=False)
    except Exception:  # the cluster itself may be gone with the worker
        return None
    task = _current(tasks).get(worker_id)
    return _task_name(task) if task is not None else None


def pick(tasks: list[RayTask], key: str) -> RayTask:
    """The paused task whose id (or worker id prefix, or name) is ``key``; ``invalid_request`` listing them if none."""
    hits = [t for t in tasks if t.worker_id.startswith(key) or t.name == key]
    if len(hits) == 1:
        return hits[0]
    listed = ", ".join(f"{t.id} ({t.name})" for t in tasks) or "none"
    what = "several" if hits else "no"
    raise RelayError("invalid_request", f"{what.capitalize()} paused Ray task matches {key!r}; paused: {listed}.",
                     "Give a task id from ray_tasks (%debug_session ray).", {"field": "id"})
