"""The README's and the performance page's figures are the last `make bench` run's, as `make docs` writes them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "bench" / "figures.py"
PAGES = [ROOT / "README.md", ROOT / "docs" / "performance.md", ROOT / "docs" / "ray.md"]


def test_the_pages_show_the_figures_of_the_last_bench_run():
    checked = subprocess.run([sys.executable, str(FIGURES), "--check", *map(str, PAGES)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_a_figure_changed_in_the_results_shows_as_a_stale_page(tmp_path):
    results = json.loads((ROOT / "bench" / "results.json").read_text())
    results["core"]["step_ms"]["median"] += 1
    changed = tmp_path / "results.json"
    changed.write_text(json.dumps(results))
    checked = subprocess.run([sys.executable, str(FIGURES), "--check", "--results", str(changed), str(PAGES[0])],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 1 and "README.md" in checked.stderr, checked.stderr
