"""``jupyter-debug-relay launch`` and ``attach HOST:PORT`` from a terminal: into a running serve found by its token
file, or one started in the background; then the session store's commands act on the session they made."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_debug_relay.transports import procfs
from tests.conftest import marked_processes, wait_until
from tests.server_fixtures import debugpy_service, line_of, live_server, ok, write

PROGRAM = """
import sys


def compute(items):
    total = 0
    for x in items:
        total += x
    return total


print("args", sys.argv[1:])
result = compute([1, 2, 3])  # call
print("result", result)
sys.exit(3)
"""
NO_SCRIPT = "hint: Check the path; relative paths are resolved against the working directory.\n"


def cli(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """``jupyter-debug-relay ARGS`` run in ``folder``, as a user types it there."""
    return subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The test's own home and Jupyter runtime dir (here and in the commands it runs, with its own HOME): no real
    server, token file or recording is seen or touched."""
    monkeypatch.setenv("JUPYTER_DEBUG_RELAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.delenv("JUPYTER_DEBUG_RELAY_TOKEN", raising=False)
    return {**os.environ, "HOME": str(tmp_path)}


def servers() -> list[str]:
    """The relay servers this test run started that still run."""
    return [cmd for cmd in marked_processes().values() if "jupyter_debug_relay.cli serve" in cmd]


def listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:``port`` (read from /proc: no connection is made to it)."""
    lines = procfs.read_bytes("/proc/net/tcp").decode().splitlines()[1:]
    return any(f.split()[1] == f"0100007F:{port:04X}" and f.split()[3] == "0A" for f in lines)


def test_launch_into_a_running_serve_then_next_and_continue_to_the_end(tmp_path, env):
    app = write(tmp_path, "app.py", PROGRAM)
    call = line_of(app, "# call")
    with live_server(token_file=True) as (server, client):
        assert server.token_file and Path(server.token_file).parent == tmp_path / "runtime"
        missing = cli(tmp_path, env, "launch", "nope.py")
        assert missing.returncode == 2 and missing.stdout == ""
        assert missing.stderr == f"error: file_not_found: No such script: {tmp_path / 'nope.py'}\n{NO_SCRIPT}"
        assert ok(client.get("/sessions"))["sessions"] == []  # the session made for it is gone with it

        started = cli(tmp_path, env, "launch", "--break", f"app.py:{call}", "app.py", "one", "--two")
        assert started.returncode == 0 and started.stderr == "", started.stderr  # no server started: it used this one
        assert started.stdout == f"paused: breakpoint 1 in <module>() at app.py:{call}\n"
        [session] = ok(client.get("/sessions"))["sessions"]
        [bp] = ok(client.get(f"/sessions/{session['id']}/breakpoints"))["breakpoints"]
        assert bp["session"] == session["id"] and bp["path"] == app  # --break: the session's own breakpoint

        stepped = cli(tmp_path, env, "next")
        assert stepped.stdout == f"paused: step in <module>() at app.py:{call + 1}\n", stepped.stderr
        assert cli(tmp_path, env, "eval", "result").stdout == "6  (int)\n"
        ended = cli(tmp_path, env, "continue")
        assert ended.returncode == 0 and ended.stdout == "terminated: exit code 3\n", ended.stderr
    output = cli(tmp_path, env, "replay", "current", "--filter", "output", "--json")
    printed = "".join(json.loads(line)["data"]["text"] for line in output.stdout.splitlines())
    assert printed == "args ['one', '--two']\nresult 6\n"  # what follows the script is the program's


def test_launch_with_no_serve_starts_one_in_the_background_and_says_how_to_stop_it(tmp_path, env):
    app = write(tmp_path, "app.py", PROGRAM)
    call = line_of(app, "# call")
    started = cli(tmp_path, env, "launch", "--json", "--break", f"app.py:{call}", "app.py")
    assert started.returncode == 0, started.stderr
    told = re.fullmatch(r"started a relay server in the background \(pid (\d+)\) at (http://127\.0\.0\.1:\d+), "
                        r"recording into (.+)\nits token is in (.+); stop it with `kill \1` \(its sessions end with "
                        r"it\)\n", started.stderr)
    assert told, started.stderr
    pid, url, home, token_file = int(told[1]), told[2], Path(told[3]), Path(told[4])
    try:
        assert home == tmp_path / "home" and token_file.parent == tmp_path / "runtime"
        assert token_file.stat().st_mode & 0o777 == 0o600 and (home / "serve.log").stat().st_mode & 0o777 == 0o600
        kept = json.loads(token_file.read_text())
        assert kept["url"] == url and kept["pid"] == pid and kept["home"] == str(home)
        assert os.getsid(pid) == pid  # detached: a session (and process group) of its own
        assert kept["token"].encode() not in procfs.read_bytes(f"/proc/{pid}/cmdline")  # never on a command line
        answer = json.loads(started.stdout)  # --json: the operation's answer as the server gave it
        assert answer["state"] == "paused" and answer["stop"]["frame"]["line"] == call
        assert answer["session"]["uid"] in cli(tmp_path, env, "sessions").stdout

        again = cli(tmp_path, env, "launch", "app.py")  # the server that runs now is found: none started
        assert again.stderr == "" and again.stdout == "terminated: exit code 3\n"
        assert len(servers()) == 1
    finally:
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not procfs.alive(pid), 30, "the background server to end")
    assert not token_file.exists() and servers() == []  # the paused target went with it (conftest checks)


def test_a_wrong_program_path_is_a_clear_error_and_leaves_no_server_running(tmp_path, env):
    done = cli(tmp_path, env, "launch", "--stop-on-entry", "missing/app.py")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"error: file_not_found: No such script: {tmp_path / 'missing/app.py'}\n{NO_SCRIPT}"
    assert servers() == [] and list((tmp_path / "runtime").glob("*.json")) == []  # the one started for it is gone


def test_attach_to_a_process_that_debugpy_listens_in(tmp_path, env):
    with debugpy_service(tmp_path) as (service, port, _):
        wait_until(lambda: listening(port), 30, "debugpy to listen")
        with live_server(token_file=True):
            tick = line_of(service, "# tick")
            attached = cli(tmp_path, env, "attach", f"127.0.0.1:{port}", "--break", f"service.py:{tick}")
            assert attached.stdout == f"paused: breakpoint 1 in <module>() at service.py:{tick}\n", attached.stderr
            first = int(cli(tmp_path, env, "eval", "counter").stdout.split()[0])
            assert cli(tmp_path, env, "continue").stdout == f"paused: breakpoint 1 in <module>() at service.py:{tick}\n"
            assert cli(tmp_path, env, "eval", "counter").stdout == f"{first + 1}  (int)\n"
