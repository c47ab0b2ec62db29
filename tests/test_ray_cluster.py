"""Ray tasks and actors paused on one local cluster, debugged from a kernel that is the cluster's driver.

The cluster, the kernel and the tasks run inside a network namespace with only loopback (``tests/test_ray.py``
starts this module there), so Ray uses 127.0.0.1 throughout; outside one, the module is skipped.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from jupyter_debug_relay.backends.ray.cluster import NO_TASK
from tests import ray_namespace
from tests.conftest import line_of

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install \"jupyter_debug_relay[ray]\")")
if [name for _, name in socket.if_nameindex()] != ["lo"]:
    pytest.skip("runs inside a network namespace with only loopback (tests/test_ray.py starts it there)",
                allow_module_level=True)

TASKS = Path(__file__).with_name("ray_tasks.py")
pytestmark = pytest.mark.timeout(600)  # alone, the first test also starts the cluster: three tries on a loaded machine


@pytest.fixture(scope="module")
def cluster():
    """The cluster ``tests/ray_namespace.py`` started (``RAY_ADDRESS``), or one of the module's, ended by ``ray stop``:
    a head node with 2 CPUs, a 200 MB object store and the dashboard."""
    if os.environ.get("RAY_ADDRESS"):
        yield os.environ["RAY_ADDRESS"]
        return
    temp = tempfile.mkdtemp(prefix="rt-")
    try:
        ray_namespace.start(temp)
        yield "auto"
    finally:
        ray_namespace.stop()
        shutil.rmtree(temp, ignore_errors=True)


def _driver(folder: Path, runtime_env: str):
    """A kernel with the relay loaded that is the cluster's driver, in a folder holding the tasks' module."""
    from tests.kernels import Kernel

    shutil.copy(TASKS, folder / "ray_tasks.py")
    k = Kernel("python3", cwd=str(folder))
    k.magic("%load_ext jupyter_debug_relay")
    k.magic("import ray, ray_tasks\nfrom jupyter_debug_relay import ray_runtime_env\n"
            f"ray.init(address='auto', runtime_env={runtime_env}, logging_level='ERROR', log_to_driver=False)",
            timeout=120)
    return k


@pytest.fixture(scope="module")
def driver(cluster, tmp_path_factory):
    """The driver of a job whose workers listen only once a task reaches ``breakpoint()``."""
    k = _driver(tmp_path_factory.mktemp("ray"), "{'working_dir': '.'}")
    yield k
    k.run("ray.shutdown()", timeout=60)
    k.close()


@pytest.fixture
def k(driver):
    """The driver kernel; the sessions a test attached are detached at its end (the workers live on)."""
    yield driver
    listed = driver.magic("%debug_session list").text.splitlines()[1:]
    for row in listed:
        if row.split()[5] not in ("terminated", "failed"):
            driver.magic(f"%debug_session detach --session {row.split()[1]}")


def paused(k, count: int, timeout: float = 120) -> str:
    """``%debug_session ray`` once ``count`` tasks not attached yet are listed, each named (the cluster names a
    worker's task a few seconds after it starts; until then the row says ``ray-worker``)."""
    deadline = time.monotonic() + timeout
    while True:
        text = k.magic("%debug_session ray").text
        waiting = [row for row in text.splitlines()[1:] if row.split()[6] == "-" and row.split()[2] != NO_TASK]
        if len(waiting) >= count or time.monotonic() > deadline:
            assert len(waiting) >= count, f"{text}\nthe cluster's tasks: {tasks_now(k)}"
            return text
        time.sleep(0.3)


def tasks_now(k) -> str:  # noqa: ANN001 - the driver kernel
    """What the cluster says of its tasks and their workers: where a task that never paused is."""
    return k.magic("from ray.util import state\n[(t.name, t.state, t.worker_id, t.required_resources) for t in "
                   "state.list_tasks(detail=True, limit=50)]", timeout=60).text


def loopback_only(pid: int) -> list[str]:
    """The remote addresses of ``pid``'s TCP connections that are not loopback."""
    import psutil

    return [f"{c.raddr.ip}:{c.raddr.port}" for c in psutil.Process(pid).net_connections("inet")
            if c.raddr and not re.fullmatch(r"127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+", c.raddr.ip)]


def test_two_tasks_and_an_actor_paused_at_once(k):
    k.magic("refs = [ray_tasks.double.remote(20), ray_tasks.double.remote(30)]\n"
            "counter = ray_tasks.Counter.remote()\nrefs.append(counter.add.remote(5))")
    listed = paused(k, 3)
    assert listed.count(" double ") == 2 and " Counter.add " in listed, listed
    attached = k.magic("%debug_session ray attach --all", timeout=90)
    assert "not attached" not in attached.text, attached.text
    names = [row.split()[3] for row in k.magic("%debug_session list").text.splitlines()[1:]]
    assert sorted(n.split(":")[0] for n in names) == ["Counter.add", "double", "double"], names
    task_line, actor_line = line_of(str(TASKS), "task stops here"), line_of(str(TASKS), "actor stops here")
    rows = k.magic("%debug_session ray").text
    assert rows.count(f"ray_tasks.py:{task_line}") == 2 and rows.count(f"ray_tasks.py:{actor_line}") == 1, rows
    for session in names:
        k.magic(f"%debug_session use {session}")
        if session.startswith("double"):
            x = k.magic("%debug_session eval x").text
            assert x in ("20", "30"), x
            stepped = k.magic("%debug_session next").text
            assert f":{task_line + 1}" in stepped, stepped
            assert k.magic("%debug_session eval y").text == str(int(x) * 2)  # on `y += 1`, not run yet
        else:
            assert k.magic("%debug_session eval self.total").text == "15"
        k.magic("%debug_session continue --no-wait")
    assert k.magic("ray.get(refs, timeout=60)", timeout=90).text == "[41, 61, 15]"
    assert loopback_only(k.pid) == []


def test_post_mortem_stops_on_the_exception(k):
    k.magic("bad = ray_tasks.fail.options(runtime_env=ray_runtime_env(), max_retries=0).remote(7)")
    paused(k, 1)
    attached = k.magic("%debug_session ray attach --all", timeout=90).text
    assert "fail:" in attached, attached
    stop = k.magic("%debug_session wait").text
    assert "ValueError" in stop and "bad ratio 3.5" in stop, stop
    rows = k.magic("%debug_session ray").text
    assert f"ray_tasks.py:{line_of(str(TASKS), 'post-mortem stops here')}" in rows and "ValueError" in rows, rows
    assert k.magic("%debug_session eval ratio").text == "3.5"
    k.magic("%debug_session continue --no-wait")
    failed = k.run("ray.get(bad, timeout=60)", timeout=90)
    assert failed.error is not None and "bad ratio 3.5" in failed.error["evalue"]


def test_a_task_killed_while_paused_ends_its_session(k):
    k.magic("hung = ray_tasks.hang.options(max_retries=0).remote()")
    row = next(r.split() for r in paused(k, 1).splitlines()[1:] if r.split()[6] == "-")
    assert row[2] == "hang", row  # a reused worker's row names the task paused now, not the one it ran before
    k.magic(f"%debug_session ray attach {row[0]}", timeout=90)
    os.kill(int(row[5]), 9)
    deadline = time.monotonic() + 60
    while "The Ray worker" not in (status := k.magic("%debug_session status").text) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert f": ended — The Ray worker {row[5]} running hang ended: SYSTEM_ERROR" in status, status
    failed = k.run("ray.get(hung, timeout=60)", timeout=90)
    assert failed.error is not None and "died" in failed.error["evalue"].lower()


def test_a_breakpoint_in_the_notebook_stays_in_the_kernel(k):
    assert k.magic("import os; os.environ['PYTHONBREAKPOINT']").text.startswith("'ray.util.")
    out = k.magic("import pdb\nfrom unittest import mock\n"
                  "with mock.patch.object(pdb.Pdb, 'set_trace', lambda self, frame=None: print('pdb at', "
                  "frame.f_code.co_name)):\n    breakpoint()").streams
    assert out.strip() == "pdb at <module>", out
    assert k.magic("ray._private.worker.global_worker.debugger_port").text in ("None", "0")  # no port opened


@pytest.fixture
def joining(cluster, tmp_path):
    """The driver of a job started with ``ray_runtime_env()``: its workers listen from their start."""
    k = _driver(tmp_path, "{**ray_runtime_env(post_mortem=False), 'working_dir': '.'}")
    yield k
    k.run("ray.shutdown()", timeout=60)
    k.close()


def test_a_notebook_breakpoint_stops_a_task_that_has_no_breakpoint_call(joining):
    k = joining
    # A new worker for this task (its runtime env differs from the job's) waits up to a minute for the relay.
    row, line = triple_stopped(k, "ray_runtime_env(post_mortem=False, join_wait=60)", 120)
    rows = k.magic("%debug_session ray").text
    assert row[6].startswith("triple:") and row[7].endswith(f"ray_tasks.py:{line}"), rows
    assert len(rows.splitlines()) == 2, rows  # the joined workers that run or wait are not listed as paused
    k.magic(f"%debug_session use {row[6]}")
    assert k.magic("%debug_session eval y").text == "15"
    k.magic("%debug_session continue --no-wait")
    assert k.magic("ray.get(tripled, timeout=60)", timeout=90).text == "16"
    k.magic("%bp clear")
    assert k.magic("ray.get(ray_tasks.triple.remote(1), timeout=60)", timeout=90).text == "4"  # a worker of its own
    deadline = time.monotonic() + 60
    while "ray-worker:" not in (listed := k.magic("%debug_session list").text) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert "ray-worker:" in listed, listed  # that worker joined too, and is running: not listed as paused
    assert len(k.magic("%debug_session ray").text.splitlines()) == 1


OTHER_DRIVER = """\
import sys
import ray, ray_tasks
from jupyter_debug_relay import ray_runtime_env

ray.init(address="auto", runtime_env={**ray_runtime_env(), "working_dir": "."}, logging_level="ERROR",
         log_to_driver=False)
try:
    ray.get(ray_tasks.fail.options(max_retries=0).remote(7), timeout=240)
except ValueError as exc:
    print("failed:", str(exc).splitlines()[-1], flush=True)
sys.stdin.read()  # the driver, and so its job's workers, live on until the test closes its stdin
"""


def said(proc: subprocess.Popen[str], timeout: float) -> str:
    """The next line ``proc`` prints, waited for ``timeout`` s at most."""
    assert select.select([proc.stdout], [], [], timeout)[0], f"no line from the other driver in {timeout:g} s"
    return proc.stdout.readline().strip()


@pytest.fixture
def other_driver(cluster, tmp_path):
    """Another driver (a script) whose job, started with ``ray_runtime_env()``, has a task that raises."""
    folder = tmp_path / "other"
    folder.mkdir()
    shutil.copy(TASKS, folder / "ray_tasks.py")
    (folder / "driver.py").write_text(OTHER_DRIVER)
    proc = subprocess.Popen([sys.executable, "driver.py"], cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        yield proc
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def notebook(cluster, tmp_path):
    """A kernel with the relay loaded that is no Ray driver yet; its job, once it has one, ends with the test."""
    from tests.kernels import Kernel

    shutil.copy(TASKS, tmp_path / "ray_tasks.py")
    k = Kernel("python3", cwd=str(tmp_path))
    k.magic("%load_ext jupyter_debug_relay")
    yield k
    k.run("import ray; ray.shutdown()", timeout=60)
    k.close()


def stopped_row(k, name: str, timeout: float) -> list[str]:
    """The row of ``%debug_session ray`` whose task is ``name``, once there (``timeout`` s at most)."""
    deadline = time.monotonic() + timeout
    while f" {name} " not in (rows := k.magic("%debug_session ray").text) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert f" {name} " in rows, f"{name} did not stop in {timeout:g} s: {rows}\n{k.magic('%debug_session list').text}"
    return next(r.split() for r in rows.splitlines()[1:] if f" {name} " in r)


def triple_stopped(k, runtime_env: str, timeout: float) -> tuple[list[str], int]:  # noqa: ANN001 - a driver kernel
    """``triple(5)`` started with ``env = RUNTIME_ENV``, a notebook breakpoint in it and the job's workers joined: its
    row of ``%debug_session ray`` once it stopped (``timeout`` s at most), and the breakpoint's line."""
    line = line_of(str(TASKS), "notebook breakpoint here")
    k.magic(f"%bp ray_tasks.py:{line}")
    k.magic("%debug_session ray --join")
    k.magic(f"env = {runtime_env}\ntripled = ray_tasks.triple.options(runtime_env=env).remote(5)")
    return stopped_row(k, "triple", timeout), line


def test_a_notebook_breakpoint_stops_the_notebooks_job_after_another_drivers_post_mortem(notebook, other_driver):
    k = notebook
    row = next(r.split() for r in paused(k, 1).splitlines()[1:] if r.split()[6] == "-")
    assert row[2] == "fail", row
    k.magic(f"%debug_session ray attach {row[0]}", timeout=90)
    stop = k.magic(f"%debug_session wait --session fail:{row[5]}").text
    assert "ValueError" in stop and "bad ratio 3.5" in stop, stop
    k.magic(f"%debug_session continue --session fail:{row[5]} --no-wait")
    assert said(other_driver, 60) == "failed: ValueError: bad ratio 3.5"
    k.magic("import ray, ray_tasks\nfrom jupyter_debug_relay import ray_runtime_env\n"
            "ray.init(address='auto', runtime_env={**ray_runtime_env(), 'working_dir': '.'}, logging_level='ERROR', "
            "log_to_driver=False)", timeout=120)
    row, line = triple_stopped(k, "ray_runtime_env(join_wait=60)", 60)
    assert row[6].startswith("triple:") and row[7].endswith(f"ray_tasks.py:{line}"), row
    k.magic(f"%debug_session continue --session {row[6]} --no-wait")
    assert k.magic("ray.get(tripled, timeout=60)", timeout=90).text == "16"


def test_a_reused_worker_that_dies_is_named_after_the_task_it_ran_then(joining):
    k = joining
    row, _ = triple_stopped(k, "ray_runtime_env(post_mortem=False, join_wait=60)", 120)
    k.magic(f"%debug_session continue --session {row[6]} --no-wait")
    assert k.magic("ray.get(tripled, timeout=60)", timeout=90).text == "16"
    k.magic("%bp clear")
    k.magic("napping = ray_tasks.nap.options(runtime_env=env, max_retries=0).remote()")  # the same worker, reused
    deadline = time.monotonic() + 60
    while (pids := k.magic("from ray.util import state\n[t.worker_pid for t in state.list_tasks(filters=["
                           "('name', '=', 'nap'), ('state', '=', 'RUNNING')], detail=True)]").text) == "[]" \
            and time.monotonic() < deadline:
        time.sleep(0.5)
    assert pids == f"[{row[5]}]", (pids, row)
    os.kill(int(row[5]), 9)
    deadline = time.monotonic() + 60
    while "The Ray worker" not in (status := k.magic(f"%debug_session status --session {row[6]}").text) \
            and time.monotonic() < deadline:
        time.sleep(0.5)
    assert f"The Ray worker {row[5]} running nap ended" in status, status
    failed = k.run("ray.get(napping, timeout=60)", timeout=90)
    assert failed.error is not None and "died" in failed.error["evalue"].lower()
