"""Back in time (``record``, ``history``, ``back``, ``forward``): lines a recorded function ran, kept in the target
(the function compiled again with its records; on 3.12+ other code through ``sys.monitoring``), walked through the
magics and by an editor's step back over DAP."""

from __future__ import annotations

import time

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from tests import targets
from tests.kernels import Kernel

PROGRAM = """
def average(scores):
    total = 0
    count = 0
    for score in scores:
        total += score
        count += 1
    count -= 1  # the bug: one too few
    mean = total / count
    return mean


result = average([70, 80, 90])
print("average", result)  # stop: the wrong result
"""


@pytest.fixture(scope="module")
def shared_kernel(tmp_path_factory):
    """One kernel for the module's magics tests (each test ends its own sessions)."""
    folder = tmp_path_factory.mktemp("record")
    (folder / "app.py").write_text(PROGRAM.lstrip("\n"))
    k = Kernel("python3", cwd=str(folder))
    k.magic("%load_ext jupyter_debug_relay")
    k.folder = folder
    yield k
    k.close()


@pytest.mark.parametrize("minor", [11, 12, 13])
def test_the_magics_step_back_from_the_wrong_result_to_the_line_that_made_it(shared_kernel, minor):
    k = shared_kernel
    python = targets.python_for(minor)
    app = str(k.folder / "app.py")
    stop = line_of(app, "# stop")
    k.magic("%bp clear")
    k.magic(f"%bp app.py:{stop}")
    if minor == 11:  # 3.11: a function is recorded once defined; 3.12+ waits for its def (at the entry stop here)
        k.magic(f"%bp app.py:{line_of(app, 'result = average')}")
        assert "paused" in k.magic(f"%dbg launch --python {python} app.py").text
    else:
        assert "paused" in k.magic(f"%dbg launch --python {python} --stop-on-entry app.py").text
    number = _session_number(k)
    assert k.magic("%dbg back").text == (
        f"error invalid_request: Session s{number} has nothing recorded. Hint: Record a function first (record "
        "compute, or record FILE:FIRST-LAST), then run it.")
    assert k.magic("%dbg record nothing_here").text.startswith(
        "error invalid_request: No function 'nothing_here' is loaded in the target.")
    assert k.magic("%dbg record app.py:9-3").text.startswith(
        "error invalid_request: The range 9-3 is empty: the first line comes first, from 1.")
    assert k.magic("%dbg record average").text == (
        "recording average (app.py:1): 0 states, 0.0 KB of 4.0 MB — recording from the next line the program runs "
        "there")
    assert f"paused at app.py:{stop}" in k.magic("%dbg continue").text

    history = k.magic("%dbg history --count 5").text.splitlines()
    assert history[0].startswith("recording average (app.py:1): 16 states")
    assert history[1:] == [
        "  ... 11 earlier",
        "  #12 app.py:4 average()  for score in scores:",
        "  #13 app.py:7 average()  count -= 1  # the bug: one too few   [count = 2]",
        "  #14 app.py:8 average()  mean = total / count   [mean = 120.0]",
        "  #15 app.py:9 average()  return mean",
        "  #16 app.py:9 average()  returned 120.0",
        "  (live stop)"]

    assert k.magic("%dbg back").text.splitlines()[0] == (
        "recorded state 16 of 16: average() at app.py:9, returning 120.0")
    shown = k.magic("%dbg back 2")
    assert shown.text.splitlines() == [
        "recorded state 14 of 16: average() at app.py:8",
        "    mean = total / count",
        "  * count = 2",
        "    total = 240",
        "    score = 90",
        "    scores = [70, 80, 90]"]
    assert "changed" in shown.html
    where = k.magic("%dbg where").text
    assert "#0 average (recorded state 14 of 16) at app.py:8" in where
    assert "count = 2" in k.magic("%dbg vars").text
    assert k.magic("%dbg eval count").text.startswith("2")
    assert k.magic("%dbg eval total / (count + 1)").text.startswith("80.0")  # what it should have been
    assert k.magic("%dbg back").text.splitlines()[:3] == [
        "recorded state 13 of 16: average() at app.py:7",
        "    count -= 1  # the bug: one too few",
        "    count = 3"]  # about to run: the line after it shows count = 2
    assert k.magic("%dbg back 99").text.startswith(
        "error invalid_request: That is beyond the start of the history: 12 states back at most from here")
    assert k.magic("%dbg forward 4").text.startswith("at the live stop again (after 16 recorded states)")
    assert k.magic("%dbg forward").text.startswith("error invalid_request: That is beyond the live stop")
    assert f"app.py:{stop}" in k.magic("%dbg where").text  # the live program again
    assert "exited with code 0" in k.magic("%dbg continue").text or "ended" in k.magic("%dbg status").text
    assert "average 120.0" in k.magic("%dbg output").text
    assert k.magic("%dbg history").text.splitlines()[0].startswith("recording average")  # kept after the end


def test_a_311_target_records_functions_and_refuses_module_lines_with_a_hint(shared_kernel):
    k = shared_kernel
    python = targets.python_for(11)
    k.magic("%bp clear")
    assert "paused" in k.magic(f"%dbg launch --python {python} --stop-on-entry app.py").text
    refused = k.magic("%dbg record app.py:12-13").text
    assert refused.startswith("error unsupported: ") and "app.py:12-13 cannot be recorded in session s" in refused
    assert "(Python 3.11." in refused and "<module> is not a function" in refused
    assert "Hint: On Python 3.11 a function is recorded once its def ran" in refused
    refused = k.magic("%dbg record average").text
    assert refused.startswith("error unsupported: average cannot be recorded in session s")
    assert "no function holds average now (it is not defined yet: record it at a stop after its def ran)" in refused
    k.magic("%dbg stop")


@pytest.mark.parametrize("minor", [12, 13])
def test_module_lines_are_recorded_through_sys_monitoring_and_the_answer_says_so(shared_kernel, minor):
    k = shared_kernel
    python = targets.python_for(minor)
    k.magic("%bp clear")
    k.magic(f"%bp app.py:{line_of(str(k.folder / 'app.py'), '# stop')}")
    assert "paused" in k.magic(f"%dbg launch --python {python} --stop-on-entry app.py").text
    recording = k.magic("%dbg record app.py:12-13").text
    assert recording.startswith("recording <module> (app.py:1): 0 states")
    assert "through sys.monitoring, slower: <module> is not a function" in recording
    k.magic("%dbg continue")
    assert "result = average([70, 80, 90])" in k.magic("%dbg history").text
    k.magic("%dbg stop")


def _session_number(k: Kernel) -> int:
    listed = k.magic("%dbg list").text
    return max(int(word[1:]) for word in listed.split() if word[:1] == "s" and word[1:].isdigit())


RUNNING = """
import time


def tick(n):
    value = n * 2
    return value


for n in range(600):
    tick(n)
    time.sleep(0.005)
print("done")  # stop
"""


def test_record_while_running_pauses_installs_and_runs_on(relay, write):
    python = targets.python_for(13)
    app = write("loop.py", RUNNING)
    session = relay.launch(app, python=python)
    time.sleep(0.3)
    assert session.state == "running"
    recording = relay.operations.call("record", {"target": "tick"})["recording"]
    assert recording.functions == [f"tick ({app}:4)"] and recording.recording
    assert session.state == "running"  # paused for the install, then continued
    relay.breakpoints.add(app, line_of(app, "# stop"))
    assert session.wait_for_stop(30).frame.line == line_of(app, "# stop")
    found = relay.operations.call("history", {"count": 3})
    assert found["total"] > 3 and [s.kind for s in found["steps"]] == ["line", "line", "return"]
    assert found["steps"][-1].value == "1198"  # tick(599)
    with pytest.raises(RelayError) as refused:
        relay.operations.call("record", {"target": f"{app}:0-2"})
    assert refused.value.code == "invalid_request"
    session.terminate()


@pytest.fixture
def vscode(request):
    return request.getfixturevalue("vscode_client")


def test_an_editor_steps_back_and_reverse_continues_over_dap(relay, write, vscode):
    python = targets.python_for(12)
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app, python=python, stop_on_entry=True)
    session.wait_for_stop(30)
    relay.operations.call("record", {"target": "average"})
    session.continue_()
    exposed = relay.operations.call("expose", {"session": session.id})
    seen = vscode("stepback", exposed["port"], exposed["token"])
    assert seen["supportsStepBack"] is True
    assert seen["live"] == line_of(app, "# stop")
    assert seen["lines"] == [9, 9, 8]  # the return, `return mean`, `mean = total / count`
    assert seen["values"][2]["count"] == "2" and seen["values"][0]["mean"] == "120.0"
    assert seen["evaluated"] == "2"
    assert seen["afterNext"] == 9  # next goes forward through the history
    assert seen["first"] == 2  # reverse continue: the first recorded line
    session.terminate()


from tests.test_dapserver import vscode_client  # noqa: E402,F401 - the DAP test client fixture, shared

TWICE = """
def scale(values, factor):
    out = []
    for value in values:
        out.append(value * factor)  # stop
    return out


for factor in (2, 3, 4):
    print(scale([1, 2], factor))
"""


@pytest.mark.parametrize("minor", [11, 12, 13])
def test_a_breakpoint_in_a_recorded_function_still_stops_while_recording_and_after_it(shared_kernel, minor):
    k = shared_kernel
    python = targets.python_for(minor)
    (k.folder / "twice.py").write_text(TWICE.lstrip("\n"))
    stop = line_of(str(k.folder / "twice.py"), "# stop")
    k.magic("%bp clear")
    k.magic(f"%bp twice.py:{stop} if value == 2")
    assert f"paused at twice.py:{stop}" in k.magic(f"%dbg launch --python {python} twice.py").text  # factor 2
    recording = k.magic("%dbg record scale").text
    assert recording.startswith("recording scale (twice.py:1)") and "slower" not in recording  # guard and all
    assert f"paused at twice.py:{stop}" in k.magic("%dbg continue").text  # factor 3: compiled again, still stops
    assert k.magic("%dbg eval factor").text.startswith("3")
    history = k.magic("%dbg history --count 3").text
    assert "out = [3]" in history  # the call of factor 3, recorded up to its stop
    assert k.magic("%dbg record off").text.startswith("recorded (off) scale (twice.py:1): ")
    assert f"paused at twice.py:{stop}" in k.magic("%dbg continue").text  # factor 4: its own code again
    assert k.magic("%dbg eval factor").text.startswith("4")
    k.magic("%bp clear")
    assert "exited with code 0" in k.magic("%dbg continue").text
