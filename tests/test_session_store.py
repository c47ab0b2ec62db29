"""The session store: recordings on disk, commands appended from outside, the owner's death, replay."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.store.recording import Home, read_events
from jupyter_debug_relay.store.replay import Recording
from tests.conftest import line_of, wait_until
from tests.kernels import UID

PROGRAM = """
password = "hunter2"
total = 0
for i in range(4):
    print("line", i)
    total += i  # add
print("total", total)
"""


def cli(*args: str, home: Path, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``jupyter-debug-relay ARGS`` with ``home`` as the store's home; its output is piped (plain text)."""
    env = {**os.environ, "JUPYTER_DEBUG_RELAY_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", *args], capture_output=True, text=True,
                          env=env, input=input, timeout=timeout)


def lines_as_they_come(args: list[str], home: Path, timeout: float = 60) -> tuple[list[str], list[float]]:
    """Run ``jupyter-debug-relay ARGS``; its output lines and when each arrived (monotonic), whatever its start cost."""
    env = {**os.environ, "JUPYTER_DEBUG_RELAY_HOME": str(home)}
    with subprocess.Popen([sys.executable, "-m", "jupyter_debug_relay.cli", *args], stdout=subprocess.PIPE,
                          text=True, env=env) as process:
        lines, arrivals = [], []
        for line in process.stdout:
            arrivals.append(time.monotonic())
            lines.append(line.rstrip("\n"))
        assert process.wait(timeout) == 0
    return lines, arrivals


def events_of(home: Path, uid: str) -> list[dict]:
    return read_events(home / "sessions" / uid / "events.jsonl")[0]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def program(write) -> str:
    return write("prog.py", PROGRAM)


@pytest.fixture
def paused(home, program):
    """A recording relay with PROGRAM paused at its ``# add`` line: (relay, session, its uid, that line)."""
    with Relay(home=str(home)) as relay:
        line = line_of(program, "# add")
        relay.breakpoints.add(program, line)
        session = relay.launch(program)
        session.wait_for_stop(10)
        yield relay, session, session.info().uid, line


@pytest.mark.smoke
def test_a_session_leaves_its_folder_index_link_and_masked_events(home, program):
    with Relay(home=str(home)) as relay:
        relay.breakpoints.add(program, line_of(program, "# add"))
        session = relay.launch(program)
        session.wait_for_stop(10)
        uid = session.info().uid
        assert re.fullmatch(UID, uid)
        folder = home / "sessions" / uid
        assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == [
            "commands.jsonl", "events.jsonl", "session.json"]
        assert os.readlink(home / "current") == f"sessions/{uid}"
        frames = session.stack()
        session.variables(session.scopes(frames[0].id)[0].ref)  # what is looked at is the stop's snapshot
        session.next()
        time.sleep(1.0)  # this stop lasts (past 0.5 s): the store looks at it itself
        session.continue_()
        info = wait_until(lambda: (i := json.loads((folder / "session.json").read_text()))["state"] == "running" and i)
        assert info["uid"] == uid and info["id"] == "s1" and info["backend"] == "debugpy"
        assert info["pid"] == os.getpid() and info["target"] == program
        assert info["capabilities"]["supportsSetVariable"] is True  # kept once here, not in every session event
        listed = json.loads((home / "index.json").read_text())["sessions"]
        assert [e["uid"] for e in listed] == [uid] and "capabilities" not in listed[0]  # the index stays small
    events = events_of(home, uid)
    assert all(set(e) == {"seq", "ts", "type", "session", "data"} and e["session"] == uid for e in events)
    kinds = [e["type"] for e in events]
    assert kinds.count("stopped") == 3 and kinds.count("snapshot") == 2 and kinds[-1] == "terminated"
    snapshots = [e["data"] for e in events if e["type"] == "snapshot"]
    names = {v["name"]: v["value"] for v in snapshots[1]["variables"]}
    assert names["total"] == "0" and names["password"] == "<redacted>"
    assert "hunter2" not in (home / "sessions" / uid / "events.jsonl").read_text()
    index = json.loads((home / "index.json").read_text())["sessions"]
    assert [(e["uid"], e["state"]) for e in index] == [(uid, "terminated")]
    assert not list(home.glob("**/*.tmp"))


def test_a_relay_that_does_not_record_writes_nothing(home, program):
    with Relay(home=str(home), record=False) as relay:
        session = relay.launch(program, stop_on_entry=True)
        session.wait_for_stop(10)
        assert session.info().uid is None
        session.terminate()
    assert not home.exists()


def test_past_its_byte_cap_a_recording_counts_what_it_left_out(home, write):
    noisy = write("noisy.py", 'for i in range(3000):\n    print("x" * 100, i)\nprint("end")  # end\n')
    with Relay(home=str(home)) as relay:
        relay.manager.store.cap = 20_000
        relay.breakpoints.add(noisy, 3)
        session = relay.launch(noisy)
        assert session.wait_for_stop(20).frame.line == 3
        uid = session.info().uid
        assert session.continue_() is None and session.exit_code == 0
    events = events_of(home, uid)
    dropped = [e["data"] for e in events if e["type"] == "dropped"]
    printed = 3000 * len("x" * 100 + " 1000\n")  # about: what the target printed, past the cap of 20,000
    assert dropped and sum(d["bytes"] for d in dropped) > printed - 3 * 20_000, dropped
    assert dropped[0]["reason"] == "recording cap"
    assert [e["type"] for e in events if e["type"] in ("stopped", "terminated")] == ["stopped", "terminated"]
    assert (home / "sessions" / uid / "events.jsonl").stat().st_size < 2 * 20_000


def test_commands_from_outside_are_answered_and_garbage_touches_nothing(home, paused):
    _, session, uid, line = paused
    commands = home / "sessions" / uid / "commands.jsonl"
    with open(commands, "a") as f:
        f.write('not json\n[1, 2]\n{"id": "x", "type": "rm_rf"}\n{"id": "y", "type": "next", "args": 3}\n')
        f.write('{"id": "z", "type": "next", "args": {"timeout": "soon"}}\n')
    errors = wait_until(lambda: [e for e in events_of(home, uid) if e["type"] in ("error", "command_response")]
                      if len([e for e in events_of(home, uid) if e["type"] in ("error", "command_response")]) >= 5
                      else None)
    assert [e["type"] for e in errors] == ["error"] * 4 + ["command_response"]
    assert errors[0]["data"]["code"] == "invalid_request" and errors[0]["data"]["line"] == "not json"
    assert errors[2]["data"]["message"] == "Unknown operation 'rm_rf'." and errors[2]["data"]["command_id"] == "x"
    bad = errors[4]["data"]
    assert bad["command_id"] == "z" and not bad["ok"] and bad["error"]["code"] == "invalid_request"
    assert session.state == "paused" and session.stop.frame.line == line  # nothing moved

    for n in range(10):
        offset = (home / "sessions" / uid / "events.jsonl").stat().st_size
        with open(commands, "a") as f:
            f.write(json.dumps({"id": f"s{n}", "type": "status", "args": {}}) + "\n")
        answer = wait_until(lambda n=n, offset=offset: [
            e for e in read_events(home / "sessions" / uid / "events.jsonl", offset)[0]
            if e["type"] == "command_response" and e["data"]["command_id"] == f"s{n}"])
        assert answer[0]["data"]["result"]["session"]["stop"]["frame"]["line"] == line
    session.terminate()


def test_the_cli_follows_attaches_to_and_replays_a_session(home, program, paused):
    relay, session, uid, line = paused
    env = {**os.environ, "JUPYTER_DEBUG_RELAY_HOME": str(home)}
    watch = subprocess.Popen([sys.executable, "-m", "jupyter_debug_relay.cli", "watch", uid[:17], "--filter",
                              "stopped,command_response,terminated"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        attached = cli("attach", input="next\neval total * 10\nbogus\nquit\n", home=home)
        assert attached.returncode == 0, attached.stderr
        out = attached.stdout.splitlines()
        assert out[0] == f"attached to {uid} (s1); commands: pause, continue, next, step-in, step-out, inspect, " \
                         "eval, bp, help, quit"
        assert f"paused: step in <module>() at {program}:{line - 2}" in out
        assert "0  (int)" in out and any(o.startswith("error: invalid_request: 'bogus'") for o in out)
        assert session.stop.frame.line == line - 2
        session.continue_(), session.continue_(), session.continue_()
        assert session.continue_() is None and session.exit_code == 0
        printed, _ = watch.communicate(timeout=30)
    finally:
        watch.kill()
        watch.wait()
    lines = printed.splitlines()
    assert [re.sub(r"^\S+ (\S+)\s.*", r"\1", row) for row in lines] == [
        "stopped", "stopped", "command_response", "command_response", "stopped", "stopped", "stopped", "terminated"]
    assert lines[-1].endswith("exit code 0")

    replayed = [row.split(None, 2) for row in cli("replay", uid, "--filter", "stopped,output",
                                                   home=home).stdout.splitlines()]
    assert {row[1] for row in replayed} == {"stopped", "output"}
    stops = [row[2] for row in replayed if row[1] == "stopped"]
    assert stops[:2] == [f"breakpoint 1 in <module>() at {program}:{line}",
                          f"step in <module>() at {program}:{line - 2}"]
    as_json = [json.loads(row) for row in cli("replay", uid, "--json", home=home).stdout.splitlines()]
    assert [e["seq"] for e in as_json] == sorted(e["seq"] for e in as_json)
    first_stop = [e["type"] for e in as_json].index("stopped")
    assert "".join(e["data"]["text"] for e in as_json[:first_stop] if e["type"] == "output") == "line 0\n"


def test_replay_shows_every_line_in_time_order_and_a_removal_as_a_removal(home, program, paused):
    relay, session, uid, line = paused
    session.stack()  # looked at during the stop: its snapshot, recorded when the stop ends
    later = relay.breakpoints.add(program, line_of(program, 'print("total"'))  # events during the stop
    relay.breakpoints.remove(later.id)
    session.continue_()
    session.terminate()
    relay.flush_recordings()
    events = [json.loads(row) for row in cli("replay", uid, "--json", home=home).stdout.splitlines()]
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)
    kinds = [e["type"] for e in events]
    first = kinds.index("stopped")
    during = kinds[first:first + 1 + kinds[first + 1:].index("stopped")]  # the first stop, up to the second
    assert "breakpoint" in during and during.index("snapshot") > max(
        i for i, kind in enumerate(during) if kind == "breakpoint")  # taken when the stop ended, after them
    changes = [(b["status"], b["verified"]) for e in events if e["type"] == "breakpoint"
               and (b := e["data"]["breakpoint"])["id"] == later.id]
    assert changes[0] == ("verified", True) and changes[-1] == ("removed", False)  # bound, then gone
    shown = [row.split()[2:] for row in cli("replay", uid, "--filter", "breakpoint", home=home).stdout.splitlines()]
    assert shown[-2][0] == shown[-1][0] == str(later.id)
    assert shown[-2][-1] == "verified" and shown[-1][-1] == "removed"


def test_replay_keeps_the_order_and_the_pace(tmp_path):
    recording = tmp_path / "events.jsonl"
    rows = [(3, 10.6, "output", {"category": "stdout", "text": "b\n", "cursor": 1}),
            (1, 10.0, "stopped", {"reason": "breakpoint", "thread_id": 1,
                                  "frame": {"id": 1, "name": "f", "path": "a.py", "line": 2}}),
            (2, 10.3, "output", {"category": "stdout", "text": "a\n", "cursor": 0}),
            (4, 10.8, "stopped", {"reason": "step", "thread_id": 1,
                                  "frame": {"id": 1, "name": "f", "path": "a.py", "line": 3}}),
            (5, 10.8, "terminated", {"exit_code": 0})]
    recording.write_text("".join(json.dumps({"seq": s, "ts": t, "type": k, "session": "u", "data": d}) + "\n"
                                 for s, t, k, d in rows) + "{broken\n")
    plain = cli("replay", str(recording), home=tmp_path / "home")
    timed, arrivals = lines_as_they_come(["replay", str(recording), "--timed", "--speed", "2x"], home=tmp_path / "home")
    waited = arrivals[-1] - arrivals[0]
    assert 0.3 < waited < 2.0, arrivals  # 0.8 s of recording at 2x: 0.4 s from the first line to the last
    assert [row.split()[1] for row in timed] == ["stopped", "output", "output", "stopped", "terminated"]
    assert timed[1].endswith("output           a\\n") and plain.stdout.splitlines() == timed
    bad = cli("replay", str(recording), "--speed", "fast", home=tmp_path / "home")
    assert bad.returncode == 2 and "'fast' is not a speed such as 2x or 0.5x" in bad.stderr

    replay = Recording.open(str(recording), Home(tmp_path / "home"))
    assert [(s.index, s.stop.frame.line, [c.text for c in s.output]) for s in replay.stops] == [
        (0, 2, []), (1, 3, ["a\n", "b\n"])]
    assert replay.exit_code == 0 and replay.stops[1].offset == pytest.approx(0.8)


def test_owner_gone_means_ended_at_once_and_old_recordings_are_pruned(tmp_path):
    home = Home(tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    uid_live, folder = home.make_folder()
    home.record({"uid": uid_live, "id": "s1", "pid": os.getpid(), "state": "paused", "start": 2.0})
    uid_gone, folder_gone = home.make_folder()
    home.record({"uid": uid_gone, "id": "s1", "pid": dead.pid, "state": "paused", "start": 1.0})
    (folder_gone / "events.jsonl").write_text("")
    listed = {e["uid"]: (e["live"], e["state"]) for e in home.sessions()}
    assert listed == {uid_live: (True, "paused"), uid_gone: (False, "ended")}
    assert home.prune(retention=3600) == []  # ended, but recently
    with pytest.raises(RelayError, match="2 sessions match"):
        home.resolve(uid_live[:8])
    os.utime(folder_gone / "events.jsonl", (time.time() - 7200, time.time() - 7200))
    assert home.prune(retention=3600) == [uid_gone] and not folder_gone.exists()
    assert [e["uid"] for e in home.sessions()] == [uid_live]
    with pytest.raises(RelayError) as missing:
        home.resolve("nope")
    assert missing.value.code == "session_not_found"
    with pytest.raises(RelayError):
        home.resolve("current")  # no session pointed current yet
    home.point_current(uid_live)
    assert home.resolve("current")["uid"] == uid_live == home.resolve(uid_live[:-2])["uid"]
