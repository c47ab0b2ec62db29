"""The figures of the README and of the docs, written from the last ``make bench`` (``bench/results.json``).

    python bench/figures.py                     # rewrite the generated blocks of every page that has one
    python bench/figures.py --check README.md   # exit 1 when a block of these pages differs

A page holds a block between ``<!-- generated: figures ... -->`` and ``<!-- end: figures -->``; what goes in it
depends on the page (``BLOCKS``). A block named ``<!-- generated: figures:NAME ... -->`` holds one bench's
figures (``NAMED``) and is left as it is while that bench has none in the results.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
from collections.abc import Callable
from statistics import mean
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
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
    rows = [
        ("a step from Python (`session.next()`)", core["step_ms"]),
        ("a step over the comm (a frontend's request)", kernel["comm_ms"]),
        ("a step as a cell (`%debug_session next`)", kernel["magic_ms"]),
        ("a step over HTTP (`POST …/step-over`)", server["http step-over (http.client)"]),
        ("launch to the first stop", core["launch_ms"]),
    ]
    lines = ["| median, ms | relay | n |", "|---|---:|---:|"]
    lines += [f"| {name} | {_ms(figure['median'])} | {figure['n']:,} |" for name, figure in rows]
    same_run = _raw_dap_steps(core)
    if kernel.get("anchor"):
        same_run.append(("JupyterLab's debugger (ipykernel's debug protocol)", kernel["anchor"]["step_ms"],
                         "the comm's step", kernel["comm_ms"]["median"]))
    return "\n".join(lines) + "\n\n" + _step_table(same_run) + "\n\n" + _source(results) + "\n"


def _raw_dap_steps(core: dict[str, Any]) -> list[tuple[str, float | None, str, float]]:
    """A raw DAP client's step straight to debugpy (each anchor), beside ``session.next()`` of the same run."""
    return [(f"a raw DAP client straight to debugpy, {label.split(', ')[1]}", anchor.get("step_ms"),
             "`session.next()`", core["step_ms"]["median"]) for label, anchor in core["anchors"].items()]


def _step_table(same_run: list[tuple[str, float | None, str, float]]) -> str:
    lines = ["| a step, median, ms | | the relay in the same run | | |", "|---|---:|---|---:|---:|"]
    lines += [f"| {name} | {_ms(value)} | {what} | {_ms(relay)} | {_ratio(value, relay)} faster |"
              for name, value, what, relay in same_run]
    return "\n".join(lines)


def step(results: dict[str, Any]) -> str:
    """A launched target's step (``session.next()``) beside a raw DAP client's straight to debugpy, same run."""
    return _step_table(_raw_dap_steps(results["core"])) + "\n\n" + _source(results) + "\n"


def command_response(results: dict[str, Any]) -> str:
    """A line appended to a session's ``commands.jsonl`` to its ``command_response`` event."""
    figure = results["core"]["command_response_ms"]
    return ("| a line appended to `commands.jsonl` → its `command_response`, ms | median | p95 | n |\n"
            f"|---|---:|---:|---:|\n| | {_ms(figure['median'])} | {_ms(figure['p95'])} | {figure['n']:,} |\n\n"
            + _source(results) + "\n")


def comm(results: dict[str, Any]) -> str:
    """A comm message's round trip, and 19 sessions stepped at once as 19 messages or as one ``requests``."""
    kernel = results["kernel"]
    rows = [("a request the kernel answers at once (`status`), round trip", kernel["echo_ms"]),
            ("20 sessions stepped at once, 19 of them over the comm in a `next` message each: request → `stopped`",
             kernel["instant_20"]["comm"]),
            ("the same, the 19 in one `requests` message", kernel["instant_20_requests"])]
    lines = ["| over the comm, ms | median | p99 | n |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {_ms(f['median'])} | {_ms(f['p99'])} | {f['n']:,} |" for name, f in rows]
    return ("\n".join(lines) + f"\n\nMeasured by `bench/kernel_bench.py` (in `make bench`) on {_machine(kernel)}, "
            "shared with other work; `make docs` writes this table from `bench/results.json`.\n")


def mcp(results: dict[str, Any]) -> str:
    """One task over MCP stdio against this relay and against mcp-debugger (``bench/mcp_bench.py``)."""
    part = results["mcp_bench"]
    names = sorted((name for name in part if name != "machine"), key=lambda name: name != "this relay")  # ours first

    def each(cell: Callable[[dict[str, Any]], str]) -> str:
        return " | ".join(cell(part[name]) if part[name]["text_bytes"] else "–" for name in names)

    rows = [(title, lambda m, key=key: f"{_ms(m[key]['median'])} ms (n={m[key]['n']})")
            for title, key in (("launch → first stop", "launch"), ("step over, median", "step"),
                               ("evaluate, median", "evaluate"))]
    rows += [("text returned for the whole task", lambda m: f"{mean(m['text_bytes']) / 1000:.1f} KB"),
             ("tools in `tools/list`", lambda m: str(m["tools"])),
             ("size of `tools/list`", lambda m: f"{m['tools_list_bytes'] / 1000:.1f} KB")]
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    lines += [f"| {title} | {each(cell)} |" for title, cell in rows]
    machine = part["machine"]
    return ("\n".join(lines) + f"\n\nMedians of `bench/mcp_bench.py` (in `make bench`; n is the number of samples) "
            f"on {machine['date']} ({machine['cpus']} cores, shared with other work); `make docs` writes this table "
            "from `bench/results.json`.\n")


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


def hot_breakpoints(results: dict[str, Any]) -> str:
    """Breakpoints checked in a hot loop (``bench/hot_breakpoints.py``): its CPU plain, under the relay, raw debugpy."""
    part = results["hot_breakpoints"]
    counted = bool(part.get("instructions"))
    head = ("| the loop's CPU, median ms | Python | plain | relay | added a pass, ns | relay / plain | raw debugpy "
            "| added a pass, ns | raw / plain | n |")
    lines = [head + (" instructions a pass: plain | added: relay | added: raw |" if counted else ""),
             "|---|---|" + "---:|" * (8 + 3 * counted)]

    def cell(value: float | None, unit: str = "") -> str:
        return "–" if value is None else f"{value:,.0f}{unit}" if abs(value) >= 100 else f"{value:.1f}{unit}"

    def added(found: dict[str, Any], who: str) -> float | None:
        each = found.get("instructions_per_pass", {})
        return each[who] - each["plain"] if who in each and "plain" in each else None

    for key, title in part["rows"].items():
        for version, rows in part["pythons"].items():
            found = rows[key]
            cells = [f"{key}. {title}", version, _ms(found["plain"]["median"])]
            for who in ("relay", "raw"):
                if who in found:
                    cells += [_ms(found[who]["median"]), cell(found[f"{who}_ns_per_pass"]),
                              _times(found[f"{who}_ratio"])]
                else:
                    cells += ["–", "–", "–"]
            cells.append(str(found["plain"]["n"]))
            if counted:
                cells += [cell(found.get("instructions_per_pass", {}).get("plain")), cell(added(found, "relay")),
                          cell(added(found, "raw"))]
            lines.append("| " + " | ".join(cells) + " |")
    note = (f"`{part['command']}` on {_machine(part)}, shared with other work: the loop's own CPU time (its thread's, "
            f"printed by the target); plain and the relay at {part['passes']:,} passes, raw debugpy (`--listen`, a "
            f"raw DAP client) at {part['raw_passes']:,}, its added ns and ratio against plain runs of as many "
            "passes. Rows with stops hold them; row 6 times the loop after the add.")
    if counted:
        passes = part["count_passes"]
        note += (f" Instructions: valgrind's callgrind, the loop only, one run each, plain and the relay at "
                 f"{passes['plain and relay']:,} passes, raw debugpy at {passes['raw']:,}; row 6 not counted.")
    return "\n".join(lines) + "\n\n" + note + " `make docs` writes this table from `bench/results.json`.\n"


def record_cost(results: dict[str, Any]) -> str:
    """A recorded function's CPU against plain and unrecorded, and code beside it (``bench/record_cost.py``)."""
    part = results["record_cost"]
    lines = ["| the function's CPU, median ms | Python | plain | unrecorded | recorded | recorded / plain "
             "| recorded / unrecorded | n |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for version in sorted(key for key in part if key[:2] == "3."):
        for function, title in (("recorded", "recorded"), ("elsewhere", "not recorded, beside it")):
            found = part[version][function]
            lines.append(f"| {title} | {version} | {_ms(found['plain']['median'])} | "
                         f"{_ms(found['unrecorded']['median'])} | {_ms(found['recorded']['median'])} | "
                         f"{_times(found['recorded_over_plain'])} | {_times(found['recorded_over_unrecorded'])} | "
                         f"{min(found[k]['n'] for k in ('plain', 'unrecorded', 'recorded'))} |")
    calls = ", ".join(f"{_ms(part[version]['record_call_ms']['median'])} ms on {version}"
                      for version in sorted(key for key in part if key[:2] == "3."))
    return ("\n".join(lines) + f"\n\nThe `record` call itself, at the stop, with {part['objects']:,} lists held by the "
            f"program: {calls} (wall time, median of {part['runs']}).\n\n"
            f"`python bench/record_cost.py --runs {part['runs']}` on {_machine(part)}, shared "
            f"with other work: {part['events']:,} line events a function, the CPU time of its thread as the target "
            "prints it. `make docs` writes this table from `bench/results.json`.\n")


BLOCKS: dict[str, Callable[[dict[str, Any]], str]] = {"README.md": readme, "performance.md": performance}
NAMED: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {  # block name -> the bench it shows, its figures
    "suites": ("suites", suites), "target-versions": ("target_versions", target_versions),
    "launch-cost": ("launch_cost", launch_cost), "compare": ("compare", compare),
    "instructions": ("instructions", instructions), "hot-breakpoints": ("hot_breakpoints", hot_breakpoints),
    "ray": ("ray", ray), "ray_join": ("ray", ray_join), "step": ("core", step),
    "command-response": ("core", command_response), "comm": ("kernel", comm), "mcp": ("mcp_bench", mcp),
    "record-cost": ("record_cost", record_cost)}


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


def pages() -> list[str]:
    """The README and every page of docs/ that holds a figures block."""
    found = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [page for page in found if "<!-- generated: figures" in open(page).read()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help="default: the README and every page of docs/ with a figures block")
    parser.add_argument("--check", action="store_true", help="only say whether the pages are up to date")
    parser.add_argument("--results", default=RESULTS)
    options = parser.parse_args(argv)
    with open(options.results) as f:
        results = json.load(f)
    stale = []
    for page in options.pages or pages():
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
