"""Launching, attaching, restarting and ending debugpy sessions, with the bad inputs of each."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from conftest import line_of, wait_until

from jupyter_debug_relay import Relay, RelayError
from jupyter_debug_relay.transports import procfs
from tests import targets

APP = """
import sys

def compute(values):
    total = 0
    for v in values:
        total += v  # add
    return total

print("start")
result = compute([1, 2, 3])
print("result", result)
sys.exit(3 if len(sys.argv) > 1 else 0)
"""


@pytest.mark.smoke
def test_launch_runs_to_the_end_with_its_exit_code_and_output(relay, write):
    app = write("app.py", APP)
    session = relay.launch(app, args=["x"])
    with pytest.raises(RelayError) as info:
        session.wait_for_stop(15)
    assert info.value.code == "target_exited"
    assert session.state == "terminated"
    assert session.exit_code == 3
    assert session.output().text == "start\nresult 6\n"


def test_stop_on_entry_then_step_to_the_first_statement(relay, write):
    app = write("app.py", APP)
    session = relay.launch(app, stop_on_entry=True)
    stop = session.wait_for_stop(10)
    assert stop.reason == "entry"
    assert stop.frame.path == app and stop.frame.line == 1
    assert session.next().frame.line == 3


@pytest.mark.smoke
def test_breakpoint_stop_names_place_and_breakpoint(relay, write):
    app = write("app.py", APP)
    bp = relay.breakpoints.add(app, line_of(app, "# add"))
    session = relay.launch(app)
    stop = session.wait_for_stop(10)
    assert (stop.reason, stop.frame.name, stop.frame.line) == ("breakpoint", "compute", bp.line)
    assert stop.breakpoint_ids == [bp.id]
    assert relay.breakpoints.get(bp.id).verified


def test_module_launch_with_args_env_and_cwd(relay, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/__main__.py", """
        import os, sys
        print(os.environ["GREETING"], os.getcwd(), sys.argv[1:])
    """)
    session = relay.launch(module="pkg", args=["-v", "two words"], cwd=str(tmp_path), env={"GREETING": "hi"})
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    assert session.exit_code == 0
    assert session.output().text == f"hi {tmp_path} ['-v', 'two words']\n"


NO_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # this environment's plugins (hypothesis, xdist ...) load slowly


def test_pytest_module_stops_in_the_failing_test(relay, write, tmp_path):
    test_file = write("test_calc.py", """
        def test_sum():
            values = [1, 2, 3]
            assert sum(values) == 7
    """)
    relay.breakpoints.add(test_file, 3)
    session = relay.launch(module="pytest", args=["-x", "-q", "-p", "no:cacheprovider", f"{test_file}::test_sum"],
                           cwd=str(tmp_path), env=NO_PLUGINS)
    stop = session.wait_for_stop(60)
    assert stop.frame.name == "test_sum" and stop.frame.line == 3
    assert session.evaluate("sum(values)").value == "6"
    session.continue_(wait=False)
    with pytest.raises(RelayError):
        session.wait_for_stop(30)
    assert session.exit_code == 1


def test_target_sees_its_own_sys_path_and_environment(relay, write, tmp_path):
    """The speed-floor bootstrap leaves sys.path, PYTHONPATH and sitecustomize as they would be."""
    app = write("show.py", """
        import json, os, sys
        print(json.dumps({"path0": sys.path[0], "pythonpath": os.environ.get("PYTHONPATH"),
                          "site": "sitecustomize" in sys.modules and sys.modules["sitecustomize"].__file__}))
    """)
    plain = subprocess.run([sys.executable, app], capture_output=True, text=True, check=True).stdout
    session = relay.launch(app)
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    assert session.output().text == plain


@pytest.mark.parametrize("subprocess_", [False, True], ids=["direct", "adapter"])
def test_target_and_its_children_see_the_environment_of_a_plain_run(relay, write, monkeypatch, subprocess_):
    """Nothing of the relay's stays in os.environ (its token, the PYTHONUNBUFFERED it adds); debugpy's own two do."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    app = write("env.py", """
        import json, os, subprocess, sys
        code = "import json, os; print(json.dumps(dict(os.environ)))"
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        print(json.dumps({"self": dict(os.environ), "child": json.loads(child)}))
    """)
    plain_run = subprocess.run([sys.executable, app], capture_output=True, text=True, check=True,
                               env=dict(os.environ))  # os.environ, not the C environ something putenv'd into
    plain = json.loads(plain_run.stdout)
    session = relay.launch(app, subprocess=subprocess_)
    with pytest.raises(RelayError):
        session.wait_for_stop(30)
    seen = json.loads("".join(c.text for c in session.output().chunks if c.category == "stdout"))
    debugpys_own = {"DEBUGPY_RUNNING": "true", "PYDEVD_USE_FRAME_EVAL": "NO"}  # debugpy sets them in any debuggee
    assert seen["self"] == {**plain["self"], **debugpys_own}
    assert seen["child"] == {**plain["child"], **debugpys_own}


def test_wrong_path_is_file_not_found(relay, tmp_path):
    with pytest.raises(RelayError) as info:
        relay.launch(str(tmp_path / "missing.py"))
    assert info.value.code == "file_not_found"
    assert "missing.py" in info.value.message and info.value.hint


def test_syntax_error_names_file_line_and_text_and_can_be_launched_again(relay, write):
    app = write("broken.py", "x = 1\nif x = 2:\n    pass\n")
    with pytest.raises(RelayError) as info:
        relay.launch(app)
    error = info.value
    assert error.code == "syntax_error"
    assert error.details["line"] == 2 and error.details["text"] == "if x = 2:" and error.details["offset"]
    failed = relay.sessions[-1]
    assert failed.state == "failed"
    write("broken.py", "x = 1\nif x == 2:\n    pass\n")
    failed.restart()
    with pytest.raises(RelayError) as info:
        failed.wait_for_stop(15)
    assert info.value.code == "target_exited" and failed.exit_code == 0


def test_an_interpreter_that_cannot_run_the_target_is_said_clearly(relay, write, tmp_path):
    app = write("app.py", APP)
    old = tmp_path / "old-python"  # answers the probe as Python 3.7, older than debugpy runs on
    old.write_text('#!/bin/sh\necho \'{"version": [3, 7], "prefix": "/old", "venv": false}\'\n')
    old.chmod(0o755)
    with pytest.raises(RelayError) as info:
        relay.launch(app, python=str(old))
    assert info.value.code == "unsupported" and "Python 3.7" in info.value.message
    with pytest.raises(RelayError) as info:
        relay.launch(app, python="/bin/false")
    assert info.value.code == "adapter_failed" and "did not run as a Python interpreter" in info.value.message
    with pytest.raises(RelayError) as info:
        relay.launch(app, python="/no/such/python")
    assert info.value.code == "file_not_found"


def test_another_interpreter_with_debugpy_runs_the_target(relay, write):
    app = write("app.py", APP)
    session = relay.launch(app, python=sys.executable)
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    assert session.exit_code == 0


def test_unknown_session_is_session_not_found(relay):
    with pytest.raises(RelayError) as info:
        relay.get("nope")
    assert info.value.code == "session_not_found" and "launch one" in info.value.hint


def test_calls_in_the_wrong_state_are_not_paused(relay, write):
    app = write("loop.py", """
        import time
        while True:
            time.sleep(0.01)
    """)
    session = relay.launch(app)
    for call in (session.next, session.stack, session.scopes):
        with pytest.raises(RelayError) as info:
            call()
        assert info.value.code == "not_paused"
    stop = session.pause()
    assert stop.reason == "pause"
    session.terminate()
    assert session.state == "terminated"
    with pytest.raises(RelayError) as info:
        session.next()
    assert info.value.code == "target_exited"


def test_restart_starts_the_target_again_with_the_same_breakpoints(relay, write):
    app = write("app.py", APP)
    relay.breakpoints.add(app, line_of(app, "# add"))
    session = relay.launch(app)
    first = session.wait_for_stop(10)
    session.restart()
    again = session.wait_for_stop(10)
    assert again.frame.line == first.frame.line
    assert session.evaluate("total").value == "0"
    marks = [c for c in session.output().chunks if c.category == "console"]
    assert [c.text for c in marks] == [f"--- {session.name} restarted ---\n"]  # where the new run's output begins


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _service(write) -> tuple[str, str]:
    return write("service.py", """
        import time
        counter = 0
        while True:
            counter += 1  # tick
            with open(__file__ + ".count", "w") as f:
                f.write(str(counter))
            time.sleep(0.01)
    """), "# tick"


def counted(service: str) -> int:
    """How far the service has counted (it writes its counter beside itself at every turn)."""
    try:
        with open(service + ".count") as f:
            return int(f.read() or 0)
    except FileNotFoundError:
        return 0


@pytest.mark.every_target
def test_attach_by_port_breaks_inspects_and_detach_leaves_target_running(relay, write, target_python):
    service, marker = _service(write)
    port = _free_port()
    target = subprocess.Popen([*targets.debugpy_command(target_python), "--listen", f"127.0.0.1:{port}", service],
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                session = relay.attach(port=port)
                break
            except RelayError as exc:  # the server is still starting
                assert exc.code in ("connection_failed", "adapter_failed")
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        bp = relay.breakpoints.add(service, line_of(service, marker))
        stop = session.wait_for_stop(10)
        assert stop.frame.line == bp.line
        session.evaluate("print('hello from the service')")
        wait_until(lambda: "hello from the service" in session.output().text, 5,  # through debugpy
                   "the service's output")
        first = int(session.evaluate("counter").value)
        session.continue_()  # the loop comes round to the breakpoint again
        assert int(session.evaluate("counter").value) == first + 1
        relay.breakpoints.remove(bp.id)
        session.detach()
        assert session.state == "terminated"
        then = counted(service)
        wait_until(lambda: counted(service) > then + 5, what="the detached target to go on counting")
        assert target.poll() is None, "detach must leave the target running"
    finally:
        os.killpg(target.pid, 9)
        target.wait(5)


def test_attach_to_a_closed_port_is_connection_failed(relay):
    with pytest.raises(RelayError) as info:
        relay.attach(port=_free_port())
    assert info.value.code == "connection_failed" and "127.0.0.1" in info.value.message


def test_killed_adapter_fails_the_session_fast_and_spares_the_others(relay, write):
    app = write("app.py", APP)
    relay.breakpoints.add(app, line_of(app, "# add"))
    victim, other = relay.launch(app, subprocess=True), relay.launch(app)  # subprocess=True runs an adapter
    victim.wait_for_stop(10)
    other.wait_for_stop(10)
    os.kill(victim._session.backend.adapter_proc.pid, 9)
    with pytest.raises(RelayError) as info:
        victim.next(timeout=5)
    assert info.value.code == "adapter_failed"  # at once: not the step's timeout
    assert victim.state == "failed"
    assert other.next().frame.name == "compute"


def test_target_that_exits_during_a_step_reports_the_end(relay, write):
    app = write("short.py", """
        import os
        x = 1
        os._exit(4)
    """)
    relay.breakpoints.add(app, 3)
    session = relay.launch(app)
    session.wait_for_stop(10)
    assert session.next() is None  # the end, as the answer of the step: not an error
    assert session.state == "terminated" and session.exit_code == 4
    with pytest.raises(RelayError) as info:  # a step of a session that has ended is one
        session.next()
    assert info.value.code == "target_exited" and info.value.details["exit_code"] == 4


def test_ten_sessions_at_once(relay, write):
    app = write("app.py", APP)
    bp = relay.breakpoints.add(app, line_of(app, "# add"))
    sessions = [relay.launch(app, name=f"run{i}") for i in range(10)]
    for session in sessions:
        assert session.wait_for_stop(30).frame.line == bp.line
    for session in sessions:
        assert session.next().frame.line in (bp.line - 1, bp.line)
    assert sorted(s.name for s in relay.sessions) == sorted(f"run{i}" for i in range(10))
    assert relay.get("run3") == sessions[3]


def test_relay_close_reaps_every_process(write):
    app = write("app.py", APP)
    relay = Relay()
    relay.breakpoints.add(app, line_of(app, "# add"))
    session = relay.launch(app)
    session.wait_for_stop(10)
    pid = session.info().pid
    relay.close()  # returns once every process it started has ended
    assert pid and procfs.state(pid) in (None, "Z")


def test_idle_session_is_stopped(write):
    app = write("app.py", APP)
    with Relay(idle_timeout=0.5) as relay:
        relay.breakpoints.add(app, line_of(app, "# add"))
        session = relay.launch(app)
        session.wait_for_stop(10)
        wait_until(lambda: session.state == "terminated", 10, "the idle session to end")


@pytest.mark.every_target
def test_subprocess_of_the_target_becomes_a_child_session(relay, write):
    child = write("child.py", """
        x = 41
        print("child", x + 1)  # child
    """)
    parent = write("parent.py", f"""
        import subprocess, sys
        out = subprocess.run([sys.executable, {child!r}], capture_output=True, text=True)
        print("parent got", out.stdout.strip())
    """)
    relay.breakpoints.add(child, line_of(child, "# child"))
    session = relay.launch(parent, subprocess=True)
    wait_until(lambda: len(relay.sessions) >= 2, 20, "the child session")
    kid = relay.sessions[1]
    assert kid.info().parent == session.id
    stop = kid.wait_for_stop(15)
    assert stop.frame.path == child and kid.evaluate("x").value == "41"
    kid.continue_(wait=False)
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    assert session.output().text == "parent got child 42\n"
