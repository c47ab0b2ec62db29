"""Ray benchmark: a task's ``breakpoint()`` to its session paused in the notebook, eight tasks paused at once, the
kernel's memory. A local cluster (``ray start --head``, 2 CPUs, 200 MB object store, the dashboard) and a kernel
that is its driver run inside a network namespace with only loopback; the bench starts itself there
(``unshare --net``, as root) and says why it cannot where it cannot.

Measures, in one run:
- from ``breakpoint()`` in a task (its wall clock, read back from the paused frame) to ``%debug_session ray
  attach --all`` having answered with the session paused on that line, the notebook asking again until one comes
  (``-n`` tasks, one after the other);
- eight tasks paused at once: the ``ray attach --all`` cell that attaches them all, and from the first
  ``breakpoint()`` to the last session paused (``--rounds`` rounds);
- the kernel's resident memory: loaded, as the driver, with eight sessions attached;
- what joining costs a worker (``ray_runtime_env()``'s hook, the relay attached with ``ray --join`` and a
  breakpoint set in the task's file): the hook's time and memory (the worker's and its debugpy adapter's), and a
  pure-Python task's CPU time on a joined worker beside a plain one (``--spins`` rounds, alternated).

    python bench/ray_bench.py [-n 8] [--rounds 2] [--spins 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from common import ROOT, Samples, Table, fmt, ms, record
from jupyter_client.manager import start_new_kernel
from kernel_bench import rss_mb

sys.path.insert(0, ROOT)
from tests import ray_namespace  # noqa: E402  (the cluster the Ray tests start, started the same way)

TASKS = '''
import time
import ray

@ray.remote(num_cpus=0)
def paused(x):
    began = time.time()
    breakpoint()
    return x


@ray.remote(num_cpus=0)
class Spinner:
    """A worker of its own: joins the relay when asked, and spins."""

    def join(self):
        import os
        import psutil
        from jupyter_debug_relay.backends.ray.worker import join
        def adapters():
            return {p.pid: p for p in psutil.process_iter(["cmdline"])
                    if "debugpy/adapter" in " ".join(p.info["cmdline"] or [])}

        me, earlier = psutil.Process(), adapters()
        before, began = me.memory_info().rss, time.perf_counter()
        join()
        took = time.perf_counter() - began
        new = [p for pid, p in adapters().items() if pid not in earlier]  # its adapter runs apart from the worker
        return took, (me.memory_info().rss - before) / 2**20, sum(p.memory_info().rss for p in new) / 2**20, \
            os.getpid()

    def spin(self, n):
        began = time.process_time()
        total = 0
        for i in range(n):
            total += i % 7
        return time.process_time() - began

    def never(self):
        return 0  # the relay's breakpoint: never reached
'''
SPIN = 500_000  # steps of the pure-Python loop timed on a plain and a joined worker



def in_namespace() -> bool:
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def relaunch() -> int:
    """This bench again, inside a new network namespace with only loopback; the reason and 0 where none can be made."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        print("ray bench: skipped, it needs unshare and ip (a network namespace with only loopback)")
        return 0
    inner = f"ip link set lo up && exec {sys.executable} {' '.join(map(repr, sys.argv))}"
    ran = subprocess.run(["unshare", "--net", "sh", "-c", inner])
    if ran.returncode != 0 and subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        print("ray bench: skipped, no network namespace can be made here (it needs root)")
        return 0
    return ran.returncode


class Driver:
    """A kernel with the relay loaded, the driver of the local cluster."""

    def __init__(self, folder: str) -> None:
        self.manager, self.client = start_new_kernel(kernel_name="python3", cwd=folder, stderr=subprocess.DEVNULL)
        self.pid = self.manager.provisioner.process.pid
        self.cell("%load_ext jupyter_debug_relay\nfrom jupyter_debug_relay.kernel import extension\n"
                  "relay = next(iter(extension._installed.values())).relay")
        self.loaded_mb = rss_mb(self.pid)
        self.cell("import ray, tasks\nray.init(address='auto', runtime_env={'working_dir': '.'}, "
                  "logging_level='ERROR', log_to_driver=False)", timeout=180)

    def cell(self, code: str, timeout: float = 120) -> str:
        shown: list[str] = []
        reply = self.client.execute_interactive(code, timeout=timeout, output_hook=lambda m: shown.append(
            m["content"]["data"]["text/plain"]) if m["msg_type"] == "execute_result" else None)
        assert reply["content"]["status"] == "ok", reply["content"]
        return "\n".join(shown)

    def attach_all(self, count: int, timeout: float = 120) -> float:
        """Ask ``ray attach --all`` until ``count`` sessions are paused; when the last answer came (time.time()).

        A worker's session stays attached after ``continue``: its next task's ``breakpoint()`` pauses that session
        by itself, a new worker's waits for the attach."""
        deadline, paused, text = time.monotonic() + timeout, 0, ""
        while paused < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{paused} of {count} tasks paused after {timeout:g} s; last: {text}")
            text = self.cell("%debug_session ray attach --all")
            paused = int(self.cell("sum(s.state == 'paused' for s in relay.sessions)"))
        return time.time()

    def began(self) -> list[float]:
        """Each paused session's ``began`` (the task's clock before its breakpoint()), then let them all go."""
        out = self.cell("live = [s for s in relay.sessions if s.state == 'paused']\n"
                        "began = [float(s.evaluate('began').value) for s in live]\n"
                        "[s.continue_(wait=False) for s in live]\nbegan")
        return [float(v) for v in out.strip("[]").split(",") if v.strip()]

    def join_cost(self, folder: str, spins: int) -> dict[str, float]:
        """A worker joined (the hook run, the relay attached, a breakpoint in its file) beside a plain one."""
        self.cell("plain, joined = tasks.Spinner.remote(), tasks.Spinner.remote()\n"
                  "hook_s, worker_mb, adapter_mb, pid = ray.get(joined.join.remote(), timeout=120)")
        never = next(i for i, line in enumerate(TASKS.splitlines(), 1) if "never reached" in line)
        self.cell(f"%bp {os.path.join(folder, 'tasks.py')}:{never}")
        self.cell("%debug_session ray --join")
        self.cell("import time\ndeadline = time.monotonic() + 120\n"
                  "while f'ray-worker:{pid} ' not in str(get_ipython().run_line_magic('debug_session', 'list')) "
                  "and time.monotonic() < deadline:\n    time.sleep(0.2)")
        self.cell(f"plain_s, joined_s = [], []\nfor _ in range({spins}):\n"
                  f"    plain_s.append(ray.get(plain.spin.remote({SPIN}), timeout=120))\n"
                  f"    joined_s.append(ray.get(joined.spin.remote({SPIN}), timeout=120))")
        values = self.cell("import statistics\n[hook_s, worker_mb, adapter_mb, statistics.median(plain_s), "
                           "statistics.median(joined_s), len(plain_s)]")
        hook_s, worker_mb, adapter_mb, plain_s, joined_s, n = (float(v) for v in values.strip("[]").split(","))
        return {"hook_ms": round(hook_s * 1000, 1), "worker_mb": round(worker_mb, 1),
                "adapter_mb": round(adapter_mb, 1), "plain_task_ms": round(plain_s * 1000, 1),
                "joined_task_ms": round(joined_s * 1000, 1), "n": int(n), "steps": SPIN}

    def close(self) -> None:
        self.cell("ray.shutdown()")
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=8, help="tasks paused one after the other")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of eight tasks paused at once")
    parser.add_argument("--spins", type=int, default=10, help="rounds of a task on a joined and a plain worker")
    args = parser.parse_args()
    if importlib.util.find_spec("ray") is None:
        print("ray bench: skipped, Ray is not installed (pip install \"jupyter_debug_relay[ray]\")")
        return 0
    if not in_namespace():
        return relaunch()
    folder, temp = tempfile.mkdtemp(prefix="ray-bench-"), tempfile.mkdtemp(prefix="rt-")
    with open(os.path.join(folder, "tasks.py"), "w") as f:
        f.write(TASKS)
    started = time.perf_counter()
    try:
        ray_namespace.start(temp)  # the tests' start: three tries, the raylet given time for its agents
    except RuntimeError as exc:
        print(f"ray bench: {exc}", file=sys.stderr)
        return 1
    cluster_ms = ms(time.perf_counter() - started)
    driver = Driver(folder)
    try:
        driver_mb = rss_mb(driver.pid)
        one = Samples()
        # Each task gets new workers (a runtime env of its own): a worker's session stays attached after continue, and
        # its next breakpoint() would pause that session without an attach.
        for i in range(args.n):
            driver.cell(f"ref = tasks.paused.options(runtime_env={{'env_vars': {{'ROUND': 'one-{i}'}}}}).remote(1)")
            done = driver.attach_all(1)
            one.add(ms(done - driver.began()[0]))
            driver.cell("ray.get(ref, timeout=60)")
        call, whole, last, peak = Samples(), Samples(), Samples(), 0.0
        for r in range(args.rounds):
            driver.cell(f"refs = [tasks.paused.options(runtime_env={{'env_vars': {{'ROUND': 'eight-{r}'}}}}).remote(i) "
                        "for i in range(8)]")
            text = driver.cell("import time\nfrom ray.util.state import list_workers\n"
                               "deadline = time.monotonic() + 120\n"
                               "while len(list_workers(filters=[('num_paused_threads', '!=', '0')], "
                               "raise_on_missing_output=False)) < 8 and time.monotonic() < deadline:\n"
                               "    time.sleep(0.1)\n"
                               "len(list_workers(filters=[('num_paused_threads', '!=', '0')], "
                               "raise_on_missing_output=False))")
            assert text == "8", text
            asked = time.perf_counter()
            done = driver.attach_all(8)
            call.add(ms(time.perf_counter() - asked))
            peak = max(peak, rss_mb(driver.pid))
            began = driver.began()
            whole.add(ms(done - min(began)))
            last.add(ms(done - max(began)))
            driver.cell("ray.get(refs, timeout=60)")
        join = driver.join_cost(folder, args.spins)
    finally:
        driver.close()
        stopped = time.perf_counter()
        ray_namespace.stop()
        stop_ms = ms(time.perf_counter() - stopped)
        shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)
    table = Table("measure (ms, or MB)", "n", "median", "p95", "max")
    table.row("breakpoint() -> session paused (one task)", one.n, one.median, one.p(95), max(one.values))
    table.row("8 paused at once: `ray attach --all` cell", call.n, call.median, call.p(95), max(call.values))
    table.row("8 paused at once: first breakpoint() -> all", whole.n, whole.median, whole.p(95), max(whole.values))
    table.row("8 paused at once: last breakpoint() -> all", last.n, last.median, last.p(95), max(last.values))
    table.row("kernel RSS: loaded / driver / 8 attached", "", fmt(driver.loaded_mb), fmt(driver_mb), fmt(peak))
    table.row("ray start / ray stop", "", fmt(cluster_ms), fmt(stop_ms), "")
    print(f"joining, per worker: the hook {join['hook_ms']} ms, the worker +{join['worker_mb']} MB and its debugpy "
          f"adapter {join['adapter_mb']} MB; a {SPIN:,}-step loop (CPU, median of {join['n']}): plain "
          f"{join['plain_task_ms']} ms, joined {join['joined_task_ms']} ms "
          f"({join['joined_task_ms'] / join['plain_task_ms']:.2f}x)")
    record("ray", {"one": one.summary(), "eight_call": call.summary(), "eight_whole": whole.summary(),
                   "eight_last": last.summary(),
                         "kernel_mb": {"loaded": round(driver.loaded_mb, 1), "driver": round(driver_mb, 1),
                                       "eight_attached": round(peak, 1)},
                         "cluster_ms": {"start": round(cluster_ms), "stop": round(stop_ms)}, "join": join})
    return 0


if __name__ == "__main__":
    sys.exit(main())
