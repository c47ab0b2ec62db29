"""A real Jupyter kernel driven through jupyter_client, as a notebook frontend or an agent drives it."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import KernelManager

APP = """
import sys

def compute(items):
    total = 0
    for i, x in enumerate(items):
        total += x * i  # accumulate
    return total

data = {"a": [1, 2, 3], "name": "bob", "text": "a#b"}
print("start")
result = compute([3, 4, 5, 6])
print("result", result)
sys.exit(3)
"""

UID = r"\d{8}-\d{6}-[0-9a-f]{4}"  # a session's unique id in the store, as `%dbg list` shows it beside s1


@dataclass
class Cell:
    """What one execution produced."""

    status: str
    results: list[dict[str, Any]] = field(default_factory=list)  # data bundles of execute_result/display_data
    streams: str = ""
    error: dict[str, Any] | None = None
    elapsed: float = 0.0
    pages: list[str] = field(default_factory=list)  # what `?` and friends send to the pager

    @property
    def text(self) -> str:
        return "\n".join(r.get("text/plain", "") for r in self.results)

    @property
    def html(self) -> str:
        return "\n".join(r.get("text/html", "") for r in self.results)


class Kernel:
    """Starts a kernel, runs cells, opens comms; every iopub message is routed by one reader thread."""

    def __init__(self, kernel_name: str = "python3", cwd: str | None = None, env: dict[str, str] | None = None
                 ) -> None:
        self.manager = KernelManager(kernel_name=kernel_name)
        self.manager.start_kernel(cwd=cwd, env={**os.environ, **(env or {})}, stderr=subprocess.DEVNULL)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self._outputs: dict[str, list[dict[str, Any]]] = {}
        self._idle: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self.comm_messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self._running = True
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.manager.provisioner.process.pid

    def _read(self) -> None:
        while self._running:
            try:
                msg = self.client.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            except Exception:
                return
            if msg["msg_type"] in ("comm_msg", "comm_open", "comm_close"):
                self.comm_messages.put(msg)
                continue
            parent = msg["parent_header"].get("msg_id")
            with self._lock:
                self._outputs.setdefault(parent, []).append(msg)
                done = self._idle.setdefault(parent, threading.Event())
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                done.set()

    def run(self, code: str, timeout: float = 60.0) -> Cell:
        """Execute ``code`` and wait for it to finish (its reply and its idle status)."""
        started = time.perf_counter()
        msg_id = self.client.execute(code, store_history=False)
        with self._lock:
            done = self._idle.setdefault(msg_id, threading.Event())
        reply = self.client.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=timeout)
        assert done.wait(timeout), f"no idle status after {code!r}"
        cell = Cell(status=reply["content"]["status"], elapsed=time.perf_counter() - started,
                    pages=[p["data"].get("text/plain", "") for p in reply["content"].get("payload", [])
                           if p.get("source") == "page"])
        with self._lock:
            messages = self._outputs.pop(msg_id, [])
            self._idle.pop(msg_id, None)
        for msg in messages:
            kind, content = msg["msg_type"], msg["content"]
            if kind in ("execute_result", "display_data"):
                cell.results.append(content["data"])
            elif kind == "stream":
                cell.streams += content["text"]
            elif kind == "error":
                cell.error = content
        return cell

    def magic(self, line: str, timeout: float = 60.0) -> Cell:
        """Run a magic line; it must succeed at the kernel level (a debug error is a result, not a failure)."""
        cell = self.run(line, timeout)
        assert cell.status == "ok" and cell.error is None, f"{line!r} raised: {cell.error}"
        assert "Traceback" not in cell.streams, cell.streams
        return cell

    def complete(self, code: str) -> list[str]:
        msg_id = self.client.complete(code, len(code))
        reply = self.client.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=30)
        return reply["content"]["matches"]

    # -- comms ------------------------------------------------------------------------------

    def comm_open(self, target: str = "jupyter_debug_relay", data: dict[str, Any] | None = None) -> str:
        comm_id = uuid.uuid4().hex
        msg = self.client.session.msg("comm_open", {"comm_id": comm_id, "target_name": target, "data": data or {}})
        self.client.shell_channel.send(msg)
        return comm_id

    def comm_send(self, comm_id: str, data: Any) -> None:
        self.client.shell_channel.send(self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def comm_close(self, comm_id: str) -> None:
        self.client.shell_channel.send(self.client.session.msg("comm_close", {"comm_id": comm_id, "data": {}}))

    def comm_data(self, timeout: float = 10.0) -> tuple[str, dict[str, Any]]:
        """The next message the kernel sent on any comm: (comm id, data)."""
        msg = self.comm_messages.get(timeout=timeout)
        return msg["content"]["comm_id"], msg["content"]["data"]

    def close(self) -> None:
        self._running = False
        self.client.stop_channels()
        if self.manager.is_alive():
            self.manager.shutdown_kernel(now=False)
