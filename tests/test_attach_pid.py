"""Attach by pid: the relay's boot injected into a running process, whose pydevd connects straight to the relay."""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from tests import targets

ROOT = str(Path(__file__).resolve().parent.parent)  # the rogue imports tests.peers.rogue_dap from here


def _gdb_calls_into_processes() -> bool:
    """Whether gdb can call a function inside a process here (the injection does); some VM kernels refuse
    to let a debugger write a process's register state ("Couldn't write extended state status")."""
    if shutil.which("gdb") is None:
        return False
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        out = subprocess.run(["gdb", "--nx", "--batch", "-p", str(sleeper.pid), "-ex", "print (int)getpid()"],
                             capture_output=True, text=True, timeout=30).stdout
        return f"= {sleeper.pid}" in out
    finally:
        os.killpg(sleeper.pid, 9)
        sleeper.wait(5)


needs_gdb = pytest.mark.skipif(not _gdb_calls_into_processes(), reason="attaching by pid needs gdb (apt-get install "
                               "gdb), and a kernel that lets gdb call a function inside a process (this one refuses)")

SERVICE = """
    import os, time
    def work(n):
        doubled = n * 2  # work
        return doubled
    def spin():
        while True:
            time.sleep(0.01)
    def job():
        x = 1  # job
        spin()
        return x
    counter = 0
    while True:
        counter += 1  # tick
        work(counter)
        if os.path.exists(__file__ + ".go"):  # the test asks for a long call
            os.remove(__file__ + ".go")
            job()
        time.sleep(0.01)
"""


class Running:
    """A Python process started apart from the relay (its own session), killed at the end."""

    def __init__(self, python: str, script: str) -> None:
        self.proc = subprocess.Popen([python, script], start_new_session=True, stderr=subprocess.DEVNULL)

    def __enter__(self) -> subprocess.Popen:
        return self.proc

    def __exit__(self, *exc: object) -> None:
        os.killpg(self.proc.pid, 9)
        self.proc.wait(5)


@needs_gdb
@pytest.mark.every_target
def test_attach_by_pid_runs_the_boot_and_breaks_steps_inspects_and_detaches(relay, write, target_python):
    python = target_python or sys.executable
    folder = targets.prepared(python)
    service = write("service.py", SERVICE)
    with Running(python, service) as target:
        session = relay.attach(pid=target.pid)
        bp = relay.breakpoints.add(service, line_of(service, "# work"))
        stop = session.wait_for_stop(30)
        assert (stop.reason, stop.frame.name, stop.frame.line) == ("breakpoint", "work", bp.line)
        modules = "__import__('sys').modules"
        assert session.evaluate(f"{modules}['pydevd'].__file__").value.strip("'").startswith(folder + os.sep)
        assert session.evaluate(f"'_jupyter_debug_relay_boot' in {modules}").value == "True"  # the relay's boot
        assert session.evaluate(f"'_pydevd_sys_monitoring._pydevd_sys_monitoring_cython' in {modules}"
                                f" or '_pydevd_bundle.pydevd_cython' in {modules}").value == "True"
        n = int(session.evaluate("n").value)
        assert session.next().frame.line == bp.line + 1
        assert session.evaluate("doubled").value == str(2 * n)
        assert session.step_out().frame.name == "<module>"
        assert session.next().frame.line == line_of(service, "# tick") + 2
        relay.breakpoints.remove(bp.id)
        session.detach()
        assert target.poll() is None, "detach must leave the target running"


@needs_gdb
@pytest.mark.every_target
def test_pause_stops_a_step_out_still_running_in_a_process_attached_by_pid(relay, write, target_python):
    service = write("service.py", SERVICE)
    with Running(target_python or sys.executable, service) as target:
        session = relay.attach(pid=target.pid)
        bp = relay.breakpoints.add(service, line_of(service, "# job"))
        open(service + ".go", "w").close()
        session.wait_for_stop(30)
        relay.breakpoints.remove(bp.id)
        with pytest.raises(RelayError) as info:
            session.step_out(timeout=1)
        assert info.value.code == "timeout"
        stop = session.pause()
        assert stop.reason == "pause" and stop.frame.name == "spin"


# Records the command line of every process that injects (gdb, its shell, the injector), and races the
# relay to each listening socket the test's own process opens on 127.0.0.1 (/proc/net/tcp, readable by all):
# asks for a command to be run and a stop to be believed, answers pydevdAuthorize with guesses.
ROGUE = r"""
import json, os, sys, threading, time
marker, relay_pid, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from tests.peers import rogue_dap

def attack(port):
    rogue_dap.attack(port, marker, [None, "", str(port), "0" * 64], "pause")

def sockets_of(pid):
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            found.add(link[8:-1])
    return found

seen, lines = set(), set()
while time.monotonic() < until:
    ours = sockets_of(relay_pid)
    with open("/proc/net/tcp") as table:
        for row in list(table)[1:]:
            fields = row.split()
            address, state, inode = fields[1], fields[3], fields[9]
            port = int(address.rpartition(":")[2], 16)
            if state == "0A" and address.startswith("0100007F:") and inode in ours and port not in seen:
                seen.add(port)
                threading.Thread(target=attack, args=(port,)).start()
    for pid in os.listdir("/proc"):
        if pid == str(os.getpid()):  # its own names what it looks for
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if ("DoAttach" in line or "add_code_to_python_process" in line) and line not in lines:
            lines.add(line)
            print("command", json.dumps(line), flush=True)
    time.sleep(0.002)
"""


def revealed(line: str) -> str:
    """A command line with its lists of byte values (how injected code spells strings) decoded beside it."""
    lists = re.findall(r"\[(\d+(?:, *\d+)+)\]", line)
    return line + "".join(bytes(int(n) for n in found.split(",")).decode(errors="replace") for found in lists)


@needs_gdb
def test_a_rogue_at_the_listener_of_an_attach_by_pid_is_refused_and_sees_no_secret(relay, write, tmp_path, caplog):
    service = write("service.py", SERVICE)
    marker = tmp_path / "rogue-was-here"
    caplog.set_level(logging.WARNING, logger="jupyter_debug_relay.backends.debugpy.direct")
    rogue = subprocess.Popen([sys.executable, "-c", ROGUE, str(marker), str(os.getpid()), "120", ROOT],
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        with Running(sys.executable, service) as target:
            session = relay.attach(pid=target.pid)
            bp = relay.breakpoints.add(service, line_of(service, "# work"))
            stop = session.wait_for_stop(30)
            assert (stop.reason, stop.frame.line) == ("breakpoint", bp.line)  # the target's stop, not the rogue's
            assert session.evaluate("n == counter").value == "True"
            session.terminate()
    finally:
        rogue.kill()
        report = rogue.communicate(timeout=10)[0].splitlines()
    assert not marker.exists()
    asked = {line.split()[1] for line in report if line.startswith("asked")}
    assert asked and asked <= {line.split()[1] for line in report if line.startswith("closed")}, report
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("without the target's token" in w for w in warnings), warnings
    commands = [line for line in report if line.startswith("command")]
    assert any("gdb " in line and "DoAttach" in line for line in commands), report  # it saw gdb's command line
    assert not any(re.search(r"[0-9a-f]{64}", revealed(line)) for line in commands), commands  # and no token


@needs_gdb
@pytest.mark.skipif(targets.newest_monitoring() is None, reason=f"no Python 3.12+ found ({targets.WHERE})")
def test_a_process_of_a_venv_with_debugpy_of_the_relays_version_is_given_its_own(relay, write, tmp_path):
    python = targets.newest_monitoring()
    venv_python, own = targets.venv_with_relays_debugpy(python, tmp_path / "venv")
    service = write("service.py", SERVICE)
    with Running(venv_python, service) as target:  # /proc/PID/exe names the base interpreter
        session = relay.attach(pid=target.pid)
        relay.breakpoints.add(service, line_of(service, "# work"))
        session.wait_for_stop(30)
        pydevd = session.evaluate("__import__('sys').modules['pydevd'].__file__").value.strip("'")
        assert pydevd.startswith(str(own) + os.sep), pydevd
        session.terminate()


def test_attach_to_a_pid_that_does_not_exist_fails_at_once(relay):
    with pytest.raises(RelayError) as info:
        relay.attach(pid=2**22 + 12345)
    assert info.value.code == "connection_failed" and "no process with pid" in info.value.message


def test_attach_to_a_process_without_python_says_so(relay):
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        with pytest.raises(RelayError) as info:
            relay.attach(pid=sleeper.pid)
        assert info.value.code == "connection_failed" and "not running Python" in info.value.message
    finally:
        os.killpg(sleeper.pid, 9)
        sleeper.wait(5)


@needs_gdb
def test_attach_to_a_process_gdb_may_not_trace_fails_with_gdbs_reason(relay, write):
    service = write("service.py", SERVICE)
    with Running(sys.executable, service) as target:
        holder = subprocess.Popen([sys.executable, "-c", "import ctypes, sys, time; "  # traced already: gdb may not
                                   f"print(ctypes.CDLL(None).ptrace(0x4206, {target.pid}, 0, 0), flush=True); "
                                   "time.sleep(60)"], stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            assert holder.stdout.readline().strip() == "0"  # PTRACE_SEIZE: it holds the process, running
            with pytest.raises(RelayError) as info:
                relay.attach(pid=target.pid)
        finally:
            os.killpg(holder.pid, 9)
            holder.wait(5)
        assert info.value.code == "connection_failed" and "Operation not permitted" in info.value.message
        assert target.poll() is None


@needs_gdb
def test_the_magics_attach_by_pid_stop_inspect_detach_and_say_what_is_not_python(kernel, write):
    service = write("service.py", SERVICE)
    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        refused = kernel.magic(f"%dbg attach --pid {sleeper.pid}").text
    finally:
        os.killpg(sleeper.pid, 9)
        sleeper.wait(5)
    assert refused.startswith(f"error connection_failed: Process {sleeper.pid} is not running Python"), refused
    assert len(refused.splitlines()) == 1 and " Hint: " in refused
    with Running(sys.executable, service) as target:
        assert kernel.magic(f"%dbg attach --pid {target.pid} --name bypid").text == "bypid: running"
        kernel.magic(f"%bp service.py:{line_of(service, '# work')}")
        assert kernel.magic("%dbg wait --timeout 30").text.startswith("paused at service.py:3 in work()")
        assert kernel.magic("%dbg eval n == counter").text == "True"
        assert kernel.magic("%bp clear").text == "removed 1 breakpoint"
        assert kernel.magic("%dbg detach").text == "detached from bypid; the target keeps running"
        assert target.poll() is None
