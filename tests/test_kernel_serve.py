"""`%debug_session serve` in a real kernel: an agent over HTTP and the magics and the panel share one relay."""

from __future__ import annotations

import json
import os
import re
import socket
import stat

import httpx
import pytest

from tests.conftest import line_of
from tests.kernels import UID, Kernel
from tests.test_kernel_comm import open_frontend

APP = """
def total(items):
    acc = 0
    for item in items:
        acc += item  # add
    return acc

print("result", total([3, 4, 5]))  # call
"""


@pytest.fixture
def kernel(tmp_path):
    """A python3 kernel with the extension loaded, its Jupyter runtime dir (token files) in the test's folder."""
    k = Kernel("python3", cwd=str(tmp_path), env={"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")})
    k.magic("%load_ext jupyter_debug_relay")
    yield k
    k.close()


def served(text: str) -> str:
    match = re.search(r"serving this kernel's sessions at (http://127\.0\.0\.1:\d+)", text)
    assert match, text
    return match.group(1)


def port_free(url: str) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", int(url.rsplit(":", 1)[1])))
        except OSError:
            return False
        return True


def test_an_agent_over_http_and_the_magics_and_the_panel_drive_the_same_session(kernel, write):
    app = write("app.py", APP)
    front = open_frontend(kernel)
    text = kernel.magic("%debug_session serve --token agent-secret-1").text
    url = served(text)
    assert text.endswith("token: agent-secret-1")
    with httpx.Client(base_url=url, headers={"Authorization": "Bearer agent-secret-1"}, timeout=60) as api:
        assert api.get("/sessions").json() == {"sessions": []}
        sid = api.post("/sessions", json={"name": "agent"}).json()["session"]["id"]
        api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# add")}).raise_for_status()
        started = api.post(f"/sessions/{sid}/launch", json={"program": app}).json()
        assert started["state"] == "paused" and started["stop"]["frame"]["line"] == line_of(app, "# add")

        listed = kernel.magic("%debug_session list").text
        assert re.search(rf"{sid}\s+{UID}\s+agent\s+debugpy\s+paused", listed), listed
        stepped = kernel.magic(f"%debug_session next --session {sid}").text
        assert f"app.py:{line_of(app, 'for item')}" in stepped, stepped

        status = api.get(f"/sessions/{sid}").json()["session"]
        assert status["state"] == "paused" and status["stop"]["frame"]["line"] == line_of(app, "for item")
        stopped = front.wait_event("stopped")
        assert stopped["session"] == sid and stopped["body"]["frame"]["line"] == line_of(app, "# add")
        assert front.wait_event("stopped", after=front.events.index(stopped) + 1)["body"]["reason"] == "step"

        api.delete(f"/sessions/{sid}/breakpoints/1").raise_for_status()
        assert api.post(f"/sessions/{sid}/continue", json={}).json()["state"] == "terminated"
    assert "stopped serving at " + url in kernel.magic("%debug_session serve stop").text
    assert port_free(url)
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/health", timeout=5)


def test_serve_without_a_token_writes_it_to_a_private_file_and_stop_removes_it(kernel, tmp_path):
    text = kernel.magic("%dbg serve").text
    url = served(text)
    path = text.rsplit("token in ", 1)[1].strip()
    assert os.path.dirname(path) == str(tmp_path / "runtime")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    saved = json.loads(open(path).read())
    assert saved["url"] == url and saved["token"] not in text
    assert httpx.get(url + "/info", timeout=10).status_code == 401
    info = httpx.get(url + "/info", headers={"Authorization": f"Bearer {saved['token']}"}, timeout=10)
    assert info.status_code == 200 and "mcp" in info.json()["capabilities"]

    assert kernel.magic("%dbg serve").text.startswith(f"already serving at {url}")
    assert kernel.magic("%dbg serve stop").text == f"stopped serving at {url}"
    assert not os.path.exists(path) and port_free(url)
    assert kernel.magic("%dbg serve stop").text == "not serving"
    assert kernel.magic("%dbg serve start").text.startswith("error invalid_request: serve takes `stop` or nothing")


def test_unloading_the_extension_stops_serving(kernel):
    url = served(kernel.magic("%dbg serve --token t0").text)
    kernel.magic("%unload_ext jupyter_debug_relay")
    assert port_free(url)


def test_kernel_shutdown_removes_the_token_file(tmp_path):
    k = Kernel("python3", cwd=str(tmp_path), env={"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")})
    try:
        k.magic("%load_ext jupyter_debug_relay")
        path = k.magic("%dbg serve").text.rsplit("token in ", 1)[1].strip()
        assert os.path.exists(path)
    finally:
        k.close()
    assert not os.path.exists(path)
