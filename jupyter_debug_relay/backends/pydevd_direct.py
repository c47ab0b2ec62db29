"""Launched Python targets whose pydevd connects straight to the relay: no ``debugpy.adapter`` process.

The target runs ``python _nodelay_boot.py DEBUGPY_DIR --connect 127.0.0.1:PORT ... script``
in its own process group, stdio on our pipes; its pydevd connects to a listener of
ours, and we speak to it what debugpy's adapter would (``pydevdAuthorize``, then
initialize, launch, breakpoints, configurationDone). One process and two hops fewer
per message than the adapter path.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from typing import Any

import debugpy

from ..errors import RelayError
from ..protocols.dap import DapChannel
from ..transports import process
from ..transports.streams import ByteStream
from .base import BackendEvents
from .debugpy import DebugpyBackend

DEBUGPY_DIR = os.path.dirname(debugpy.__file__)
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

    def _target_argv(self, port: int, token: str) -> list[str]:
        argv = [*self.python_argv, DEBUGPY_DIR, "--connect", f"127.0.0.1:{port}", "--configure-qt", "none",
                "--configure-subProcess", "False", "--adapter-access-token", token]
        if self.module:
            argv += ["-m", self.module]
        else:
            argv.append(self.config["program"])
        return argv + self.target_args

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        accepted: asyncio.Future[ByteStream] = loop.create_future()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if accepted.done():
                writer.close()  # one debuggee per session; a subprocess would connect here too
                return
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            accepted.set_result(ByteStream(reader, writer, "pydevd"))

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0, limit=1 << 20)
        try:
            port = server.sockets[0].getsockname()[1]
            token = secrets.token_hex(16)
            proc = await self._spawn_target(self._target_argv(port, token), self.config.get("cwd"), self.target_env)
            self.pid = proc.pid
            stream = await self._await_connection(accepted, proc)
        finally:
            server.close()
        self.channel = DapChannel(stream, self._on_event, self._on_reverse, self._on_close, self.request_timeout)
        self.channel.start()
        answer = await self.request("pydevdAuthorize", {"debugServerAccessToken": None})
        if answer.get("clientAccessToken") != token:
            raise RelayError("connection_failed", "A process other than the launched target connected to the relay.")

    async def _await_connection(self, accepted: asyncio.Future[ByteStream],
                                proc: asyncio.subprocess.Process) -> ByteStream:
        """The target's pydevd connection, or why the target ended (or hung) before making it."""
        exited = asyncio.ensure_future(proc.wait())
        try:
            await asyncio.wait({accepted, exited}, timeout=CONNECT_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
        if accepted.done():
            return accepted.result()
        if proc.returncode is not None:
            raise RelayError("adapter_failed", f"The target exited with code {proc.returncode} before debugpy "
                             "connected to the relay.",
                             "Its output says why: session.output() or `%debug_session output`.",
                             {"exit_code": proc.returncode})
        raise RelayError("timeout", f"The target's debugpy did not connect within {CONNECT_TIMEOUT:g} s.")

    async def pause(self, thread_id: int | None) -> None:
        await self.request("pause", {"threadId": "*"})  # as debugpy's adapter asks it: every thread

    async def terminate(self) -> None:
        """Kill the target's group, as debugpy's launcher does (pydevd's own ``terminate`` lingers 0.5 s)."""
        proc = self.terminal_proc
        if proc is not None and proc.returncode is None and not self._ended:
            process.kill_group(proc.pid)
            await self._await_end(2.0)
        await self.close()

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
                    self._end()
                return
        await super()._lost(error)
