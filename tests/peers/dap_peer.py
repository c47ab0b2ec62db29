"""A scripted DAP adapter on 127.0.0.1: right answers by default, any body swapped for a bad one by a test.

One thread (1) stopped at a breakpoint after ``configurationDone``; ``continue`` runs it to its end.
``bad`` maps a response's command, an event's name or a reverse request's command to the body (or
arguments) sent instead of the right one; ``early`` maps a request's command to events sent before its
response (as an adapter that verifies a breakpoint before it answers the request that set it, or a step
that stops before its answer; those events then stand instead of the step's own stop).
Serve it in a test's loop (``await peer.start()``), from a thread (``PeerThread``), or as a process:
``python -m tests.peers.dap_peer '{"stopped": {...}}'`` prints its port and serves until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from typing import Any

from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.protocols.dap import encode, read_message

PATH = "/srv/app/main.py"
ANSWERS: dict[str, dict[str, Any]] = {
    "initialize": {"supportsConfigurationDoneRequest": True, "supportsExceptionInfoRequest": True,
                   "supportsSetVariable": True, "supportsCompletionsRequest": True,
                   "exceptionBreakpointFilters": [{"filter": "raised", "label": "Raised"},
                                                  {"filter": "uncaught", "label": "Uncaught"}]},
    "threads": {"threads": [{"id": 1, "name": "MainThread"}]},
    "stackTrace": {"stackFrames": [{"id": 10, "name": "main", "line": 3, "column": 1, "source": {"path": PATH}}],
                   "totalFrames": 1},
    "scopes": {"scopes": [{"name": "Locals", "variablesReference": 20, "expensive": False}]},
    "variables": {"variables": [{"name": "x", "value": "1", "type": "int", "variablesReference": 0},
                                {"name": "items", "value": "[1, 2]", "type": "list", "variablesReference": 21,
                                 "indexedVariables": 2}]},
    "evaluate": {"result": "2", "type": "int", "variablesReference": 0},
    "setVariable": {"value": "5", "type": "int", "variablesReference": 0},
    "exceptionInfo": {"exceptionId": "ValueError", "description": "bad value", "breakMode": "always",
                      "details": {"typeName": "ValueError", "message": "bad value", "stackTrace": "..."}},
    "completions": {"targets": [{"label": "items"}]},
    "continue": {"allThreadsContinued": True},
}
AFTER_CONFIGURATION = (  # the events sent once the client is done configuring: the target runs and stops
    ("thread", {"reason": "started", "threadId": 1}),
    ("output", {"category": "stdout", "output": "hello\n"}),
    ("breakpoint", {"reason": "changed", "breakpoint": {"id": 1, "verified": True, "line": 3}}),
    ("stopped", {"reason": "breakpoint", "threadId": 1, "allThreadsStopped": True, "hitBreakpointIds": [1]}),
)
AT_THE_END = (
    ("continued", {"threadId": 1, "allThreadsContinued": True}),
    ("exited", {"exitCode": 0}),
    ("terminated", {}),
)
EARLY_BY = 0.2  # seconds between a request's early events and its answer
REVERSE = ("runInTerminal",)  # reverse requests, sent only when a test gives their (bad) arguments
PUSHED = ("relayStack",)  # events sent just before the first stop, only when a test gives their (bad) body


class DapPeer:
    """A DAP adapter for one client at a time; ``port`` once started."""

    def __init__(self, bad: dict[str, Any] | None = None,
                 early: dict[str, list[tuple[str, dict[str, Any]]]] | None = None) -> None:
        self.bad = dict(bad or {})
        self.early = dict(early or {})
        self.port = 0
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.StreamWriter] = set()
        self._seq = 0
        self._runs_on = "configurationDone"  # the request after which the target runs

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in self._clients:
                writer.close()
            await self._server.wait_closed()

    def _send(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        self._seq += 1
        writer.write(encode({"seq": self._seq, **message}))

    def _event(self, writer: asyncio.StreamWriter, name: str, body: dict[str, Any]) -> None:
        self._send(writer, {"type": "event", "event": name, "body": self.bad.get(name, body)})

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.add(writer)
        with contextlib.suppress(RelayError, ConnectionError):
            while (message := await read_message(reader)) is not None:
                if message.get("type") == "request":
                    self._answer(writer, message)
                    await writer.drain()
        writer.close()

    def _answer(self, writer: asyncio.StreamWriter, request: dict[str, Any]) -> None:
        command = request["command"]
        arguments = request.get("arguments") or {}
        body: Any = ANSWERS.get(command, {})
        if command in ("setBreakpoints", "setFunctionBreakpoints"):
            body = {"breakpoints": [{"id": n, "verified": True, "line": bp.get("line")}
                                    for n, bp in enumerate(arguments.get("breakpoints") or [], 1)]}
        body = self.bad.get(command, body)
        response = {"type": "response", "request_seq": request["seq"], "success": True, "command": command,
                    "body": body}
        if command in self.early:
            for name, event in self.early[command]:
                self._send(writer, {"type": "event", "event": name, "body": event})
            # answered a moment later, while the client may already ask about what those events said
            asyncio.get_running_loop().call_later(EARLY_BY, self._send, writer, response)
            return
        self._send(writer, response)
        if command == "initialize":
            # an adapter that takes no configurationDone runs the target once attached
            self._runs_on = "configurationDone" if isinstance(body, dict) and body.get(
                "supportsConfigurationDoneRequest") else "attach"
            self._event(writer, "initialized", {})
        elif command == self._runs_on:
            for name in REVERSE:
                if name in self.bad:
                    self._send(writer, {"type": "request", "command": name, "arguments": self.bad[name]})
            for name in PUSHED:
                if name in self.bad:
                    self._event(writer, name, {})
            for name, event in AFTER_CONFIGURATION:
                self._event(writer, name, event)
        elif command in ("next", "stepIn", "stepOut"):
            self._event(writer, "stopped", {"reason": "step", "threadId": 1, "allThreadsStopped": True})
        elif command == "continue":
            for name, event in AT_THE_END:
                self._event(writer, name, event)
        elif command in ("disconnect", "terminate"):
            self._event(writer, "terminated", {})


class PeerThread:
    """A ``DapPeer`` served from a daemon thread with a loop of its own; ``stop()`` ends it."""

    def __init__(self, bad: dict[str, Any] | None = None,
                 early: dict[str, list[tuple[str, dict[str, Any]]]] | None = None) -> None:
        self.peer = DapPeer(bad, early)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="dap peer", daemon=True)
        self._thread.start()
        self.port: int = asyncio.run_coroutine_threadsafe(self.peer.start(), self.loop).result(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.peer.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


async def serve_forever(bad: dict[str, Any]) -> None:
    peer = DapPeer(bad)
    print(await peer.start(), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve_forever(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}))
