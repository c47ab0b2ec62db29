"""Attach: the local Python processes to attach to, with the port debugpy listens on, secrets masked (issue 16)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from jupyter_debug_relay import RelayError

SECRET = "s3cr3t-value-1234"
SLEEPER = "import time\nprint('up', flush=True)\ntime.sleep(60)\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def started() -> Iterator:
    """Start Python processes in their own process groups; every one is killed and reaped at the end."""
    procs: list[subprocess.Popen] = []

    def start(*argv: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"up"
        return proc

    yield start
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)


def listed(relay, pid: int, until=lambda p: True, timeout: float = 15.0):
    """The listing's entry for ``pid`` once ``until`` holds for it (debugpy's adapter takes a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {p.pid: p for p in relay.processes()}
        if pid in found and until(found[pid]):
            return found[pid]
        if time.monotonic() > deadline:
            pytest.fail(f"process {pid} not listed as expected: {found.get(pid)}")
        time.sleep(0.1)


def test_python_processes_are_listed_with_the_port_debugpy_listens_on_and_secrets_masked(relay, write, started):
    app = write("serve.py", SLEEPER)
    port, other = free_port(), free_port()
    cli = started("-m", "debugpy", "--listen", f"127.0.0.1:{port}", app, "--api-key", SECRET)
    code = f"import debugpy; debugpy.listen(('127.0.0.1', {other}))\n" + SLEEPER
    in_code = started("-c", code)
    plain = started(app, f"--password={SECRET}")
    by_cli = listed(relay, cli.pid)
    assert by_cli.port == port and by_cli.debugpy
    assert by_cli.command.endswith("serve.py --api-key <redacted>") and SECRET not in by_cli.command
    assert listed(relay, in_code.pid, lambda p: p.port is not None).port == other
    quiet = listed(relay, plain.pid)
    assert (quiet.port, quiet.debugpy, quiet.command.endswith("serve.py --password=<redacted>")) == (None, False, True)
    everything = relay.processes()
    assert not any("--for-server" in p.command for p in everything)  # debugpy's own adapters are not targets
    assert os.getpid() not in {p.pid for p in everything}  # nor is the relay's own process
    session = relay.attach(port=by_cli.port)
    assert session.state in ("running", "paused")
    session.detach()


def test_attach_list_in_the_magics(kernel, write, started):
    app = write("serve.py", SLEEPER)
    port = free_port()
    target = started("-m", "debugpy", "--listen", f"127.0.0.1:{port}", app, "--token", SECRET)
    deadline = time.monotonic() + 15
    while f"debugpy on port {port}" not in (text := kernel.magic("%dbg attach --list").text):
        assert time.monotonic() < deadline, text
        time.sleep(0.2)
    line = next(line for line in text.splitlines() if line.split()[0] == str(target.pid))
    assert f"debugpy on port {port}" in line and "serve.py --token <redacted>" in line and SECRET not in text
    assert str(kernel.pid) not in [line.split()[0] for line in text.splitlines()]
    assert kernel.magic(f"%dbg attach --port {port}").text.startswith("s1: ")
    kernel.magic("%dbg detach")


def test_the_listing_is_an_operation_every_front_end_has(relay):
    with pytest.raises(RelayError) as bad:
        relay.operations.call("processes", {"pid": 1})
    assert bad.value.code == "invalid_request"
    assert all(p.pid != os.getpid() for p in relay.operations.call("processes")["processes"])
