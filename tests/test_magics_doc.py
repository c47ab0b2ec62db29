"""docs/magics.md against the magics: its grammar blocks are their help, every option it gives a subcommand is one
that subcommand takes, and the cells of its checked transcripts print what the page shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.kernel import magics_page
from jupyter_debug_relay.kernel.commands import Commands
from jupyter_debug_relay.kernel.grammar import MAGICS, options, parse_session_line
from jupyter_debug_relay.kernel.help import BP_LINES, HELP, bp_help
from jupyter_debug_relay.kernel.parsing import BP_USAGE, parse_bp_line

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "magics.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
GENERATED = re.compile(r"<!-- generated: ([\w:-]+) .*?<!-- end: \1 -->", re.S)
CHECKED = re.compile(r"<!-- checked: tests/test_magics_doc.py [^\n]*-->\n```text\n(.*?)```", re.S)
CELL = ("%debug_session ", "%dbg ", "%bp ")
# The working directory of the checked transcripts, as the page describes it.
FILES = {"slow.py": 'import time\n\nfor tick in range(30):\n    print("tick", tick, flush=True)\n    time.sleep(1)\n',
         "broken.py": "x = 1\nif x = 1:\n    print(x)\n"}
# A mistake for each %bp form that has one: its error says the form's usage line.
BP_MISTAKES = {"line": "app.py", "content": 'two words.py:"total"', "func": "func",
               "exceptions": "exceptions sometimes", "condition-errors": "condition-errors maybe",
               "stage": "stage create_user", "output": "output",
               "edit": "edit 2", "disable": "disable 1 2", "enable": "enable 1 2", "save": "save", "load": "load a b",
               "profiles": "profiles smoke"}


def test_the_grammar_blocks_are_the_magics_own_help(tmp_path):
    assert magics_page.main(["--check", str(DOC)]) == 0, "run python -m jupyter_debug_relay.kernel.magics_page"
    page = tmp_path / "magics.md"
    page.write_text(DOC.read_text().replace("%bp output REGEX ", "%bp output PATTERN ", 1))
    assert magics_page.main(["--check", str(page)]) == 1
    assert magics_page.main([str(page)]) == 0 and page.read_text() == DOC.read_text()


def test_every_bp_form_is_in_the_help_and_its_mistake_says_its_usage():
    assert sorted(verb for verbs, _ in BP_LINES for verb in verbs) == sorted(BP_USAGE)
    assert bp_help() in HELP
    for form, line in BP_MISTAKES.items():
        with pytest.raises(RelayError) as raised:
            parse_bp_line(line)
        said = f"{raised.value.message} {raised.value.hint}"
        assert f"Usage: {BP_USAGE[form]}" in said and BP_USAGE[form].removeprefix("%bp ") in bp_help(), (line, said)


def magic_lines(text: str) -> list[tuple[str, str | None]]:
    """Each ``%debug_session`` line of a page outside its generated blocks: in text blocks with the line under it,
    then in inline code (None)."""
    text = GENERATED.sub("", text)
    found: list[tuple[str, str | None]] = []
    for language, body in FENCE.findall(text):
        if language in ("", "text"):
            rows = body.splitlines() + [""]
            found += [(row, rows[i + 1]) for i, row in enumerate(rows[:-1]) if row.startswith(CELL[:2])]
    prose = FENCE.sub("", text).replace("\n", " ")
    return found + [(span, None) for span in re.findall(r"`(%(?:debug_session|dbg) [^`]*)`", prose)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_subcommand_and_option_a_page_gives_is_one_the_magic_takes(page):
    wrong = []
    for line, under in magic_lines(page.read_text()):
        if under is not None and under.startswith("error"):  # the page shows it refused
            continue
        rest = re.split(r"\s+#\s|\s{3,}\(", line.partition(" ")[2])[0].strip()  # without a comment after it
        synopsis = re.search(r"\[|\s\|\s|\b[A-Z][A-Z_]*\b|…|\.\.\.", rest) is not None
        words = re.match(r"[a-z-]*(?: \| [a-z-]+)*", rest).group(0).split(" | ") if synopsis else rest.split()[:1]
        for word in words:
            if word not in MAGICS:
                wrong.append(f"{line}: no subcommand {word!r}")
            elif synopsis or word not in ("launch", "connect"):  # after a script its arguments are the target's
                flags = re.findall(r"(?<![\w-])--[a-z][a-z-]*", rest.split(" -- ")[0])
                wrong += [f"{line}: {word} takes no {flag}" for flag in flags if flag not in options(word)]
        if not synopsis and under is not None:  # a cell the page shows run
            try:
                parse_session_line(rest)
            except RelayError as error:
                wrong.append(f"{line}: {error.message}")
    assert not wrong, "\n".join(wrong)


def cells(block: str) -> list[tuple[str, str]]:
    """A transcript's cells, each with what the page shows it printed."""
    found: list[tuple[str, list[str]]] = []
    for row in block.splitlines():
        if row.startswith(CELL):
            found.append((row, []))
        elif row.strip():
            found[-1][1].append(row)
    return [(cell, "\n".join(out)) for cell, out in found]


def normal(text: str, folder: Path) -> str:
    """What differs from run to run made alike: the folder, uids, ports, the token file, column widths."""
    for pattern, replacement in ((re.escape(str(folder)), "/tmp/docrun"), (r"\d{8}-\d{6}-[0-9a-f]{4}", "UID"),
                                 (r"127\.0\.0\.1:\d+", "127.0.0.1:PORT"), (r"token in \S+", "token in FILE"),
                                 (r"[ \t]+", " ")):
        text = re.sub(pattern, replacement, text)
    return text.strip()


@pytest.mark.parametrize("index", range(len(CHECKED.findall(DOC.read_text()))))
def test_a_checked_transcript_prints_what_the_page_shows(index, tmp_path, monkeypatch):
    block = CHECKED.findall(DOC.read_text())[index]
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUPYTER_DEBUG_RELAY_TOKEN", raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    with Relay(home=str(tmp_path / "home")) as relay:
        commands = Commands(relay)
        for cell, shown in cells(block):
            magic, _, line = cell.partition(" ")
            printed = (commands.run_bp(line) if magic == "%bp" else commands.run_session(line)).text
            assert normal(printed, tmp_path) == normal(shown, tmp_path), (
                f"{cell}\n--- the page:\n{shown}\n--- printed:\n{printed}")
