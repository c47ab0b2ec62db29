"""The debugger panel in a real browser: JupyterLab serves a notebook, Chromium (driven by Playwright) runs it."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from jupyter_debug_relay.cli.demo import example_path, line_of
from tests import lab_server
from tests.lab_server import ARTIFACTS, CHROMIUM

HERE = Path(__file__).parent

pytestmark = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is absent (apt-get install chromium)"),
    pytest.mark.timeout(300),
]
KERNEL = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
          "display_name": "Python 3 (ipykernel)", "language": "python"}


@pytest.fixture
def lab(tmp_path):
    """JupyterLab serving the panel's notebook, with a plain ipykernel (the notebook loads the extension)."""
    with lab_server.lab(tmp_path, "python3", KERNEL, lab_server.AUTOSTART,
                        lambda files: shutil.copy(HERE / "browser" / "panel.ipynb", files / "panel.ipynb")) as server:
        yield server


# The panel stays inside its cell, and every element's visible box inside the panel: an element may be cut
# only by an ancestor that is not a layout box (a value or a source line cut at its own edge), never by a box
# that hides what does not fit. A value's visible box does not overlap a button; a breakpoint row is one line.
LAYOUT_PROBLEMS = """
(panel) => {
  const cell = panel.closest('.jp-Cell').getBoundingClientRect();
  const edge = panel.getBoundingClientRect();
  const visible = (el) => {
    let r = el.getBoundingClientRect();
    let box = {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    for (let up = el.parentElement; up && up !== panel; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (!up.classList.contains('widget-box') && (style.overflowX !== 'visible' || style.overflowY !== 'visible')) {
        const c = up.getBoundingClientRect();
        box = {left: Math.max(box.left, c.left), right: Math.min(box.right, c.right),
               top: Math.max(box.top, c.top), bottom: Math.min(box.bottom, c.bottom)};
      }
    }
    return box;
  };
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const empty = (b) => b.right - b.left < 0.5 || b.bottom - b.top < 0.5;
  const name = (el) => (el.className || el.tagName) + ' ' + (el.textContent || '').trim().slice(0, 40);
  const problems = [];
  if (edge.right > cell.right + 0.5 || edge.left < cell.left - 0.5) {
    problems.push(`the panel (${edge.left}-${edge.right}) is outside its cell (${cell.left}-${cell.right})`);
  }
  for (const el of panel.querySelectorAll('*')) {
    if (!shown(el)) continue;
    const b = visible(el);
    if (!empty(b) && (b.right > edge.right + 0.5 || b.left < edge.left - 0.5)) {
      problems.push(`outside the panel (${Math.round(b.left)}-${Math.round(b.right)} of ` +
                    `${Math.round(edge.left)}-${Math.round(edge.right)}): ${name(el)}`);
    }
  }
  const buttons = [...panel.querySelectorAll('button')].filter(shown).map((el) => [el, visible(el)]);
  for (const value of panel.querySelectorAll('.jdr-value, .jdr-value *')) {
    if (!shown(value)) continue;
    const v = visible(value);
    if (empty(v)) continue;
    for (const [button, b] of buttons) {
      if (v.left < b.right - 0.5 && b.left < v.right - 0.5 && v.top < b.bottom - 0.5 && b.top < v.bottom - 0.5) {
        problems.push(`value over a button: ${name(value)} / ${name(button)}`);
      }
    }
  }
  for (const row of panel.querySelectorAll('.jdr-breakpoint-text')) {
    const line = parseFloat(getComputedStyle(row.firstElementChild || row).lineHeight) || 20;
    if (row.getBoundingClientRect().height > 1.5 * line) problems.push(`breakpoint row wraps: ${name(row)}`);
  }
  return problems;
}
"""


def test_panel_renders_steps_and_expands_in_jupyterlab(lab):
    from playwright.sync_api import expect

    program = example_path()
    line = line_of(program, "totals[name] = amount")
    with lab_server.notebook_page(lab, "panel.ipynb", "Python 3 (ipykernel)", {"width": 1280, "height": 1100}) as page:
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator("li.lm-Menu-item[data-command='runmenu:run-all']").click()

        panel = page.locator(".jdr-panel")
        status = panel.locator(".jdr-status-text")
        expect(status).to_contain_text(f"paused at sales_report.py:{line} in totals_by_customer() — breakpoint",
                                       timeout=90_000)
        expect(panel.locator(".jdr-current")).to_have_attribute("data-line", str(line))
        expect(panel.locator(".jdr-current")).to_contain_text("totals[name] = amount")

        step = panel.locator("button.jdr-action", has_text="Step Over")
        expect(step).to_be_enabled()
        step.click()
        expect(status).to_contain_text(f"paused at sales_report.py:{line - 1} in totals_by_customer() — step")
        expect(panel.locator(".jdr-current")).to_have_attribute("data-line", str(line - 1))

        totals = panel.locator(".jdr-variables button.jdr-var-toggle", has_text="totals").first
        expect(totals).to_contain_text("▸ totals")
        totals.click()
        expect(totals).to_contain_text("▾ totals")
        expect(panel.locator(".jdr-variables .jdr-var .jdr-var .jdr-var-toggle", has_text="'ana'")).to_be_visible()
        expect(panel.locator(".jdr-variables")).to_contain_text("12.5")

        watch = panel.locator(".jdr-watch input")
        watch.fill("sum(totals.values())")
        watch.press("Enter")  # Enter in the watch box adds the watch
        expect(panel.locator(".jdr-watch")).to_contain_text("sum(totals.values()) = 12.5")
        expect(panel.locator(".jdr-evaluate")).not_to_contain_text("sum(totals.values())")
        watch.fill("len(orders)")
        panel.locator(".jdr-watch button", has_text="Watch").click()
        expect(panel.locator(".jdr-watch")).to_contain_text("len(orders) = 5")
        evaluate = panel.locator(".jdr-evaluate input")
        evaluate.fill("totals[name], amount")
        evaluate.press("Enter")
        expect(panel.locator(".jdr-evaluate")).to_contain_text("(12.5, 12.5)")

        for width in (1280, 1600):
            page.set_viewport_size({"width": width, "height": 1100})
            panel.scroll_into_view_if_needed()
            page.wait_for_timeout(500)  # the notebook lays out again
            panel.screenshot(path=str(ARTIFACTS / f"panel-{width}.png"))
            page.screenshot(path=str(ARTIFACTS / f"notebook-{width}.png"), full_page=True)
            problems = panel.evaluate(LAYOUT_PROBLEMS)
            assert not problems, f"at {width} px: " + "\n".join(problems[:20])
