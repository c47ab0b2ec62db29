"""Inside a network namespace with only loopback: one local Ray cluster for the Ray tests and the Ray notebook.

``python -m tests.ray_namespace`` (``tests/test_ray.py`` runs it under ``unshare --net``) starts the cluster, runs
``tests/test_ray_cluster.py``, then, once the cluster's CPUs are free again, ``notebooks/10-ray.ipynb`` (nbval)
against it (``RAY_ADDRESS``), stops it, and prints how long each part took. The cluster is started without the test
run's mark: the debugpy each listening worker starts (and keeps while it lives) is not taken for a process a test left
behind; ``ray stop`` ends it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RAY = str(Path(sys.executable).with_name("ray"))
HEAD = ("--head", "--num-cpus", "2", "--object-store-memory", "200000000", "--include-dashboard", "true",
        "--disable-usage-stats")
# The local cluster found by itself: Ray then uses the token `ray start` keeps in ~/.ray (an explicit address does not).
ADDRESS = "auto"
UNMARKED = {k: v for k, v in os.environ.items() if k != "JUPYTER_DEBUG_RELAY_TEST_RUN"}
TRIES = 3


def start(temp: str) -> None:
    """``ray start --head`` (2 CPUs, a 200 MB object store, the dashboard); on a loaded machine the raylet may give
    up on its agents after 15 s, so it is tried again, the last time at a higher priority where allowed."""
    said = ""
    for attempt in range(TRIES):
        nice = ["nice", "-n", "-5"] if attempt == TRIES - 1 and os.geteuid() == 0 else []
        began = time.monotonic()
        started = subprocess.run([*nice, RAY, "start", *HEAD, "--temp-dir", temp], capture_output=True, text=True,
                                 timeout=240, env={**UNMARKED, "RAY_agent_register_timeout_ms": "180000"})
        print(f"ray start, try {attempt + 1}: {time.monotonic() - began:.0f} s, exit {started.returncode}", flush=True)
        if started.returncode == 0:
            return
        said = started.stdout[-2000:] + started.stderr[-2000:]
        stop()
    raise RuntimeError(f"the local Ray cluster did not start in {TRIES} tries: {said}")


def stop() -> None:
    subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)


IDLE = """\
import sys, time
import ray
ray.init(address="auto", logging_level="ERROR", log_to_driver=False)
began, deadline = time.monotonic(), time.monotonic() + float(sys.argv[1])
free, total = (lambda: ray.available_resources().get("CPU", 0)), ray.cluster_resources().get("CPU", 0)
while free() < total and time.monotonic() < deadline:
    time.sleep(0.5)
print(f"cluster idle after {time.monotonic() - began:.1f} s: {free():g} of {total:g} CPUs free", flush=True)
"""
PYTEST = (sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--durations=10")


def wait_idle(seconds: float) -> None:
    """Until every CPU of the cluster is free again (or ``seconds``): the tasks of a test whose driver ended are
    ended by the cluster a while later, and the notebook needs both CPUs for its two tasks paused at once."""
    subprocess.run([sys.executable, "-c", IDLE, str(seconds)], cwd=ROOT, env={**os.environ, "RAY_ADDRESS": ADDRESS},
                   timeout=seconds + 60)


def main() -> int:
    temp = tempfile.mkdtemp(prefix="rt-")
    began = time.monotonic()
    env = {**os.environ, "RAY_ADDRESS": ADDRESS}
    try:
        start(temp)
        started = time.monotonic()
        tests = subprocess.run([*PYTEST, "tests/test_ray_cluster.py"], cwd=ROOT, env=env, timeout=700)
        wait_idle(90)
        notebook = subprocess.run([*PYTEST, "notebooks/10-ray.ipynb", "--nbval", "--nbval-sanitize-with",
                                   "notebooks/sanitize.cfg", "--nbval-cell-timeout=180"],
                                  cwd=ROOT, env=env, timeout=600)
        tested = time.monotonic()
    finally:
        stop()
        shutil.rmtree(temp, ignore_errors=True)
    print(f"Ray in the namespace: cluster start {started - began:.0f} s, tests and notebook {tested - started:.0f} s, "
          f"stop {time.monotonic() - tested:.0f} s", flush=True)
    return tests.returncode or notebook.returncode


if __name__ == "__main__":
    sys.exit(main())
