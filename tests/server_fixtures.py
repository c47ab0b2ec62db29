"""A live relay server on a free port for the HTTP and MCP tests, and the target programs they debug."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from jupyter_debug_relay import Relay
from jupyter_debug_relay.server import RelayServer, ServerConfig

TOKEN = "test-token-0123456789"


@contextmanager
def live_server(token_file: bool | None = None, **config: object) -> Iterator[tuple[RelayServer, httpx.Client]]:
    """A relay served on 127.0.0.1:0 with ``TOKEN`` (its home a temporary folder), and an httpx client;
    ``token_file``: write the token file as a server with a token of its own does (the CLI finds it so)."""
    home = tempfile.mkdtemp(prefix="relay-home-")
    relay = Relay()
    options = {"port": 0, "token": TOKEN, "home": home, **config}
    server = RelayServer(relay, ServerConfig(**options), token_file=token_file).start()  # type: ignore[arg-type]
    client = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    try:
        yield server, client
    finally:
        client.close()
        server.stop()
        relay.close()
        shutil.rmtree(home, ignore_errors=True)


def write(folder: Path, name: str, code: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(code).lstrip())
    return str(path)


def line_of(path: str, marker: str) -> int:
    """The 1-based line of ``path`` holding ``marker``."""
    return next(i for i, text in enumerate(Path(path).read_text().splitlines(), 1) if marker in text)


def ok(response: httpx.Response) -> Any:
    """The JSON of a 200 answer."""
    assert response.status_code == 200, response.text
    return response.json()


def error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The error body of an answer with ``status`` and ``code``, which has a message and a hint."""
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["code"] == code and body["message"] and body["hint"], body
    return body


SERVICE = """
    import time

    counter = 0
    while True:
        counter += 1  # tick
        time.sleep(0.01)
"""


@contextmanager
def debugpy_service(folder: Path, code: str = SERVICE) -> Iterator[tuple[str, int, subprocess.Popen]]:
    """``code`` (a program counting forever) as ``service.py`` under ``python -m debugpy --listen`` on a free
    loopback port, in its own process group: its path, the port and the process; killed at the end."""
    service = write(folder, "service.py", code)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    target = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", service],
                              start_new_session=True)
    try:
        yield service, port, target
    finally:
        os.killpg(target.pid, signal.SIGKILL)
        target.wait(10)
