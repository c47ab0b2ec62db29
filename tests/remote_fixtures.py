"""A second relay server in its own process with its own file tree, and a TCP proxy that cuts the link to it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

TOKEN = "remote-token-0123456789"


class RemoteRelay:
    """``jupyter-debug-relay serve`` in its own process group, its home and its file tree in a folder of its own."""

    def __init__(self, root: Path, *extra: str) -> None:
        self.root, self.extra = root, extra
        self.tree = root / "tree"
        self.tree.mkdir(parents=True, exist_ok=True)
        self.token_file = root / "token"
        self.token_file.write_text(TOKEN + "\n")
        self.token_file.chmod(0o600)
        self.port = 0
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.lines: list[str] = []

    def start(self) -> RemoteRelay:
        env = {**os.environ, "JUPYTER_DEBUG_RELAY_TOKEN": TOKEN, "JUPYTER_DEBUG_RELAY_HOME": str(self.root / "home")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_debug_relay.cli", "serve", "--port", str(self.port), *self.extra],
            env=env, cwd=self.tree, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True)
        timer = threading.Timer(60, self.stop)
        timer.start()
        try:
            self.url = self.proc.stdout.readline().strip()
            self.lines = [self.url]
            if "--tls-self-signed" in self.extra:
                self.lines.append(self.proc.stdout.readline().strip())
        finally:
            timer.cancel()
        assert self.url.startswith("http"), f"the remote relay did not start: {self.url!r}"
        self.port = int(self.url.rsplit(":", 1)[1])
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.proc = None

    def write(self, name: str, code: str) -> str:
        path = self.tree / name
        path.write_text(code)
        return str(path)


def new_remote(*extra: str) -> RemoteRelay:
    return RemoteRelay(Path(tempfile.mkdtemp(prefix="remote-relay-")), *extra).start()


class Proxy:
    """A TCP proxy on loopback to ``port``; ``cut()`` breaks every connection and refuses new ones until
    ``restore()``."""

    def __init__(self, port: int = 0) -> None:
        self.target = port  # may be set later: the remote is told the proxy's address (--allow-host) first
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.open = True
        self.links: list[socket.socket] = []
        self.lock = threading.Lock()
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
            with self.lock:
                self.accepted += 1
                self.links += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        self.open = False
        with self.lock:
            links, self.links = self.links, []
        for sock in links:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def restore(self) -> None:
        self.open = True

    def close(self) -> None:
        self.cut()
        self.listener.close()
