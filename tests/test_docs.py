"""The examples of docs/python-api.md run as written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"
NEEDS_LLDB = "lldb"  # a block that debugs a C program needs gcc and an lldb adapter


def test_python_api_examples_run_in_order():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
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
