"""Run All on notebooks/04-panel.ipynb leaves the panel on screen, showing the finished session, and nothing running."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "04-panel.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_run_all_ends_with_the_panel_shown_and_the_session_over():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    check = ("print(panel.alive, panel.session.state, panel.model_id)\n"
             "print([s.state for s in panel.relay.sessions])")
    nb.cells.append(nbformat.v4.new_code_cell(check))
    folder = tempfile.mkdtemp(prefix="nb04-")
    try:
        NotebookClient(nb, timeout=120, kernel_name="debug-relay", resources={"metadata": {"path": folder}}).execute()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    story = [c for c in nb.cells[:-1] if c.cell_type == "code"]
    last_views = [o["data"][WIDGET_VIEW]["model_id"] for o in story[-1].outputs if WIDGET_VIEW in o.get("data", {})]
    alive, state, model_id, sessions = nb.cells[-1].outputs[0]["text"].split(maxsplit=3)
    assert (alive, state) == ("True", "terminated")  # the panel is open, the session it shows has ended
    assert last_views == [model_id], "the notebook's last cell does not show the panel"
    assert sessions.strip() == "['terminated']"
