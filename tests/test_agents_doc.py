"""The agent program of docs/agents.md runs as written against its target and prints what the page says."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from jupyter_debug_relay.transports import procfs
from tests.conftest import line_of

DOC = Path(__file__).resolve().parent.parent / "docs" / "agents.md"


def doc_files() -> dict[str, str]:
    """The page's python blocks that open with a ``# NAME.py`` line, by that name."""
    files = {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S):
        match = re.match(r"# (\S+\.py)\n", block)
        if match:
            files[match.group(1)] = block
    return files


def shown_output() -> str:
    """The transcript the page shows under "It prints:"."""
    match = re.search(r"It prints:\n\n```text\n(.*?)```", DOC.read_text(), re.S)
    assert match is not None, "docs/agents.md lost its transcript"
    return match.group(1)


def marked_processes(mark: bytes) -> list[int]:
    """Live processes whose environment holds ``mark``: everything the agent program started, and their children."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        if procfs.state(int(entry)) not in (None, "Z") and mark in procfs.read_bytes(f"/proc/{entry}/environ").split(
                b"\0"):
            found.append(int(entry))
    return found


def test_agent_program_debugs_its_target_and_leaves_nothing_behind(tmp_path):
    files = doc_files()
    assert set(files) == {"target.py", "agent.py"}
    for name, source in files.items():
        (tmp_path / name).write_text(source)
    mark = f"AGENT_DOC_RUN={tmp_path}"
    env = {**os.environ, "AGENT_DOC_RUN": str(tmp_path)}  # inherited by the kernel, the adapter and the target
    agent = subprocess.Popen([sys.executable, str(tmp_path / "agent.py")], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = agent.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(agent.pid, signal.SIGKILL)
        out, err = agent.communicate()
        raise AssertionError(f"the agent program hung:\n{out}\n{err}") from None

    assert agent.returncode == 0, f"exit code {agent.returncode}:\n{out}\n{err}"
    line = line_of(str(tmp_path / "target.py"), "# stop here")
    lines = out.splitlines()
    assert lines[0] == "comm hello: protocol v1, 0 sessions"
    assert f"    scores: paused at target.py:{line} in mean() — breakpoint 1 [thread 1]" in lines
    assert f"comm event: stopped (breakpoint) at line {line} in mean()" in lines
    assert lines[lines.index("%debug_session eval total / count") + 1] == "    2.0"
    assert "comm evaluate: values = [2, 2]" in lines
    assert "comm event: terminated, exit code 0" in lines
    assert "    scores (debugpy, target.py): exited with code 0" in lines
    assert lines[lines.index("%debug_session snapshot --context 1 --output 0") + 5] == "    stack (2 frames):"
    assert "      count = 2  (int)" in lines
    assert out.endswith("    ana 4.0\n    ben 2.0\n7 cells\n")
    assert out == shown_output(), "the page's transcript differs from what the program printed"
    deadline = time.monotonic() + 5
    while marked_processes(mark.encode()) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = marked_processes(mark.encode())
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "the agent program left processes running (its kernel, an adapter or the target)"

