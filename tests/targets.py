"""The Python interpreters found here besides the one running the tests: targets and kernels of other versions.

``JUPYTER_DEBUG_RELAY_TEST_PYTHONS`` (paths separated by ``os.pathsep``) names them; otherwise
``python3.X`` on ``PATH`` and pyenv's versions are looked at, for every X from 3.8 on.
"""

from __future__ import annotations

import asyncio
import functools
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from jupyter_debug_relay.backends.debugpy import interpreter, lending

VARIABLE = "JUPYTER_DEBUG_RELAY_TEST_PYTHONS"
WHERE = f"${VARIABLE}, python3.X on PATH, ~/.pyenv/versions"


@functools.cache
def found() -> dict[tuple[int, int], str]:
    """Python version -> an interpreter of it, other than the tests' own version."""
    named = [p for p in os.environ.get(VARIABLE, "").split(os.pathsep) if p]
    if not named:
        root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
        named = [shutil.which(f"python3.{minor}") for minor in range(8, 20)]
        named += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3")))
    pythons: dict[tuple[int, int], str] = {}
    for path in filter(None, named):
        try:
            out = subprocess.run([path, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                                 text=True, timeout=30).stdout.split()
        except (OSError, subprocess.SubprocessError):
            continue
        version = (int(out[0]), int(out[1])) if len(out) == 2 else None
        if version and version != sys.version_info[:2]:
            pythons.setdefault(version, path)
    return dict(sorted(pythons.items()))


def python_for(minor: int) -> str:
    """An interpreter of Python 3.``minor`` (the tests' own when it is that version), its debugpy ready; the test is
    skipped when there is none here."""
    import pytest

    if sys.version_info[:2] == (3, minor):
        return sys.executable
    python = found().get((3, minor))
    if python is None:
        pytest.skip(f"no Python 3.{minor} found ({WHERE})")
    prepared(python)
    return python


def newest_monitoring() -> str | None:
    """The newest Python 3.12+ found (pydevd traces it through ``sys.monitoring``), or None."""
    newer = [path for version, path in found().items() if version >= (3, 12)]
    return newer[-1] if newer else None


@functools.cache
def prepared(python: str) -> str:
    """The debugpy folder a target on ``python`` runs, installed into the cache first when it needs a copy."""
    found_here = asyncio.run(interpreter.probe(python))
    loan = lending.choose(found_here)
    if loan.note:
        lending.wait_for_installs()
        loan = lending.choose(found_here)
    return loan.folder


def venv_with_relays_debugpy(python: str, folder: Path) -> tuple[str, Path]:
    """A virtualenv of ``python`` in ``folder`` holding, as its own, the relay's version of debugpy: its Python
    and that debugpy's folder."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    site = next((folder / "lib").glob("python3.*")) / "site-packages"
    (site / "debugpy").symlink_to(prepared(python))
    (site / f"debugpy-{lending.VERSION}.dist-info").mkdir()
    return str(folder / "bin" / "python"), site / "debugpy"


def debugpy_command(python: str | None) -> list[str]:
    """``python -m debugpy`` for a target on ``python`` (None: the tests' own), with the debugpy it is lent."""
    return [python, prepared(python)] if python else [sys.executable, "-m", "debugpy"]
