"""The built docs site: nothing loaded from another host, code highlighted at build time, tables that fit the page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)], cwd=ROOT,
                   check=True, timeout=300)
    return out


class Loads(HTMLParser):
    """Every address a page loads by itself: scripts, stylesheets, icons, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.addresses: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("script", "img", "iframe", "source") and found.get("src"):
            self.addresses.append(found["src"] or "")
        if tag == "link" and found.get("href") and "canonical" not in (found.get("rel") or ""):
            self.addresses.append(found["href"] or "")


def external(address: str) -> bool:
    """Whether ``address`` names another host (a ``data:`` address is inline, not another host)."""
    parsed = urlparse(address)
    return parsed.scheme != "data" and bool(parsed.scheme or parsed.netloc)


def test_the_site_loads_no_script_or_style_from_another_host(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    outside = []
    for page in pages:
        loads = Loads()
        loads.feed(page.read_text())
        outside += [f"{page.relative_to(site)}: {a}" for a in loads.addresses if external(a)]
    for sheet in site.rglob("*.css"):
        urls = re.findall(r"(?:url\(|@import\s+)['\"]?([^'\")\s;]+)", sheet.read_text(errors="replace"))
        outside += [f"{sheet.relative_to(site)}: {url}" for url in urls if external(url)]
    assert not outside, "\n".join(outside[:20])


def test_code_is_highlighted_when_the_site_is_built(site):
    magics = (site / "magics" / "index.html").read_text()
    assert 'class="highlight"' in magics
    assert re.search(r'<span class="kn">import</span>', magics), "the python blocks carry no pygments classes"
    assert "hljs" not in (site / "index.html").read_text()


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is absent (apt-get install chromium)")
@pytest.mark.parametrize("page", ["index.html", "backends/index.html"])
def test_tables_fit_the_page(site, page):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            view = browser.new_page(viewport={"width": 1280, "height": 900})
            view.goto((site / page).as_uri())
            view.screenshot(path=str(ARTIFACTS / f"docs-{page.replace('/', '-')}.png"), full_page=True)
            cut = view.evaluate("""() => [...document.querySelectorAll('table')].flatMap((table) => {
                const parents = [];
                for (let up = table; up && up !== document.body; up = up.parentElement) parents.push(up);
                return parents.filter((up) => up.scrollWidth > up.clientWidth + 1)
                              .map((up) => `${table.rows[0].textContent.trim()}: ${up.className} is ` +
                                           `${up.scrollWidth} wide inside ${up.clientWidth}`);
            })""")
            assert view.locator("table").count() > 0
            assert not cut, "\n".join(cut)
        finally:
            browser.close()
