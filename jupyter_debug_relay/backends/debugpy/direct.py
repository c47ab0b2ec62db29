"""Launched Python targets whose pydevd connects straight to the relay: no ``debugpy.adapter`` process.

The target runs ``python _boot_script.py DEBUGPY_DIR --connect 127.0.0.1:PORT ... script`` (the boot)
in its own process group, stdio on our pipes; its pydevd connects to a listener of
ours, and we speak to it what debugpy's adapter would (``pydevdAuthorize``, then
initialize, launch, breakpoints, configurationDone). One process and two hops fewer
per message than the adapter path.

Any local user can read the port from ``/proc/PID/cmdline`` and connect first, so a
connection proves itself before anything it sends is acted on: it must answer
``pydevdAuthorize`` with a fresh token that reached the target only in its environment
(``/proc/PID/environ`` is its owner's alone). Other connections are closed and logged,
and the listener keeps waiting for the target. pydevd never needs a reverse request: any is refused.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import debugpy

from ...errors import RelayError
from ...protocols.dap import DapChannel, encode, read_message
from ...transports import process
from ...transports.streams import ByteStream
from ..base import BackendEvents
from .backend import BOOT_VARIABLE, DebugpyBackend

DEBUGPY_DIR = os.path.dirname(debugpy.__file__)
log = logging.getLogger(__name__)
CONNECT_TIMEOUT = 30.0  # debugpy's own PROCESS_SPAWN_TIMEOUT is 60 s; a cold import of pydevd takes ~1 s


class PydevdDirectBackend(DebugpyBackend):
    """debugpy's launch path without its adapter: the target's pydevd is the DAP peer."""

    launch_adapter = None  # the target connects to us itself

    def __init__(self, events: BackendEvents, **options: Any) -> None:
        if options.get("port") is not None or options.get("pid") is not None:
            raise RelayError("invalid_request", "The direct pydevd backend only launches; attach through debugpy.")
        if options.get("subprocess"):
            raise RelayError("unsupported", "The direct pydevd backend does not debug child processes yet.",
                             "Launch with subprocess=False, or through debugpy's adapter.")
        super().__init__(events, **options)
        self.adapter_name = "pydevd"
        self.python_argv: list[str] = self.config.pop("python")
        self.target_env: dict[str, str] = self.config.pop("env")
        self.target_args: list[str] = self.config.pop("args")
        self.config.pop("console")
        self.config["isOutputRedirected"] = False  # the program's output reaches us on its pipes

    def _target_argv(self, port: int) -> list[str]:
        argv = [*self.python_argv, DEBUGPY_DIR, "--connect", f"127.0.0.1:{port}", "--configure-qt", "none",
                "--configure-subProcess", "False"]
        if self.module:
            argv += ["-m", self.module]
        else:
            argv.append(self.config["program"])
        return argv + self.target_args

    connect_timeout = CONNECT_TIMEOUT

    async def _open(self) -> None:
        stream = await self._proven_peer(self._start_target)
        self.channel = DapChannel(stream, self._on_event, self._on_reverse, self._on_close, self.request_timeout)
        self.channel.start()
        self.startup.mark("connect")

    async def _start_target(self, port: int, token: str) -> asyncio.Future[RelayError]:
        """Spawn the target, its pydevd told to connect to ``port`` with ``token``; what ends its chance to."""
        boot = {**json.loads(self.target_env[BOOT_VARIABLE]), "token": token, "free_children": True,
                "stack_with_stops": True}
        env = {**self.target_env, BOOT_VARIABLE: json.dumps(boot)}
        proc = await self._spawn_target(self._target_argv(port), self.config.get("cwd"), env)
        self.pid = proc.pid

        async def exited() -> RelayError:
            code = await proc.wait()
            return RelayError("adapter_failed", f"The target exited with code {code} before debugpy connected "
                              "to the relay.", "Its output says why: session.output() or `%debug_session output`.",
                              {"exit_code": code})

        return asyncio.ensure_future(exited())

    async def _proven_peer(self, start: Callable[[int, str], Awaitable[asyncio.Future[RelayError]]]) -> ByteStream:
        """Listen on 127.0.0.1, have ``start(port, token)`` start the target; its pydevd's connection once it
        answers ``pydevdAuthorize`` with the token (any other is turned away), or why it never came."""
        loop = asyncio.get_running_loop()
        proven: asyncio.Future[ByteStream] = loop.create_future()
        token = secrets.token_hex(32)
        deadline = loop.time() + self.connect_timeout
        checks: set[asyncio.Task[None]] = set()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            peer = ByteStream(reader, writer, "pydevd")
            if proven.done():
                _turn_away(peer, "after the target's")  # one debuggee per session
                return
            check = loop.create_task(_prove(peer, token, proven, deadline - loop.time()))
            checks.add(check)
            check.add_done_callback(checks.discard)

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0, limit=1 << 20)
        gone: asyncio.Future[RelayError] | None = None
        try:
            gone = await start(server.sockets[0].getsockname()[1], token)
            await asyncio.wait({proven, gone}, timeout=max(deadline - loop.time(), 0.1),
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            server.close()
            for check in list(checks):
                check.cancel()
            if gone is not None and not gone.done():
                gone.cancel()
        if proven.done():
            return proven.result()
        if gone.done() and not gone.cancelled():
            raise gone.result()
        raise RelayError("timeout", f"The target's debugpy did not connect within {self.connect_timeout:g} s.")

    def _event_relayStartup(self, body: dict[str, Any]) -> None:
        """The boot's word of when the target's own phases ended (interpreter start, debugger import)."""
        for phase in ("interpreter start", "debugger import"):
            at = body.get(phase)
            if isinstance(at, float) and self.startup.begun <= at <= time.time():
                self.startup.mark(phase, at)

    def _event_relayForked(self, body: dict[str, Any]) -> None:
        """The boot's word that the target forked a child, which runs free of the debugger."""
        self.events.on_subprocess(body["pid"], False)

    async def _on_reverse(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """pydevd never asks its client to run anything: no reverse request is honoured on this path."""
        raise RelayError("unsupported", f"The relay refuses {command!r} from a launched target's pydevd.")

    async def pause(self, thread_id: int | None) -> None:
        await self.request("pause", {"threadId": "*"})  # as debugpy's adapter asks it: every thread

    async def terminate(self) -> None:
        """Kill the target's group, as debugpy's launcher does (pydevd's own ``terminate`` lingers 0.5 s)."""
        proc = self.terminal_proc
        if proc is not None and proc.returncode is None and not self._ended:
            process.kill_group(proc.pid)
            await self._await_end(2.0)
        await self.close()

    async def ended_once_released(self) -> bool:
        """A program that ends at once (killed by its first line) can end before its pydevd's writer sends the
        answer to ``configurationDone``: the program ran, and its end is the session's."""
        proc = self.terminal_proc
        if proc is None:
            return False
        try:
            self._exit_code = await asyncio.wait_for(proc.wait(), 2.0)
        except asyncio.TimeoutError:
            return False
        await self._end_once_read()
        return True

    async def _lost(self, error: Exception | None) -> None:
        """The connection closed: when the target ended, that is its end, with its exit code."""
        proc = self.terminal_proc
        if proc is not None:
            try:
                self._exit_code = await asyncio.wait_for(proc.wait(), 2.0)
            except asyncio.TimeoutError:
                pass
            else:
                if not self._closing:
                    await self._end_once_read()
                return
        await super()._lost(error)


async def _prove(peer: ByteStream, token: str, proven: asyncio.Future[ByteStream], within: float) -> None:
    """Hand ``peer`` on once it answers ``pydevdAuthorize`` with the target's token; turn it away if not."""
    ok = False
    try:
        ok = await asyncio.wait_for(_authorized(peer, token), max(within, 0.1))
    except (RelayError, OSError, asyncio.TimeoutError):
        pass
    except asyncio.CancelledError:  # the session opened with another connection, or gave up
        _turn_away(peer, "without the target's token")
        raise
    if ok and not proven.done():
        sock = peer.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        proven.set_result(peer)
    else:
        _turn_away(peer, "after the target's" if ok else "without the target's token")


async def _authorized(peer: ByteStream, token: str) -> bool:
    """Ask the peer for the token; nothing it sends before the answer is acted on."""
    peer.write(encode({"seq": 1, "type": "request", "command": "pydevdAuthorize",
                       "arguments": {"debugServerAccessToken": None}}))
    while (message := await read_message(peer.reader)) is not None:
        if message.get("type") == "response" and message.get("request_seq") == 1:
            body = message.get("body")
            answer = body.get("clientAccessToken") if isinstance(body, dict) else None
            return bool(message.get("success")) and isinstance(answer, str) and hmac.compare_digest(answer, token)
    return False


def _turn_away(peer: ByteStream, why: str) -> None:
    host, port = (peer.writer.get_extra_info("peername") or ("?", 0))[:2]
    log.warning("Closed a connection from %s:%s to the relay's pydevd listener: it came %s.", host, port, why)
    peer.close()
