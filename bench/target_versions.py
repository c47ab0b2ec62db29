"""Between stops, per target Python: the 300-test suite, a hot function holding a breakpoint, the first stop.

For the kernel's Python and every Python 3.12+ found (``tests/targets.py``), in one run:

- the bench's 300-test suite (``suites.SUITE_*``) plainly and under the relay with a breakpoint no
  test reaches, in rounds (one run of each in turn), the median of each and their ratio;
- a function called 2,000,000 times holding a breakpoint on a line it never reaches: the loop's own time
  printed by the target, plainly and under the relay; and the loop's CPU time (its thread's) plainly and
  in a process the relay attached to by pid before the loop began;
- the launch to the first stop (median of ``--launches``), and the CPU time the target used per launch (to
  its stop, then its end: what a busy machine moves least).

Each Python other than the kernel's gets a virtualenv with pytest, and its debugpy copy is installed before
anything is timed. Python keeps bytecode, as on a user's machine (a shell's ``PYTHONDONTWRITEBYTECODE`` is dropped).

    python bench/target_versions.py [--runs 3] [--launches 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

from common import ROOT, Samples, Table, keep_bytecode, ms, record, shown
from suites import SUITE_HEAD, SUITE_TEST, children_cpu

from jupyter_debug_relay import Relay, RelayError
from jupyter_debug_relay.backends.debugpy import interpreter, lending

sys.path.insert(0, ROOT)
from tests import targets  # noqa: E402 - the interpreters the tests find, found the same way

HOT = """import os, sys, time
def hot(x):
    if x < 0:
        return -x  # never reached: the breakpoint
    return x + 1
while len(sys.argv) > 1 and not os.path.exists(sys.argv[1]):  # attached by pid: the loop waits for the relay
    time.sleep(0.01)
started, cpu = time.perf_counter(), time.thread_time()
total = 0
for i in range(2_000_000):
    total += hot(i)
print("loop_cpu_ms", (time.thread_time() - cpu) * 1000)
print("loop_ms", (time.perf_counter() - started) * 1000)
"""
FIRST = "def f(x):\n    return x * 2  # stop\n\nf(1)\n"


def venv_with_pytest(python: str, folder: str) -> str:
    """A virtualenv of ``python`` with pytest in it; its interpreter."""
    venv = os.path.join(folder, f"venv-{os.path.basename(os.path.dirname(os.path.dirname(python)))}")
    subprocess.run([python, "-m", "venv", venv], check=True, capture_output=True, timeout=300)
    venv_python = os.path.join(venv, "bin", "python")
    subprocess.run([venv_python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pytest"],
                   check=True, capture_output=True, timeout=900)
    return venv_python


def ended(session, what: str) -> None:
    """Wait for the target's end (a stop would be a breakpoint that must not be hit)."""
    try:
        session.wait_for_stop(900)
    except RelayError:
        assert session.exit_code == 0, session.output().text[-2000:]
        return
    raise AssertionError(f"{what} stopped on a breakpoint it never reaches")


def loop_figure(text: str, name: str) -> float:
    """A figure the hot loop printed (``loop_ms``: wall clock, ``loop_cpu_ms``: its thread's CPU time)."""
    return float(text.split(name + " ")[-1].split()[0])


def attached_hot(relay: Relay, python: str, hot: str, folder: str) -> float:
    """The hot loop's CPU time in a process attached by pid (the relay's breakpoint on ``hot`` set before)."""
    go = os.path.join(folder, "go")
    if os.path.exists(go):
        os.remove(go)
    target = subprocess.Popen([python, hot, go], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    try:
        session = relay.attach(pid=target.pid)
        open(go, "w").close()
        out = target.communicate(timeout=900)[0]
        try:
            session.wait_for_stop(60)
        except RelayError:  # its end
            pass
        else:
            raise AssertionError("the attached hot loop stopped on a breakpoint it never reaches")
    finally:
        if target.poll() is None:
            os.killpg(target.pid, 9)
            target.wait(10)
    return loop_figure(out, "loop_cpu_ms")


def measure(python: str | None, folder: str, runs: int, launches: int) -> dict[str, Samples]:
    """The figures of one target Python (None: the kernel's own, launched without ``python=``)."""
    argv0 = python or sys.executable
    options = {"python": python} if python else {}
    suite = os.path.join(folder, "test_suite.py")
    hot = os.path.join(folder, "hot.py")
    first = os.path.join(folder, "first.py")
    for path, text in ((suite, SUITE_HEAD + "".join(SUITE_TEST.format(k=k, size=k % 50 + 20) for k in range(300))),
                       (hot, HOT), (first, FIRST)):
        with open(path, "w") as f:
            f.write(text)
    args = ["-q", "-p", "no:cacheprovider", suite]
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    times = {key: Samples() for key in ("suite_plain", "suite_bp", "hot_plain", "hot_bp", "hot_plain_cpu",
                                        "hot_pid_cpu", "first_stop", "launch_cpu")}
    with Relay(record=False) as relay:
        relay.breakpoints.add(suite, SUITE_HEAD.splitlines().index('    return "the breakpoint is here"  # never') + 1)
        relay.breakpoints.add(hot, 4)
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([argv0, "-m", "pytest", *args], env={**os.environ, **env}, cwd=folder, check=True,
                           capture_output=True, timeout=900)
            times["suite_plain"].add(ms(time.perf_counter() - started))
            started = time.perf_counter()
            ended(relay.launch(module="pytest", args=args, cwd=folder, env=env, **options), "the suite")
            times["suite_bp"].add(ms(time.perf_counter() - started))
            out = subprocess.run([argv0, hot], capture_output=True, text=True, check=True, timeout=900).stdout
            times["hot_plain"].add(loop_figure(out, "loop_ms"))
            times["hot_plain_cpu"].add(loop_figure(out, "loop_cpu_ms"))
            session = relay.launch(hot, **options)
            ended(session, "the hot loop")
            times["hot_bp"].add(loop_figure(session.output().text, "loop_ms"))
            times["hot_pid_cpu"].add(attached_hot(relay, argv0, hot, folder))
        relay.breakpoints.add(first, 2)
        for _ in range(launches):
            cpu, started = children_cpu(), time.perf_counter()
            session = relay.launch(first, **options)
            session.wait_for_stop(60)
            times["first_stop"].add(ms(time.perf_counter() - started))
            session.terminate()
            times["launch_cpu"].add(children_cpu() - cpu)
    return times


def main(runs: int = 3, launches: int = 7) -> None:
    keep_bytecode()
    kernel = sys.version_info[:2]
    pythons: dict[tuple[int, int], str | None] = {kernel: None}
    newer = {version: path for version, path in targets.found().items() if version >= (3, 12)}
    figures, monitoring = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        for version, path in newer.items():
            pythons[version] = venv_with_pytest(path, folder)
        for version, python in pythons.items():
            if python:  # its debugpy copy is made before anything is timed
                lending.install(asyncio.run(interpreter.probe(python)))
            work = os.path.join(folder, f"py{version[0]}{version[1]}")
            os.makedirs(work, exist_ok=True)
            label = f"{version[0]}.{version[1]}" + (" (kernel's)" if version == kernel else "")
            figures[label] = measure(python, work, runs, launches)
            monitoring[label] = version >= (3, 12)
    table = Table("target Python: measure (ms)", "n", "plain", "relay", "ratio", "goal")
    for label, times in figures.items():
        goals = ("1.2", "2") if monitoring[label] else ("2.0", "")
        for name, key, goal in (("300-test suite, bp never hit", "suite", goals[0]),
                                ("2M calls holding a bp not reached", "hot", goals[1]),
                                ("the same, attached by pid (loop's CPU)", "hot_pid", goals[1])):
            plain, debugged = ((times["hot_plain_cpu"], times["hot_pid_cpu"]) if key == "hot_pid"
                               else (times[f"{key}_plain"], times[f"{key}_bp"]))
            table.row(f"{label}: {name}", plain.n, plain.median, debugged.median, debugged.median / plain.median,
                      goal)
        table.row(f"{label}: launch to first stop, median", times["first_stop"].n, "", times["first_stop"].median,
                  "", "250")
        table.row(f"{label}: the target's CPU per launch (to its stop and end)", times["launch_cpu"].n, "",
                  times["launch_cpu"].median, "", "")
    if not newer:
        print(f"no Python 3.12+ found ({targets.WHERE}): only the kernel's Python was measured")
    command = " ".join(["python bench/target_versions.py", *map(shown, sys.argv[1:])])
    record("target_versions", {"command": command} | {
        label: {key: samples.summary() for key, samples in times.items()}
        | {"suite_ratio": round(times["suite_bp"].median / times["suite_plain"].median, 2),
           "hot_ratio": round(times["hot_bp"].median / times["hot_plain"].median, 2),
           "hot_pid_ratio": round(times["hot_pid_cpu"].median / times["hot_plain_cpu"].median, 2)}
        for label, times in figures.items()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--launches", type=int, default=7)
    options = parser.parse_args()
    main(options.runs, options.launches)
