"""What ``record`` costs: a recorded function of 100,000 line events, against plain and against itself unrecorded.

The target (``TARGET``) runs two functions of the same body, ``recorded`` and ``elsewhere``, each making about
``--events`` line events (a loop of two lines), and prints each one's CPU time (its thread's,
``time.thread_time``). Per target Python 3.11+ (``tests/targets.py`` finds them), in rounds (the order flipped every
other round), three runs:

1. plain: ``python target.py``, no debugger (the base);
2. unrecorded: launched by the relay, stopped at a breakpoint after both functions are defined, the breakpoint
   removed there (the file is then free of breakpoints, as plain), and continued;
3. recorded: the same, with ``record recorded`` at that stop (the function compiled again with its records).

and a fourth, recorded again with the program holding ``--objects`` lists first, as a real program's heap, to time
the ``record`` call itself (it walks the collector's objects once to find the functions). The first three hold
none: a recorded function's records are objects, and a big heap would add the collector's walks of it to their
cost, which is the program's, not the recording's.

Printed per Python: the median CPU of each function in each run (ms, with the sample count), and the ratios
recorded/plain and recorded/unrecorded for ``recorded``, and for ``elsewhere`` (not recorded; the goal: no change);
and the wall time of the ``record`` call itself.

    python bench/record_cost.py [--events 100000] [--objects 1000000] [--runs 5] [--pythons 3.11 3.12 3.13]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

from common import ROOT, Samples, Table, record

from jupyter_debug_relay import Relay

sys.path.insert(0, ROOT)
from tests import targets  # noqa: E402 - the interpreters the tests find, found the same way

TARGET = """
import sys
import time


def recorded(n):
    total = 0
    for i in range(n):
        total += i & 7
    return total


def elsewhere(n):
    total = 0
    for i in range(n):
        total += i & 7
    return total


heap = [[i] for i in range(int(sys.argv[2]))]  # lists the collector tracks
n = int(sys.argv[1])  # stop here
for function in (recorded, elsewhere):
    began = time.thread_time()
    function(n)
    print(f"{function.__name__} {(time.thread_time() - began) * 1000:.3f}", flush=True)
"""
TIMEOUT = 300.0  # seconds a run may take


def _times(text: str) -> dict[str, float]:
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("recorded", "elsewhere"):
            found[parts[0]] = float(parts[1])
    return found


def plain(python: str, program: str, args: list[str]) -> dict[str, float]:
    done = subprocess.run([python, program, *args], capture_output=True, text=True, timeout=TIMEOUT)
    return _times(done.stdout)


def relayed(relay: Relay, python: str, program: str, args: list[str], recording: bool) -> dict[str, float]:
    """The functions' CPU ms, and with ``recording`` the ``record`` call's wall ms (key ``record call``)."""
    relay.breakpoints.clear()
    relay.breakpoints.add(program, TARGET.splitlines().index("n = int(sys.argv[1])  # stop here") + 1)
    session = relay.launch(program, args=args, python=python)
    session.wait_for_stop(60)
    relay.breakpoints.clear()
    call = {}
    if recording:
        began = time.perf_counter()
        relay.operations.call("record", {"target": "recorded", "session": session.id})
        call["record call"] = (time.perf_counter() - began) * 1000
    session.continue_(timeout=TIMEOUT)
    return {**_times(session.output().text), **call}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--objects", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pythons", nargs="*", default=["3.11", "3.12", "3.13"])
    options = parser.parse_args()
    passes = options.events // 2  # two line events a pass: the `for` and the body
    found = targets.found()
    args, heaped = [str(passes), "0"], [str(passes), str(options.objects)]
    figures: dict[str, Any] = {"events": options.events, "objects": options.objects, "runs": options.runs}
    with tempfile.TemporaryDirectory() as folder, Relay() as relay:
        program = os.path.join(folder, "target.py")
        with open(program, "w") as f:
            f.write(TARGET)
        table = Table("python, function", "plain ms", "unrecorded ms", "recorded ms", "n", "rec/plain",
                      "rec/unrec")
        for version in options.pythons:
            wanted = tuple(int(part) for part in version.split("."))
            python = sys.executable if sys.version_info[:2] == wanted else found.get(wanted)
            if python is None:
                print(f"no Python {version} here: skipped")
                continue
            targets.prepared(python)
            samples = {(mode, fn): Samples() for mode in ("plain", "unrecorded", "recorded")
                       for fn in ("recorded", "elsewhere")}
            for round_ in range(options.runs):
                modes = ["plain", "unrecorded", "recorded"]
                for mode in modes if round_ % 2 == 0 else modes[::-1]:
                    got = plain(python, program, args) if mode == "plain" else \
                        relayed(relay, python, program, args, mode == "recorded")
                    for fn in ("recorded", "elsewhere"):
                        samples[(mode, fn)].add(got[fn])
            part: dict[str, Any] = {}
            for fn in ("recorded", "elsewhere"):
                base, off, on = (samples[(mode, fn)] for mode in ("plain", "unrecorded", "recorded"))
                table.row(f"{version}, {fn}", base.median, off.median, on.median, min(base.n, off.n, on.n),
                          on.median / base.median, on.median / off.median)
                part[fn] = {"plain": base.summary(), "unrecorded": off.summary(), "recorded": on.summary(),
                            "recorded_over_plain": round(on.median / base.median, 2),
                            "recorded_over_unrecorded": round(on.median / off.median, 2)}
            call = Samples()
            for _ in range(options.runs):
                call.add(relayed(relay, python, program, heaped, True)["record call"])
            print(f"{version}: the record call at the stop, {options.objects:,} lists held: {call.median:.0f} ms "
                  f"(median of {call.n})")
            part["record_call_ms"] = call.summary()
            figures[version] = part
    record("record_cost", figures)


if __name__ == "__main__":
    main()
