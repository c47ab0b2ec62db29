"""The Ray tests (``tests/test_ray_cluster.py``) and notebook (``notebooks/10-ray.ipynb``) inside a network
namespace with only loopback, on one cluster (``tests/ray_namespace.py``).

Ray turns 127.0.0.1 into the machine's address unless loopback is all there is, so the cluster, the kernels and the
tasks run in their own namespace (``unshare --net``), where every connection is to 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _refused() -> str | None:
    """Why the Ray tests cannot run here, or None."""
    if importlib.util.find_spec("ray") is None:
        return "Ray is not installed (pip install \"jupyter_debug_relay[ray]\")"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs unshare and ip (util-linux, iproute2) to make a network namespace with only loopback"
    made = subprocess.run(["unshare", "--net", "ip", "link", "set", "lo", "up"], capture_output=True, text=True,
                          timeout=30)
    return None if made.returncode == 0 else f"cannot make a network namespace: {made.stderr.strip()}"


def _in_namespace(timeout: float) -> subprocess.CompletedProcess[str]:
    inner = f"ip link set lo up && exec {sys.executable} -m tests.ray_namespace"
    return subprocess.run(["unshare", "--net", "sh", "-c", inner], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)


@pytest.mark.timeout(1500)
def test_ray_in_a_loopback_only_namespace():
    refused = _refused()
    if refused:
        pytest.skip(refused)
    ran = _in_namespace(1450)
    print(ran.stdout[-3000:])  # the cluster's start and stop, and the slowest tests, beside the outer run's
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-3000:]
    assert "skipped" not in ran.stdout, ran.stdout
