"""The figures of the README and of every page with a figures block are the last `make bench` run's, as `make docs`
writes them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "bench" / "figures.py"
SPEC = importlib.util.spec_from_file_location("figures", FIGURES)  # bench/ is not a package
figures = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(figures)


def test_the_pages_show_the_figures_of_the_last_bench_run():
    checked = subprocess.run([sys.executable, str(FIGURES), "--check"], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert {Path(page).name for page in figures.pages()} >= {"README.md", "performance.md", "ray.md", "backends.md",
                                                             "comm-protocol.md", "recordings.md", "mcp.md"}


def test_a_figure_changed_in_the_results_shows_as_a_stale_page(tmp_path):
    results = json.loads((ROOT / "bench" / "results.json").read_text())
    results["core"]["step_ms"]["median"] += 1
    changed = tmp_path / "results.json"
    changed.write_text(json.dumps(results))
    checked = subprocess.run([sys.executable, str(FIGURES), "--check", "--results", str(changed),
                              str(ROOT / "README.md")], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 1 and "README.md" in checked.stderr, checked.stderr


def test_a_bench_without_figures_leaves_its_block_and_with_them_writes_it():
    results = json.loads((ROOT / "bench" / "results.json").read_text())
    page = "<!-- generated: figures:mcp (checked) -->\nnot run yet\n<!-- end: figures -->\n"
    assert figures.render("mcp.md", page, {k: v for k, v in results.items() if k != "mcp_bench"}) == page
    task = {"median": 15.0, "p95": 20.0, "n": 60}
    results["mcp_bench"] = {"machine": results["core"]["machine"],
                            "this relay": {"launch": task, "step": task, "evaluate": task, "text_bytes": [3300],
                                           "tools": 20, "tools_list_bytes": 18600},
                            "mcp-debugger": {"launch": None, "step": None, "evaluate": None, "text_bytes": [],
                                             "tools": 0, "tools_list_bytes": 0}}
    written = figures.render("mcp.md", page, results)
    assert "| step over, median | 15.0 ms (n=60) | – |" in written and "| tools in `tools/list` | 20 | – |" in written
