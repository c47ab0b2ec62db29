"""The project as users install it: a wheel in a fresh venv outside the repository, driven by its CLI and HTTP API."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

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


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """An environment that knows nothing of the checkout: no PYTHONPATH, its own Jupyter folders."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER_", "VIRTUAL_ENV"))}
    return {**kept, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_DATA_DIR": str(tmp_path / "data"),
            "JUPYTER_DEBUG_RELAY_HOME": str(tmp_path / "home"),
            "JUPYTER_DEBUG_RELAY_TEST_RUN": os.environ.get("JUPYTER_DEBUG_RELAY_TEST_RUN", "")}


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


def test_serve_from_the_wheel_answers_one_truth_and_cleans_up(installed, tmp_path, env):
    app = tmp_path / "app.py"
    app.write_text("x = 1\ny = 2\nprint(x + y)\n")
    with subprocess.Popen([str(installed / "jupyter-debug-relay"), "serve", "--port", "0"], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as server:
        try:
            url = server.stdout.readline().strip()
            token_file = server.stderr.readline().rsplit("token written to ", 1)[1].strip()
            token = json.loads(Path(token_file).read_text())["token"]
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
                site = run(installed, "python", "-c", "import jupyter_debug_relay.examples.grades as m; "
                           "print(m.__file__)", cwd=tmp_path, env=env).stdout.strip()
                http.post("/breakpoints", json={"path": str(app), "line": 3}).raise_for_status()
                http.post("/breakpoints", json={"path": site, "line": 6}).raise_for_status()
                sid = http.post("/sessions", json={}).json()["session"]["id"]
                failed = http.post(f"/sessions/{sid}/launch", json={"program": str(tmp_path / "nope.py")})
                assert failed.status_code == 400 and failed.json()["error"]["code"] == "file_not_found"
                started = http.post(f"/sessions/{sid}/launch", json={"program": str(app)})  # the same session
                assert started.status_code == 200, started.text
                answer = started.json()
                assert answer["state"] == answer["session"]["state"] == "paused"
                assert answer["stop"] == answer["session"]["stop"]
                [unbound] = answer["unverified"]
                assert unbound["path"] == site and "excluded" in unbound["message"]
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
    assert not Path(token_file).exists()
