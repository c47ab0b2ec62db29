"""A scripted Mycel debug endpoint (JSON-RPC 2.0 on a WebSocket): right answers unless ``bad`` replaces one.

One flow, ``orders``; after ``debug.ready`` thread ``t1`` starts and stops at a transform rule breakpoint,
and ``debug.continue`` runs it to its end. ``bad`` maps a method to the result sent instead, or a
notification to the params sent instead.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

RULE = {"index": 0, "target": "total", "expression": "input.a + input.b"}
RESULTS: dict[str, Any] = {
    "debug.attach": {"sessionId": "s1", "flows": ["orders"]},
    "debug.ready": {"ok": True, "sources": [{"connector": "queue", "manualConsume": True}]},
    "debug.threads": {"threads": [{"id": "t1", "flowName": "orders", "paused": True}]},
    "debug.variables": {"input": {"a": 1, "b": [2, 3]}, "rule": RULE},
    "debug.evaluate": {"result": 3, "type": "int"},
    "inspect.flows": [{"name": "orders", "from": {"connector": "queue", "operation": "pull"}}],
    "debug.consume": {"ok": True},
}
AFTER = {  # method -> the notifications sent after its answer
    "debug.ready": (
        ("event.flowStart", {"threadId": "t1", "flowName": "orders", "input": {"a": 1}}),
        ("event.stopped", {"threadId": "t1", "flowName": "orders", "stage": "transform", "name": "",
                           "reason": "breakpoint", "rule": RULE}),
    ),
    "debug.continue": (
        ("event.continued", {"threadId": "t1"}),
        ("event.flowEnd", {"threadId": "t1", "output": {"total": 3}, "error": ""}),
    ),
}


class JsonRpcPeer:
    """Serves the script on 127.0.0.1; ``url`` once started."""

    def __init__(self, bad: dict[str, Any] | None = None) -> None:
        self.bad = dict(bad or {})
        self.url = ""
        self._server: Server | None = None

    async def start(self) -> str:
        self._server = await serve(self._serve, "127.0.0.1", 0)
        port = next(iter(self._server.sockets)).getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/debug"
        return self.url

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, ws: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for text in ws:
                request = json.loads(text)
                method = request["method"]
                result = self.bad.get(method, RESULTS.get(method, {"ok": True}))
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))
                for name, params in AFTER.get(method, ()):
                    await ws.send(json.dumps({"jsonrpc": "2.0", "method": name, "params": self.bad.get(name, params)}))
