"""JupyterLab's own debugger on a relay session, in a real browser: JupyterLab 4 serves a notebook and a script,
Chromium (driven by Playwright) clicks the file editor's gutter and the sidebar's buttons."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest

from tests import lab_server
from tests.conftest import line_of
from tests.lab_server import ARTIFACTS, CHROMIUM
from tests.test_sidebar import ORDERS, PRICING

DOCS_IMAGE = Path(__file__).resolve().parent.parent / "docs" / "images" / "sidebar.png"
KERNEL = "debug-relay"
CELL_CODE = "def double(x):\n    y = x * 2\n    return y\n\n\ndouble(21)"

pytestmark = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is absent (apt-get install chromium)"),
    pytest.mark.timeout(300),
]


KERNEL_SPEC = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                        "--ext=jupyter_debug_relay"],
               "display_name": "Python 3 (debug relay)", "language": "python", "metadata": {"debugger": True}}
SETTINGS = {**lab_server.AUTOSTART,
            "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False}}


def _files(files: Path) -> None:
    """The script, the module it imports and the notebook that turns the sidebar on and launches it."""
    (files / "orders.py").write_text(ORDERS)
    (files / "pricing.py").write_text(PRICING)
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%debug_session sidebar"),
        nbformat.v4.new_code_cell("%debug_session launch orders.py"),
        nbformat.v4.new_code_cell("%debug_session sidebar off"),
        nbformat.v4.new_code_cell(CELL_CODE),
    ], metadata={"kernelspec": {"name": KERNEL, "display_name": "Python 3 (debug relay)", "language": "python"}})
    nbformat.write(notebook, files / "sidebar.ipynb")


@pytest.fixture
def lab(tmp_path):
    with lab_server.lab(tmp_path, KERNEL, KERNEL_SPEC, SETTINGS, _files) as server:
        yield server


def press(bug, pressed: str, tries: int = 4) -> None:  # noqa: ANN001 - a Playwright locator
    """Click the bug button until it says ``pressed``. A click is lost while JupyterLab still moves its debugger to
    the notebook (its handler then takes the debugger for another widget's, starts it instead of stopping it, and the
    button stays on); the debugger's start itself is slow: each click waits up to 20 s."""
    from playwright.sync_api import expect

    for _ in range(tries):
        if bug.get_attribute("aria-pressed") == pressed:
            return
        bug.click()
        try:
            expect(bug).to_have_attribute("aria-pressed", pressed, timeout=20_000)
            return
        except AssertionError:
            continue
    expect(bug).to_have_attribute("aria-pressed", pressed)


def click_gutter(page, editor, line: int) -> None:
    """Click the breakpoint gutter of ``editor`` at ``line``, until the Breakpoints panel lists it (the gutter comes
    with the debugger's handler of the editor, made when the debugger turns on)."""
    from playwright.sync_api import expect

    listed = page.locator(".jp-DebuggerBreakpoint-line", has_text=str(line))
    for _ in range(5):
        number = editor.locator(".cm-lineNumbers .cm-gutterElement").filter(has_text=str(line)).first
        box = number.bounding_box()
        gutter = editor.locator("div.cm-gutter.cm-breakpoint-gutter").bounding_box()
        page.mouse.click(gutter["x"] + gutter["width"] / 2, box["y"] + box["height"] / 2)
        try:
            expect(listed).not_to_have_count(0, timeout=3_000)
            return
        except AssertionError:
            page.wait_for_timeout(500)
    raise AssertionError(f"a click in the gutter at line {line} made no breakpoint")


def test_jupyterlabs_sidebar_and_gutter_debug_the_target(lab):
    from playwright.sync_api import expect

    line = line_of(str(lab.files / "orders.py"), "amount = 0")
    viewport = {"width": 1400, "height": 900}
    with lab_server.notebook_page(lab, "sidebar.ipynb", "Python 3 (debug relay)", viewport) as page:
        cells = page.locator(".jp-Notebook .jp-CodeCell")

        def run(index: int) -> None:
            cells.nth(index).locator(".jp-InputArea-editor").click()
            page.keyboard.press("Shift+Enter")

        run(0)
        expect(cells.nth(0).locator(".jp-OutputArea-output")).to_contain_text("sidebar on")
        # the file editor needs a kernel session of its own path: orders.py on the notebook's kernel
        [notebook] = [s for s in lab.api("GET", "/api/sessions") if s["path"].endswith("sidebar.ipynb")]
        lab.api("POST", "/api/sessions", {"path": "orders.py", "name": "orders.py", "type": "file",
                                          "kernel": {"id": notebook["kernel"]["id"]}})
        page.locator(".jp-DirListing-itemText", has_text="orders.py").dblclick()
        editor = page.locator(".jp-MainAreaWidget:has(.jp-FileEditor)")
        expect(editor.locator(".cm-content")).to_contain_text("def total(orders):")
        bug = editor.locator(".jp-DebuggerBugButton button, button.jp-DebuggerBugButton").first
        expect(bug).to_be_enabled()
        bug.click()
        expect(page.locator(".jp-DebuggerCallstack, .jp-DebuggerBreakpoints").first).to_be_visible()
        # a click in the gutter at the line makes a relay breakpoint
        click_gutter(page, editor, line)
        # the launch cell: the sidebar's call stack shows the function, the editor lights the line
        page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="sidebar.ipynb").click()
        run(1)
        expect(cells.nth(1).locator(".jp-OutputArea-output")).to_contain_text(f"paused at orders.py:{line}")
        frames = page.locator(".jp-DebuggerCallstackFrame-name")
        expect(frames.first).to_have_text("total")
        page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="orders.py").click()
        highlighted = editor.locator(".cm-line.jp-DebuggerEditor-highlight")
        expect(highlighted).to_have_count(1)
        expect(highlighted).to_contain_text("amount = 0")
        expect(page.locator(".jp-DebuggerVariables-name", has_text="orders").first).to_be_visible()
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "sidebar.png"))
        DOCS_IMAGE.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(DOCS_IMAGE))
        # Next moves one line
        page.locator("[data-command='debugger:next']").first.click()
        expect(highlighted).to_contain_text("for price in orders")
        # Continue ends the program (the %bp-less run has no other stop): the call stack clears
        page.locator("[data-command='debugger:continue']").first.click()
        expect(frames).to_have_count(0)
        expect(highlighted).to_have_count(0)
        # sidebar off: a breakpoint in a cell, and the cell's own debugging stops in it
        page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="sidebar.ipynb").click()
        run(2)
        expect(cells.nth(2).locator(".jp-OutputArea-output")).to_contain_text("sidebar off")
        # JupyterLab still thinks its debugger is on: the bug button (off, then on) starts ipykernel's own
        bug = page.locator(".jp-NotebookPanel-toolbar .jp-DebuggerBugButton button, "
                           ".jp-NotebookPanel-toolbar button.jp-DebuggerBugButton").first
        cell = cells.nth(3)
        for attempt in range(3):
            for pressed in ("false", "true"):
                press(bug, pressed)
            try:
                expect(cell.locator("div.cm-gutter.cm-breakpoint-gutter")).to_be_visible(timeout=20_000)
                break
            except AssertionError:
                if attempt == 2:
                    raise
        cell.locator(".jp-InputArea-editor").click()
        click_gutter(page, cell, 2)
        run(3)
        expect(frames.first).to_have_text("double", timeout=60_000)
        page.locator("[data-command='debugger:continue']").first.click()
        expect(cell.locator(".jp-OutputArea-output")).to_contain_text("42")
