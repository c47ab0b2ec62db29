"""What a launch costs the target, by CPU time: the interpreter's start, debugpy's import, the relay's launch.

Per target Python (the kernel's and every 3.12+ found, ``tests/targets.py``), in rounds (one run of each case in
turn, so that drift hits all alike), the CPU time (user + system, ``RUSAGE_CHILDREN``) of:

- ``python -c pass``, then with ``-X frozen_modules=off`` (which the relay's launch passes);
- ``import debugpy.server`` of the debugpy the relay lends that Python, alone (what any debugpy launch imports);
- a launch by the relay to a breakpoint on the program's second line, the target ended at the stop: the target's CPU
  (to its stop and its end), the relay's own CPU to the stop (this process, every thread), the wall clock, and the
  launch's phases (``SessionInfo.startup``: the target's marks and the relay's).

Python keeps bytecode here as it does on a user's machine (a shell's ``PYTHONDONTWRITEBYTECODE`` is dropped): the
untimed first launch of each boot writes it, for the boot's own files as for the program's.

``--before REF`` adds, in the same rounds, the launch with the target's boot files (``_nodelay_boot.py`` and the
files it loads beside it) of another commit, exported to a temporary folder: the relay is this checkout's, only what
runs in the target differs. Its rows are kept as ``before``.

    python bench/launch_cost.py [--rounds 15] [--before REF]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tarfile
import tempfile
import time

from common import ROOT, Samples, Table, keep_bytecode, ms, record, shown
from suites import children_cpu

from jupyter_debug_relay import Relay
from jupyter_debug_relay.backends.debugpy import backend, interpreter, lending

sys.path.insert(0, ROOT)
from tests import targets  # noqa: E402 - the interpreters the tests find, found the same way

FIRST = "def f(x):\n    return x * 2  # stop\n\nf(1)\n"
PHASES = ("spawn", "interpreter start", "debugger import", "connect", "handshake", "breakpoints",
          "configuration done", "run to first stop")


def cpu_of(argv: list[str]) -> float:
    """The CPU time (ms) of one run of ``argv``."""
    before = children_cpu()
    subprocess.run(argv, check=True, capture_output=True, timeout=120)
    return children_cpu() - before


def launch(relay: Relay, first: str, options: dict, boot: str, times: dict[str, Samples], prefix: str) -> None:
    """One launch to the first stop with the boot ``boot``, its figures added under ``prefix``."""
    backend.BOOT_SCRIPT = boot  # read by each new launch
    cpu, own, started = children_cpu(), time.process_time(), time.perf_counter()
    session = relay.launch(first, **options)
    session.wait_for_stop(60)
    times[prefix + "launch_wall"].add(ms(time.perf_counter() - started))
    times[prefix + "relay_cpu"].add(ms(time.process_time() - own))
    for phase, took in session.info().startup.items():
        if prefix + phase in times:
            times[prefix + phase].add(took)
    session.terminate()
    deadline = time.monotonic() + 10
    while children_cpu() == cpu and time.monotonic() < deadline:  # reaped once its end is seen
        time.sleep(0.01)
    times[prefix + "launch_cpu"].add(children_cpu() - cpu)


LAUNCH_KEYS = ("launch_cpu", "relay_cpu", "launch_wall", *PHASES)


def measure(python: str | None, folder: str, rounds: int, boots: dict[str, str]) -> dict[str, Samples]:
    """The figures of one target Python (None: the kernel's, launched without ``python=``); ``boots``: prefix of
    the keys -> the boot file launched with."""
    argv0 = python or sys.executable
    lent = lending.choose(asyncio.run(interpreter.probe(argv0)))
    if lent.note:  # its copy is installed before anything is timed
        lending.wait_for_installs()
        lent = lending.choose(asyncio.run(interpreter.probe(argv0)))
    importing = f"import sys; sys.path.insert(0, {os.path.dirname(lent.folder)!r}); import debugpy.server"
    first = os.path.join(folder, "first.py")
    with open(first, "w") as f:
        f.write(FIRST)
    times = {key: Samples() for key in ("pass", "pass_frozen_off", "debugpy_import")}
    times.update({prefix + key: Samples() for prefix in boots for key in LAUNCH_KEYS})
    options = {"python": python} if python else {}
    with Relay(record=False) as relay:
        relay.breakpoints.add(first, 2)
        for boot in boots.values():  # untimed: bytecode caches and the copy's first load
            backend.BOOT_SCRIPT = boot
            relay.launch(first, **options).terminate()
        for _ in range(rounds):
            times["pass"].add(cpu_of([argv0, "-c", "pass"]))
            times["pass_frozen_off"].add(cpu_of([argv0, "-X", "frozen_modules=off", "-c", "pass"]))
            times["debugpy_import"].add(cpu_of([argv0, "-X", "frozen_modules=off", "-c", importing]))
            for prefix, boot in boots.items():
                launch(relay, first, options, boot, times, prefix)
    return times


def boot_of(ref: str, folder: str) -> str:
    """The script a target of commit ``ref`` runs: its boot files, exported into ``folder`` beside each other as in
    the package."""
    archive = os.path.join(folder, "before.tar")
    subprocess.run(["git", "archive", "-o", archive, ref, "jupyter_debug_relay/backends/debugpy"], cwd=ROOT,
                   check=True, timeout=60)
    with tarfile.open(archive) as exported:
        exported.extractall(os.path.join(folder, "before"), filter="data")
    boot_dir = os.path.join(folder, "before", "jupyter_debug_relay", "backends", "debugpy")
    script = os.path.join(boot_dir, "_boot_script.py")  # before it: the boot itself was run as the script
    return script if os.path.exists(script) else os.path.join(boot_dir, "_nodelay_boot.py")


def main(rounds: int, before: str | None) -> None:
    keep_bytecode()
    kernel = sys.version_info[:2]
    pythons: dict[tuple[int, int], str | None] = {kernel: None}
    pythons.update({version: path for version, path in targets.found().items() if version >= (3, 12)})
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        boots = {"": backend.BOOT_SCRIPT, **({"before ": boot_of(before, folder)} if before else {})}
        for version, python in pythons.items():
            name = f"{version[0]}.{version[1]}" + (" (kernel's)" if version == kernel else "")
            figures[name] = measure(python, folder, rounds, boots)
    table = Table("launch cost (ms)", "n", *figures)
    for key in figures[next(iter(figures))]:
        table.row(key, rounds, *(times[key].median for times in figures.values()))
    command = " ".join(["python bench/launch_cost.py", *map(shown, sys.argv[1:])])
    record("launch_cost", {"command": command, "before": before} | {
        name: {key: samples.summary() for key, samples in times.items()} for name, times in figures.items()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", help="a commit whose boot files also launch, in the same rounds")
    options = parser.parse_args()
    main(options.rounds, options.before)
