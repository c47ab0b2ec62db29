"""The home page and the README say what is true: the demo's transcript as it runs today, the Python they need."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from jupyter_debug_relay.cli import demo

ROOT = Path(__file__).resolve().parent.parent


def test_the_home_page_shows_what_make_demo_prints():
    printed = demo.transcript()
    assert "15 │ totals[name] = amount\n" in printed  # the first stop shows its line, and the line no giveaway
    assert printed == demo.shown(demo.PAGE.read_text()), (
        "docs/index.md's transcript differs from the demo's: run python -m jupyter_debug_relay.cli.demo")


def test_a_demo_whose_kernel_dies_at_start_says_so_with_what_the_kernel_wrote(tmp_path):
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    dies = "import sys; sys.stderr.write('no module named ipykernel_launcher (simulated)'); sys.exit(3)"
    (spec / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-c", dies, "{connection_file}"],
                                                  "display_name": "dies", "language": "python"}))
    done = subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", "demo"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "JUPYTER_PATH": str(tmp_path),
                                            "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: demo_failed: The demo's kernel did not start: Kernel died"), done.stderr
    assert "no module named ipykernel_launcher (simulated)" in done.stderr and "Traceback" not in done.stderr


def test_the_flagship_example_does_not_name_its_bug():
    code = Path(demo.example_path()).read_text()
    comments = [line for line in code.splitlines() if "#" in line]
    assert not [c for c in comments if "bug" in c.lower()], comments


def test_the_readme_and_the_home_page_name_the_python_the_package_requires():
    required = re.search(r'^requires-python = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    version = re.fullmatch(r">=(\d+\.\d+)", required).group(1)
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md", ROOT / "docs" / "install.md"):
        # what the package needs; the versions a launched target may run are the install page's own section
        text = page.read_text().split("## What each backend needs")[0]
        claims = set(re.findall(r"Python (\d+\.\d+)", text))
        assert claims == {version}, f"{page.name} names Python {sorted(claims)}; pyproject.toml requires {required}"
        assert f"Python {version} or newer" in text, page.name
