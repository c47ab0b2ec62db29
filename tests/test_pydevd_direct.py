"""Launched Python targets talking DAP straight to the relay (no debugpy adapter), against real debugpy targets."""

from __future__ import annotations

import os
import threading
import time

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.backends.debugpy.direct import PydevdDirectBackend
from jupyter_debug_relay.transports import procfs

PROGRAM = """
import sys

def scale(x, factor):
    y = x * factor  # body
    return y

def fail(value):
    raise ValueError(f"bad value {value}")  # raise

print("out line")
print("err line", file=sys.stderr)
name = input()
totals = [scale(i, 2) for i in range(5)]  # loop
try:
    {}["missing"]  # caught
except KeyError:
    pass
print("hello", name, totals)
if len(sys.argv) > 1:
    fail(42)
sys.exit(7)
"""


def launch(relay, program=None, **options):
    return relay.start(lambda events: PydevdDirectBackend(events, program=program, **options))


def children_of(pid: int) -> list[str]:
    """Command lines of the direct children of ``pid``."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        if procfs.parent(int(entry)) == pid:
            found.append(procfs.read_bytes(f"/proc/{entry}/cmdline").replace(b"\0", b" ").decode())
    return found


def test_breakpoint_inspect_evaluate_step_continue_and_exit_code(relay, write):
    app = write("app.py", PROGRAM)
    bp = relay.breakpoints.add(app, line_of(app, "# body"), condition="x == 3")
    session = launch(relay, app)
    session.send_input("ada\n")
    stop = session.wait_for_stop(15)
    assert (stop.reason, stop.frame.name, stop.frame.line, stop.breakpoint_ids) == (
        "breakpoint", "scale", bp.line, [bp.id])
    assert not any("debugpy.adapter" in cmd for cmd in children_of(os.getpid()))
    assert [f.name for f in session.stack()][:2] == ["scale", "<listcomp>"]
    locals_ = next(s for s in session.scopes() if s.name == "Locals")
    values = {v.name: v.value for v in session.variables(locals_.ref).items}
    assert values["x"] == "3" and values["factor"] == "2"
    assert session.evaluate("x * factor + 1").value == "7"
    with pytest.raises(RelayError) as info:
        session.evaluate("undefined_name")
    assert info.value.code == "evaluation_failed" and "undefined_name" in info.value.message
    stop = session.next()
    assert stop.reason == "step" and stop.frame.line == bp.line + 1
    assert session.evaluate("y").value == "6"
    relay.breakpoints.remove(bp.id)
    session.continue_(wait=False)
    with pytest.raises(RelayError) as info:
        session.wait_for_stop(15)
    assert info.value.code == "target_exited"
    assert session.exit_code == 7
    chunks = session.output().chunks
    assert "".join(c.text for c in chunks if c.category == "stdout") == "out line\nhello ada [0, 2, 4, 6, 8]\n"
    assert "".join(c.text for c in chunks if c.category == "stderr") == "err line\n"


def test_logpoint_hit_condition_and_set_variable(relay, write):
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# body"), log_message="scale got {x}")
    hit = relay.breakpoints.add(app, line_of(app, "# body") + 1, hit_condition="2")
    session = launch(relay, app)
    session.send_input("bob\n")
    stop = session.wait_for_stop(15)
    assert stop.breakpoint_ids == [hit.id] and session.evaluate("x").value == "1"
    locals_ = next(s for s in session.scopes() if s.name == "Locals")
    assert session.set_variable(locals_.ref, "y", "100").value == "100"
    assert "factor" in session.completions("fac")
    relay.breakpoints.remove(hit.id)
    session.continue_(wait=False)
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    chunks = session.output().chunks  # the logpoints' console lines may land between the program's writes
    logged = "".join(c.text for c in chunks if c.category == "console")
    assert logged == "".join(f"scale got {n}\n" for n in range(5))
    assert "hello bob [0, 100, 4, 6, 8]" in "".join(c.text for c in chunks if c.category == "stdout")


def test_exception_breakpoints_raised_and_uncaught(relay, write):
    app = write("app.py", PROGRAM)
    relay.breakpoints.exceptions("raised")
    session = launch(relay, app)
    session.send_input("x\n")
    stop = session.wait_for_stop(15)
    assert stop.reason == "exception" and stop.frame.line == line_of(app, "# caught")
    assert stop.exception.type == "KeyError"
    session.terminate()
    relay.breakpoints.exceptions("uncaught")
    session = launch(relay, app, args=["fail"])
    session.send_input("x\n")
    stop = session.wait_for_stop(15)
    assert stop.frame.line == line_of(app, "# raise")
    assert stop.exception.type == "ValueError" and stop.exception.message == "bad value 42"
    assert "ValueError: bad value 42" in stop.exception.traceback


def test_stop_on_entry_just_my_code_and_no_boot_frames(relay, write):
    app = write("lib_call.py", """
        import json
        data = json.dumps({"a": 1})  # call
        print(data)
    """)
    session = launch(relay, app, stop_on_entry=True)
    stop = session.wait_for_stop(15)
    assert stop.reason == "entry" and stop.frame.path == app and stop.frame.line == 1
    assert all("_nodelay_boot" not in (f.path or "") for f in session.stack())
    session.next()
    stop = session.step_in()  # json is not the user's code: stepping in goes over it
    assert stop.frame.path == app and stop.frame.line == line_of(app, "# call") + 1
    session.terminate()
    session = launch(relay, app, stop_on_entry=True, just_my_code=False)
    session.wait_for_stop(15)
    session.next()
    stop = session.step_in()
    assert stop.frame.path.endswith(os.path.join("json", "__init__.py"))
    session.terminate()


def test_pause_a_busy_target(relay, write):
    app = write("spin.py", """
        import time
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.001)  # spin
    """)
    session = launch(relay, app)
    time.sleep(0.3)
    stop = session.pause()
    assert stop.reason == "pause" and session.stack()
    session.terminate()
    assert session.state == "terminated"


def test_module_launch_args_env_and_cwd(relay, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/__main__.py", """
        import os, sys
        print(os.environ["GREETING"], os.getcwd(), sys.argv[1:])
    """)
    session = relay.start(lambda events: PydevdDirectBackend(
        events, module="pkg", args=["-v", "two words"], cwd=str(tmp_path), env={"GREETING": "hi"}))
    with pytest.raises(RelayError):
        session.wait_for_stop(15)
    assert session.exit_code == 0
    assert session.output().text == f"hi {tmp_path} ['-v', 'two words']\n"


def test_a_target_that_ends_before_debugpy_connects_says_so(relay, write, tmp_path):
    app = write("app.py", PROGRAM)
    write("site_dir/sitecustomize.py", "import os; os._exit(5)")
    env = {"PYTHONPATH": str(tmp_path / "site_dir")}
    with pytest.raises(RelayError) as info:
        relay.start(lambda events: PydevdDirectBackend(events, program=app, env=env))
    assert info.value.code == "adapter_failed" and "exited with code 5" in info.value.message


def test_attach_and_subprocesses_are_refused_plainly(relay, write):
    app = write("app.py", PROGRAM)
    for options in ({"port": 5678}, {"pid": os.getpid()}, {"program": app, "subprocess": True}):
        with pytest.raises(RelayError) as info:
            relay.start(lambda events, options=options: PydevdDirectBackend(events, **options))
        assert info.value.code in ("invalid_request", "unsupported")


def test_killed_target_ends_the_session_with_its_signal(relay, write):
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# body"))
    session = launch(relay, app)
    session.send_input("x\n")
    session.wait_for_stop(15)
    os.killpg(session.info().pid, 9)
    deadline = time.monotonic() + 10
    while session.state != "terminated" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session.state == "terminated" and session.exit_code == -9


@pytest.mark.parametrize("subprocess_", [False, True], ids=["fast path", "debugpy adapter"])
def test_twenty_evaluates_at_once_are_answered_together(relay, write, subprocess_):
    """pydevd's paused thread lost the wake-up of a command posted with another: each waited 0.2 s more (how long
    they take at once is server_bench's crowd of clients)."""
    app = write("app.py", "value = 21\nprint(value * 2)  # stop\n")
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app, subprocess=subprocess_)
    session.wait_for_stop(30)
    session.evaluate("value")  # the first evaluate of a stop sets up what the others share
    answers: dict[int, str] = {}

    def evaluate(n: int) -> None:
        answers[n] = session.evaluate(f"value + {n}").value

    threads = [threading.Thread(target=evaluate, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert answers == {n: str(21 + n) for n in range(20)}


def test_a_stop_brings_its_frame_with_it(relay, write, monkeypatch):
    """The boot sends a stopping thread's top frame with the stop: steps and hits ask for no stack, and the frame
    is the one a stack request gives."""
    from jupyter_debug_relay.protocols.dap import DapChannel

    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# body"))
    session = launch(relay, app)
    session.send_input("ann\n")
    first = session.wait_for_stop(30)
    asked: list[str] = []
    send = DapChannel.send
    monkeypatch.setattr(DapChannel, "send", lambda self, m: asked.append(m.get("command")) or send(self, m))
    stops = [session.next(), session.next(), session.continue_()]
    assert "stackTrace" not in asked and asked.count("next") == 2
    assert [s.frame.line for s in stops] == [first.frame.line + 1, line_of(app, "# loop"), first.frame.line]
    assert [s.frame.name for s in stops] == ["scale", "<listcomp>", "scale"]
    top = session.stack()[0]
    assert (top.id, top.name, top.path, top.line) == (stops[-1].frame.id, "scale", app, first.frame.line)
    session.terminate()


def test_what_the_boot_could_not_do_reaches_the_log_and_the_output(relay, write, caplog):
    """The boot reports a hook it could not add (or a pending breakpoint it could not bind) instead of passing."""
    app = write("app.py", """
        import sys
        boot = sys.modules["_jupyter_debug_relay_boot"]
        try:
            raise LookupError("no such attribute in this pydevd")
        except LookupError as error:
            boot.could_not("add stack_with_every_stop to _pydevd_bundle.pydevd_net_command_factory_json", error)
        print("the program goes on")
    """)
    session = relay.launch(app)
    with pytest.raises(RelayError):
        session.wait_for_stop(15)  # it runs to its end
    said = ("could not add stack_with_every_stop to _pydevd_bundle.pydevd_net_command_factory_json "
            "(LookupError: no such attribute in this pydevd)")
    assert said in session.output().text and "the program goes on" in session.output().text
    assert any(said in record.getMessage() for record in caplog.records), caplog.text
