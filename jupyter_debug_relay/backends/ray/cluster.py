"""A Ray cluster's paused workers: each one a task or an actor method waiting in debugpy for a client.

Ray's ``breakpoint()`` (``RAY_DEBUG=1``, the default since 2.39) and its post-mortem (``RAY_DEBUG_POST_MORTEM=1``)
make the worker listen with debugpy, record the port in the GCS worker table and wait. The state API finds them;
nothing here imports Jupyter, and Ray itself is imported only when a cluster is asked.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from ...errors import RelayError

PAUSED = [("num_paused_threads", "!=", "0")]


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


def paused_tasks(address: str | None = "auto", timeout: float = 10) -> list[RayTask]:
    """The paused tasks and actor methods of the cluster at ``address``, oldest worker first."""
    state = _state()
    where = _address(address)
    try:
        workers = state.list_workers(address=where, filters=PAUSED, detail=True, timeout=int(max(timeout, 1)),
                                     raise_on_missing_output=False)
        running = state.list_tasks(address=where, filters=[("state", "=", "RUNNING")], detail=True,
                                   timeout=int(max(timeout, 1)), raise_on_missing_output=False) if workers else []
    except Exception as exc:  # the state API raises bare ConnectionErrors, RayStateApiExceptions, ValueErrors
        raise RelayError("not_running", f"Cannot read the Ray cluster at {address or 'auto'}: "
                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}.",
                         "Start it (ray start --head) or give its dashboard address, e.g. http://127.0.0.1:8265."
                         ) from None
    by_worker = {t.worker_id: t for t in running if getattr(t, "worker_id", None)}
    found = []
    for w in sorted(workers, key=lambda w: w.start_time_ms or 0):
        if not w.debugger_port:
            continue
        task = by_worker.get(w.worker_id)
        name = (getattr(task, "name", None) or getattr(task, "func_or_class_name", None) or "ray task") \
            if task else "ray worker"
        found.append(RayTask(
            id=w.worker_id[:12], worker_id=w.worker_id, name=name,
            kind="actor" if task is not None and getattr(task, "actor_id", None) else "task",
            job=getattr(task, "job_id", "") or "", node=w.node_id[:12], pid=w.pid, host=w.ip or "127.0.0.1",
            port=w.debugger_port, paused_threads=w.num_paused_threads or 0))
    return found


def pick(tasks: list[RayTask], key: str) -> RayTask:
    """The paused task whose id (or worker id prefix, or name) is ``key``; ``invalid_request`` listing them if none."""
    hits = [t for t in tasks if t.worker_id.startswith(key) or t.name == key]
    if len(hits) == 1:
        return hits[0]
    listed = ", ".join(f"{t.id} ({t.name})" for t in tasks) or "none"
    what = "several" if hits else "no"
    raise RelayError("invalid_request", f"{what.capitalize()} paused Ray task matches {key!r}; paused: {listed}.",
                     "Give a task id from ray_tasks (%debug_session ray).", {"field": "id"})
