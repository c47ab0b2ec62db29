"""Mycel's own verbs on its backend: ``debug.ready``, ``inspect.*``, ``debug.consume`` and each thread's timeline."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Any

from ...errors import RelayError
from ...protocols import tasks
from ...protocols.timeouts import MAX_TIMEOUT
from ..base import BackendEvents
from . import messages as wire


@dataclass
class _Pull:
    """A ``consume()`` in progress: its connector, the thread its message started, whether it stopped."""

    connector: str
    stopped: asyncio.Future[None]
    thread_id: int | None = None


class MycelVerbs:
    """Mixed into ``MycelBackend``, which provides the connection (``_call``) and the state named below."""

    events: BackendEvents
    request_timeout: float
    capabilities: dict[str, Any]
    sources: list[dict[str, Any]]
    _flow_sources: dict[str, str] | None
    _pulls: list[_Pull]
    _tasks: set[asyncio.Task[Any]]
    _timelines: dict[int, deque[dict[str, Any]]]
    _call: Any

    async def ready(self) -> list[dict[str, Any]]:
        """``debug.ready``: Mycel starts its suspended connectors; returns the event sources."""
        result: wire.Ready = await self._call("debug.ready")
        self.sources = list(result.get("sources") or [])
        self.capabilities["sources"] = self.sources
        return self.sources

    async def inspect(self, what: str, name: str | None = None) -> Any:
        """``inspect.<what>``: flows, flow (with ``name``), connectors, types or transforms."""
        if what not in wire.INSPECTABLE:
            raise RelayError(
                "invalid_request", f"Mycel has no inspect.{what}.", f"Use one of {', '.join(wire.INSPECTABLE)}."
            )
        if what == "flow" and not name:
            raise RelayError(
                "invalid_request",
                "inspect('flow') needs the flow's name.",
                "List them with inspect('flows').",
            )
        return await self._call(f"inspect.{what}", {"name": name} if what == "flow" else None)

    async def consume(self, connector: str) -> dict[str, Any]:
        """Pull one message from a manual-consume connector into its flow.

        Returns ``{"connector", "done", "thread_id"}`` once the message is fully processed
        (``done`` true) or once its thread stopped (``done`` false), or after the request
        timeout (``done`` false; ``thread_id`` None while Mycel still waits for a message on
        an empty queue). An unfinished pull ends in the background; the end of every pull is
        reported by the raw event ``debug.consume``.
        """
        if not connector:
            raise RelayError(
                "invalid_request",
                "consume() needs a connector name.",
                "ready() lists the connectors whose manualConsume is true.",
            )
        if self._flow_sources is None:
            flows: list[wire.Flow] = await self.inspect("flows")
            self._flow_sources = {f["name"]: (f.get("from") or {}).get("connector", "") for f in flows}
        pending = _Pull(connector, asyncio.get_running_loop().create_future())
        self._pulls.append(pending)
        pull = tasks.spawn(self._call("debug.consume", {"connector": connector}, timeout=MAX_TIMEOUT), self._tasks,
                           partial(self._pull_failed, connector))
        pull.add_done_callback(partial(self._pulled, connector))
        try:
            await asyncio.wait(
                {pull, pending.stopped}, timeout=self.request_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            self._pulls.remove(pending)
            pending.stopped.cancel()
        if pull.done():
            pull.result()
        return {"connector": connector, "done": pull.done(), "thread_id": pending.thread_id}

    def _pulled(self, connector: str, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is None:
            self.events.on_raw("mycel", "debug.consume", {"connector": connector, "ok": True})

    def _pull_failed(self, connector: str, error: BaseException) -> None:
        body = {"connector": connector, "ok": False,
                "error": error.to_dict() if isinstance(error, RelayError) else {"message": str(error)}}
        self.events.on_raw("mycel", "debug.consume", body)

    def timeline(self, thread_id: int) -> list[dict[str, Any]]:
        """The Mycel events of one thread, oldest first: ``{"event", "body", "ts"}`` (the last 500)."""
        if thread_id not in self._timelines:
            raise RelayError(
                "invalid_request",
                f"No Mycel thread {thread_id} is known.",
                "Thread ids come from threads() and from stops; long finished ones are forgotten.",
            )
        return list(self._timelines[thread_id])
