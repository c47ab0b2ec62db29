"""Mycel and EZ sessions driven by the magics in a real kernel: the same verbs as for debugpy."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import line_of

from tests.peers.mycel_peer import start_peer

PEERS = Path(__file__).resolve().parent / "peers"
EZ = str(PEERS / "ez")
CALLS = str(PEERS / "ez_programs" / "calls.ez")
SQUARES = str(Path(__file__).resolve().parent / "programs" / "squares.c")


def test_a_mycel_pipeline_through_the_magics(kernel, peer):
    assert kernel.magic("%bp stage create_user transform").text == (
        "breakpoint 1 at stage create_user/transform — not verified yet (checked when a session starts)")
    assert kernel.magic(f"%dbg connect mycel {peer.url} --name pipe").text == "pipe: running"
    assert kernel.magic("%bp list").text == "breakpoint 1 at stage create_user/transform — verified"
    reply = peer.request("create_user", {"name": "Alice", "email": " ALICE@EXAMPLE.COM "})
    stop = kernel.magic("%dbg wait").text
    assert stop.startswith("paused at flow:create_user:") and "in transform() — breakpoint 1 [thread " in stop, stop
    where = kernel.magic("%dbg where").text.splitlines()
    assert where[0].startswith("→ #0 transform() at flow:create_user:")
    assert 'name = "Alice"' in kernel.magic("%dbg vars --scope input").text
    assert kernel.magic("%dbg eval input.name").text == '"Alice"'
    assert kernel.magic("%dbg next").text.startswith("paused at flow:create_user:")
    kernel.magic("%bp clear")
    assert kernel.magic("%dbg continue --no-wait").text == "running"
    assert reply.result(10)
    peer.call(peer.runtime.drop_clients())
    kernel.magic("import time; time.sleep(0.5)")
    assert kernel.magic("%dbg status").text.endswith("/debug): failed: connection_failed")
    assert kernel.magic("%dbg reconnect").text == "pipe reconnected: running"
    assert kernel.magic("%dbg stop").text == "pipe stopped"


def test_an_ez_program_through_the_magics(kernel):
    in_add = line_of(CALLS, "temp total")
    assert kernel.magic(f"%bp {CALLS}:{in_add}").text.startswith("breakpoint 1 at ")
    entry = kernel.magic(f"%dbg connect ez {CALLS} --ez {EZ} --name ez").text
    assert entry.startswith("ez: paused at ") and "— entry [thread" in entry, entry
    stop = kernel.magic("%dbg continue").text
    assert stop.startswith("paused at ") and f"calls.ez:{in_add} in add() — breakpoint 1" in stop, stop
    assert kernel.magic("%dbg eval a + b").text.startswith("error unsupported: ")
    assert "a = 10" in kernel.magic("%dbg vars").text
    kernel.magic("%bp clear")
    assert kernel.magic("%dbg continue").text == "exited with code 0"
    assert "done Ada" in kernel.magic("%dbg output").text


def test_bad_targets_of_connect_are_one_line_errors(kernel):
    assert kernel.magic("%dbg connect mycel ws://127.0.0.1:9/debug").text.startswith("error connection_failed: ")
    assert kernel.magic(f"%dbg connect ez {CALLS} --ez /no/such/ez").text.startswith("error connection_failed: ")
    assert kernel.magic("%dbg connect mycel").text.startswith("error invalid_request: connect mycel needs a URL.")


@pytest.mark.skipif(shutil.which("lldb-vscode-16") is None, reason="lldb-vscode-16 is not installed (lldb-16)")
def test_a_c_program_through_the_magics_with_lldb(kernel, tmp_path):
    folder = tempfile.mkdtemp(prefix="lldb-targets-")  # the leak check knows this folder's processes
    try:
        binary = os.path.join(folder, "squares")
        subprocess.run(["gcc", "-g", "-O0", "-o", binary, SQUARES], check=True, timeout=60)
        line = line_of(SQUARES, "square body")
        kernel.magic(f"%bp {SQUARES}:{line}")
        stop = kernel.magic(f"%dbg connect dap {binary} --name c").text
        assert stop.startswith("c: paused at ") and f"squares.c:{line} in square() — breakpoint 1" in stop, stop
        where = kernel.magic("%dbg where").text.splitlines()
        assert where[1] == f"      {line} │ int result = n * n; /* square body */"
        assert where[2].startswith("  #1 main() at ")
        assert kernel.magic("%dbg vars").text.splitlines()[0] == "n = 1  (int)"
        assert kernel.magic("%dbg next").text.startswith("paused at ")
        assert kernel.magic("%dbg eval result * 10").text == "10"
        kernel.magic("%bp clear")
        assert kernel.magic("%dbg continue").text == "exited with code 3"
        assert sorted(kernel.magic("%dbg output").text.splitlines()) == ["squares done", "total=14"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("fault", ["garbage", "oversized"])
def test_a_peer_that_breaks_its_protocol_is_a_one_line_protocol_error(kernel, fault):
    runtime = start_peer(fault=fault)
    try:
        cell = kernel.magic(f"%dbg connect mycel {runtime.url}")
        assert cell.text.startswith("error protocol_error: "), cell.text
        assert len(cell.text.splitlines()) == 1 and " Hint: " in cell.text
        row = kernel.magic("%dbg list").text.splitlines()[1].split()
        assert row[5:] == ["failed", "protocol_error", "-", runtime.url]
    finally:
        runtime.stop()


def test_a_mycel_rule_stop_shows_its_rule(kernel, peer):
    kernel.magic("%bp stage create_user transform rule 0")
    assert kernel.magic(f"%dbg connect mycel {peer.url}").text.endswith("running")
    reply = peer.request("create_user", {"name": "Alice", "email": " ALICE@EXAMPLE.COM "})
    stop = kernel.magic("%dbg wait").text.splitlines()
    assert stop[0].startswith("paused at flow:create_user:") and "in transform rule 0 (email)" in stop[0], stop
    line = stop[0].split("flow:create_user:")[1].split()[0]
    assert stop[1:] == [f"{line} │ email = lower(trim(input.email))"]
    kernel.magic("%bp clear")
    kernel.magic("%dbg continue --no-wait")
    assert reply.result(10)
    kernel.magic("%dbg stop")


def test_an_ez_stop_shows_its_line(kernel):
    in_add = line_of(CALLS, "temp total")
    kernel.magic(f"%bp {CALLS}:{in_add}")
    entry = kernel.magic(f"%dbg connect ez {CALLS} --ez {EZ}").text.splitlines()
    assert len(entry) == 2 and " │ " in entry[1], entry
    stop = kernel.magic("%dbg continue").text.splitlines()
    assert stop[1:] == [f"{in_add} │ temp total int = a + b"], stop
    kernel.magic("%bp clear")
    assert kernel.magic("%dbg continue").text == "exited with code 0"
