"""The magics in real kernels: the debug-relay kernel spec and python3 with %load_ext, against debugpy targets."""

from __future__ import annotations

import re
import time

import pytest

from jupyter_debug_relay.kernel import kernelspec
from jupyter_debug_relay.transports import procfs
from tests.conftest import line_of, wait_until
from tests.kernels import APP, UID, Kernel
from tests.server_fixtures import debugpy_service

LOOP = """
import time
n = 0
while True:
    n += 1  # tick
    time.sleep(0.01)
"""


@pytest.fixture
def paused(kernel, write) -> str:
    """APP launched in the kernel and paused at its accumulate line; returns its path."""
    app = write("app.py", APP)
    kernel.magic(f"%bp app.py:{line_of(app, '# accumulate')}")
    assert "paused at" in kernel.magic("%dbg launch app.py").text
    return app


def alive(pid: int) -> bool:
    return procfs.state(pid) not in (None, "Z")


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_debug_relay_kernelspec_preloads_the_extension(tmp_path, monkeypatch):
    kernelspec.install(prefix=str(tmp_path / "prefix"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "prefix" / "share" / "jupyter"))
    k = Kernel("debug-relay", cwd=str(tmp_path))
    try:
        assert k.magic("%bp list").text == "no breakpoints (add one with `%bp FILE:LINE`)"
        assert k.magic("%dbg list").text.startswith("no sessions")
    finally:
        k.close()


@pytest.mark.smoke
def test_the_quickstart_sequence_reads_like_a_debugger(kernel, tmp_path, write):
    app = write("app.py", APP)
    line, loop, call = line_of(app, "# accumulate"), line_of(app, "for i, x"), line_of(app, "result = compute")
    bp = kernel.magic(f'%bp app.py:{line} if i == 2 and data["text"] == "a#b"').text
    assert bp == f'breakpoint 1 at app.py:{line} if i == 2 and data["text"] == "a#b" — not verified yet ' \
                 "(checked when a session starts)"
    launched = kernel.magic("%debug_session launch app.py")
    assert launched.text.splitlines() == [f"s1: paused at app.py:{line} in compute() — breakpoint 1 [thread 1]",
                                          f"{line} │ total += x * i  # accumulate"]
    assert "→" in launched.html and "total += x * i" in launched.html  # the source excerpt marks the line
    assert kernel.magic("%bp list").text == f'breakpoint 1 at app.py:{line} if i == 2 and data["text"] == "a#b"' \
                                            " — verified"
    where = kernel.magic("%dbg where")
    assert where.text.splitlines() == [f"→ #0 compute() at app.py:{line}",
                                       f"      {line} │ total += x * i  # accumulate",
                                       f"  #1 <module>() at app.py:{call}",
                                       f"      {call} │ result = compute([3, 4, 5, 6])"]
    assert "<table>" in where.html
    assert kernel.magic("%dbg vars").text.splitlines() == [
        "i = 2  (int)", "items = [3, 4, 5, 6]  (list)", "total = 4  (int)", "x = 5  (int)"]
    assert "0 = 3  (int)" in kernel.magic("%dbg vars items").text
    assert kernel.magic("%dbg eval total * 10").text == "40"
    assert kernel.magic("%dbg next").text == f"paused at app.py:{loop} in compute() — step [thread 1]\n" \
                                             f"{loop} │ for i, x in enumerate(items):"
    assert kernel.magic("%dbg wait").text.splitlines()[1] == f"{loop} │ for i, x in enumerate(items):"
    assert kernel.magic("%dbg set total = 100").text == "100"
    assert kernel.magic("%dbg eval total").text == "100"
    assert kernel.magic("%dbg frame 1").text == f"frame #1: <module>() at app.py:{call}\n" \
                                                f"{call} │ result = compute([3, 4, 5, 6])"
    assert kernel.magic("%dbg where").text.splitlines()[2].startswith("→ #1")
    assert kernel.magic("%dbg eval data['name']").text == "'bob'"  # evaluated in the selected frame
    assert kernel.magic("%dbg pull data --as d").text == "pulled data into d (dict)"
    assert kernel.magic("d == {'a': [1, 2, 3], 'name': 'bob', 'text': 'a#b'}").text == "True"
    assert kernel.magic("%dbg status").text == f"s1 (debugpy, app.py): paused at app.py:{loop} in compute() — " \
                                               "step [thread 1]"
    assert kernel.magic("%dbg threads").text == "* 1 MainThread (stopped)"
    assert kernel.magic("%bp rm 1").text == "removed breakpoint 1"
    assert kernel.magic("%dbg continue").text == "exited with code 3"
    assert kernel.magic("%dbg output").text == "start\nresult 118"
    assert kernel.magic("%dbg output --tail 1").text == "result 118"
    lines = kernel.magic("%dbg list").text.splitlines()
    assert lines[0].split() == ["CUR", "ID", "UID", "NAME", "BACKEND", "STATE", "DETAIL", "AT", "TARGET"], lines
    row = lines[1].split()
    assert re.fullmatch(UID, row[2]) and row[:2] + row[3:] == ["*", "s1", "-", "debugpy", "terminated", "exit=3",
                                                             "-", "app.py"], lines
    result = kernel.magic("_r = %dbg next\nprint(_r.error.code, _r.ok)")
    assert result.streams.strip() == "target_exited False"
    assert kernel.magic("%dbg stop").text == "s1 had already ended (exit code 3)"


def test_result_objects_carry_the_data(kernel, write):
    app = write("app.py", APP)
    kernel.magic(f"%bp app.py:{line_of(app, '# accumulate')}")
    kernel.magic("_stop = %debug_session launch app.py")
    out = kernel.magic("print(_stop.stop.reason, _stop.frame.name, _stop.frame.line, _stop.state)").streams
    assert out.split() == ["breakpoint", "compute", str(line_of(app, "# accumulate")), "paused"]
    out = kernel.magic("_w = %dbg where\n_v = %dbg vars\nprint(len(_w.frames), _v['items'].type, _v.total)").streams
    assert out.split() == ["2", "list", "4"]
    kernel.magic("%dbg stop")


def test_paths_with_spaces_and_arguments_after_the_double_dash(kernel, write):
    write("my app/echo args.py", "import sys\nprint(sys.argv[1:])\nx = 1\n")
    kernel.magic('%bp "my app/echo args.py":3')
    assert kernel.magic('%dbg launch "my app/echo args.py" -- --flag "two words" x==1').text == \
        "s1: paused at my app/echo args.py:3 in <module>() — breakpoint 1 [thread 1]\n3 │ x = 1"
    assert kernel.magic("%dbg output").text == "['--flag', 'two words', 'x==1']"
    kernel.magic("%dbg stop")


def test_stepping_waits_then_says_still_running_and_wait_and_pause_work(kernel, write):
    write("loop.py", LOOP)
    started = kernel.magic("%dbg launch --timeout 0.5 loop.py")
    assert started.text == "s1: still running after 0.5 s (use `%debug_session wait` or `pause`)"
    assert kernel.magic("%dbg wait --timeout 0.3").text.startswith("still running after 0.3 s")
    paused = kernel.magic("%dbg pause")
    assert re.match(r"paused at .*loop\.py:\d+ in <module>\(\) — pause \[thread \d+\]", paused.text), paused.text
    resumed = kernel.magic("%dbg continue --no-wait")
    assert resumed.text == "running"
    cell = kernel.magic("%dbg continue --timeout 0.3")
    assert cell.text.startswith("error not_paused"), cell.text
    kernel.magic(f"%bp loop.py:{line_of(str(kernel_path(kernel, 'loop.py')), '# tick')}")
    assert "— breakpoint 1" in kernel.magic("%dbg wait").text
    kernel.magic("%dbg stop")


def kernel_path(kernel: Kernel, name: str) -> str:
    return kernel.magic(f"import os; print(os.path.abspath({name!r}))").streams.strip()


def test_sessions_list_use_and_session_option(kernel, write):
    write("loop.py", LOOP)
    app = write("app.py", APP)
    kernel.magic(f"%bp app.py:{line_of(app, '# accumulate')}")
    kernel.magic("%dbg launch --name looper --no-wait loop.py")
    kernel.magic("%dbg launch --name worker app.py")
    listing = [line.split() for line in kernel.magic("%dbg list").text.splitlines()]
    assert listing[1][:2] + listing[1][3:] == ["-", "s1", "looper", "debugpy", "running", "-", "-", "loop.py"]
    assert listing[2][:2] + listing[2][3:] == ["*", "s2", "worker", "debugpy", "paused", "breakpoint",
                                               f"app.py:{line_of(app, '# accumulate')}", "app.py"]
    assert all(re.fullmatch(UID, row[2]) for row in listing[1:]), listing
    assert kernel.magic("%dbg eval --session s2 x + 1").text == "4"
    assert kernel.magic("%dbg use looper").text == "current session: looper (s1, running)"
    assert kernel.magic("%dbg status").text == "looper (debugpy, loop.py): running"
    assert kernel.magic("%dbg next").text.startswith("error not_paused: Session looper is running, not paused.")
    assert kernel.magic("%dbg status --session worker").text.startswith("worker (debugpy, app.py): paused")
    assert kernel.magic("%dbg next --session worker").text.startswith("[worker] paused at app.py:")
    assert kernel.magic("%dbg use nobody").text.startswith("error session_not_found")
    kernel.magic("%dbg stop")
    kernel.magic("%dbg stop --session worker")


def test_breakpoint_kinds_and_management(kernel, write):
    app = write("app.py", APP)
    assert kernel.magic("%bp func compute").text == "breakpoint 1 at function compute — not verified yet " \
                                                    "(checked when a session starts)"
    assert kernel.magic("%bp exceptions uncaught").text == "stop on exceptions: uncaught"
    assert kernel.magic(f"%bp app.py:{line_of(app, '# accumulate')} hit ==3 log i={{i}} x={{x}}").text.startswith(
        "breakpoint 2 at app.py:")
    assert kernel.magic("%bp app.py:2").text == ("breakpoint 3 at app.py:2 — not verified: line 2 has no code "
                                                 "(blank, comment or inside a statement); the nearest executable "
                                                 "line is 3")
    assert kernel.magic("%bp disable 1").text == "breakpoint 1 at function compute — disabled"
    assert kernel.magic("%bp enable 1").text.startswith("breakpoint 1 at function compute")
    launched = kernel.magic("%dbg launch app.py").text
    assert launched == f"s1: paused at app.py:{line_of(app, 'def compute')} in compute() — function breakpoint 1 " \
                       f"[thread 1]\n{line_of(app, 'def compute')} │ def compute(items):\n" \
                       "  breakpoint 3 at app.py:2 — not verified: line 2 has no code (blank, comment or inside a " \
                       "statement); the nearest executable line is 3", launched  # a start names what it could not bind
    assert kernel.magic("%bp rm 1 3").text == "removed breakpoint 1, 3"
    assert kernel.magic("%dbg continue").text == "exited with code 3"  # sys.exit(3) is an end, not a crash
    assert "i=2 x=5" in kernel.magic("%dbg output").text  # the logpoint fired on its third hit only
    assert "i=1" not in kernel.magic("%dbg output").text
    assert kernel.magic("%bp clear").text == "removed 1 breakpoint"
    assert kernel.magic("%bp rm 9").text.startswith("error invalid_request: There is no breakpoint 9.")


@pytest.mark.parametrize(("line", "code"), [
    ("%dbg status", "session_not_found"),
    ("%dbg launch missing.py", "file_not_found"),
    ("%bp app.py:zero", "invalid_line"),
    ("%bp app.py:3 if x ==", "invalid_condition"),
    ("%dbg launch broken.py", "syntax_error"),
    ("%dbg attach --port 1", "connection_failed"),
    ("%dbg frobnicate", "invalid_request"),
    ("%dbg launch --timeout", "invalid_request"),
    ('%bp "app.py:3', "invalid_request"),
    ("%dbg connect dap --adapter ./no-such-adapter", "connection_failed"),
    ("%dbg launch --python /bin/false app.py", "adapter_failed"),
])
def test_every_bad_input_is_one_line_with_a_code_and_a_hint(kernel, write, line, code):
    write("app.py", APP)
    write("broken.py", "x = (1,\n")
    cell = kernel.magic(line)
    assert cell.text.startswith(f"error {code}: "), cell.text
    assert len(cell.text.splitlines()) == 1 and " Hint: " in cell.text
    assert kernel.magic(f"_r = {line}\nprint(_r.error.code)").streams.strip() == code


def test_an_object_pulls_as_its_repr_and_a_pull_over_the_cap_is_a_clear_error(kernel, write):
    app = write("app.py", "class Order:\n    def __repr__(self):\n        return 'Order(7)'\n\n"
                          "order = Order()\nblob = list(range(100000))\nx = 1\n")
    kernel.magic(f"%bp app.py:{line_of(app, 'x = 1')}")
    kernel.magic("%dbg launch app.py")
    assert kernel.magic("%dbg pull order").text == "pulled order into order (PulledRepr)"
    assert kernel.magic("order").text == "<repr of a __main__.Order from the target: Order(7)>"
    cell = kernel.magic("%dbg pull blob --max-bytes 1000")
    assert cell.text.startswith("error invalid_request: 'blob' encodes to "), cell.text
    assert kernel.magic("%dbg pull blob").text == "pulled blob into blob (list)"
    assert kernel.magic("len(blob)").text == "100000"
    kernel.magic("%dbg stop")


def test_tab_completion_offers_commands_sessions_ids_and_paths(kernel, write):
    write("loop.py", LOOP)
    assert kernel.complete("%debug_session ne") == ["next"]
    assert "--session" in kernel.complete("%dbg next --") and "--abs" not in kernel.complete("%dbg next --")
    assert "continue" in kernel.complete("%dbg con")
    kernel.magic("%bp loop.py:4")
    kernel.magic("%dbg launch --name looper --no-wait loop.py")
    assert "looper" in kernel.complete("%dbg use lo")
    assert "1" in kernel.complete("%bp rm ")
    assert "loop.py" in kernel.complete("%dbg launch lo")
    kernel.magic("%dbg stop")


def test_help_and_question_mark_show_the_grammar(kernel):
    assert "%debug_session launch [--name N]" in kernel.magic("%debug_session help").text
    page = kernel.run("%debug_session?")
    assert page.status == "ok" and "%bp FILE:LINE [if CONDITION]" in "".join(page.pages)


def test_a_flooding_target_leaves_the_kernel_responsive(kernel, write):
    write("flood.py", "import sys\nwhile True:\n    sys.stdout.write('x' * 200 + '\\n')\n")
    kernel.magic("%dbg launch --no-wait flood.py")
    wait_until(lambda: kernel.magic("%dbg output --tail 1").text, what="the flood to start")
    for _ in range(3):
        cell = kernel.magic("%dbg status")
        assert cell.text == "s1 (debugpy, flood.py): running"
    page = wait_until(  # past the 1 MiB cap: on a busy machine the target takes longer to get there
        lambda: (said := kernel.magic("_o = %dbg output\nprint(_o.dropped > 0, len(_o.text) <= 1_100_000)")
                 .streams.split())[0] == "True" and said, 20, "output dropped past the cap", poll=0.5)
    assert page == ["True", "True"]
    kernel.magic("%dbg stop")


def test_unloading_the_extension_ends_sessions_and_removes_the_magics(kernel, write):
    write("loop.py", LOOP)
    kernel.magic("%dbg launch --no-wait loop.py")
    info = kernel.magic("_s = %dbg status\nprint(_s.info.pid)").streams.strip()
    pid = int(info)
    assert alive(pid)
    kernel.magic("%unload_ext jupyter_debug_relay")
    assert wait_gone(pid)
    cell = kernel.run("%bp list")
    assert cell.status == "error" and "Line magic function `%bp` not found" in cell.streams


@pytest.mark.parametrize("now", [False, True], ids=["restart", "restart-now"])
def test_restarting_the_kernel_reaps_a_paused_target(tmp_path, write, now):
    app = write("app.py", APP)
    k = Kernel("python3", cwd=str(tmp_path))
    try:
        k.magic("%load_ext jupyter_debug_relay")
        k.magic(f"%bp app.py:{line_of(app, '# accumulate')}")
        assert "paused at" in k.magic("%dbg launch app.py").text
        pid = int(k.magic("_s = %dbg status\nprint(_s.info.pid)").streams.strip())
        assert alive(pid)
        k.manager.restart_kernel(now=now)
        assert wait_gone(pid), f"target {pid} outlived the kernel restart"
    finally:
        k.close()


def test_attach_by_port_from_a_magic_and_detach_leaves_it_running(kernel, tmp_path):
    code = LOOP + "    open(__file__ + '.ticks', 'w').write(str(n))\n"
    with debugpy_service(tmp_path, code) as (service, port, target):
        deadline = time.monotonic() + 20
        while True:
            text = kernel.magic(f"%dbg attach --port {port} --name svc").text
            if not text.startswith("error"):
                break
            assert time.monotonic() < deadline, text
            time.sleep(0.2)
        assert text == "svc: running"
        kernel.magic(f"%bp service.py:{line_of(service, '# tick')}")
        assert kernel.magic("%dbg wait").text.startswith("paused at service.py:")
        kernel.magic("%bp clear")
        assert kernel.magic("%dbg detach").text == "detached from svc; the target keeps running"
        ticks = service + ".ticks"
        then = int(open(ticks).read() or 0)
        wait_until(lambda: int(open(ticks).read() or 0) > then + 5, what="the detached target to go on counting")
        assert target.poll() is None


def test_a_failing_expression_is_one_line_naming_the_exception(kernel, paused):
    assert kernel.magic("%dbg eval 1/0").text == (
        "error evaluation_failed: '1/0' failed in the target: ZeroDivisionError: division by zero "
        "Hint: Fix the expression; it runs in the selected frame of the target.")
    details = kernel.magic("_r = %dbg eval 1/0\nprint(_r.error.details['type'], '|', _r.error.details['message'])")
    assert details.streams.strip() == "ZeroDivisionError | division by zero"  # an agent reads them apart
    assert kernel.magic("%dbg eval 1 +").text.startswith("error evaluation_failed: '1 +' failed in the target: "
                                                         "SyntaxError")
    assert kernel.magic("%dbg eval total").text == "0"  # the session is unharmed
    kernel.magic("%dbg stop")


def test_the_panel_magic_shows_a_live_widget(kernel, paused):
    cell = kernel.magic("%debug_session panel")
    assert "application/vnd.jupyter.widget-view+json" in cell.results[0]
    kernel.magic("%dbg stop")


def test_pulling_a_missing_name_and_detaching_a_launched_target_say_why(kernel, paused):
    cell = kernel.magic("%dbg pull nosuch")
    assert cell.text.startswith("error evaluation_failed: Cannot pull 'nosuch' from the target: ") and \
        "name 'nosuch' is not defined" in cell.text, cell.text
    cell = kernel.magic("%dbg detach")
    assert cell.text.startswith("error unsupported: A launched target belongs to its session"), cell.text
    assert kernel.magic("%dbg status").text.endswith("— breakpoint 1 [thread 1]")  # still paused, still ours
    kernel.magic("%dbg stop")
