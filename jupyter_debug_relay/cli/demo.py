"""The demo: start a real kernel, debug the bundled sales report with the magics, print the cells and results.

``python -m jupyter_debug_relay.cli.demo [PAGE]`` runs it and writes what it printed into PAGE (default
docs/index.md), between ``<!-- generated: demo -->`` and ``<!-- end: demo -->``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from jupyter_client.manager import start_new_kernel

from ..errors import RelayError
from ..examples import sales_report

BUGGY_LINE = "totals[name] = amount"
TIMEOUT = 60.0
PAGE = Path(__file__).resolve().parents[2] / "docs" / "index.md"
BLOCK = re.compile(r"(<!-- generated: demo [^\n]*-->\n```text\n)(.*?)(```\n<!-- end: demo -->)", re.S)


def example_path() -> str:
    return os.path.abspath(sales_report.__file__)


def line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as f:
        return next(n for n, line in enumerate(f, 1) if text in line)


def cells() -> list[tuple[str, str]]:
    """The quickstart sequence: (cell, what it shows)."""
    script = os.path.basename(example_path())
    line = line_of(example_path(), BUGGY_LINE)
    return [
        ("%load_ext jupyter_debug_relay", "load the magics"),
        (f"%bp {script}:{line} if name in totals", "stop when a customer comes back"),
        (f"%debug_session launch {script}", "run the report under the debugger"),
        ("%debug_session where", "the call stack"),
        ("%debug_session vars", "the locals of the selected frame"),
        ("%debug_session eval totals[name], amount", "the earlier total and the new amount"),
        ("%debug_session next", "run the buggy line"),
        ("%debug_session eval totals[name]", "the earlier order is gone: that is the bug"),
        ("%bp clear", "no more stops"),
        ("%debug_session continue", "run to the end"),
        ("%debug_session output", "what the report printed"),
    ]


def execute(client, code: str) -> str:
    """Run one cell; its text results and streams, joined."""
    shown: list[str] = []

    def collect(msg: dict) -> None:
        content = msg["content"]
        if msg["msg_type"] in ("execute_result", "display_data"):
            shown.append(content["data"].get("text/plain", ""))
        elif msg["msg_type"] == "stream":
            shown.append(content["text"].rstrip("\n"))
        elif msg["msg_type"] == "error":
            shown.append(f"{content['ename']}: {content['evalue']}")

    client.execute_interactive(code, timeout=TIMEOUT, output_hook=collect)
    return "\n".join(s for s in shown if s)


def run(say: Callable[[str], None] = print) -> int:
    """Run the demo in a fresh kernel; returns the target's exit code."""
    # A copy in a folder of its own: installed, the example lies in site-packages, whose files debugpy's
    # just-my-code filter leaves out, so a breakpoint there would never bind.
    with tempfile.TemporaryDirectory(prefix="debug-relay-demo-") as folder:
        shutil.copy(example_path(), folder)
        return _run_in(folder, say)


def start_kernel(folder: str) -> tuple:
    """A kernel running in ``folder`` and its client; one that dies or never answers is a ``demo_failed`` error
    quoting the end of what it wrote to stderr."""
    log = os.path.join(folder, "kernel-stderr.log")
    with open(log, "wb") as stderr:
        try:
            return start_new_kernel(kernel_name="python3", cwd=folder, startup_timeout=TIMEOUT, stderr=stderr)
        except RuntimeError as exc:  # jupyter_client's: "Kernel died before replying ...", "... didn't respond ..."
            with open(log, encoding="utf-8", errors="replace") as f:
                said = f.read()[-2000:].strip() or "(nothing)"
            raise RelayError("demo_failed", f"The demo's kernel did not start: {exc}.",
                             f"Check that `{sys.executable} -m ipykernel_launcher` runs; the kernel wrote to "
                             f"stderr:\n{said}") from None


def _run_in(folder: str, say: Callable[[str], None]) -> int:
    manager, client = start_kernel(folder)
    try:
        for number, (code, why) in enumerate(cells(), 1):
            say(f"In [{number}]: {code}      # {why}")
            text = execute(client, code)
            if text:
                say("\n".join(f"         {line}" for line in text.splitlines()))
            failed = next((line for line in text.splitlines() if line.startswith("error ")), None)
            if failed:
                raise RelayError("demo_failed", f"The demo stopped at In [{number}]: {failed}",
                                 "The cells above show where the debugging went wrong.")
        say("Fix: totals[name] = totals.get(name, 0) + amount")
        status = execute(client, "_jdr = get_ipython().run_line_magic('debug_session', 'status').info;"
                                 " print(_jdr.state, _jdr.exit_code)").strip().splitlines()[-1]
        state, _, code = status.partition(" ")
        if state != "terminated" or not code.lstrip("-").isdigit():
            raise RelayError("demo_failed", f"The example did not end after the last continue (it is {status}).",
                             "The cells above show where it stopped; `jupyter-debug-relay doctor` checks the "
                             "debugpy it runs.")
        return int(code)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


def finished(code: int) -> str:
    """The demo's last line, after the target's exit ``code``."""
    return f"demo finished (the example exits with {code} because of its bug)"


def transcript() -> str:
    """What ``make demo`` prints, from a real run (``$ make demo`` and the demo's lines)."""
    lines = ["$ make demo"]
    lines.append(finished(run(lines.append)))
    return "\n".join(lines) + "\n"


def shown(page: str) -> str:
    """The transcript a page shows in its generated demo block."""
    match = BLOCK.search(page)
    if match is None:
        raise ValueError("the page has no generated demo block (<!-- generated: demo ... --> ... <!-- end: demo -->)")
    return match.group(2)


def main(argv: list[str] | None = None) -> int:
    """Run the demo and write its transcript into the page."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else PAGE
    page = path.read_text()
    shown(page)  # the block must exist before the demo runs
    path.write_text(BLOCK.sub(lambda m: m.group(1) + transcript() + m.group(3), page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
