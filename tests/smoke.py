"""The smoke set on every other Python from 3.10 on: ``python -m tests.smoke`` (``make test`` runs it).

For each version found (``tests/targets.py``) but the one running this, a virtualenv in ``.smoke/``
gets the package installed from this folder (``pip install .[smoke]``, made again when
``pyproject.toml`` changes; at every run the package alone is installed again), and runs the tests
marked ``smoke``: launch, steps, inspection, the
magics and the comm in a kernel of that Python, HTTP, MCP and recordings. A version not found
is a skip that says which. The tests import the package from this folder (pytest puts it first on
``sys.path``); the kernels they start import the installed copy.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests import targets

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = [(3, 10), (3, 11), (3, 12), (3, 13)]
FILES = ["tests/test_launch.py", "tests/test_control_and_inspect.py", "tests/test_kernel_magics.py",
         "tests/test_kernel_comm.py", "tests/test_server_flows.py", "tests/test_mcp_server.py",
         "tests/test_session_store.py"]


def venv_of(python: str, version: tuple[int, int]) -> Path:
    """The smoke virtualenv of ``version``, made (or made again) with the package as ``pyproject.toml`` says."""
    venv = ROOT / ".smoke" / f"py{version[0]}{version[1]}"
    stamp = venv / ".installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != wanted:
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
        pip(venv, version, f"{ROOT}[smoke]")
        stamp.write_text(wanted)
    else:  # the dependencies are there; the package is installed again as it is now
        pip(venv, version, "--no-deps", "--force-reinstall", str(ROOT))
    return venv / "bin" / "python"


def pip(venv: Path, version: tuple[int, int], *args: str) -> None:
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", *args], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"pip could not install the package on Python {version[0]}.{version[1]}:\n{done.stderr}")


def main() -> int:
    failed = []
    found = {v: targets.found().get(v) for v in VERSIONS if v != sys.version_info[:2]}  # the whole suite runs on it
    with ThreadPoolExecutor() as pool:  # pip waits on the network more than it computes
        venvs = dict(zip(found, pool.map(lambda v: found[v] and venv_of(found[v], v), found), strict=True))
    for version, venv_python in venvs.items():
        shown = f"{version[0]}.{version[1]}"
        if venv_python is None:
            print(f"smoke on Python {shown}: skipped, not found ({targets.WHERE})", flush=True)
            continue
        print(f"smoke on Python {shown} ({found[version]})", flush=True)
        done = subprocess.run([str(venv_python), "-m", "pytest", "-q", "-m", "smoke", *FILES], cwd=ROOT,
                              timeout=1800)
        if done.returncode != 0:
            failed.append(shown)
    if failed:
        print(f"smoke failed on Python {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
