"""The project as users install it: a wheel in a fresh venv outside the repository, driven by its CLI and HTTP API."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomllib

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "jupyter-debug-relay-tests"


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args],
                   check=True, timeout=900)


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a venv holding only this checkout's wheel and its dependencies.

    The venv is kept between runs, keyed by the dependency list; the wheel is built and put in afresh each run.
    """
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(REPO)],
                   check=True, timeout=600)
    wheel = next(dist.glob("*.whl"))
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    venv = CACHE / ("wheel-venv-" + hashlib.sha256(json.dumps([sys.version, deps]).encode()).hexdigest()[:12])
    if not (venv / ".ready").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
        _pip(venv / "bin" / "python", str(wheel))
        (venv / ".ready").touch()
    _pip(venv / "bin" / "python", "--no-deps", "--force-reinstall", str(wheel))
    return venv / "bin"


def run(bin: Path, *args: str, cwd: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=timeout)


def clean_env(folder: Path) -> dict[str, str]:
    """An environment that knows nothing of the checkout: no PYTHONPATH, its own Jupyter folders under ``folder``."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER_", "VIRTUAL_ENV"))}
    return {**kept, "JUPYTER_RUNTIME_DIR": str(folder / "runtime"), "JUPYTER_DATA_DIR": str(folder / "data"),
            "JUPYTER_DEBUG_RELAY_HOME": str(folder / "home"),
            "JUPYTER_DEBUG_RELAY_TEST_RUN": os.environ.get("JUPYTER_DEBUG_RELAY_TEST_RUN", "")}


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    return clean_env(tmp_path)


def test_installing_the_wheel_lists_the_kernel_for_its_interpreter(installed, tmp_path, env):
    listed = json.loads(run(installed, "jupyter", "kernelspec", "list", "--json", cwd=tmp_path, env=env).stdout)
    spec = listed["kernelspecs"]["debug-relay"]
    assert spec["spec"]["display_name"] == "Python 3 (debug relay)"
    assert Path(spec["resource_dir"]).is_relative_to(installed.parent)
    # "python", as ipykernel's own spec says: jupyter_client starts it with the interpreter that runs Jupyter
    assert spec["spec"]["argv"][:3] == ["python", "-m", "ipykernel_launcher"]
    site = subprocess.run([str(installed / "python"), "-c", "import jupyter_debug_relay, pathlib; "
                           "print(pathlib.Path(jupyter_debug_relay.__file__).parent)"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60).stdout.strip()
    assert (Path(site) / "py.typed").exists()


def test_the_demo_finds_the_bug_from_the_wheel(installed, tmp_path, env):
    done = run(installed, "jupyter-debug-relay", "demo", cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in done.stdout
    after = done.stdout.split("that is the bug", 1)[1].splitlines()[1].strip()
    assert after == "7.5"  # the earlier order of 12.5 is gone


@dataclass
class Served:
    """``jupyter-debug-relay serve`` from the wheel, shared by the tests below: its process, client and folders."""

    server: subprocess.Popen
    http: httpx.Client
    token_file: Path
    folder: Path
    env: dict[str, str]
    installed: Path

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return run(self.installed, "jupyter-debug-relay", *args, cwd=self.folder, env=self.env)


@pytest.fixture(scope="module")
def served(installed, tmp_path_factory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("served")
    env = clean_env(folder)
    with subprocess.Popen([str(installed / "jupyter-debug-relay"), "serve", "--port", "0"], cwd=folder, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as server:
        try:
            url = server.stdout.readline().strip()
            token_file = Path(server.stderr.readline().rsplit("token written to ", 1)[1].strip())
            token = json.loads(token_file.read_text())["token"]
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
                yield Served(server, http, token_file, folder, env, installed)
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)


APP = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--rounds", type=int, default=3)
total = 0
for i in range(parser.parse_args().rounds):
    total += i  # loop
print("total", total)  # end
"""


@pytest.fixture(scope="module")
def recorded(served) -> dict[str, Any]:
    """A session named ``wheel-app`` launched over HTTP (a failed start first), paused, a breakpoint removed from
    the CLI meanwhile, run to its end: the answers along the way."""
    app = served.folder / "app.py"
    app.write_text(APP)
    http = served.http
    site = run(served.installed, "python", "-c", "import jupyter_debug_relay.examples.grades as m; print(m.__file__)",
               cwd=served.folder, env=served.env).stdout.strip()  # in site-packages: just-my-code leaves it out
    loop = http.post("/breakpoints", json={"path": str(app), "line": 6}).json()["breakpoint"]
    end = http.post("/breakpoints", json={"path": str(app), "line": 7}).json()["breakpoint"]
    http.post("/breakpoints", json={"path": site, "line": 6}).raise_for_status()
    sid = http.post("/sessions", json={"name": "wheel-app"}).json()["session"]["id"]
    failed = http.post(f"/sessions/{sid}/launch", json={"program": str(served.folder / "nope.py")})
    started = http.post(f"/sessions/{sid}/launch", json={"program": str(app)})  # the same session, again
    paused_at = time.monotonic()
    removed = served.cli("bp", "rm", str(end["id"]), "--session", "wheel-app")  # while it is paused
    http.delete(f"/breakpoints/{loop['id']}").raise_for_status()
    time.sleep(max(0.0, paused_at + 1.0 - time.monotonic()))  # the store looks at a stop that lasts 0.5 s
    ended = http.post(f"/sessions/{sid}/continue", json={"timeout": 30})
    misplaced = http.post(f"/sessions/{http.post('/sessions', json={}).json()['session']['id']}/launch",
                          json={"program": str(app), "args": ["--no-just-my-code"]})
    return {"app": app, "site": site, "loop": loop, "end": end, "failed": failed, "started": started,
            "removed": removed, "ended": ended, "misplaced": misplaced}


def test_serve_from_the_wheel_answers_one_truth(recorded):
    failed = recorded["failed"]
    assert failed.status_code == 400 and failed.json()["error"]["code"] == "file_not_found"
    started = recorded["started"]
    assert started.status_code == 200, started.text  # the session whose start failed starts again
    answer = started.json()
    assert answer["state"] == answer["session"]["state"] == "paused"
    assert answer["stop"] == answer["session"]["stop"] and answer["stop"]["frame"]["line"] == 6
    [unbound] = answer["unverified"]
    assert unbound["path"] == recorded["site"] and "excluded" in unbound["message"]
    assert recorded["ended"].json()["state"] == "terminated"
    misplaced = recorded["misplaced"].json()
    assert misplaced["exit_code"] == 2 and misplaced["note"].startswith("--no-just-my-code went to the program")
    assert f"launch --no-just-my-code {recorded['app']}" in misplaced["note"]


def test_bp_rm_from_the_wheel_keeps_its_table_aligned(recorded):
    removed = recorded["removed"]
    assert removed.returncode == 0, removed.stderr
    header, row = removed.stdout.splitlines()
    assert header.split() == ["id", "place", "condition", "status"]
    assert row.split()[0] == str(recorded["end"]["id"]) and row.split()[-1] == "removed"
    assert header.index("id") == row.index(row.split()[0]) and header.index("status") == row.index("removed")


def test_the_cli_from_the_wheel_lists_watches_and_replays_by_name(served, recorded):
    listed = served.cli("sessions", "--limit", "1", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["sessions"]] == ["s2"]  # the most recent only
    named = json.loads(served.cli("sessions", "--name", "wheel-app", "--json").stdout)["sessions"]
    assert [s["state"] for s in named] == ["terminated"]
    piped = subprocess.run(["bash", "-c", f"set -o pipefail; {served.installed}/jupyter-debug-relay sessions "
                            "--limit 0 | head -n 0"], capture_output=True, text=True, cwd=served.folder,
                           env=served.env, timeout=60)
    assert piped.stderr == "" and piped.returncode == 141  # a reader that stops at once: quiet, as other tools
    watched = served.cli("watch", "wheel-app", "--filter", "stopped,terminated")
    assert watched.returncode == 0, watched.stderr
    assert [row.split()[1] for row in watched.stdout.splitlines()] == ["stopped", "terminated"]
    events = [json.loads(row) for row in served.cli("replay", "wheel-app", "--json").stdout.splitlines()]
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)  # every line in time order
    kinds = [e["type"] for e in events]
    assert "snapshot" in kinds and kinds.index("stopped") < kinds.index("snapshot")
    changes = [e["data"]["breakpoint"] for e in events if e["type"] == "breakpoint"]
    assert [b["status"] for b in changes if b["id"] == recorded["end"]["id"]][-1] == "removed"
    replayed = served.cli("replay", "wheel-app", "--filter", "breakpoint").stdout.splitlines()
    assert replayed[-1].split()[-1] == "removed"


def test_sigterm_ends_the_wheels_server_and_removes_its_token_file(served):
    assert served.token_file.exists()
    served.server.send_signal(signal.SIGTERM)
    served.server.wait(30)
    assert not served.token_file.exists()
