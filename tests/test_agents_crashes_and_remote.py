"""What agents tripped over (issue 14): crashes stop with the user's traceback, --exceptions is per launch,
a stopped session says the user stopped it, `list` splits into columns, attach maps remote paths to local ones."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.examples import grades
from tests.conftest import line_of
from tests.kernels import UID

OURS = ("debugpy", "pydevd", "runpy", "_nodelay_boot", "_launcher_boot", "jupyter_debug_relay/backends")

RISKY = """
def risky():
    try:
        raise KeyError("caught")  # handled
    except KeyError:
        pass
    raise ValueError("boom")  # uncaught


risky()
"""

LOOP = """
import time
n = 0
while True:
    n += 1  # tick
    time.sleep(0.01)
"""

SERVICE = """
import time


def handle(n):
    doubled = n * 2  # handle
    return doubled


counter = 0
while True:
    counter = handle(counter) % 1000 + 1
    time.sleep(0.01)
"""


def plain_run(script: str, cwd: Path, python: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([python or sys.executable, script], cwd=cwd, capture_output=True, text=True, timeout=30)


def test_a_crash_stops_on_the_exception_and_dies_as_plain_python(kernel, tmp_path):
    script = str(tmp_path / "grades.py")
    shutil.copy(grades.__file__, script)
    plain = plain_run(script, tmp_path)
    assert plain.returncode == 1 and plain.stderr.startswith("Traceback (most recent call last):\n")

    launched = kernel.magic("%debug_session launch grades.py").text
    headline, _, traceback = launched.partition("\n")
    assert headline.startswith(f"s1: paused at grades.py:{line_of(script, 'return LETTERS')} in letter() — "
                               "exception IndexError: string index out of range")
    assert traceback.endswith(plain.stderr.rstrip("\n"))  # the user's own traceback, in Python's order
    assert not any(name in launched for name in OURS)

    assert kernel.magic("%dbg continue").text == "exited with code 1"
    output = kernel.magic("%dbg output").text
    assert not any(name in output for name in OURS), output
    assert plain.stderr.rstrip("\n") in output  # the same traceback a plain run prints, line for line
    assert sorted(output.splitlines()) == sorted((plain.stdout + plain.stderr).splitlines())


@pytest.mark.every_target
def test_through_debugpys_adapter_a_crash_reads_the_same(relay, tmp_path, target_python):
    script = str(tmp_path / "grades.py")
    shutil.copy(grades.__file__, script)
    plain = plain_run(script, tmp_path, target_python)
    session = relay.launch(script, subprocess=True)  # debugpy's launcher, through _launcher_boot.py
    stop = session.wait_for_stop(30)
    assert stop.exception.type == "IndexError" and stop.exception.traceback == plain.stderr
    session.continue_(wait=False)
    with pytest.raises(RelayError):
        session.wait_for_stop(30)
    stderr = "".join(c.text for c in session.output().chunks if c.category == "stderr")
    assert (session.exit_code, stderr) == (1, plain.stderr)


def test_a_module_crash_reports_from_the_users_frames_and_sys_exit_is_no_crash(relay, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/main.py", "import sys\n\nif sys.argv[1:] == ['exit']:\n    sys.exit(4)\n{}['missing']\n")
    crash = relay.launch(module="pkg.main", cwd=str(tmp_path), exceptions="none")
    with pytest.raises(RelayError, match="target_exited|exited with code 1"):
        crash.wait_for_stop(30)
    stderr = "".join(c.text for c in crash.output().chunks if c.category == "stderr")
    assert stderr.startswith("Traceback (most recent call last):\n") and stderr.endswith("KeyError: 'missing'\n")
    assert stderr.count('  File "') == 1 and not any(name in stderr for name in OURS), stderr
    exits = relay.launch(module="pkg.main", args=["exit"], cwd=str(tmp_path))  # uncaught mode: sys.exit is an end
    with pytest.raises(RelayError):
        exits.wait_for_stop(30)
    assert exits.exit_code == 4 and exits.output().text == ""


def test_exceptions_on_a_launch_is_that_sessions_and_bp_exceptions_sets_the_default(kernel, write):
    program = write("risky.py", RISKY)
    handled, uncaught = line_of(program, "# handled"), line_of(program, "# uncaught")
    first = kernel.magic("%dbg launch --exceptions raised --name eager risky.py").text
    assert first.startswith(f"eager: paused at risky.py:{handled} in risky() — exception KeyError: 'caught'")
    default = kernel.magic("%dbg launch risky.py").text  # out of the box: uncaught exceptions stop
    assert default.startswith(f"s2: paused at risky.py:{uncaught} in risky() — exception ValueError: boom")
    assert kernel.magic("%dbg launch --exceptions none risky.py").text == "s3: exited with code 1"
    kernel.magic("%dbg use eager")
    after = kernel.magic("%dbg continue").text  # s3's none did not reach the live session: it still stops
    assert f"paused at risky.py:{uncaught} in risky() — exception ValueError: boom" in after
    assert kernel.magic("%bp exceptions none").text == "stop on exceptions: none"
    assert kernel.magic("%dbg launch risky.py").text == "s4: exited with code 1"  # the default changed ...
    kernel.magic("%dbg use eager")
    assert "exception ValueError" in kernel.magic("%dbg wait").text  # ... but not the mode eager was given
    kernel.magic("%dbg stop --session eager")
    kernel.magic("%dbg stop --session s2")


def test_the_python_api_takes_the_exception_mode_per_launch(relay, write):
    program = write("risky.py", RISKY)
    relay.breakpoints.exceptions("none")
    eager = relay.launch(program, exceptions="raised")
    assert eager.wait_for_stop(30).exception.type == "KeyError"
    quiet = relay.launch(program)
    with pytest.raises(RelayError):
        quiet.wait_for_stop(30)
    assert quiet.exit_code == 1
    relay.breakpoints.exceptions("uncaught")  # the relay's mode reaches live sessions without a mode of their own
    assert eager.continue_().exception.type == "ValueError"
    eager.terminate()


def test_stop_says_the_user_stopped_it_and_a_real_signal_says_which(kernel, write):
    write("loop.py", LOOP)
    write("crash.py", "import os, signal\n\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    kernel.magic("%dbg launch --no-wait --name looper loop.py")
    assert kernel.magic("%dbg stop").text == "looper stopped"
    assert kernel.magic("%dbg status").text == "looper (debugpy, loop.py): stopped by the user"

    assert kernel.magic("%dbg launch crash.py").text == "s2: ended by signal 11 (SIGSEGV)"
    assert kernel.magic("%dbg status").text == "s2 (debugpy, crash.py): ended by signal 11 (SIGSEGV)"

    kernel.magic("%dbg launch --no-wait loop.py")
    kernel.run("import os, signal\n_s = %dbg status\nos.kill(_s.info.pid, signal.SIGKILL)")
    deadline = time.monotonic() + 10
    while "running" in (status := kernel.magic("%dbg status").text):
        assert time.monotonic() < deadline, status
        time.sleep(0.1)
    assert status == "s3 (debugpy, loop.py): ended by signal 9 (SIGKILL)"

    rows = [row[:2] + row[3:] for row in map(shlex.split, kernel.magic("%dbg list").text.splitlines())]
    assert rows[1:] == [["-", "s1", "looper", "debugpy", "terminated", "stopped-by-user", "-", "loop.py"],
                        ["-", "s2", "-", "debugpy", "terminated", "signal=SIGSEGV", "-", "crash.py"],
                        ["*", "s3", "-", "debugpy", "terminated", "signal=SIGKILL", "-", "loop.py"]]


def test_list_has_a_header_and_columns_an_agent_can_split(kernel, write):
    app = write("app.py", LOOP)
    tick = line_of(app, "# tick")
    kernel.magic(f"%bp app.py:{tick}")
    kernel.magic('%dbg launch --name "nightly run" app.py --mode fast')
    kernel.magic("%dbg launch --no-wait --stop-on-entry app.py")
    listing = kernel.magic("%dbg list")
    lines = listing.text.splitlines()
    assert lines[0].split() == ["CUR", "ID", "UID", "NAME", "BACKEND", "STATE", "DETAIL", "AT", "TARGET"]
    rows = [shlex.split(line) for line in lines[1:]]
    assert all(len(row) == 9 and re.fullmatch(UID, row[2]) for row in rows), lines
    rows = [row[:2] + row[3:] for row in rows]
    assert rows[0] == ["-", "s1", "nightly run", "debugpy", "paused", "breakpoint", f"app.py:{tick}",
                       "app.py --mode fast"]
    assert rows[1][:3] == ["*", "s2", "-"]  # the current session; its name is its id, so no second s2
    assert "s1  s1" not in listing.text and "s2  s2" not in listing.text
    assert "<th style='text-align:left'>state</th>" in listing.html and "nightly run" in listing.html
    kernel.magic("%dbg stop --session s1")
    kernel.magic("%dbg stop --session s2")


@pytest.fixture
def remote_copy(tmp_path):
    """The same program in two trees: ``remote/srv/app`` runs under debugpy --listen, ``local/work/app`` is ours."""
    remote, local = tmp_path / "remote" / "srv" / "app", tmp_path / "local" / "work" / "app"
    for root in (remote, local):
        (root / "lib").mkdir(parents=True)
        (root / "lib" / "service.py").write_text(SERVICE.lstrip("\n"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}",
                               str(remote / "lib" / "service.py")], cwd=tmp_path / "remote",
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield remote, local, port
    finally:
        os.killpg(target.pid, signal.SIGKILL)
        target.wait(5)


def attach_when_listening(attach):
    deadline = time.monotonic() + 20
    while True:
        try:
            return attach()
        except RelayError as exc:
            if exc.code not in ("connection_failed", "adapter_failed") or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_attach_with_path_mappings_binds_local_breakpoints_in_a_remote_tree(relay, remote_copy):
    remote, local, port = remote_copy
    local_file = str(local / "lib" / "service.py")
    session = attach_when_listening(lambda: relay.attach(port=port, path_mappings={str(remote): str(local)}))
    bp = relay.breakpoints.add(local_file, line_of(local_file, "# handle"))
    stop = session.wait_for_stop(20)
    assert (stop.frame.path, stop.frame.line, stop.breakpoint_ids) == (local_file, bp.line, [bp.id])
    assert [f.path for f in session.stack()] == [local_file, local_file]
    assert "doubled = n * 2" in session.source(stop.frame)
    assert relay.breakpoints.get(bp.id).verified
    relay.breakpoints.remove(bp.id)
    session.detach()


def test_attach_map_in_the_magic_and_a_missing_local_folder_is_named(kernel, remote_copy, tmp_path):
    remote, local, port = remote_copy
    missing = kernel.magic(f"%dbg attach --port {port} --map {remote}={tmp_path / 'nowhere'}").text
    assert missing.startswith("error file_not_found: The path mapping") and "nowhere" in missing
    relative = os.path.relpath(local, tmp_path)  # the kernel runs in tmp_path: a local folder may be relative
    text = attach_when_listening(lambda: _attached(kernel, f"%dbg attach --port {port} --map {remote}={relative}"))
    assert text.endswith(": running")  # after failed tries while the target was still starting
    handle = line_of(str(local / "lib" / "service.py"), "# handle")
    kernel.magic(f"%bp {relative}/lib/service.py:{handle}")
    assert kernel.magic("%dbg wait").text.startswith(f"paused at {relative}/lib/service.py:{handle} in handle()")
    assert kernel.magic("%dbg where").text.splitlines()[0] == f"→ #0 handle() at {relative}/lib/service.py:{handle}"
    kernel.magic("%bp clear")
    kernel.magic("%dbg detach")


def _attached(kernel, line: str) -> str:
    text = kernel.magic(line).text
    if text.startswith("error connection_failed") or text.startswith("error adapter_failed"):
        raise RelayError("connection_failed", text)
    return text
