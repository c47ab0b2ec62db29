"""What every bench shares: timing, one percentile, the anchor clients run in rounds, tables and the results file.

- ``timed(fn)`` and ``Samples``: samples in milliseconds; ``Samples.summary()`` gives n, median, p95, p99, min, max.
- ``percentile(values, p)``: the nearest rank (the smallest value with at least p % of the samples at or below it):
  the p99 of 40 samples is the worst one, never a value below it.
- ``run_anchor(script, args)``: one run of a client of ``../shared/bench`` (its JSON line), capped in time;
  ``rounds(...)`` alternates the relay's runs with the anchors' so that drift hits both alike.
- ``Table``: a Markdown table, printed as it is built.
- ``record(bench, figures)``: the figures of a run, kept in ``bench/results.json`` beside the other benches' (what
  ``make docs`` writes the README's figures from).
- ``LineReader(pipe).readline(deadline)``, ``wait_until(predicate, timeout)``: every wait of a bench has a cap.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import select
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ANCHORS = os.path.join(ROOT, "..", "shared", "bench")
RESULTS = os.path.join(HERE, "results.json")
ANCHOR_TIMEOUT = 600.0  # seconds one run of an anchor client may take
# A program that loops through a small function for ever: the same steps again and again, for timing them.
STEPPING_TARGET = """
def work(i):
    total = 0
    for k in range(3):
        total += i * k
    return total

for i in range(10_000_000):
    work(i)
"""


def ms(seconds: float) -> float:
    return seconds * 1000


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    """How long ``fn(*args, **kwargs)`` took, in ms."""
    began = time.perf_counter()
    fn(*args, **kwargs)
    return ms(time.perf_counter() - began)


def percentile(values: Iterable[float], p: float) -> float:
    """The nearest-rank ``p`` percentile (0 < p <= 100): the ceil(p/100 * n)-th smallest value."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no samples")
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


@dataclass
class Samples:
    """Samples of one measure, in ms."""

    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(value)

    def time(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` and add how long it took; its result."""
        began = time.perf_counter()
        out = fn(*args, **kwargs)
        self.values.append(ms(time.perf_counter() - began))
        return out

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def p(self, q: float) -> float:
        return percentile(self.values, q)

    def summary(self) -> dict[str, float | int]:
        """n, median, p95, p99, min and max (ms, rounded to the microsecond)."""
        return {"n": self.n, "median": round(self.median, 3), "p95": round(self.p(95), 3),
                "p99": round(self.p(99), 3), "min": round(min(self.values), 3), "max": round(max(self.values), 3)}


def summary(values: Sequence[float]) -> dict[str, float | int]:
    return Samples(list(values)).summary()


# -- anchors ---------------------------------------------------------------------------------


def anchor_script(name: str) -> str | None:
    """The path of the anchor client ``name`` in ``../shared/bench``, or None where it is not here."""
    path = os.path.join(ANCHORS, name)
    return path if os.path.exists(path) else None


def run_anchor(name: str, args: Sequence[str] = (), timeout: float = ANCHOR_TIMEOUT) -> dict[str, Any] | None:
    """One run of the anchor client ``name``: the JSON object it prints last; None when it is missing, fails or
    outlives ``timeout`` (said on stderr)."""
    script = anchor_script(name)
    if script is None:
        return None
    try:
        out = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"anchor {name} {' '.join(args)}: no answer within {timeout:g} s", file=sys.stderr)
        return None
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        print(f"anchor {name} {' '.join(args)} printed no figures (exit {out.returncode}): {out.stderr[-500:]}",
              file=sys.stderr)
        return None
    return json.loads(lines[-1])


class AnchorRuns:
    """The runs of one anchor client in a bench: each run's JSON; per figure, the median over the runs."""

    def __init__(self, name: str, args: Sequence[str] = ()) -> None:
        self.name, self.args = name, list(args)
        self.runs: list[dict[str, Any]] = []

    @property
    def available(self) -> bool:
        return anchor_script(self.name) is not None

    def run(self, extra: Sequence[str] = ()) -> None:
        found = run_anchor(self.name, [*self.args, *extra])
        if found is not None:
            self.runs.append(found)

    def figure(self, key: str) -> float | None:
        """The median of ``key`` over the runs (each run's own figure is a median of its samples)."""
        values = [run[key] for run in self.runs if isinstance(run.get(key), (int, float))]
        return statistics.median(values) if values else None

    def samples(self) -> int:
        """How many samples the runs took in all (each prints its own ``n``)."""
        return sum(int(run.get("n", 0)) for run in self.runs)


def rounds(count: int, relay: Callable[[int], None], anchors: Sequence[tuple[AnchorRuns, Sequence[str]]]) -> None:
    """``count`` rounds of: ``relay(round)``, then one run of each anchor (with its extra arguments); the order
    flips every other round so that neither always goes first."""
    for number in range(count):
        steps: list[Callable[[], None]] = [lambda number=number: relay(number)]
        steps += [lambda runs=runs, extra=extra: runs.run(extra) for runs, extra in anchors]
        for step in steps if number % 2 == 0 else reversed(steps):
            step()


def ratio(anchor: float | None, relay: float | None) -> str:
    """``12.3x`` (how many times the anchor's time is the relay's), or ``n/a``."""
    return f"{anchor / relay:.1f}x" if anchor and relay else "n/a"


# -- tables and results --------------------------------------------------------------------------


class Table:
    """A Markdown table printed row by row: the first column left-aligned, the others right-aligned."""

    def __init__(self, *columns: str, widths: Sequence[int] = ()) -> None:
        self.widths = [max(len(c), w) for c, w in zip(columns, [*widths, *[0] * len(columns)], strict=False)]
        self.widths[0] = max(self.widths[0], 42)
        self.widths[1:] = [max(w, 9) for w in self.widths[1:]]
        self._print(columns)
        print("|" + "|".join(("-" * (w + 2)) if i == 0 else ("-" * (w + 1) + ":") for i, w in
                             enumerate(self.widths)) + "|")

    def _print(self, cells: Sequence[str]) -> None:
        print("| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                                enumerate(zip(cells, self.widths, strict=False))) + " |", flush=True)

    def row(self, *cells: Any) -> None:
        self._print([cell if isinstance(cell, str) else fmt(cell) for cell in cells]
                    + [""] * (len(self.widths) - len(cells)))


def fmt(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}" if abs(value) < 1000 else f"{value:,.0f}"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "system": platform.platform(terse=True),
            "date": time.strftime("%Y-%m-%d")}


def shown(argument: str) -> str:
    """A command-line argument as a page shows it: an interpreter's path by its file name, with the version a
    pyenv folder names (``.../versions/3.12.1/bin/python``: ``python3.12``)."""
    if not os.path.isabs(argument):
        return argument
    found = re.search(r"/(\d+\.\d+)\.\d+[^/]*/bin/python3?$", argument)
    return f"python{found.group(1)}" if found else os.path.basename(argument)


def keep_bytecode() -> None:
    """Have the targets keep their bytecode, as on a user's machine: a shell's ``PYTHONDONTWRITEBYTECODE`` made pytest
    rewrite the asserts of every test module at every run (3-4 s of the 300-test suite's 4-5 s) and the boot compile
    at every launch."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def record(bench: str, figures: dict[str, Any], path: str = RESULTS) -> None:
    """Keep ``figures`` as ``bench``'s part of the results file (the other benches' parts stay)."""
    try:
        with open(path) as f:
            results = json.load(f)
    except (OSError, ValueError):
        results = {}
    results[bench] = {"machine": machine(), **figures}
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(f"figures kept in {os.path.relpath(path)} under {bench!r}")


# -- waits ---------------------------------------------------------------------------------------


class LineReader:
    """Lines of a pipe, each read with a deadline: ``TimeoutError`` once ``time.monotonic()`` passes it, ``b""`` at
    the pipe's end. It reads the pipe's descriptor itself (large reads, its own buffer): do not mix with
    ``stream.readline()``."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.fd, self.buffer = stream.fileno(), b""

    def readline(self, deadline: float, what: str = "a line") -> bytes:
        while (end := self.buffer.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError(f"no {what} within the time given")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                line, self.buffer = self.buffer, b""
                return line
            self.buffer += chunk
        line, self.buffer = self.buffer[:end + 1], self.buffer[end + 1:]
        return line


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, poll: float = 0.0005) -> Any:
    """Poll ``predicate`` until it returns something true (returned), or ``TimeoutError`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(poll)
    return found
