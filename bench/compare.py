"""This checkout against another commit on the whole-suite rows, in one run, so that a slowdown shows before it lands.

    python bench/compare.py REF [--rounds 3] [--python PATH ...] [--case KEY ...]

REF (a commit, branch or tag) is checked out in a temporary git worktree. Each round runs ``suites.py`` once with
this checkout's package and once with REF's (on ``PYTHONPATH``; the bench code and the venv are this checkout's),
which goes first alternating, on the same target Pythons. Prints each row's median for both and this / REF
(below 1: this checkout is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import suites
from common import ROOT, Samples, Table, record, shown

HERE = os.path.dirname(os.path.abspath(__file__))


def one_round(package_root: str, pythons: list[str], cases: list[str] | None,
              with_debugpy: bool) -> dict[str, dict[str, list[float]]]:
    """One round of ``suites.py`` with the package found in ``package_root``: per target, per case, its times."""
    argv = [sys.executable, os.path.join(HERE, "suites.py"), "--rounds", "1", "--json",
            *(["--with-debugpy"] if with_debugpy else [])]
    argv += [arg for python in pythons for arg in ("--python", python)]
    argv += [arg for case in cases or () for arg in ("--case", case)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode:
        raise RuntimeError(f"the suites failed with the package of {package_root}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", action="append", help="a target interpreter (default: every one found)")
    parser.add_argument("--case", action="append", choices=list(suites.CASES), help="only these cases")
    parser.add_argument("--with-debugpy", action="store_true",
                        help="targets have debugpy installed (commits before the relay lent its own need it)")
    opts = parser.parse_args()
    pythons = opts.python or suites.find_pythons()
    for python in pythons:
        suites.prepare_target(python, opts.with_debugpy)  # the venvs are made once, before any round is timed
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", opts.ref], capture_output=True, text=True,
                            check=True).stdout.strip()
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    times: dict[str, dict[str, dict[str, Samples]]] = {"this": {}, "ref": {}}
    with tempfile.TemporaryDirectory() as folder:
        worktree = os.path.join(folder, commit)
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", worktree, commit], check=True,
                       capture_output=True)
        try:
            for number in range(opts.rounds):
                order = [("this", ROOT), ("ref", worktree)]
                for which, root in order if number % 2 == 0 else reversed(order):
                    for version, found in one_round(root, pythons, opts.case, opts.with_debugpy).items():
                        for key, values in found.items():
                            samples = times[which].setdefault(version, {}).setdefault(key, Samples())
                            samples.values.extend(values)
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", worktree], capture_output=True)

    table = Table("measure (ms; CPU: the target's)", "n", f"this ({head})", f"ref ({commit})", "this / ref")
    for version in times["this"]:
        table.row(f"**Python {version}**")
        mine, theirs = times["this"][version], times["ref"].get(version, {})
        for key, (title, _) in suites.CASES.items():
            for suffix, label in (("", title), (" cpu", "    CPU")):
                a, b = mine.get(key + suffix), theirs.get(key + suffix)
                if a and a.n and b and b.n:
                    table.row(label, a.n, a.median, b.median, a.median / b.median)
        for title, top, bottom, _ in suites.RATIOS:
            for suffix, label in (("", title), (" cpu", "    CPU")):
                a, b = suites.ratio_of(mine, top + suffix, bottom + suffix), suites.ratio_of(
                    theirs, top + suffix, bottom + suffix)
                if a is not None and b is not None:
                    table.row(label, mine[top].n, a, b, a / b)
    command = " ".join(["python bench/compare.py", *map(shown, sys.argv[1:])])
    record("compare", {"command": command, "commits": {"this": head, "ref": commit},
                       **{which: suites.figures(found) for which, found in times.items()}})


if __name__ == "__main__":
    main()
