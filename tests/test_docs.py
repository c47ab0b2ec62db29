"""The examples of docs/python-api.md run as written, and its table of error codes is the declared one."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from jupyter_debug_relay import errors_page

DOC = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"
NEEDS_LLDB = "lldb"  # a block that debugs a C program needs gcc and an lldb adapter


def test_python_api_examples_run_in_order():
    page = DOC.read_text()
    # each block padded to its place in the page, so that a failure's traceback names the page's own line
    blocks = ["\n" * page.count("\n", 0, m.start(1)) + m.group(1)
              for m in re.finditer(r"```python\n(.*?)```", page, re.S)]
    assert len(blocks) >= 6
    have_lldb = shutil.which("gcc") and (shutil.which("lldb-vscode-16") or shutil.which("lldb-dap"))
    skipped = [b for b in blocks if NEEDS_LLDB in b and not have_lldb]
    namespace: dict = {}
    try:
        for block in blocks:
            if block not in skipped:
                exec(compile(block, str(DOC), "exec"), namespace)
    finally:
        if "relay" in namespace:
            namespace["relay"].close()
    if skipped:
        pytest.skip(f"ran {len(blocks) - len(skipped)} examples; {len(skipped)} need gcc and lldb-16 (apt-get install)")


def test_the_error_codes_table_is_the_declared_one(tmp_path):
    assert errors_page.main(["--check", str(DOC)]) == 0, "run python -m jupyter_debug_relay.errors_page"
    page = tmp_path / "python-api.md"
    page.write_text(DOC.read_text().replace("| `too_large` | 413 |", "| `too_large` | 400 |"))
    assert errors_page.main(["--check", str(page)]) == 1
    assert errors_page.main([str(page)]) == 0 and page.read_text() == DOC.read_text()
