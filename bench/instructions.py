"""The instructions a target runs, counted by valgrind: plain and under the relay, a count the machine's load leaves be.

This machine's speed moves by a third from one minute to the next, and so do the CPU-time ratios of the other
benches. valgrind's ``callgrind`` counts the instructions of a whole process instead, the same at every run. For the
kernel's Python and every Python 3.12+ found (``suites.find_pythons``), in the bench's venv of each (with pytest):

- the 300-test suite of ``suites.py``: plainly, and under the relay with its breakpoint no test reaches;
- a launch of a two-line program to a breakpoint on its second line, continued to its end, beside its plain run.

The relay's runs go after an untimed warm-up (``suites.warm_up``: the interpreter probed, the test module's code
lines kept), as a user's second run does. ``--before REF`` adds the same relay runs with the target's boot files of
another commit (``launch_cost.boot_of``). Only the target runs under valgrind (a wrapper script of the interpreter,
active when the launch's environment names the output file): 30 to 60 times slower, so each count is one run.
Without valgrind on the machine, the bench says so and records nothing.

    python bench/instructions.py [--before REF]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import suites
from common import keep_bytecode, record, shown
from launch_cost import FIRST, boot_of

from jupyter_debug_relay.backends.debugpy import backend, direct

OUTPUT = "JUPYTER_DEBUG_RELAY_CALLGRIND_OUT"  # in a target's environment: the file valgrind writes its count to
SLOWED_CONNECT = 300.0  # seconds a target under valgrind may take to import debugpy and connect


def wrapper(python: str, folder: str) -> str:
    """An executable that runs ``python`` under callgrind when ``OUTPUT`` is set, else as it is (the probe)."""
    path = os.path.join(folder, "python")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nif [ -n "${OUTPUT}" ]; then\n'
                f'  exec valgrind -q --tool=callgrind --callgrind-out-file="${OUTPUT}" {shlex.quote(python)} "$@"\n'
                f'fi\nexec {shlex.quote(python)} "$@"\n')
    os.chmod(path, 0o755)
    return path


def counted(out: str, deadline: float) -> float:
    """The instructions (millions) valgrind wrote to ``out`` at its process's end."""
    while time.monotonic() < deadline:
        if os.path.exists(out):
            with open(out) as f:
                for line in f:
                    if line.startswith("summary:"):
                        return int(line.split()[1]) / 1e6
        time.sleep(0.2)
    raise TimeoutError(f"valgrind wrote no count to {out}")


def plain_run(python: str, argv: list[str], cwd: str, out: str) -> float:
    env = {**os.environ, **suites.PYTEST_ENV, OUTPUT: out}
    subprocess.run([python, *argv], cwd=cwd, env=env, check=True, capture_output=True, timeout=suites.RUN_TIMEOUT)
    return counted(out, time.monotonic() + 10)


def relay_run(python: str, out: str, breakpoint: tuple[str, int], launch: dict, stops: bool) -> float:
    """One run under the relay with ``breakpoint`` (``launch``: the launch's options): to its end (``stops``:
    continued from its one stop)."""
    deadline = time.monotonic() + suites.RUN_TIMEOUT
    with suites.open_relay() as relay:
        relay.breakpoints.add(*breakpoint)
        session = relay.launch(**{**launch, "env": {**launch.get("env", {}), OUTPUT: out}}, python=python)
        if suites.stopped_before(session, time.perf_counter() + suites.RUN_TIMEOUT) != stops:
            raise RuntimeError(f"the run {'did not stop' if stops else 'stopped'} at {breakpoint}")
        if stops:
            session.continue_(timeout=suites.RUN_TIMEOUT)
        return counted(out, deadline)


def measure(python: str, folder: str, boots: dict[str, str]) -> dict[str, float]:
    """The counts of one target Python; ``boots``: the boot files to launch with, by the prefix of their keys."""
    target = suites.prepare_target(python)
    found = suites.prepare(os.path.join(folder, "suites"))
    wrapped, runs = wrapper(target.python, folder), itertools.count()
    first = os.path.join(folder, "first.py")
    with open(first, "w") as f:
        f.write(FIRST)

    def out() -> str:
        return os.path.join(folder, f"callgrind.{next(runs)}")

    suites.warm_up(target, found)
    counts = {"suite plain": plain_run(wrapped, ["-m", "pytest", *suites.SUITE_ARGS], found.folder, out()),
              "launch plain": plain_run(wrapped, [first], folder, out())}
    suite = {"module": "pytest", "args": suites.SUITE_ARGS, "cwd": found.folder, "env": dict(suites.PYTEST_ENV)}
    for prefix, boot in boots.items():
        backend.BOOT_SCRIPT = boot
        counts[f"{prefix}suite relay"] = relay_run(wrapped, out(), suites.suite_bp(found), suite, stops=False)
        counts[f"{prefix}launch relay"] = relay_run(wrapped, out(), (first, 2), {"program": first}, stops=True)
    return counts


def main(before: str | None) -> None:
    if shutil.which("valgrind") is None:
        print("valgrind is not installed here (apt install valgrind): no instructions counted")
        return
    keep_bytecode()
    direct.PydevdDirectBackend.connect_timeout = SLOWED_CONNECT
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        boots = {"": backend.BOOT_SCRIPT, **({"before ": boot_of(before, folder)} if before else {})}
        for python in suites.find_pythons():
            version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                                     capture_output=True, text=True, check=True, timeout=60).stdout.strip()
            figures[version] = measure(python, os.path.join(folder, version), boots)
            print(version, {key: round(value, 1) for key, value in figures[version].items()}, flush=True)
    command = " ".join(["python bench/instructions.py", *map(shown, sys.argv[1:])])
    record("instructions", {"command": command, "before": before, **figures})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a commit whose boot files also launch")
    main(parser.parse_args().before)
