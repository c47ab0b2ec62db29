"""Whole programs between stops: test suites run plainly and under the relay, on every target Python found.

Two suites, each timed as a whole ``pytest`` run (wall time, from the launch to the end):

- the synthetic suite (``SUITE_TESTS`` tests the bench writes): plainly, under a no-op trace function in Python and
  in C (the floor of any debugger that traces through ``sys.settrace``; built when a C compiler is here), and under
  the relay without a breakpoint, with one no test reaches, and with one its first test hits once (continued: the
  rest of the suite runs after a stop);
- a real PyPI project's own test suite (``PROJECT``, its source distribution unpacked, as a user's checkout):
  plainly, under the relay with a breakpoint never hit, and the time to the first hit of a breakpoint deep in the
  library beside the plain run of the test files up to that hit.

Each case is timed on the wall clock and by the CPU time its processes used (the target and what starts it:
``RUSAGE_CHILDREN``), which moves less on a busy machine. Each target Python gets a virtualenv with pytest, made
once and kept in ``CACHE`` (as is the project's download). The relay lends every target its own debugpy.
``CASES`` lists what is run per target, in turn, ``rounds`` times; a case is a function of (``Target``,
``Suites``) to milliseconds (None: not measurable there).

    python bench/suites.py [--rounds 3] [--python PATH ...] [--case KEY ...] [--json]

Its figures are kept in ``bench/results.json`` (``suites``), which ``bench/figures.py`` puts in docs/performance.md.

``bench/compare.py REF`` runs this file with another commit's package on ``PYTHONPATH``, in the same run.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import debugpy
from common import Samples, Table, keep_bytecode, ms, record, shown

from jupyter_debug_relay import Relay, RelayError, SessionHandle

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "jupyter-debug-relay-bench")
PROJECT = "toolz==1.2.0"  # its tests ship in its sdist; pure Python, no dependency
PROJECT_BP_NEVER = ("toolz/sandbox/core.py", "def unzip(seq):", "seq = iter(seq)")  # (file, function, its line)
PROJECT_BP_DEEP = ("toolz/recipes.py", "def partitionby(func, seq):", "return map(")  # from test_recipes.py
PROJECT_TESTS_BEFORE_HIT = "toolz/tests/test_[a-r]*.py"  # the test files pytest runs up to the deep hit
SUITE_TESTS = 300
PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
RUN_TIMEOUT = 900.0  # seconds one run of a suite may take

SUITE_TEST = """
def test_{k}():
    items = parse(" ".join(f"item{{i}}:{{i}}.5x{{i % 7}}" for i in range({size})))
    assert len(items) == {size} and total(items) >= 0
    data = json.loads(json.dumps([dataclasses.asdict(i) for i in items]))
    assert sorted(d["qty"] for d in data) == sorted(i.qty for i in items)
    assert fib({k} % 30) >= 0 and sum(collections.Counter(i.qty for i in items).values()) == len(items)
"""
SUITE_HEAD = """import collections, dataclasses, json, re

@dataclasses.dataclass
class Item:
    name: str
    price: float
    qty: int

def parse(text):
    return [Item(n, float(p), int(q)) for n, p, q in re.findall(r"(\\w+):(\\d+\\.\\d+)x(\\d+)", text)]

def total(items):
    return sum(i.price * i.qty for i in items)

def never_called():
    return "the breakpoint is here"  # never

def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
"""
NOOP_TRACE = "import sys, pytest\nsys.settrace(lambda *a: None)\nsys.exit(pytest.main(sys.argv[1:]))\n"
# The same in C: what the interpreter's own tracing costs, with a trace function that takes no time.
C_NOOP_TRACE = """#include <Python.h>
#include <frameobject.h>
static int noop(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) { return 0; }
static PyObject *on(PyObject *self, PyObject *unused) { PyEval_SetTrace(noop, NULL); Py_RETURN_NONE; }
static PyMethodDef methods[] = {{"on", on, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "c_noop_trace", NULL, -1, methods};
PyMODINIT_FUNC PyInit_c_noop_trace(void) { return PyModule_Create(&module); }
"""
C_NOOP_RUN = "import sys, pytest, c_noop_trace\nc_noop_trace.on()\nsys.exit(pytest.main(sys.argv[1:]))\n"
ABOUT = ("import json, sys, sysconfig; print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], "
         "'include': sysconfig.get_paths()['include'], 'suffix': sysconfig.get_config_var('EXT_SUFFIX'), "
         "'cc': sysconfig.get_config_var('CC') or 'cc'}))")


@dataclass
class Target:
    """A target Python: its interpreter, the virtualenv the bench made for it, what the C tracer needs."""

    base: str  # the interpreter found
    version: str
    python: str  # the virtualenv's interpreter, with pytest
    include: str
    suffix: str
    cc: str

    @property
    def label(self) -> str:
        return f"Python {self.version}"


@dataclass
class Suites:
    """The folders of one bench run: the synthetic suite, the project's checkout, the per-target C tracers."""

    folder: str
    project: str
    c_runners: dict[str, str | None] = field(default_factory=dict)

    @property
    def suite(self) -> str:
        return os.path.join(self.folder, "test_suite.py")


def find_pythons() -> list[str]:
    """The kernel's own Python, then one interpreter of each newer 3.x found on PATH or in pyenv (3.11 and up)."""
    found = {sys.version_info[:2]: sys.executable}
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for minor in range(11, 20):
        if (3, minor) in found:
            continue
        pyenv = sorted(glob.glob(os.path.join(root, "versions", f"3.{minor}.*", "bin", f"python3.{minor}")))
        path = shutil.which(f"python3.{minor}")
        candidates = [*pyenv[-1:], *([path] if path and ".pyenv/shims" not in path else [])]
        if candidates:
            found[(3, minor)] = candidates[0]
    return [found[key] for key in sorted(found)]


def run(argv: list[str], timeout: float = 600, **kwargs) -> str:  # noqa: ANN003 - subprocess.run's own
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-1500:]}")
    return done.stdout


def prepare_target(base: str, with_debugpy: bool = False) -> Target:
    """The target for interpreter ``base``: a virtualenv with pytest (and the relay's version of debugpy, for
    commits that did not lend theirs), made once in ``CACHE``."""
    about = json.loads(run([base, "-c", ABOUT]).strip().splitlines()[-1])
    wanted = ["pytest", *([f"debugpy=={debugpy.__version__}"] if with_debugpy else [])]
    key = hashlib.sha256(f"{os.path.realpath(base)} {about['version']} {wanted}".encode()).hexdigest()[:12]
    venv = os.path.join(CACHE, f"venv-{about['version']}-{key}")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(os.path.join(venv, ".ready")):
        shutil.rmtree(venv, ignore_errors=True)
        run([base, "-m", "venv", venv])
        run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted],
            timeout=900)
        open(os.path.join(venv, ".ready"), "w").close()
    return Target(base, about["version"], python, about["include"], about["suffix"], about["cc"].split()[0])


def fetch_project(folder: str) -> str:
    """The project's source distribution unpacked in ``folder`` (downloaded once into ``CACHE``): its root."""
    downloads = os.path.join(CACHE, "sdists")
    name, _, version = PROJECT.partition("==")
    found = glob.glob(os.path.join(downloads, f"{name}-{version}.tar.gz"))
    if not found:
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             "--disable-pip-version-check", "-d", downloads, PROJECT], timeout=900)
        found = glob.glob(os.path.join(downloads, f"{name}-{version}.tar.gz"))
    with tarfile.open(found[0]) as archive:
        archive.extractall(folder, filter="data")
    return os.path.join(folder, f"{name}-{version}")


def line_of(path: str, function: str, text: str) -> int:
    """The first line starting with ``text`` (stripped) below the one starting with ``function``."""
    with open(path) as f:
        lines = [line.strip() for line in f]
    start = lines.index(function)
    return next(n for n, line in enumerate(lines[start:], start + 1) if line.startswith(text))


def build_c_noop(folder: str, target: Target) -> str | None:
    """The C no-op tracer built for ``target``; its runner's path, or None with no C compiler here."""
    source = os.path.join(folder, "c_noop_trace.c")
    with open(source, "w") as f:
        f.write(C_NOOP_TRACE)
    out = os.path.join(folder, f"c{target.version}")
    os.makedirs(out, exist_ok=True)
    try:
        run([target.cc, "-O2", "-shared", "-fPIC", "-I", target.include, source, "-o",
             os.path.join(out, "c_noop_trace" + target.suffix)], timeout=120)
    except (OSError, RuntimeError, subprocess.SubprocessError):
        return None
    runner = os.path.join(out, "c_noop_run.py")
    with open(runner, "w") as f:
        f.write(C_NOOP_RUN)
    return runner


def prepare(folder: str) -> Suites:
    """Write the synthetic suite and its runners, unpack the project."""
    os.makedirs(folder, exist_ok=True)
    suites = Suites(folder, fetch_project(folder))
    with open(suites.suite, "w") as f:
        f.write(SUITE_HEAD + "".join(SUITE_TEST.format(k=k, size=k % 50 + 20) for k in range(SUITE_TESTS)))
    with open(os.path.join(folder, "noop_trace.py"), "w") as f:
        f.write(NOOP_TRACE)
    return suites


def plain(target: Target, argv: list[str], cwd: str) -> float:
    """One plain run of ``python ARGV`` in ``cwd``, in ms."""
    began = time.perf_counter()
    run([target.python, *argv], env={**os.environ, **PYTEST_ENV}, cwd=cwd, timeout=RUN_TIMEOUT)
    return ms(time.perf_counter() - began)


def open_relay() -> Relay:
    """A relay that keeps no recording (commits before the session store took no ``record``)."""
    try:
        return Relay(record=False)
    except TypeError:
        return Relay()


def stopped_before(session: SessionHandle, deadline: float) -> bool:
    """Wait for the session's next stop (True) or its end (False) until ``deadline``."""
    while True:
        try:
            session.wait_for_stop(max(1.0, deadline - time.perf_counter()))
            return True
        except RelayError as exc:
            if exc.code == "timeout" and time.perf_counter() < deadline:
                continue  # still running
            if exc.code == "target_exited":
                return False
            raise


def debugged(target: Target, args: list[str], cwd: str, breakpoint: tuple[str, int] | None,
             stops: bool = False, hits: int = 0) -> float:
    """One run of ``pytest ARGS`` under the relay in ``cwd``, in ms: to its end (continued after each of ``hits``
    stops), or to its first stop."""
    with open_relay() as relay:
        if breakpoint is not None:
            relay.breakpoints.add(*breakpoint)
        began = time.perf_counter()
        session = relay.launch(module="pytest", args=args, cwd=cwd, env=dict(PYTEST_ENV), python=target.python)
        deadline = began + RUN_TIMEOUT
        stopped = stopped_before(session, deadline)
        while stopped and hits:
            hits -= 1
            stopped = session.continue_(timeout=max(1.0, deadline - time.perf_counter())) is not None
        took = ms(time.perf_counter() - began)
        if stopped:
            session.terminate()
            if not stops:
                raise RuntimeError(f"the suite stopped once more than expected at {breakpoint}")
        elif stops or hits:
            raise RuntimeError(f"the suite ended before it stopped at {breakpoint}")
        elif session.exit_code != 0:
            raise RuntimeError(f"the suite failed under the relay: {session.output().text[-2000:]}")
        return took


SUITE_ARGS = ["-q", "-p", "no:cacheprovider", "test_suite.py"]
PROJECT_ARGS = ["-q", "-p", "no:cacheprovider", "toolz/tests"]


def suite_bp(suites: Suites) -> tuple[str, int]:
    return suites.suite, SUITE_HEAD.splitlines().index('    return "the breakpoint is here"  # never') + 1


def suite_bp_once(suites: Suites) -> tuple[str, int]:
    """The assert of the suite's first test: hit once, at the start of the run (its first line holds a generator
    expression, whose frame would stop too)."""
    with open(suites.suite) as f:
        return suites.suite, f.read().splitlines().index("def test_0():") + 3


def project_bp(suites: Suites, where: tuple[str, str, str]) -> tuple[str, int]:
    path = os.path.join(suites.project, where[0])
    return path, line_of(path, *where[1:])


def c_noop(target: Target, suites: Suites) -> float | None:
    if target.version not in suites.c_runners:
        suites.c_runners[target.version] = build_c_noop(suites.folder, target)
    runner = suites.c_runners[target.version]
    return plain(target, [runner, *SUITE_ARGS[:-1], suites.suite], suites.folder) if runner else None


def tests_before_hit(suites: Suites) -> list[str]:
    return sorted(os.path.relpath(p, suites.project)
                  for p in glob.glob(os.path.join(suites.project, PROJECT_TESTS_BEFORE_HIT)))


Case = Callable[[Target, Suites], "float | None"]
CASES: dict[str, tuple[str, Case]] = {  # key -> (row title, how one run is timed)
    "suite_plain": (f"{SUITE_TESTS}-test suite, plain",
                    lambda t, s: plain(t, ["-m", "pytest", *SUITE_ARGS], s.folder)),
    "suite_noop": ("  under a no-op trace function",
                   lambda t, s: plain(t, [os.path.join(s.folder, "noop_trace.py"), *SUITE_ARGS], s.folder)),
    "suite_c_noop": ("  under a C no-op trace function", c_noop),
    "suite_no_bp": ("  under the relay, no breakpoint", lambda t, s: debugged(t, SUITE_ARGS, s.folder, None)),
    "suite_bp": ("  under the relay, bp never hit", lambda t, s: debugged(t, SUITE_ARGS, s.folder, suite_bp(s))),
    "suite_bp_once": ("  under the relay, bp hit once, continued",
                      lambda t, s: debugged(t, SUITE_ARGS, s.folder, suite_bp_once(s), hits=1)),
    "project_plain": (f"{PROJECT} own suite, plain", lambda t, s: plain(t, ["-m", "pytest", *PROJECT_ARGS],
                                                                          s.project)),
    "project_bp": ("  under the relay, bp never hit",
                   lambda t, s: debugged(t, PROJECT_ARGS, s.project, project_bp(s, PROJECT_BP_NEVER))),
    "project_plain_to_hit": ("  plain, the test files up to the deep hit",
                             lambda t, s: plain(t, ["-m", "pytest", *PROJECT_ARGS[:-1], *tests_before_hit(s)],
                                                s.project)),
    "project_first_hit": ("  under the relay, launch to the deep hit",
                          lambda t, s: debugged(t, PROJECT_ARGS, s.project, project_bp(s, PROJECT_BP_DEEP), True)),
}
RATIOS = [  # (title, numerator, denominator, goal: (on 3.11, on 3.12 and newer))
    ("  ratio relay, bp never hit / plain", "suite_bp", "suite_plain", (2.0, 1.2)),
    ("  ratio relay, no bp / plain", "suite_no_bp", "suite_plain", None),
    ("  ratio relay, bp hit once / plain", "suite_bp_once", "suite_plain", None),
    ("  ratio no-op tracer / plain", "suite_noop", "suite_plain", None),
    ("  ratio C no-op tracer / plain", "suite_c_noop", "suite_plain", None),
    (f"  ratio {PROJECT.partition('==')[0]}, relay / plain", "project_bp", "project_plain", (3.0, 1.3)),
    ("  ratio deep hit / plain to it", "project_first_hit", "project_plain_to_hit", None),
]


def children_cpu() -> float:
    """CPU time (user + system, ms) of this process's ended children: the targets, reaped by the relay or by us."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ms(used.ru_utime + used.ru_stime)


def warm_up(target: Target, suites: Suites) -> None:
    """Untimed, as a user's first runs: the plain runs write the bytecode caches (pytest's rewritten test modules);
    a launch with every breakpoint of the cases has the relay probe the interpreter (a child process, once a relay
    process) and the boot keep the code lines of the breakpoints' files (a file's are compiled at its first
    breakpoint: 100 ms of the target's CPU for the 300-test module, paid by every timed run of a fresh folder)."""
    CASES["suite_plain"][1](target, suites)
    CASES["project_plain"][1](target, suites)
    with open_relay() as relay:
        for breakpoint in (suite_bp(suites), suite_bp_once(suites), project_bp(suites, PROJECT_BP_NEVER),
                           project_bp(suites, PROJECT_BP_DEEP)):
            relay.breakpoints.add(*breakpoint)
        session = relay.launch(module="pytest", args=["--version"], cwd=suites.folder, env=dict(PYTEST_ENV),
                               python=target.python)
        if stopped_before(session, time.perf_counter() + RUN_TIMEOUT) or session.exit_code != 0:
            raise RuntimeError(f"the warm-up launch failed: {session.output().text[-2000:]}")


def measure(targets: list[Target], suites: Suites, rounds: int, cases: list[str] | None = None,
            ) -> dict[str, dict[str, Samples]]:
    """Per target, per case: ``rounds`` runs, one of each case in turn per round (drift hits all alike). Each case
    has its wall time (``key``) and the CPU time its processes used (``key cpu``), which a busy machine moves less."""
    keep_bytecode()
    chosen = [key for key in CASES if cases is None or key in cases]
    times = {target.version: {k: Samples() for key in chosen for k in (key, f"{key} cpu")} for target in targets}
    for target in targets:
        warm_up(target, suites)
    for _ in range(rounds):
        for target in targets:
            for key in chosen:
                cpu = children_cpu()
                took = CASES[key][1](target, suites)
                if took is not None:
                    times[target.version][key].add(took)
                    times[target.version][f"{key} cpu"].add(children_cpu() - cpu)
    return times


def ratio_of(found: dict[str, Samples], top: str, bottom: str) -> float | None:
    """``top`` over ``bottom``: the median of each round's ratio, the two run one after the other, so that the
    machine's speed, which moves by a third from one minute to the next here, weighs on both alike."""
    upper, lower = found.get(top), found.get(bottom)
    if not (upper and lower and upper.n and lower.n):
        return None
    if upper.n == lower.n:
        return statistics.median(a / b for a, b in zip(upper.values, lower.values, strict=True))
    return upper.median / lower.median  # a round lost a run: its medians


def cells(found: dict[str, Samples], key: str) -> list:
    """n, the wall-time median and the CPU-time median of a case (blank where it did not run)."""
    wall, cpu = found.get(key), found.get(f"{key} cpu")
    return [wall.n, wall.median, cpu.median if cpu and cpu.n else ""] if wall and wall.n else ["", "", ""]


def ratio_cells(found: dict[str, Samples], top: str, bottom: str) -> list:
    wall, cpu = ratio_of(found, top, bottom), ratio_of(found, f"{top} cpu", f"{bottom} cpu")
    return [found[top].n, wall, "" if cpu is None else cpu] if wall is not None else []


SUITE_COLUMNS = ("measure (ms)", "n", "wall", "target CPU", "goal")


def print_rows(table: Table, found: dict[str, Samples], target: Target) -> None:
    """A target's rows in a table of columns (measure, n, wall ms, the target's CPU ms, its version's goal)."""
    newer = tuple(map(int, target.version.split(".")[:2])) >= (3, 12)
    table.row(f"**{target.label}**")
    for key, (title, _) in CASES.items():
        if key in found and found[key].n:
            table.row(title, *cells(found, key))
    for title, top, bottom, goal in RATIOS:
        if found_ratio := ratio_cells(found, top, bottom):
            table.row(title, *found_ratio, "" if goal is None else f"{goal[newer]:g}")


def figures(times: dict[str, dict[str, Samples]]) -> dict:
    """The results file's part: per target, each case's summary and each ratio (wall and CPU)."""
    return {version: {**{key: s.summary() for key, s in found.items() if s.n},
                      **{f"ratio {top}/{bottom}{cpu}": round(r, 2) for _, top, bottom, _ in RATIOS
                         for cpu in ("", " cpu") if (r := ratio_of(found, top + cpu, bottom + cpu)) is not None}}
            for version, found in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", action="append", help="a target interpreter (default: every one found)")
    parser.add_argument("--case", action="append", choices=list(CASES), help="only these cases")
    parser.add_argument("--json", action="store_true", help="print the samples as one JSON line, no table")
    parser.add_argument("--with-debugpy", action="store_true", help="targets have debugpy installed")
    opts = parser.parse_args()
    targets = [prepare_target(python, opts.with_debugpy) for python in opts.python or find_pythons()]
    with tempfile.TemporaryDirectory() as folder:
        os.environ["JUPYTER_DEBUG_RELAY_HOME"] = os.path.join(folder, "home")
        times = measure(targets, prepare(folder), opts.rounds, opts.case)
    if opts.json:
        print(json.dumps({version: {key: s.values for key, s in found.items()} for version, found in times.items()}))
        return
    table = Table(*SUITE_COLUMNS)
    for target in targets:
        print_rows(table, times[target.version], target)
    record("suites", {"command": " ".join(["python bench/suites.py", *map(shown, sys.argv[1:])]), **figures(times)})


if __name__ == "__main__":
    main()
