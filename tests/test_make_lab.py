"""`make lab` starts JupyterLab, also as root (containers, CI machines), and stops cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_lab_serves_the_notebooks(tmp_path):
    assert (BIN / "jupyter").exists()
    env = {**os.environ, "JUPYTER_PORT": str(free_port()), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "BROWSER": "true"}
    # BIN points at the environment running the tests, and a stamp newer than pyproject.toml says it is set up, so
    # make installs nothing (a stamp older than pyproject.toml would reinstall the package into this environment)
    stamp = tmp_path / "installed"
    stamp.touch()
    lab = subprocess.Popen(["make", "--no-print-directory", "lab", f"BIN={BIN}", f"STAMP={stamp}"], cwd=ROOT,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(lab.stdout.readline, "")), daemon=True)
    try:
        reader.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and lab.poll() is None and "is running at" not in "".join(seen):
            time.sleep(0.2)
        text = "".join(seen)
        assert "Running as root is not recommended" not in text, text
        assert "is running at" in text and f":{env['JUPYTER_PORT']}/lab" in text, text
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGTERM)
            try:
                lab.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(lab.pid, signal.SIGKILL)
                lab.wait(5)
        reader.join(5)
