"""The generic DAP backend against a real second adapter (lldb-vscode-16 on a C program), and the adapter registry."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.backends.dap import registry

LLDB = "lldb-vscode-16"
PROGRAMS = Path(__file__).resolve().parent / "programs"
SOURCE = str(PROGRAMS / "squares.c")
needs_lldb = pytest.mark.skipif(shutil.which(LLDB) is None,
                                reason=f"{LLDB} is not installed (apt-get install lldb-16)")


@pytest.fixture(scope="module")
def squares():
    """squares.c built with gcc -g -O0, in a folder whose name marks its process for the leak check."""
    folder = tempfile.mkdtemp(prefix="lldb-targets-")
    binary = os.path.join(folder, "squares")
    subprocess.run(["gcc", "-g", "-O0", "-o", binary, SOURCE], check=True, timeout=60)
    yield binary
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def own_registry(tmp_path, monkeypatch):
    """Each test reads its own (absent unless written) user registry, never the machine's."""
    path = tmp_path / "adapters.json"
    monkeypatch.setenv(registry.ENV_VAR, str(path))
    return path


@needs_lldb
def test_breakpoint_stack_locals_step_evaluate_output_and_exit_code(relay, squares):
    line = line_of(SOURCE, "square body")
    bp = relay.breakpoints.add(SOURCE, line)
    session = relay.connect_dap(program=squares, name="squares")
    assert session.backend == "dap" and session.adapter.startswith("lldb")
    stop = session.wait_for_stop(15)
    assert (stop.reason, stop.frame.name, stop.frame.line) == ("breakpoint", "square", line)
    assert stop.breakpoint_ids == [bp.id] and relay.breakpoints.get(bp.id).verified
    assert [f.name for f in session.stack()[:2]] == ["square", "main"]
    scopes = session.scopes()
    assert scopes[0].name == "Locals"
    local = {v.name: (v.value, v.type) for v in session.variables(scopes[0].ref).items}
    assert local["n"] == ("1", "int") and set(local) == {"n", "result"}
    step = session.next()
    assert (step.reason, step.frame.line) == ("step", line + 1)
    assert session.evaluate("result * 10").value == "10"
    assert session.evaluate("n + 41", context="watch").value == "42"
    with pytest.raises(RelayError) as wrong:
        session.evaluate("no_such_name + 1")
    assert wrong.value.code == "evaluation_failed" and "undeclared identifier 'no_such_name'" in wrong.value.message
    relay.breakpoints.clear()
    assert session.continue_(timeout=15) is None
    out = session.output()
    assert session.exit_code == 3 and session.state == "terminated"
    streams = {category: "".join(c.text for c in out.chunks if c.category == category)
               for category in ("stdout", "stderr")}
    assert streams == {"stdout": "total=14\n", "stderr": "squares done\n"}


@needs_lldb
def test_function_conditional_and_hit_count_breakpoints(relay, squares):
    relay.breakpoints.add_function("square", condition="n == 3")
    session = relay.connect_dap(program=squares)
    stop = session.wait_for_stop(15)
    assert stop.frame.name == "square" and session.evaluate("n").value == "3"
    relay.breakpoints.clear()
    relay.breakpoints.add(SOURCE, line_of(SOURCE, "loop body"), hit_condition="2")
    session.restart()  # lldb-vscode has no restart request: the relay launches the program afresh
    stop = session.wait_for_stop(15)
    assert stop.frame.name == "main" and session.evaluate("i").value == "2"
    session.terminate()
    assert session.state == "terminated"


@needs_lldb
def test_set_variable_changes_what_the_program_computes(relay, squares):
    relay.breakpoints.add(SOURCE, line_of(SOURCE, "print total"))
    session = relay.connect_dap(program=squares)
    session.wait_for_stop(15)
    local = session.scopes()[0]
    assert session.set_variable(local.ref, "total", "13").value == "13"
    relay.breakpoints.clear()
    assert session.continue_(timeout=15) is None
    assert session.exit_code == 1 and "total=13" in session.output().text


@needs_lldb
def test_stdin_reaches_the_program(relay, squares):
    relay.breakpoints.add(SOURCE, line_of(SOURCE, "fgets(name"))
    session = relay.connect_dap(adapter="lldb", program=squares, args=["--ask"])  # a registry name
    session.wait_for_stop(15)
    session.send_input("lldb\n")
    relay.breakpoints.clear()
    assert session.continue_(timeout=15) is None
    assert "hello lldb\n" in session.output().text


@needs_lldb
def test_what_the_adapter_lacks_is_unsupported_and_the_session_lives_on(relay, squares):
    relay.breakpoints.add(SOURCE, line_of(SOURCE, "square body"))
    session = relay.connect_dap(adapter=[LLDB], launch={"program": squares})
    session.wait_for_stop(15)
    assert not session.info().capabilities.get("supportsReadMemoryRequest")
    lacking = {
        "supportsCompletionsRequest": lambda: session.completions("res"),
        "supportsReadMemoryRequest": lambda: session.read_memory("0x1000", 4),
        "supportsWriteMemoryRequest": lambda: session.write_memory("0x1000", b"\0"),
        "supportsDisassembleRequest": lambda: session.disassemble("0x1000"),
        "supportsDataBreakpoints": lambda: session.data_breakpoint_info("result"),
        "supportsInstructionBreakpoints": lambda: session.set_instruction_breakpoint("0x1000"),
        "supportsLoadedSourcesRequest": lambda: session.loaded_sources(),
    }
    for capability, call in lacking.items():
        with pytest.raises(RelayError) as refused:
            call()
        assert refused.value.code == "unsupported"
        assert LLDB in refused.value.message and capability in refused.value.message
    assert session.evaluate("n").value == "1"  # none of them reached (and crashed) the adapter
    assert os.path.basename(squares) in [m["name"] for m in session.modules()]
    # The escape hatch sends any request as it is: lldb-vscode answers completions without advertising them.
    frame = session.stack()[0]
    answer = session.custom_request("completions", {"text": "resu", "column": 5, "frameId": frame.id})
    assert "result" in [t["text"] for t in answer["targets"]]
    session.terminate()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@needs_lldb
def test_an_adapter_that_listens_on_a_port(relay, squares):
    relay.breakpoints.add(SOURCE, line_of(SOURCE, "square body"))
    port = _free_port()
    session = relay.connect_dap(adapter=[LLDB, "--port", str(port)], port=port, program=squares)
    assert session.wait_for_stop(15).frame.name == "square"
    session.terminate()
    assert session.state == "terminated"
    port = _free_port()  # an adapter started elsewhere, already listening
    server = subprocess.Popen([LLDB, "--port", str(port)], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                session = relay.connect_dap(port=port, launch={"program": squares})
                break
            except RelayError as exc:
                assert exc.code == "connection_failed" and f"127.0.0.1:{port}" in exc.message
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert session.adapter == f"the adapter at 127.0.0.1:{port}"
        assert session.wait_for_stop(15).frame.name == "square"
        session.terminate()
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(5)


def test_a_missing_adapter_binary_names_the_path_and_how_to_install(relay, squares, own_registry):
    with pytest.raises(RelayError) as missing:
        relay.connect_dap(adapter=["/opt/none/lldb-dap"], program=squares)
    error = missing.value
    assert error.code == "connection_failed" and "/opt/none/lldb-dap" in error.message
    assert error.details["path"] == "/opt/none/lldb-dap" and "apt-get install lldb" in error.hint
    own_registry.write_text(json.dumps({"lldb": {"command": ["no-such-lldb-dap"], "fileTypes": ["binary"],
                                                 "install": "build it from the LLVM sources"}}))
    with pytest.raises(RelayError) as missing:
        relay.connect_dap(program=squares)
    assert missing.value.code == "connection_failed" and "no-such-lldb-dap" in missing.value.message
    assert missing.value.hint == "Install it: build it from the LLVM sources."
    assert relay.sessions == []


def test_the_registry_picks_an_adapter_by_file_type(squares, write, tmp_path):
    specs = registry.load()
    assert registry.file_type(squares) == "binary"
    assert registry.select(squares, specs).name == "lldb"
    assert registry.select(write("app.py", "print(1)\n"), specs).name == "debugpy"
    for name in ("notes.xyz", "report.txt"):
        with pytest.raises(RelayError) as unknown:
            registry.select(write(name, "hello\n"), specs)
        assert unknown.value.code == "invalid_request" and "adapters.json" in unknown.value.hint
    old = tmp_path / "old" / "bin"
    old.mkdir(parents=True)
    for version in ("9", "16", "15"):
        (old / f"lldb-vscode-{version}").write_text("#!/bin/sh\n")
        (old / f"lldb-vscode-{version}").chmod(0o755)
    lldb = registry.named("lldb", specs)
    path = os.environ["PATH"]
    try:
        os.environ["PATH"] = str(old)
        assert lldb.resolve() == [str(old / "lldb-vscode-16")]  # the highest version found on PATH
    finally:
        os.environ["PATH"] = path


def test_a_python_script_goes_to_debugpy_through_the_generic_backend(relay, write):
    script = write("hello.py", """
        total = 0
        for i in range(3):
            total += i  # add
        print("total", total)
    """)
    relay.breakpoints.add(script, line_of(script, "# add"), condition="i == 2")
    session = relay.connect_dap(program=script)
    assert session.backend == "dap" and session.adapter == f"debugpy ({os.path.basename(sys.executable)})"
    stop = session.wait_for_stop(15)
    assert stop.frame.line == 3 and session.evaluate("total").value == "1"
    relay.breakpoints.clear()
    assert session.continue_(timeout=15) is None
    assert session.exit_code == 0 and "total 3" in session.output().text


@needs_lldb
def test_a_user_registry_entry_comes_first_with_its_launch_defaults(relay, squares, own_registry):
    own_registry.write_text(json.dumps({"my-lldb": {
        "command": [LLDB], "fileTypes": ["binary"], "adapterID": "lldb", "envFormat": "list",
        "launch": {"stopOnEntry": True}}}))
    session = relay.connect_dap(program=squares, env={"SQUARES_MODE": "test"})
    assert session.adapter == f"my-lldb ({LLDB})"
    stop = session.wait_for_stop(15)
    assert stop.reason == "entry" and stop.exception is None and session.state == "paused"
    with open(f"/proc/{session.info().pid}/environ", "rb") as f:  # env went as lldb's K=V list
        assert b"SQUARES_MODE=test" in f.read().split(b"\0")
    session.terminate()
    own_registry.write_text("{not json")
    with pytest.raises(RelayError) as broken:
        relay.connect_dap(program=squares)
    assert broken.value.code == "invalid_request" and str(own_registry) in broken.value.message


def test_bad_connect_dap_arguments(relay, squares, tmp_path):
    for kwargs, code in (
        (dict(launch={}, attach={}), "invalid_request"),
        (dict(), "invalid_request"),
        (dict(program=str(tmp_path / "nope")), "file_not_found"),
    ):
        with pytest.raises(RelayError) as bad:
            relay.connect_dap(**kwargs)
        assert bad.value.code == code


@needs_lldb
def test_an_adapter_that_dies_fails_the_session_and_leaves_nothing_behind(relay, squares):
    relay.breakpoints.add(SOURCE, line_of(SOURCE, "square body"))
    session = relay.connect_dap(program=squares)
    session.wait_for_stop(15)
    with pytest.raises(RelayError) as died:  # lldb-vscode-16 crashes on a readMemory request
        session.custom_request("readMemory", {"memoryReference": "0x1000", "count": 4})
    assert died.value.code in ("adapter_failed", "protocol_error")  # the crash may cut its last message short
    deadline = time.monotonic() + 10
    while session.state != "failed" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session.state == "failed" and session.info().error["code"] == "adapter_failed"
    with pytest.raises(RelayError) as after:
        session.evaluate("n")
    assert after.value.code == "adapter_failed" and session.name in after.value.message


@needs_lldb
def test_a_c_condition_is_the_adapters_to_judge_and_stops_where_it_holds(relay, tmp_path):
    source = str(PROGRAMS / "buffers.c")
    binary = str(tmp_path / "buffers")
    subprocess.run(["gcc", "-g", "-O0", "-o", binary, source], check=True, timeout=60)
    line_bp = relay.breakpoints.add(source, line_of(source, "weigh body"), condition="p->len > 3")
    func_bp = relay.breakpoints.add_function("weigh", condition="p->len > 6")
    assert line_bp.status == func_bp.status == "pending"
    session = relay.connect_dap(program=binary)
    stop = session.wait_for_stop(15)
    assert stop.frame.name == "weigh" and session.evaluate("p->len").value == "5"
    assert relay.breakpoints.get(line_bp.id).status == "verified"
    assert relay.breakpoints.get(func_bp.id).status == "verified"
    stop = session.continue_(timeout=15)  # 2 fails both conditions; on the 7 both hold, at the same line
    assert stop.frame.name == "weigh" and session.evaluate("p->len").value == "7"
    relay.breakpoints.clear()
    assert session.continue_(timeout=15) is None and session.state == "terminated"
