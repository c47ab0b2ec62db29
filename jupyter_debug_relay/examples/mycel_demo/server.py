"""The Mycel demo's debug server: Mycel Studio's JSON-RPC 2.0 over a WebSocket at /debug, and a thread to run it in."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import itertools
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from ...protocols.jsonrpc import ErrorCode
from .cel import CelError, evaluate_typed
from .runtime import ClientSession, DebugThread, PipelineRuntime, RpcError

HOST = "127.0.0.1"


class Connection:
    """One WebSocket client; ``session`` is set by ``debug.attach``."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.session: ClientSession | None = None
        self.forwarder: asyncio.Task | None = None


class MycelRuntime(PipelineRuntime):
    """A Mycel-like pipeline runtime with its Studio debug server (in-memory tables, no real brokers).

    It listens on 127.0.0.1 only. Its demo flows: create_user (sanitize, validate_input, enrich,
    transform, write), get_users (read), process_order (from the manual-consume queue orders_queue)
    and record_reading (from the push connector sensors). Besides the Mycel methods it answers
    ``demo.request`` and ``demo.publish``, standing in for a REST client and a message broker.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The arguments are ``PipelineRuntime``'s: flows, connectors, types, transforms, queued messages."""
        super().__init__(*args, **kwargs)
        self.ready = False
        self.url = ""
        self._session_ids = itertools.count(1)
        self._server: Server | None = None
        self._methods: dict[str, Callable[[Connection, dict[str, Any]], Awaitable[Any]]] = {
            "debug.attach": self._attach,
            "debug.detach": self._detach,
            "debug.setBreakpoints": self._set_breakpoints,
            "debug.continue": lambda conn, p: self._resume(conn, p, "continue"),
            "debug.next": lambda conn, p: self._resume(conn, p, "next"),
            "debug.stepInto": lambda conn, p: self._resume(conn, p, "stepInto"),
            "debug.evaluate": self._evaluate,
            "debug.variables": self._variables,
            "debug.threads": self._threads,
            "debug.ready": self._ready,
            "debug.consume": self._consume,
            "inspect.flows": self._inspect_flows,
            "inspect.flow": self._inspect_flow,
            "inspect.connectors": self._inspect_connectors,
            "inspect.types": self._inspect_types,
            "inspect.transforms": self._inspect_transforms,
            "demo.request": self._demo_request,
            "demo.publish": self._demo_publish,
        }

    # -- lifecycle ----------------------------------------------------------

    async def serve(self, port: int = 0) -> str:
        """Listen on 127.0.0.1:``port`` (0 picks one) and return the ``ws://.../debug`` URL."""
        self._server = await serve(self._serve_connection, HOST, port, process_request=self._check_path)
        bound = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://{HOST}:{bound}/debug"
        return self.url

    async def close(self) -> None:
        """Stop listening, drop every client and end every request in flight."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await super().close()

    @staticmethod
    def _check_path(conn: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?")[0] != "/debug":
            return conn.respond(HTTPStatus.NOT_FOUND, "The Mycel debug endpoint is /debug.\n")
        return None

    # -- the WebSocket side ---------------------------------------------------

    async def _serve_connection(self, ws: ServerConnection) -> None:
        conn = Connection(ws)
        handlers: set[asyncio.Task] = set()
        try:
            async for text in ws:
                task = asyncio.ensure_future(self._handle(conn, text))
                handlers.add(task)
                task.add_done_callback(handlers.discard)
        except ConnectionClosed:
            pass
        finally:
            for task in handlers:
                task.cancel()
            self._end_session(conn)

    async def _forward(self, conn: Connection, session: ClientSession) -> None:
        try:
            while True:
                await conn.ws.send(json.dumps(await session.events.get()))
        except ConnectionClosed:
            pass

    async def respond(self, conn: Connection, message: dict[str, Any]) -> None:
        """Send one JSON-RPC response (tests override this to inject faults)."""
        with contextlib.suppress(ConnectionClosed):
            await conn.ws.send(json.dumps(message))

    async def _handle(self, conn: Connection, text: str | bytes) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            await self.respond(conn, _error_reply(None, ErrorCode.PARSE_ERROR, "parse error"))
            return
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            req_id = msg.get("id") if isinstance(msg, dict) else None
            await self.respond(conn, _error_reply(req_id, ErrorCode.INVALID_REQUEST, "invalid request"))
            return
        params = msg.get("params", {})
        try:
            if not isinstance(params, dict):
                raise RpcError(ErrorCode.INVALID_PARAMS, "params must be an object")
            handler = self._methods.get(msg["method"])
            if handler is None:
                raise RpcError(ErrorCode.METHOD_NOT_FOUND, f"unknown method: {msg['method']}")
            if conn.session is None and msg["method"] != "debug.attach":
                raise RpcError(ErrorCode.SESSION_NOT_FOUND, "session not found: call debug.attach first")
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": msg.get("id"),
                "result": await handler(conn, params),
            }
        except RpcError as exc:
            reply = _error_reply(msg.get("id"), exc.code, exc.message)
        if "id" in msg:
            await self.respond(conn, reply)

    def _end_session(self, conn: Connection) -> None:
        session, conn.session = conn.session, None
        if session is None:
            return
        self.sessions.pop(session.id, None)
        if conn.forwarder is not None:
            conn.forwarder.cancel()
        for thread in list(self.threads.values()):
            if thread.session is session:
                thread.session = None
                if thread.paused:
                    assert thread.resume is not None
                    thread.resume.set_result("continue")
        if not self.sessions:
            self.ready = False

    # -- methods ------------------------------------------------------------------

    async def _attach(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        self._end_session(conn)
        session = ClientSession(f"s{next(self._session_ids)}")
        self.sessions[session.id] = session
        conn.session = session
        conn.forwarder = self._spawn(self._forward(conn, session))
        return {"sessionId": session.id, "flows": list(self.flows)}

    async def _detach(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        self._end_session(conn)
        return {"ok": True}

    async def _set_breakpoints(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        flow, specs = params.get("flow"), params.get("breakpoints", [])
        if not isinstance(flow, str) or not flow:
            raise RpcError(ErrorCode.INVALID_PARAMS, "flow is required")
        if flow not in self.flows:
            raise RpcError(ErrorCode.FLOW_NOT_FOUND, "flow not found")
        if not isinstance(specs, list):
            raise RpcError(ErrorCode.INVALID_PARAMS, "breakpoints must be an array")
        clean: list[dict[str, Any]] = []
        for spec in specs:
            if not isinstance(spec, dict) or not isinstance(spec.get("stage"), str):
                raise RpcError(ErrorCode.INVALID_PARAMS, "each breakpoint needs a stage")
            rule_index = spec.get("ruleIndex", -1)
            condition = spec.get("condition", "")
            if (
                not isinstance(rule_index, int)
                or isinstance(rule_index, bool)
                or not isinstance(condition, str)
            ):
                raise RpcError(ErrorCode.INVALID_PARAMS, "ruleIndex must be an integer and condition a string")
            item: dict[str, Any] = {"stage": spec["stage"], "ruleIndex": rule_index}
            if condition:
                item["condition"] = condition
            clean.append(item)
        assert conn.session is not None
        conn.session.breakpoints[flow] = clean
        return {"breakpoints": clean}

    def _thread(self, conn: Connection, params: dict[str, Any], paused: bool = True) -> DebugThread:
        thread_id = params.get("threadId")
        if not isinstance(thread_id, str) or not thread_id:
            raise RpcError(ErrorCode.INVALID_PARAMS, "threadId is required")
        thread = self.threads.get(thread_id)
        if thread is None or thread.session is not conn.session:
            raise RpcError(ErrorCode.THREAD_NOT_FOUND, f"thread not found: {thread_id}")
        if paused and not thread.paused:
            raise RpcError(ErrorCode.INVALID_PARAMS, "thread not paused")
        return thread

    async def _resume(self, conn: Connection, params: dict[str, Any], action: str) -> dict[str, Any]:
        thread = self._thread(conn, params)
        assert thread.resume is not None
        thread.resume.set_result(action)
        return {"ok": True}

    async def _evaluate(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = self._thread(conn, params)
        expression = params.get("expression")
        if not isinstance(expression, str):
            raise RpcError(ErrorCode.INVALID_PARAMS, "expression is required")
        try:
            value, cel_type = evaluate_typed(expression, thread.activation)
        except CelError as exc:
            raise RpcError(ErrorCode.EVAL_ERROR, f"eval error: {exc}") from exc
        return {"result": value, "type": cel_type}

    async def _variables(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(self._thread(conn, params).variables())

    async def _threads(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"threads": [t.info() for t in self.threads.values() if t.session is conn.session]}

    async def _ready(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        self.ready = True
        sources = [self.connectors[name] for name in dict.fromkeys(f.source[0] for f in self.flows.values())]
        return {
            "ok": True,
            "sources": [
                {"connector": c.name, "type": c.type, "source": c.source, "manualConsume": c.manual}
                for c in sources
            ],
        }

    async def _consume(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("connector")
        if not isinstance(name, str) or not name:
            raise RpcError(ErrorCode.INVALID_PARAMS, "connector is required")
        connector = self.connectors.get(name)
        if connector is None:
            raise RpcError(ErrorCode.INTERNAL_ERROR, f"connector {json.dumps(name)} not found")
        if not connector.manual:
            raise RpcError(ErrorCode.INTERNAL_ERROR, f"connector {json.dumps(name)} does not support manual consume")
        if not self.ready:
            raise RpcError(
                ErrorCode.INTERNAL_ERROR, f"connector {json.dumps(name)} is suspended: send debug.ready first"
            )
        message = await self.queues[name].get()
        result = await self.submit(self._flow_of(name).name, message)[1]
        if result["error"]:
            raise RpcError(ErrorCode.INTERNAL_ERROR, result["error"])
        return {"ok": True}

    async def _inspect_flows(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [f.info() for f in self.flows.values()]

    async def _inspect_flow(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise RpcError(ErrorCode.INVALID_PARAMS, "name is required")
        if name not in self.flows:
            raise RpcError(ErrorCode.FLOW_NOT_FOUND, "flow not found")
        return self.flows[name].info()

    async def _inspect_connectors(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": c.name, "type": c.type, "driver": c.driver} for c in self.connectors.values()]

    async def _inspect_types(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": name, "fields": fields} for name, fields in self.types.items()]

    async def _inspect_transforms(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"name": name, "mappings": mappings} for name, mappings in self.transforms.items()]

    async def _demo_request(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        """Not part of Mycel: stands in for a REST request (``curl``) so a client can start a thread."""
        flow, data = params.get("flow"), params.get("input", {})
        if not isinstance(flow, str) or not isinstance(data, dict):
            raise RpcError(ErrorCode.INVALID_PARAMS, "flow (string) and input (object) are required")
        return {"ok": True, "threadId": self.submit(flow, data)[0]}

    async def _demo_publish(self, conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
        """Not part of Mycel: puts a message on a connector, as a broker would."""
        connector, message = params.get("connector"), params.get("message")
        if not isinstance(connector, str) or not isinstance(message, dict):
            raise RpcError(ErrorCode.INVALID_PARAMS, "connector (string) and message (object) are required")
        return {"ok": True, "threadId": self.publish(connector, message)}


def _error_reply(req_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}


# Running it: in a background thread (notebooks, tests) or as a program


class RuntimeThread:
    """A runtime serving on its own event loop in a daemon thread; ``url`` is set once it listens.

    ::

        demo = RuntimeThread()
        url = demo.start()                      # ws://127.0.0.1:PORT/debug
        ...                                     # connect a debugger to url, set stage breakpoints
        demo.request("create_user", {"email": "Ann@Example.com", "name": "Ann"})
        demo.stop()
    """

    def __init__(self, runtime: MycelRuntime | None = None, port: int = 0) -> None:
        self.runtime = runtime if runtime is not None else MycelRuntime()
        self.port = port
        self.url = ""
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="mycel-demo", daemon=True)

    def start(self, timeout: float = 10.0) -> str:
        """Start the loop and the server; returns the URL."""
        self._thread.start()
        self.url = self.call(self.runtime.serve(self.port), timeout)
        return self.url

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 10.0) -> Any:
        """Run a coroutine on the runtime's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def request(self, flow: str, data: dict[str, Any]) -> concurrent.futures.Future[dict[str, Any]]:
        """Send one request through ``flow`` (as the REST connector would); the future holds its result."""

        async def run() -> dict[str, Any]:
            return await self.runtime.submit(flow, data)[1]

        return asyncio.run_coroutine_threadsafe(run(), self.loop)

    def publish(self, connector: str, message: dict[str, Any], timeout: float = 10.0) -> str:
        """Put a message on a connector; returns the thread id when it started a flow at once."""

        async def run() -> str:
            return self.runtime.publish(connector, message)

        return self.call(run(), timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Close the runtime and its loop; safe to call twice."""
        if self.loop.is_closed():
            return
        if self._thread.is_alive():
            self.call(self.runtime.close(), timeout)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
        self.loop.close()

    def __enter__(self) -> RuntimeThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

