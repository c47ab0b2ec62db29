"""``jupyter-debug-relay serve`` as a process: how it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest


def from_a_terminal() -> None:
    """Ctrl-C reaches the process, as from a terminal (a shell's background job starts its children ignoring it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_serve_and_removes_its_token_file(tmp_path, sig):
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "JUPYTER_DEBUG_RELAY_HOME": str(tmp_path / "home")}
    env.pop("JUPYTER_DEBUG_RELAY_TOKEN", None)
    with subprocess.Popen([sys.executable, "-m", "jupyter_debug_relay.cli", "serve", "--port", "0"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          start_new_session=True, preexec_fn=from_a_terminal) as process:
        try:
            assert process.stdout.readline().startswith("http://127.0.0.1:")
            path = process.stderr.readline().rsplit("token written to ", 1)[1].strip()
            assert os.path.exists(path)
            process.send_signal(sig)
            process.wait(30)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        assert not os.path.exists(path), process.stderr.read()
