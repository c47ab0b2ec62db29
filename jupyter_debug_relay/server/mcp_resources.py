"""MCP resources: each session's output and events, read on demand, with an update notification to subscribers;
and the list of every operation (``debug://operations``), which the lean tool list leaves out."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from ..engine.events import Event
from ..model import as_dict
from ..operations import OPERATIONS
from .routes import STARTS, request_model

OUTPUT, EVENTS = "debug://sessions/{id}/output", "debug://sessions/{id}/events"
OPERATIONS_URI = "debug://operations"
_URI = re.compile(r"debug://sessions/([^/]+)/(output|events)")
READ_CHARS = 8000  # the last characters of output a read returns
READ_EVENTS = 50  # the last events of a session a read returns


def listing() -> str:
    """Every operation, one a line: its name, its parameters (``?`` when optional) and its summary."""
    lines = []
    for op in OPERATIONS.values():
        fields = request_model(op, starts=op.name in STARTS).model_fields
        names = ", ".join(name + ("" if field.is_required() else "?") for name, field in fields.items())
        lines.append(f"{op.name}({names}): {op.summary}")
    return "\n".join(lines)


class Resources:
    """A relay's sessions as resources; a relay event tells the subscribers of the resources it changed."""

    def __init__(self, relay: Any) -> None:
        self.relay = relay
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)  # subscriptions/listen (2026-07-28 clients)
        self._legacy: dict[str, set[Any]] = {}  # uri -> sessions subscribed by resources/subscribe (2025 clients)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: set[str] = set()

    async def start(self) -> None:
        """Follow the relay's events from now on (once; called by the first request)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            await asyncio.to_thread(self.relay.subscribe, self._on_event)

    def _on_event(self, event: Event) -> None:  # on the relay loop
        uris = {EVENTS.format(id=event.session)} | ({OUTPUT.format(id=event.session)} if event.event == "output"
                                                     else set())
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._changed, uris)

    def _changed(self, uris: set[str]) -> None:
        if not self._pending:  # one notification per resource for a burst of events
            asyncio.ensure_future(self._notify())
        self._pending |= uris

    async def _notify(self) -> None:
        await asyncio.sleep(0)
        uris, self._pending = self._pending, set()
        for uri in sorted(uris):
            await self.bus.publish(ResourceUpdated(uri=uri))
            for session in list(self._legacy.get(uri, ())):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a client gone: it is told no more
                    self._legacy[uri].discard(session)

    def listing(self) -> list[types.Resource]:
        every = types.Resource(uri=OPERATIONS_URI, name="operations", mime_type="text/plain",
                               description="Every operation with its parameters: call one with the operation tool.")
        return [every] + [types.Resource(uri=template.format(id=s.id), name=f"{s.name} {kind}", mime_type="text/plain")
                          for s in self.relay.sessions for template, kind in ((OUTPUT, "output"), (EVENTS, "events"))]

    @staticmethod
    def templates() -> list[types.ResourceTemplate]:
        return [types.ResourceTemplate(uri_template=OUTPUT, name="output", mime_type="text/plain",
                                       description="What the session's target printed (the last part)."),
                types.ResourceTemplate(uri_template=EVENTS, name="events", mime_type="application/json",
                                       description="The session's last events, one JSON object a line.")]

    def read(self, uri: str) -> str:
        """The text of resource ``uri``; an MCP error for an unknown one."""
        if uri == OPERATIONS_URI:
            return listing()
        match = _URI.fullmatch(uri)
        if match is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"There is no resource {uri!r}.")
        key, kind = match.groups()
        try:
            handle = self.relay.get(key)
        except Exception:
            raise MCPError(code=types.INVALID_PARAMS, message=f"There is no session {key!r}.") from None
        if kind == "output":
            return "".join(c.text for c in handle.output().chunks)[-READ_CHARS:]
        events = [e for e in self.relay.events_since(0) if e.session == handle.id][-READ_EVENTS:]
        return "\n".join(json.dumps({"seq": e.seq, "event": e.event, "body": as_dict(e.body)}) for e in events)

    def subscribe(self, uri: str, session: Any) -> None:
        self._legacy.setdefault(uri, set()).add(session)

    def unsubscribe(self, uri: str, session: Any) -> None:
        self._legacy.get(uri, set()).discard(session)

    def handlers(self) -> dict[str, Any]:
        """The ``Server`` keyword arguments that serve the resources."""
        async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
            await self.start()
            return types.ListResourcesResult(resources=await asyncio.to_thread(self.listing))

        async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
            return types.ListResourceTemplatesResult(resource_templates=self.templates())

        async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
            await self.start()
            text = await asyncio.to_thread(self.read, str(params.uri))
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text=text)])

        async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
            await self.start()
            self.subscribe(str(params.uri), ctx.session)
            return types.EmptyResult()

        async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
            self.unsubscribe(str(params.uri), ctx.session)
            return types.EmptyResult()

        async def listen(ctx: Any, params: types.SubscriptionsListenRequestParams) -> Any:
            await self.start()
            return await self.listen(ctx, params)

        return {"on_list_resources": list_resources, "on_list_resource_templates": list_templates,
                "on_read_resource": read_resource, "on_subscribe_resource": subscribe,
                "on_unsubscribe_resource": unsubscribe, "on_subscriptions_listen": listen}
