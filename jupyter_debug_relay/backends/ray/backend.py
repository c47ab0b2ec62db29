"""debugpy attached to a Ray worker: ending its session leaves the worker running, for Ray owns it."""

from __future__ import annotations

from typing import Any

from ..debugpy.backend import DebugpyBackend


class RayWorkerBackend(DebugpyBackend):
    """An attach to a Ray worker's debugpy whose end (stop, idle timeout, the relay's close) detaches: a worker killed
    by its debugger would fail its task and, joined, every task Ray gives it."""

    async def terminate(self) -> None:
        if self.channel is None or self.channel.closed:
            await self.close()
            return
        await self.detach()


def worker(request_timeout: float, host: str, port: int) -> Any:
    """The session factory of a Ray worker listening on ``host:port``: just-my-code off (Ray's ``set_trace`` hands
    the stop to the task's frame from its own library frame, which just-my-code would step over without stopping)."""
    return lambda events: RayWorkerBackend(events, request_timeout=request_timeout, port=port, host=host, pid=None,
                                           just_my_code=False, path_mappings=None)
