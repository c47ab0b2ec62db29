"""The debugger panel in a real browser: JupyterLab serves a notebook, Chromium (driven by Playwright) runs it."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from jupyter_debug_relay.cli.demo import example_path, line_of
from tests.conftest import assert_none_left, marked_processes

CHROMIUM = "/usr/bin/chromium"
HERE = Path(__file__).parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

pytestmark = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is absent (apt-get install chromium)"),
    pytest.mark.timeout(300),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    """A JupyterLab server in temporary config, data and runtime dirs, with a kernelspec for this Python."""

    def __init__(self, root: Path) -> None:
        self.root, self.port, self.token = root, free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        home = root / "home"
        env = dict(os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"),
                   JUPYTER_DATA_DIR=str(home / "data"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
                   JUPYTER_PLATFORM_DIRS="1", PYTHONUNBUFFERED="1")
        kernel = home / "data" / "kernels" / "python3"
        kernel.mkdir(parents=True)
        (kernel / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (ipykernel)", "language": "python",
        }))
        labconfig = home / "config" / "labconfig"
        labconfig.mkdir(parents=True)
        (labconfig / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
        tracker = home / "config" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
        tracker.mkdir(parents=True)  # start the notebook's kernel without asking
        (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"autoStartDefaultKernel": True}))
        self.notebooks = root / "notebooks"
        self.notebooks.mkdir()
        shutil.copy(HERE / "browser" / "panel.ipynb", self.notebooks / "panel.ipynb")
        self.log = open(root / "lab.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={self.notebooks}", "--LabApp.news_url=", "--LabApp.extension_manager=readonly",
             "--allow-root"],
            env=env, cwd=self.notebooks, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def api(self, method: str, path: str, timeout: float = 10.0) -> object:
        request = urllib.request.Request(f"{self.base}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"JupyterLab exited with {self.proc.returncode}: {self.output()}")
            try:
                self.api("GET", "/api/status", timeout=2)
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise AssertionError(f"JupyterLab did not answer within {timeout:g} s: {self.output()}")

    def output(self) -> str:
        self.log.flush()
        return (self.root / "lab.log").read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Shut the kernels down (they reap their targets), then the server; force only what stays."""
        try:
            for kernel in self.api("GET", "/api/kernels") or []:
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)
            self.api("POST", "/api/shutdown")
        except (urllib.error.URLError, OSError):
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.log.close()


@pytest.fixture
def lab(tmp_path):
    before = set(marked_processes())
    server = Lab(tmp_path)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()
        assert_none_left(marked_processes, before, 20.0)


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
    from playwright.sync_api import expect, sync_playwright

    program = example_path()
    line = line_of(program, "totals[name] = amount")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.set_default_timeout(60_000)
            expect.set_options(timeout=60_000)
            page.goto(f"{lab.base}/lab/tree/panel.ipynb?token={lab.token}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
            expect(page.get_by_role("button", name="Python 3 (ipykernel) | Idle")).to_be_visible(timeout=90_000)

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
        finally:
            browser.close()
