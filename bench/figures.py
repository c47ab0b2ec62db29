"""The figures of the README and of docs/performance.md, written from the last ``make bench`` (``bench/results.json``).

    python bench/figures.py README.md docs/performance.md           # rewrite their generated blocks
    python bench/figures.py --check README.md docs/performance.md   # exit 1 when a block differs

A page holds a block between ``<!-- generated: figures ... -->`` and ``<!-- end: figures -->``; what goes in it
depends on the page (``BLOCKS``). A block named ``<!-- generated: figures:NAME ... -->`` holds one bench's
figures (``NAMED``) and is left as it is while that bench has none in the results.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results.json")
BLOCK = re.compile(r"(<!-- generated: figures(?::([\w-]+))? [^\n]*-->\n)(.*?)(<!-- end: figures -->)", re.S)


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _ratio(anchor: float | None, relay: float | None) -> str:
    return f"{anchor / relay:.0f}×" if anchor and relay else "–"


def _source(results: dict[str, Any]) -> str:
    machine = results["core"]["machine"]
    return (f"Measured by `make bench` on {machine['date']} (interpreter {machine['python']}, {machine['cpus']} cores, "
            "shared with other work: each bench runs at its own moment, so compare a figure with the others of its "
            "run); `make docs` writes these figures from `bench/results.json`.")


def readme(results: dict[str, Any]) -> str:
    """A step through each front end, beside the anchors of the same run; the launch."""
    core, kernel, server = results["core"], results["kernel"], results["server"]
    anchors = core["anchors"]
    rows = [
        ("a step from Python (`session.next()`)", core["step_ms"]),
        ("a step over the comm (a frontend's request)", kernel["comm_ms"]),
        ("a step as a cell (`%debug_session next`)", kernel["magic_ms"]),
        ("a step over HTTP (`POST …/step-over`)", server["http step-over (http.client)"]),
        ("launch to the first stop", core["launch_ms"]),
    ]
    lines = ["| median, ms | relay | n |", "|---|---:|---:|"]
    lines += [f"| {name} | {_ms(figure['median'])} | {figure['n']:,} |" for name, figure in rows]
    same_run = [(f"a raw DAP client straight to debugpy, {label.split(', ')[1]}", anchor.get("step_ms"),
                 "`session.next()`", core["step_ms"]["median"]) for label, anchor in anchors.items()]
    if kernel.get("anchor"):
        same_run.append(("JupyterLab's debugger (ipykernel's debug protocol)", kernel["anchor"]["step_ms"],
                         "the comm's step", kernel["comm_ms"]["median"]))
    lines += ["", "| a step, median, ms | | the relay in the same run | | |", "|---|---:|---|---:|---:|"]
    lines += [f"| {name} | {_ms(value)} | {what} | {_ms(relay)} | {_ratio(value, relay)} faster |"
              for name, value, what, relay in same_run]
    return "\n".join(lines) + "\n\n" + _source(results) + "\n"


CORE_ROWS = (  # title, the core bench's key, the goal (ms), the anchors' key
    ("launch to first stop", "launch_ms", 250, "first_stop_ms"), ("step (next → stopped)", "step_ms", 3, "step_ms"),
    ("stack+scopes+variables", "inspect_ms", 5, "inspect_ms"), ("evaluate", "evaluate_ms", 2, "evaluate_ms"),
    ("restart to first stop", "restart_ms", 250, None), ("1M-element list, first 100", "big_page_ms", 50, None),
)


def performance(results: dict[str, Any]) -> str:
    """The core measures with their goals and both anchors, with sample counts."""
    core = results["core"]
    anchors = core["anchors"]
    labels = list(anchors)
    head = "| measure, median ms | n | relay | goal | " + " | ".join(f"{label} | ratio" for label in labels) + " |"
    lines = [head, "|---|---:|---:|---:|" + "---:|---:|" * len(labels)]
    for name, key, goal, anchor_key in CORE_ROWS:
        figure = core[key]
        cells = [name, f"{figure['n']:,}", _ms(figure["median"]), str(goal)]
        for label in labels:
            value = anchors[label].get(anchor_key) if anchor_key else None
            cells += [_ms(value), _ratio(value, figure["median"])]
        lines.append("| " + " | ".join(cells) + " |")
    for count in (20, 50):
        figure = core[f"step_{count}_paced_ms"]
        lines.append(f"| step p99, {count} sessions at an agent's pace | {figure['n']:,} | {_ms(figure['p99'])} | 30 |"
                     + " – | – |" * len(labels))
    runs = ", ".join(f"{label}: {len(anchor['runs'])} runs" for label, anchor in anchors.items())
    return "\n".join(lines) + f"\n\n{_source(results)} Anchors: {runs}.\n"


def _times(value: float) -> str:
    return f"{value:.2f}×"


def _machine(part: dict[str, Any]) -> str:
    machine = part["machine"]
    return f"{machine['date']}, kernel's interpreter {machine['python']}, {machine['cpus']} cores"


SUITE_ROWS = (  # title, numerator, denominator, goal on 3.12+
    ("300-test suite, breakpoint never hit / plain", "suite_bp", "suite_plain", "1.2"),
    ("300-test suite, breakpoint hit once in its first test, then continued / plain", "suite_bp_once", "suite_plain",
     ""),
    ("toolz's own suite, breakpoint never hit / plain", "project_bp", "project_plain", "1.3"),
    ("toolz: launch to a deep breakpoint / plain run up to it", "project_first_hit", "project_plain_to_hit", ""),
)


def suites(results: dict[str, Any]) -> str:
    """Whole suites per target Python (``bench/suites.py``), by the CPU time of the target, and the wall clock."""
    part = results["suites"]
    versions = sorted((v for v in part if v[0].isdigit()), key=lambda v: tuple(map(int, v.split("."))))
    lines = ["| ratio (target CPU; wall clock) | " + " | ".join(f"Python {v}" for v in versions) + " | goal, 3.12+ |",
             "|---|" + "---:|" * (len(versions) + 1)]
    for title, top, bottom, goal in SUITE_ROWS:
        cells = []
        for version in versions:
            found = part[version]
            cpu, wall = found.get(f"ratio {top}/{bottom} cpu"), found.get(f"ratio {top}/{bottom}")
            n = found.get(top, {}).get("n")
            cells.append(f"{_times(cpu)}; {_times(wall)} (n={n})" if cpu is not None and wall is not None else "–")
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {goal} |")
    plain = [f"{part[v]['suite_plain cpu']['median']:,.0f} / {part[v]['project_plain cpu']['median']:,.0f}"
             if "suite_plain cpu" in part[v] and "project_plain cpu" in part[v] else "–" for v in versions]
    lines.append("| plain runs: 300-test suite / toolz, target CPU ms | " + " | ".join(plain) + " | |")
    return ("\n".join(lines) + f"\n\n`{part['command']}` on {_machine(part)}, shared with other work (the CPU time "
            "of the target is the figure to read then); `make docs` writes this table from `bench/results.json`.\n")


def compare(results: dict[str, Any]) -> str:
    """The suites' ratios at this commit and at an older one, in the same rounds (``bench/compare.py REF``)."""
    part = results["compare"]
    this, ref = part["commits"]["this"], part["commits"]["ref"]
    versions = sorted((v for v in part["this"] if v[0].isdigit() and v in part["ref"]),
                      key=lambda v: tuple(map(int, v.split("."))))
    lines = [f"| ratio, target CPU | Python | at {ref} | at {this} | {this} / {ref} |", "|---|---|---:|---:|---:|"]
    for title, top, bottom, _ in SUITE_ROWS:
        for version in versions:
            key = f"ratio {top}/{bottom} cpu"
            old, new = part["ref"][version].get(key), part["this"][version].get(key)
            if old is not None and new is not None:
                n = part["this"][version][top]["n"]
                lines.append(f"| {title} (n={n}) | {version} | {_times(old)} | {_times(new)} | {new / old:.2f} |")
    return ("\n".join(lines) + f"\n\n`{part['command']}` on {_machine(part)}, shared with other work: each round "
            "runs the suites with this checkout's package and with the older commit's, in turn; `make docs` writes "
            "this table from `bench/results.json`.\n")


def target_versions(results: dict[str, Any]) -> str:
    """Per target Python (``bench/target_versions.py``): a hot function holding a breakpoint, the first stop."""
    part = results["target_versions"]
    lines = ["| target Python | 2M calls holding a breakpoint not reached: relay / plain | the same in a process "
             "attached by pid (the loop's CPU) | goal | launch to first stop, median ms | goal | the target's CPU "
             "per launch, ms |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, found in part.items():
        if not isinstance(found, dict) or "hot_ratio" not in found:
            continue
        monitoring = not label.startswith(("3.8", "3.9", "3.10", "3.11"))
        by_pid = (f"{_times(found['hot_pid_ratio'])} (n={found['hot_pid_cpu']['n']})" if "hot_pid_ratio" in found
                  else "–")
        lines.append(f"| {label} | {_times(found['hot_ratio'])} (n={found['hot_bp']['n']}) | {by_pid} | "
                     f"{'2' if monitoring else ''} | {_ms(found['first_stop']['median'])} "
                     f"(n={found['first_stop']['n']}) | 250 | {_ms(found.get('launch_cpu', {}).get('median'))} |")
    return ("\n".join(lines) + f"\n\n`{part['command']}` on {_machine(part)}, shared with other work: the "
            "launches' wall clock moves with it; `make docs` writes this table from `bench/results.json`.\n")




LAUNCH_ROWS = (  # key in a launch_cost run, its title
    ("pass", "`python -c pass`, CPU"), ("pass_frozen_off", "`python -X frozen_modules=off -c pass`, CPU"),
    ("debugpy_import", "`import debugpy.server` (the lent copy) alone, CPU"),
    ("launch_cpu", "**a launch by the relay: the target's CPU to its first stop and end**"),
    ("relay_cpu", "the relay's own CPU to the stop"), ("launch_wall", "launch to the first stop, wall clock"),
    ("interpreter start", "phase: spawn to the boot's first line, wall"),
    ("debugger import", "phase: debugpy's import, wall"), ("breakpoints", "phase: breakpoints set, wall"),
    ("run to first stop", "phase: configuration done to the stop, wall"))


def launch_cost(results: dict[str, Any]) -> str:
    """What a launch costs per target Python (``bench/launch_cost.py``), with the boot of an older commit beside."""
    part = results["launch_cost"]
    pythons = [name for name in part if name[0].isdigit()]
    before = part.get("before")
    columns = [(python, prefix) for python in pythons for prefix in (("before ", "") if before else ("",))]
    lines = ["| median, ms | " + " | ".join(f"{python}{f' ({before} boot)' if prefix else ''}"
                                           for python, prefix in columns) + " |", "|---|" + "---:|" * len(columns)]
    for key, title in LAUNCH_ROWS:
        cells = [part[python].get(prefix + key) or (part[python].get(key) if prefix else None)
                 for python, prefix in columns]
        lines.append(f"| {title} | " + " | ".join(_ms(c["median"]) if c else "–" for c in cells) + " |")
    n = part[pythons[0]]["launch_cpu"]["n"]
    return ("\n".join(lines) + f"\n\n`{part['command']}`: {n} rounds, each launch of each boot in turn, on "
            f"{_machine(part)}, shared with other work (CPU times are the figures to read); `make docs` writes this "
            "table from `bench/results.json`.\n")


INSTRUCTION_ROWS = (  # title, key in an instructions run (a prefix "before " for the older boot), key it divides by
    ("300-test suite, plain", "suite plain", None),
    ("under the relay, breakpoint never hit", "suite relay", "suite plain"),
    ("the same with the boot of {before}", "before suite relay", "suite plain"),
    ("a two-line program, plain", "launch plain", None),
    ("launched by the relay to a breakpoint on its second line, continued to its end", "launch relay", None),
    ("the same with the boot of {before}", "before launch relay", None),
)


def instructions(results: dict[str, Any]) -> str:
    """The instructions of whole target processes, counted by valgrind (``bench/instructions.py``)."""
    part = results["instructions"]
    versions = sorted((v for v in part if v[0].isdigit()), key=lambda v: tuple(map(int, v.split("."))))
    lines = ["| instructions, millions (the whole target) | " + " | ".join(f"Python {v}" for v in versions) + " |",
             "|---|" + "---:|" * len(versions)]
    for title, key, base in INSTRUCTION_ROWS:
        if not any(key in part[v] for v in versions):
            continue
        cells = [f"{part[v][key]:,.0f}" + (f" ({part[v][key] / part[v][base]:.3f}×)" if base else "")
                 if key in part[v] else "–" for v in versions]
        lines.append(f"| {title.format(before=part['before'])} | " + " | ".join(cells) + " |")
    return ("\n".join(lines) + f"\n\n`{part['command']}` (valgrind's callgrind: one run each, a count the machine's "
            f"load does not move) on {_machine(part)}; `make docs` writes this table from `bench/results.json`.\n")


def _ray_source(run: dict[str, Any]) -> str:
    machine = run["machine"]
    return (f"Measured by `python bench/ray_bench.py` (in `make bench`) on {machine['date']} (interpreter "
            f"{machine['python']}, {machine['cpus']} cores, shared with other work), on a local cluster that took "
            f"{run['cluster_ms']['start'] / 1000:.0f} s to start.\n")


def ray_join(results: dict[str, Any]) -> str:
    """What a worker pays for joining the relay: the hook, its memory, a pure-Python task's CPU time."""
    run = results["ray"]
    join = run["join"]
    return "\n".join([
        "| a worker joined (`ray_runtime_env()`, `ray --join`, a breakpoint in the task's file) | |", "|---|---:|",
        f"| the join at the worker's start, ms | {_ms(join['hook_ms'])} |",
        f"| the worker's memory, MB more | {join['worker_mb']:.1f} |",
        *([f"| its debugpy adapter process, MB | {join['adapter_mb']:.0f} |"] if join["adapter_mb"] else []),
        f"| a pure-Python task (a {join['steps']:,}-step loop, CPU ms, median of {join['n']}): plain → joined | "
        f"{_ms(join['plain_task_ms'])} → {_ms(join['joined_task_ms'])} "
        f"({join['joined_task_ms'] / join['plain_task_ms']:.2f}×) |"]) + "\n\n" + _ray_source(run)


def ray(results: dict[str, Any]) -> str:
    """A Ray task's breakpoint() to its session, eight at once, the kernel's memory, what joining costs a worker."""
    run = results["ray"]
    rows = [("a task's `breakpoint()` → its session paused in the notebook", run["one"]),
            ("8 tasks paused at once: the `ray attach --all` cell", run["eight_call"]),
            ("8 tasks paused at once: first `breakpoint()` → all 8 sessions paused (8 new workers, started one "
             "after another)", run["eight_whole"]),
            *([("8 tasks paused at once: the last `breakpoint()` → all 8 sessions paused", run["eight_last"])]
              if "eight_last" in run else [])]
    lines = ["| ms | n | median | p95 | max |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {f['n']} | {_ms(f['median'])} | {_ms(f['p95'])} | {_ms(f['max'])} |" for name, f in rows]
    mb = run["kernel_mb"]
    lines += ["", "| the kernel's resident memory, MB | |", "|---|---:|",
              f"| relay loaded | {mb['loaded']:.0f} |", f"| the cluster's driver (`ray.init`) | {mb['driver']:.0f} |",
              f"| 8 Ray sessions attached | {mb['eight_attached']:.0f} |", ""]
    return "\n".join(lines) + "\n" + ray_join(results)


BLOCKS: dict[str, Callable[[dict[str, Any]], str]] = {"README.md": readme, "performance.md": performance}
NAMED: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {  # block name -> the bench it shows, its figures
    "suites": ("suites", suites), "target-versions": ("target_versions", target_versions),
    "launch-cost": ("launch_cost", launch_cost), "compare": ("compare", compare),
    "instructions": ("instructions", instructions),
    "ray": ("ray", ray), "ray_join": ("ray", ray_join)}


def render(page: str, text: str, results: dict[str, Any]) -> str:
    """``text`` (the page named ``page``) with its generated blocks written from ``results``."""
    if not BLOCK.search(text):
        raise ValueError(f"{page} has no generated figures block (<!-- generated: figures ... --> ... "
                         "<!-- end: figures -->)")

    def write(m: re.Match[str]) -> str:
        name = m.group(2)
        if name is not None and NAMED[name][0] not in results:
            return m.group(0)
        figures = NAMED[name][1](results) if name is not None else BLOCKS[os.path.basename(page)](results)
        return m.group(1) + figures + m.group(4)

    return BLOCK.sub(write, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+")
    parser.add_argument("--check", action="store_true", help="only say whether the pages are up to date")
    parser.add_argument("--results", default=RESULTS)
    options = parser.parse_args(argv)
    with open(options.results) as f:
        results = json.load(f)
    stale = []
    for page in options.pages:
        with open(page) as f:
            text = f.read()
        new = render(page, text, results)
        if new != text:
            stale.append(page)
            if not options.check:
                with open(page, "w") as f:
                    f.write(new)
    if options.check and stale:
        print(f"figures differ from {os.path.relpath(options.results)} in: {', '.join(stale)} "
              "(run `make docs`)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
