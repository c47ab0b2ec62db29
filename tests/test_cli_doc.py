"""Every example of docs/cli.md runs against a live session and prints what the page says."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from jupyter_debug_relay import Relay
from jupyter_debug_relay.cli import build_parser
from tests.conftest import line_of

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
# What differs from run to run: uids, clock times, dates, process ids, column widths.
VOLATILE = [(re.compile(r"[ \t]+"), " "), (re.compile(r"\d{8}-\d{6}-[0-9a-f]{4}"), "UID"),
            (re.compile(r"\d\d:\d\d:\d\d\.\d{3}"), "TIME"), (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), "DATE"),
            (re.compile(r"(?<=live )\d+|(?<=terminated )\d+"), "PID"), (re.compile(r'"(seq|ts)": [\d.]+'), r'"\1": N')]


def examples(text: str) -> list[tuple[str, str]]:
    """The ``$ command`` lines of the page's console blocks, each with the output shown under it."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = part.partition("\n")
            found.append((command, output))
    return found


def normal(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def run_page(folder: Path, home: Path) -> list[tuple[str, str, str]]:
    """Run the page's commands in order against ``app.py`` paused at its call line; (command, page, printed)."""
    app = folder / "app.py"
    app.write_text(re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1))  # the page's app.py
    env = {**os.environ, "JUPYTER_DEBUG_RELAY_HOME": str(home),
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    results = []
    with Relay(home=str(home)) as relay:
        relay.breakpoints.add(str(app), line_of(str(app), "# call"))
        relay.launch(str(app)).wait_for_stop(10)
        for command, shown in examples(DOC.read_text()):
            done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=60)
            results.append((command, shown, done.stdout + done.stderr))
    return results


def test_every_example_of_the_cli_page_prints_what_the_page_shows(tmp_path):
    results = run_page(tmp_path, tmp_path / "home")
    words = {command.split("|")[-1].split()[1] for command, _, _ in results}
    assert {"sessions", "watch", "replay", "attach", "pause", "continue", "next", "step-in", "step-out", "inspect",
            "eval", "bp"} <= words
    for command, shown, printed in results:
        got, want = normal(printed), normal(shown)
        if "attach" in command:  # the event stream and the answers print from two threads: compare the lines
            got, want = sorted(got.splitlines()), sorted(want.splitlines())
        assert got == want, f"$ {command}\n--- the page shows:\n{shown}\n--- printed:\n{printed}"


def test_the_page_names_every_command_and_its_table_only_commands_there_are():
    [verbs] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    top = DOC.read_text().split("\n## ")[0]  # the table of commands and the paragraphs under it
    assert set(verbs.choices) <= set(re.findall(r"`([a-z-]+)", top))
    assert set(re.findall(r"^\| `([a-z-]+)", top, re.M)) <= set(verbs.choices)


def test_the_table_of_commands_has_a_row_for_every_command():
    [verbs] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    rows = [line.split(" | ")[0] for line in DOC.read_text().split("\n## ")[0].splitlines() if line.startswith("| `")]
    assert set(verbs.choices) <= {word for row in rows for word in re.findall(r"`([a-z-]+)", row)}
