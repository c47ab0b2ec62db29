"""notebooks/README.md: its list is the notebooks of the folder, and its commands are the ones that run them all."""

from __future__ import annotations

import glob
import re
from pathlib import Path

from jupyter_debug_relay import notebooks_page

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "notebooks" / "README.md"


def test_the_list_is_every_notebook_of_the_folder_with_its_heading(tmp_path):
    assert notebooks_page.main(["--check", str(PAGE)]) == 0, "run python -m jupyter_debug_relay.notebooks_page"
    assert "| `11-remote.ipynb` | A relay on another machine |" in PAGE.read_text()
    stale = tmp_path / "README.md"
    stale.write_text(PAGE.read_text().replace("| `11-remote.ipynb` | A relay on another machine |\n", ""))
    assert notebooks_page.main(["--check", str(stale)]) == 1


def test_the_commands_run_every_notebook_as_make_test_does():
    page = PAGE.read_text()
    nbval = re.search(r"^\.venv/bin/python -m pytest .*--nbval.*$", page, re.M).group(0)
    assert nbval.replace(".venv/bin/", "$(BIN)/") in (ROOT / "Makefile").read_text()
    nbconvert = re.search(r"^\.venv/bin/jupyter nbconvert .*$", page, re.M).group(0)
    pattern = nbconvert.split()[-1]
    assert sorted(glob.glob(str(ROOT / pattern))) == sorted(map(str, (ROOT / "notebooks").glob("*.ipynb")))
