"""Two kernels recording at once, a terminal driving a kernel's session, a killed kernel, replay in a kernel."""

from __future__ import annotations

import json
import os
import re
import signal
import time

import pytest

from jupyter_debug_relay.store.recording import Home
from tests.conftest import line_of, wait_until
from tests.kernels import APP, UID, Kernel
from tests.test_session_store import cli


@pytest.fixture
def two_kernels(tmp_path):
    home = tmp_path / "home"
    kernels = []
    try:
        for name in ("a", "b"):
            folder = tmp_path / name
            folder.mkdir()
            (folder / "app.py").write_text(APP.lstrip("\n"))
            kernel = Kernel("python3", cwd=str(folder), env={"JUPYTER_DEBUG_RELAY_HOME": str(home)})
            kernels.append(kernel)
            kernel.magic("%load_ext jupyter_debug_relay")
        yield home, kernels
    finally:
        for kernel in kernels:
            kernel.close()


def uid_of(kernel: Kernel) -> str:
    listed = kernel.magic("%dbg list").text
    match = re.search(rf"s1  ({UID})  ", listed)
    assert match, listed
    return match.group(1)


def test_two_kernels_record_apart_and_the_cli_drives_one_of_them(two_kernels, tmp_path):
    home, (a, b) = two_kernels
    app = str(tmp_path / "a" / "app.py")
    loop = line_of(app, "# accumulate")
    for kernel in (a, b):
        kernel.magic(f"%bp app.py:{loop}")
        assert kernel.magic("%dbg launch app.py").text.startswith(f"s1: paused at app.py:{loop}")
    uid_a, uid_b = uid_of(a), uid_of(b)
    assert uid_a != uid_b
    for kernel, uid in ((a, uid_a), (b, uid_b)):
        info = json.loads((home / "sessions" / uid / "session.json").read_text())
        assert info["pid"] == kernel.pid and info["target"].endswith(f"/{'a' if kernel is a else 'b'}/app.py")
    listed = json.loads(cli("sessions", "--json", home=home).stdout)["sessions"]
    assert {(e["uid"], e["pid"], e["live"]) for e in listed} == {(uid_a, a.pid, True), (uid_b, b.pid, True)}
    assert os.readlink(home / "current") == f"sessions/{uid_b}"

    stepped = cli("next", "--session", uid_a[:-1], home=home)
    assert stepped.stdout == f"paused: step in compute() at {app}:{loop - 1}\n", stepped.stderr
    assert kernel_line(a) == loop - 1 and kernel_line(b) == loop  # the kernel sees it; the other is untouched
    variables = cli("inspect", "variables", "--session", uid_a, home=home).stdout
    assert re.search(r"^total\s+int\s+0$", variables, re.M), variables
    assert cli("eval", "total", "+", "1000", "--session", uid_a, home=home).stdout == "1000  (int)\n"
    added = cli("bp", "add", f"{app}:{loop}", "--condition", "i == 2", "--session", uid_a, home=home).stdout
    row = rf"1\s+{re.escape(app)}:{loop}\s+i == 2\s+verified\n"  # the line's breakpoint, now conditional
    assert re.fullmatch(rf"id\s+place\s+condition\s+status\n{row}", added), added
    listed_a = cli("bp", "list", "--session", uid_a, home=home).stdout
    assert re.fullmatch(rf"id\s+place\s+condition\s+status\n{row}", listed_a)
    assert "/b/app.py" in cli("bp", "list", home=home).stdout  # current: the newest session, kernel b's
    stopped = cli("continue", "--session", uid_a, home=home).stdout
    assert stopped == f"paused: breakpoint 1 in compute() at {app}:{loop}\n"
    assert a.magic("%dbg eval i").text == "2"
    removed = cli("bp", "rm", "1", "--session", uid_a, home=home).stdout.splitlines()[1].split()
    assert removed[0] == "1" and removed[-1] == "removed"
    assert a.magic("%bp list").text.startswith("no breakpoints")
    stack = json.loads(cli("inspect", "stack", "--json", "--session", uid_a, home=home).stdout)
    assert [f["name"] for f in stack["stack"]["frames"]] == ["compute", "<module>"]

    os.kill(b.pid, signal.SIGKILL)
    wait_until(lambda: not [e for e in Home(home).sessions() if e["uid"] == uid_b and e["live"]], 5,
               "the killed kernel's session to be listed as ended")
    listed = json.loads(cli("sessions", "--json", home=home).stdout)["sessions"]
    assert {e["uid"]: (e["live"], e["state"]) for e in listed}[uid_b] == (False, "ended")
    refused = cli("pause", "--session", uid_b, home=home)
    assert refused.returncode == 2 and f"error: not_running: Session {uid_b} (s1) has ended" in refused.stderr
    assert "live" in cli("sessions", home=home).stdout.split(uid_a)[1].splitlines()[0]


def kernel_line(kernel: Kernel) -> int:
    status = kernel.magic("%dbg status").text
    return int(re.search(r"paused at app\.py:(\d+)", status).group(1))


def test_a_recording_replays_in_the_kernel_and_its_panel(kernel, write):
    app = write("app.py", APP)
    loop = line_of(app, "# accumulate")
    kernel.magic(f"%bp app.py:{loop}")
    kernel.magic("%dbg launch app.py")
    uid = uid_of(kernel)
    kernel.magic("%dbg vars")
    kernel.magic("%dbg continue")
    time.sleep(1.0)  # this stop lasts (past 0.5 s): the store looks at it itself
    kernel.magic("%dbg continue")
    kernel.magic("%bp clear")
    assert kernel.magic("%dbg continue").text == "exited with code 3"
    replayed = kernel.magic(f"%dbg replay {uid[:-1]}").text.splitlines()
    assert replayed[0] == f"replay of {uid} (s1): 3 stops, exit code 3"
    assert [re.sub(r"\+\d+\.\d\ds", "+T", row) for row in replayed[1:]] == [
        f"#{i} +T breakpoint 1 in compute() at app.py:{loop}" for i in range(3)]
    cell = kernel.magic(f"""
r = %dbg replay {uid}
p = r.panel()
seen = []
for move in (None, p.next, p.next, p.previous, p.next, p.next):
    if move: move()
    seen.append((p.index, p.source.current_line, p.stack.frames,
                 {{v.name: v.value for v in p.variables.scopes[0].nodes}} if p.variables.scopes else None,
                 p.output.stdout))
print(seen)
""")
    seen = eval(cell.streams)  # our own test data: the kernel printed a list of tuples
    assert [s[0] for s in seen] == [0, 1, 2, 1, 2, 2]
    assert all(s[1] == loop for s in seen) and seen[0][2][0].startswith("compute() — ")
    assert (seen[0][3]["x"], seen[1][3]["x"], seen[3][3]["x"]) == ("3", "4", "4")  # as recorded at each stop
    assert seen[1][2] == ["compute() — app.py:6", "<module>() — app.py:11"]
    assert seen[2][3] is None  # left at once: nobody looked at that stop, so the store did not either
    assert seen[0][4] == "start"
    missing = kernel.magic("%dbg replay 1999").text
    assert missing.startswith("error session_not_found: No session matches '1999'")
