"""No page types a timing by hand: every figure in ms, µs or ns, and every ratio (×), is in a block
`bench/figures.py` writes from `bench/results.json`, in a transcript of a run, or one of the code's own settings
named here, checked against it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from jupyter_debug_relay.kernel.comm import OUTPUT_INTERVAL
from jupyter_debug_relay.store.recorder import BATCH, SessionStore
from jupyter_debug_relay.widgets.panel import INTERVALS

ROOT = Path(__file__).resolve().parent.parent
# docs/performance-history.md keeps the bench's past runs: its dated sections keep the figures of their day.
PAGES = [ROOT / "README.md", ROOT / "notebooks" / "README.md",
         *(page for page in sorted((ROOT / "docs").glob("*.md")) if page.name != "performance-history.md")]
# A block opens with `<!-- generated: figures` or `<!-- generated: figures:NAME`; both end at `<!-- end: figures -->`.
GENERATED = re.compile(r"<!-- generated: ([\w-]+)(?::[\w-]+)? .*?<!-- end: \1 -->", re.S)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)  # transcripts: the times of the run they show
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:[–-]\d[\d,]*(?:\.\d+)?)?(?:\s?(?:ms|µs|us|ns)\b|×)")
LOOK_AFTER = inspect.signature(SessionStore).parameters["look_after"].default
SETTINGS = {  # (page, the figure as written): the settings, in seconds, it states
    ("architecture.md", "20 ms"): (BATCH,), ("recordings.md", "20 ms"): (BATCH,),
    ("architecture.md", "0.5 s"): (LOOK_AFTER,), ("recordings.md", "0.5 s"): (LOOK_AFTER,),
    ("comm-protocol.md", "10 ms"): (OUTPUT_INTERVAL,),
    ("widgets.md", "50 ms"): (INTERVALS["stop"],),
    ("widgets.md", "100 ms"): (INTERVALS["sessions"], INTERVALS["breakpoints"]),
    ("widgets.md", "250 ms"): (INTERVALS["output"], INTERVALS["timeline"]),
}


def prose(page: Path) -> str:
    """The page without its generated blocks and its fenced blocks."""
    return FENCE.sub("", GENERATED.sub("", page.read_text()))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_types_no_timing_outside_the_generated_figures(page):
    typed = [m.group(0) for m in FIGURE.finditer(prose(page)) if (page.name, m.group(0)) not in SETTINGS]
    assert not typed, (f"{page.name} types {typed} by hand: write a bench's figures with a generated block of "
                       "bench/figures.py, or name the setting it states in SETTINGS")


@pytest.mark.parametrize(("name", "figure"), list(SETTINGS), ids=lambda v: str(v))
def test_a_setting_a_page_states_is_the_codes(name, figure):
    assert figure in prose(ROOT / "docs" / name), f"docs/{name} no longer says {figure}: drop it from SETTINGS"
    number, unit = re.fullmatch(r"([\d.]+) (ms|s)", figure).groups()
    seconds = float(number) / (1000 if unit == "ms" else 1)
    assert all(value == pytest.approx(seconds) for value in SETTINGS[name, figure]), (name, figure)
