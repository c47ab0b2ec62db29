"""The ``sessions`` listing and sessions named by name, as a user with many recordings meets them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_debug_relay.store.recording import Home


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "JUPYTER_DEBUG_RELAY_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", *args], capture_output=True, text=True,
                          env=env, timeout=60)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """30 ended sessions (s1 and s2 in turn, a minute apart) and a live ``s1`` owned by this process."""
    store = Home(tmp_path / "home")
    store.root.mkdir()
    for n in range(31):
        uid = f"20260101-00{n:02d}00-{n:04x}"
        live = n == 20
        store.folder(uid).mkdir(parents=True)
        event = {"seq": 1, "ts": 1.0 + n, "type": "output", "session": "s1", "data": {"text": f"from {uid}\n"}}
        (store.folder(uid) / "events.jsonl").write_text(json.dumps(event) + "\n")
        store.record({"uid": uid, "id": f"s{n % 2 + 1}", "name": "s1" if live else f"s{n % 2 + 1}",
                      "backend": "debugpy", "state": "paused" if live else "terminated",
                      "pid": os.getpid() if live else 0, "start": 1_767_225_600.0 + 60 * n, "target": "app.py"})
    return store.root


def rows(out: str) -> list[str]:
    return [line for line in out.splitlines()[1:] if line.strip()]


def test_sessions_lists_the_20_most_recent_live_first_and_filters(home):
    listed = rows(cli(home, "sessions").stdout)
    assert len(listed) == 20
    assert "live" in listed[0] and "20260101-002000" in listed[0]
    assert "20260101-003000" in listed[1]  # then the newest first
    assert not any("20260101-000900" in line for line in listed)  # the oldest are left out
    assert len(rows(cli(home, "sessions", "--limit", "0").stdout)) == 31
    live = rows(cli(home, "sessions", "--live").stdout)
    assert len(live) == 1 and "20260101-002000" in live[0]
    named = json.loads(cli(home, "sessions", "--json", "--name", "s2", "--limit", "3").stdout)["sessions"]
    assert [e["uid"][:15] for e in named] == ["20260101-002900", "20260101-002700", "20260101-002500"]


def test_sessions_into_a_closed_pipe_is_quiet(home):
    env = {**os.environ, "JUPYTER_DEBUG_RELAY_HOME": str(home)}
    with subprocess.Popen([sys.executable, "-m", "jupyter_debug_relay.cli", "sessions"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        process.stdout.close()  # the reader is gone before anything is written, as with `| head` done early
        error = process.stderr.read().decode()
        process.wait(60)
    assert "Traceback" not in error and "BrokenPipe" not in error, error


def test_watch_and_replay_take_the_name_that_sessions_shows(home):
    # s2 never ran live: its latest recording is meant
    replayed = cli(home, "replay", "s2")
    assert replayed.returncode == 0, replayed.stderr
    assert "from 20260101-002900" in replayed.stdout
    watched = cli(home, "watch", "s2")
    assert watched.returncode == 0 and "from 20260101-002900" in watched.stdout, watched.stderr
    # s1 is live in one kernel: that one is meant, though a later ended s1 exists
    assert Home(home).resolve("s1")["uid"].startswith("20260101-002000")
    missing = cli(home, "watch", "nobody")
    assert missing.returncode == 2 and "No session matches 'nobody'" in missing.stderr


@pytest.mark.parametrize("terminal", [False, True])
def test_the_bp_table_keeps_ids_under_id_and_says_removed_as_a_status(tmp_path, terminal, monkeypatch):
    import io

    from rich.console import Console

    from jupyter_debug_relay import Relay
    from jupyter_debug_relay.cli.operations import show
    from jupyter_debug_relay.cli.render import Printer
    from jupyter_debug_relay.model import as_dict

    app = tmp_path / "app.py"
    app.write_text("x = 1\ny = 2\n")
    monkeypatch.chdir(tmp_path)  # places show relative to where the CLI runs
    with Relay(record=False) as relay:
        kept = relay.breakpoints.add(str(app), 1)
        gone = relay.breakpoints.add(str(app), 2, condition="x == 1")
        answers = [("remove_breakpoint", relay.operations.call("remove_breakpoint", {"id": gone.id})),
                   ("breakpoints", relay.operations.call("breakpoints", {}))]
    for operation, answer in answers:
        printer, out = Printer(color=terminal), io.StringIO()
        if terminal:  # rich's table, as a terminal shows it
            printer._console = Console(file=out, width=100, highlight=False)
        else:
            printer.text = lambda text, style=None, out=out: out.write(text + "\n")  # what a pipe gets
        show(printer, operation, json.loads(json.dumps(as_dict(answer))))  # as the CLI reads it from the answer
        header, row = out.getvalue().splitlines()
        bp, status = (gone, "removed") if operation == "remove_breakpoint" else (kept, "not verified yet")
        assert row.split()[0] == str(bp.id) and row[header.index("status"):].startswith(status)
        assert header.split() == ["id", "place", "condition", "status"]
        assert header.index("status") == row.index(status) and header.index("id") == row.index(str(bp.id))
        assert header.index("place") == row.index(row.split()[1]) and row.split()[1].endswith(f"app.py:{bp.line}")


def test_a_terminal_table_wraps_a_long_place_and_keeps_its_line_number():
    import io

    from rich.console import Console

    from jupyter_debug_relay.cli.render import Printer

    printer, out = Printer(color=True), io.StringIO()
    printer._console = Console(file=out, width=60, highlight=False)
    place = "/srv/" + "deeply/nested/" * 6 + "app.py:42"
    printer.table(("id", "place", "status"), [(1, place, "verified")], "no breakpoints")
    first, *wrapped = out.getvalue().splitlines()[1:]  # the row, then the rest of its place cell
    assert first.split()[0] == "1" and first.split()[-1] == "verified"
    assert first.split()[1] + "".join(line.strip() for line in wrapped) == place
