"""A JupyterLab server for the browser tests: on 127.0.0.1 with a token, in temporary config, data and runtime dirs,
with one kernel spec and the settings a test asks for; ``lab`` starts one and checks no process is left behind."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.conftest import assert_none_left, marked_processes

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
AUTOSTART = {"notebook-extension/tracker": {"autoStartDefaultKernel": True}}  # start a notebook's kernel unasked


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    """A JupyterLab server serving ``files`` (filled by ``fill``), its kernel spec ``kernel`` named ``name``."""

    def __init__(self, root: Path, name: str, kernel: dict, settings: dict[str, dict],
                 fill: Callable[[Path], None]) -> None:
        self.root, self.port, self.token = root, free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        home = root / "home"
        env = dict(os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"),
                   JUPYTER_DATA_DIR=str(home / "data"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
                   JUPYTER_PLATFORM_DIRS="1", PYTHONUNBUFFERED="1")
        spec = home / "data" / "kernels" / name
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps(kernel))
        for plugin, values in settings.items():
            path = home / "config" / "lab" / "user-settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        labconfig = home / "config" / "labconfig"
        labconfig.mkdir(parents=True)
        (labconfig / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
        self.files = root / "files"
        self.files.mkdir()
        fill(self.files)
        self.log = open(root / "lab.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={self.files}", "--LabApp.news_url=", "--LabApp.extension_manager=readonly",
             "--allow-root"],
            env=env, cwd=self.files, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def api(self, method: str, path: str, body: object = None, timeout: float = 10.0) -> object:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", method=method, data=data,
                                         headers={"Authorization": f"token {self.token}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"JupyterLab exited with {self.proc.returncode}: {self.output()}")
            try:
                self.api("GET", "/api/status", timeout=2)
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise AssertionError(f"JupyterLab did not answer within {timeout:g} s: {self.output()}")

    def output(self) -> str:
        self.log.flush()
        return (self.root / "lab.log").read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Shut the kernels down (they reap their targets), then the server; force only what stays."""
        try:
            for kernel in self.api("GET", "/api/kernels") or []:
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)
            self.api("POST", "/api/shutdown")
        except (urllib.error.URLError, OSError):
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.log.close()


@contextlib.contextmanager
def lab(root: Path, name: str, kernel: dict, settings: dict[str, dict], fill: Callable[[Path], None]) -> Iterator[Lab]:
    """A running ``Lab``, stopped at the end; no process it started is left behind."""
    before = set(marked_processes())
    server = Lab(root, name, kernel, settings, fill)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()
        assert_none_left(marked_processes, before, 20.0)


@contextlib.contextmanager
def notebook_page(server: Lab, notebook: str, kernel: str, viewport: dict[str, int]) -> Iterator:
    """A Chromium page (Playwright) on ``notebook`` in ``server``, once its kernel (display name ``kernel``) is idle;
    a failing body leaves a screenshot in ``ARTIFACTS``, named after the notebook."""
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=viewport)
        try:
            page.set_default_timeout(60_000)
            expect.set_options(timeout=60_000)
            page.goto(f"{server.base}/lab/tree/{notebook}?token={server.token}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
            expect(page.get_by_role("button", name=f"{kernel} | Idle")).to_be_visible(timeout=90_000)
            yield page
        except Exception:
            page.screenshot(path=str(ARTIFACTS / f"{Path(notebook).stem}-failure.png"))
            raise
        finally:
            browser.close()
