"""The debugger panel against real debugpy (and Mycel) sessions: widget state after real stops."""

from __future__ import annotations

import time

import pytest

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.kernel.results import StatusResult
from jupyter_debug_relay.text import short_path
from jupyter_debug_relay.widgets import DebuggerPanel
from jupyter_debug_relay.widgets.variable_node import VariableNode
from tests.conftest import line_of, wait_until

APP = """
import sys


def compute(values):
    total = 0
    for value in values:
        total += value  # BREAK
    return total


def main():
    data = {"numbers": list(range(200)), "long": "x" * 5000, "nested": {"a": [1, 2, 3]}}
    print("starting", flush=True)
    print("a warning", file=sys.stderr, flush=True)
    result = compute(data["numbers"][:3])  # CALL
    print("result", result, flush=True)
    return 3


if __name__ == "__main__":
    raise SystemExit(main())
"""


@pytest.fixture
def app(write):
    path = write("app.py", APP)
    return path, line_of(path, "# BREAK"), line_of(path, "# CALL")


@pytest.fixture
def panels():
    made: list[DebuggerPanel] = []
    yield made.append
    for panel in made:
        panel.close()


def first_scope(panel: DebuggerPanel) -> VariableNode:
    """The first scope of the selected frame, once its variables are fetched."""
    return wait_until(lambda: panel.variables.scopes and panel.variables.scopes[0].nodes and panel.variables.scopes[0],
                      what="the first scope's variables")


def paused_at(panel: DebuggerPanel, line: int) -> bool:
    return f"app.py:{line} " in panel.status.text and panel.source.current_line == line


def test_panel_shows_the_stop_and_step_over_moves_the_marked_line(relay, app, panels):
    path, line, call = app
    relay.breakpoints.add(path, line)
    session = relay.launch(path, name="app")
    session.wait_for_stop(20)
    panel = DebuggerPanel(session)
    panels(panel)
    wait_until(lambda: paused_at(panel, line), what="the panel to show the stop")
    assert panel.status.text == f"app (debugpy) · paused at app.py:{line} in compute() — breakpoint"
    assert panel.source.path == path and line in panel.source.breakpoint_lines
    assert [f.split(" — ")[0] for f in panel.stack.frames] == ["compute()", "main()", "<module>()"]
    assert panel.stack.frames[1] == f"main() — app.py:{call}"
    buttons = panel.toolbar.buttons
    assert [name for name, b in buttons.items() if not b.disabled] == [
        "Continue", "Step Over", "Step Into", "Step Out", "Restart", "Stop"]

    locals_ = first_scope(panel)
    assert {n.name: n.value for n in locals_.nodes} == {"total": "0", "value": "0", "values": "[0, 1, 2]"}

    buttons["Step Over"].click()
    wait_until(lambda: paused_at(panel, line - 1), what="the marked line to move to the loop")
    assert panel.status.text.endswith(f"paused at app.py:{line - 1} in compute() — step")
    buttons["Step Over"].click()
    wait_until(lambda: paused_at(panel, line), what="the marked line to come back")

    panel.stack.children[2].index = 1  # the user picks main() in the call stack
    wait_until(lambda: panel.source.current_line == call, what="the source to show the caller")
    wait_until(lambda: "data" in [n.name for n in first_scope(panel).nodes], what="main()'s variables")  # after
    data = first_scope(panel).child("data")  # the source, as the panel fetches them next
    assert data.ref and not data.expanded and data.nodes == []  # nothing fetched until expanded
    data.toggle()
    wait_until(lambda: data.nodes, what="data's children")
    assert [n.name for n in data.nodes if n.name.startswith("'")] == ["'numbers'", "'long'", "'nested'"]
    long = data.child("'long'")
    assert long.truncated and "[truncated]" in long._value.value
    numbers = data.child("'numbers'")
    numbers.expand()
    wait_until(lambda: numbers.loaded == 50, what="the first page of numbers")
    left = numbers.total - 50
    assert left > 0 and numbers._more.description == f"show more ({left} more)"
    assert numbers._more.layout.display == "flex"
    while numbers.loaded < numbers.total:
        loaded = numbers.loaded
        numbers._more.click()
        wait_until(lambda loaded=loaded: numbers.loaded > loaded, what="the next page of numbers")
    names = [n.name for n in numbers.nodes]
    assert len(names) == len(set(names)) == numbers.total == 200 and names[:3] == ["0", "1", "2"] and names[-1] == "199"
    assert numbers._more.layout.display == "none"

    relay.breakpoints.clear()
    buttons["Continue"].click()
    wait_until(lambda: "terminated — exited with code 3" in panel.status.text, what="the exit code")
    assert [name for name, b in buttons.items() if not b.disabled] == ["Restart"]
    assert panel.stack.frames == [] and panel.variables.scopes == [] and panel.source.current_line == 0


def test_a_target_killed_by_a_signal_reads_the_same_in_the_panel_and_the_magics(relay, write, panels):
    path = write("killed.py", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    session = relay.launch(path)
    panel = DebuggerPanel(session)
    panels(panel)
    wait_until(lambda: session.state == "terminated", what="the end of the target")
    said = StatusResult(session.info()).text
    assert said == f"{session.name} (debugpy, {short_path(path)}): ended by signal 9 (SIGKILL)", said
    wait_until(lambda: panel.status.text.endswith("· terminated — ended by signal 9 (SIGKILL)"),
               what="the signal in the panel")


def test_gutter_click_toggles_a_breakpoint_and_the_list_edits_it(relay, app, panels):
    path, line, _call = app
    session = relay.launch(path, stop_on_entry=True)
    session.wait_for_stop(20)
    panel = DebuggerPanel(session)
    panels(panel)
    wait_until(lambda: panel.source.current_line == 1, what="the entry stop")
    wait_until(lambda: panel.status.text.endswith("— entry"), what="the status line")  # shown after the source
    panel.source.gutter_button(5).click()
    wait_until(lambda: panel.breakpoints.lines, what="the breakpoint list")
    [bp] = relay.breakpoints.list()
    assert (bp.path, bp.line, bp.verified) == (path, 5, True)
    assert panel.breakpoints.lines == [f"breakpoint {bp.id} at app.py:5 — verified"]
    assert panel.source.breakpoint_lines == [5]
    assert panel.source.gutter_button(5).description == "● 5"

    panel.source.gutter_button(5).click()  # a second click removes it
    wait_until(lambda: not panel.breakpoints.lines, what="the breakpoint to go")
    assert relay.breakpoints.list() == [] and panel.source.breakpoint_lines == []

    relay.breakpoints.add(path, line, condition="value == 2", hit_condition=">=1")
    wait_until(lambda: panel.breakpoints.lines, what="a breakpoint set elsewhere")
    [bp] = relay.breakpoints.list()
    assert panel.breakpoints.lines == [f"breakpoint {bp.id} at app.py:{line} if value == 2 hit >=1 — verified"]
    checkbox, _text, remove = panel.breakpoints.row(bp.id).children
    checkbox.value = False  # the user unticks it
    wait_until(lambda: not relay.breakpoints.get(bp.id).enabled, what="the breakpoint to be disabled")
    checkbox, _text, remove = panel.breakpoints.row(bp.id).children
    assert checkbox.value is False
    remove.click()
    wait_until(lambda: not panel.breakpoints.lines, what="the removed breakpoint to leave the list")
    assert relay.breakpoints.list() == []
    session.terminate()


def test_output_stderr_apart_watch_evaluate_and_copy(relay, app, panels):
    path, line, _call = app
    relay.breakpoints.add(path, line)
    session = relay.launch(path)
    session.wait_for_stop(20)
    panel = DebuggerPanel(session)
    panels(panel)
    wait_until(lambda: "starting" in panel.output.stdout and "a warning" in panel.output.stderr, what="the output")
    assert "a warning" not in panel.output.stdout and "starting" not in panel.output.stderr
    assert panel.output._stderr_view.layout.display == "flex"

    panel.watch.add("total * 10")
    panel.watch.add("value")
    wait_until(lambda: panel.watch.values == {"total * 10": "0", "value": "0"}, what="the watch values")
    panel.evaluate.submit("values[-1] + 1")
    wait_until(lambda: panel.evaluate.history, what="the evaluation")
    panel.evaluate.submit("undefined_name")
    wait_until(lambda: len(panel.evaluate.history) == 2, what="the failed evaluation")
    assert panel.evaluate.history[0] == ("values[-1] + 1", "3")
    assert "undefined_name" in panel.evaluate.history[1][1]
    assert panel.evaluate._recall.options[1:] == (("undefined_name", "undefined_name"),
                                                  ("values[-1] + 1", "values[-1] + 1"))

    panel.toolbar.buttons["Continue"].click()
    wait_until(lambda: panel.watch.values == {"total * 10": "0", "value": "1"}, what="the watches at the 2nd stop")
    panel.toolbar.buttons["Continue"].click()
    wait_until(lambda: panel.watch.values == {"total * 10": "10", "value": "2"}, what="the watches at the 3rd stop")

    panel.namespace = {}
    scope = first_scope(panel)
    scope.child("values").children[0].children[2].click()  # the node's "copy" button
    wait_until(lambda: "values" in panel.namespace, what="the copied value")
    assert panel.namespace["values"] == [0, 1, 2]
    assert "copied values into the notebook as values (list)" in panel.status.note
    relay.breakpoints.clear()
    panel.toolbar.buttons["Continue"].click()
    wait_until(lambda: "result 3" in panel.output.stdout, what="the last output")
    wait_until(lambda: panel.watch.values == {}, what="the watches to empty once the target has ended")


FLOOD = """
import sys
for i in range(1_000_000):
    sys.stdout.write(f"line {i}\\n")
sys.stdout.flush()
"""


def test_a_million_lines_keep_the_output_bounded_and_its_update_rate_capped(relay, write, panels):
    from jupyter_debug_relay.widgets.output import MAX_LINES
    from jupyter_debug_relay.widgets.panel import INTERVALS

    path = write("flood.py", FLOOD)
    panel = DebuggerPanel(relay)
    panels(panel)
    started = time.monotonic()
    session = relay.launch(path, name="flood")
    wait_until(lambda: panel.session == session, what="the panel to follow the new session")
    wait_until(lambda: "terminated" in panel.status.text, timeout=110, what="the flood to end")
    wait_until(lambda: panel.output.stdout.endswith("line 999999"), timeout=10, what="the last line")
    elapsed = time.monotonic() - started
    lines = panel.output.stdout.split("\n")
    assert len(lines) == MAX_LINES and lines[0] == f"line {1_000_000 - MAX_LINES}"
    assert panel.output.dropped_lines + panel.output.dropped_bytes > 0
    assert "older lines not shown" in panel.output._info.value
    cap = elapsed / INTERVALS["output"] + 2
    print(f"1,000,000 lines in {elapsed:.1f} s: {panel.output.updates} output updates (cap {cap:.0f}), "
          f"{panel.output.dropped_lines:,} lines and {panel.output.dropped_bytes:,} bytes dropped")
    assert 2 <= panel.output.updates <= cap


def test_two_panels_stay_in_step_and_a_closed_panel_unsubscribes(relay, app, panels):
    path, line, _call = app
    relay.breakpoints.add(path, line)
    session = relay.launch(path)
    session.wait_for_stop(20)
    subscribers = len(relay.manager.bus.subscribers)
    first, second = DebuggerPanel(session), DebuggerPanel(relay)
    panels(first)
    panels(second)
    assert len(relay.manager.bus.subscribers) == subscribers + 2
    for panel in (first, second):
        wait_until(lambda panel=panel: paused_at(panel, line), what="both panels at the stop")
    first.toolbar.buttons["Step Over"].click()
    for panel in (first, second):
        wait_until(lambda panel=panel: paused_at(panel, line - 1), what="both panels after the step")
    second.source.gutter_button(line + 1).click()
    wait_until(lambda: line + 1 in first.source.breakpoint_lines, what="the other panel's breakpoint")

    second.close()
    assert not second.alive
    wait_until(lambda: len(relay.manager.bus.subscribers) == subscribers + 1,  # unsubscribed on the relay's loop
               what="the closed panel's subscription to end")
    status = second.status.text
    first.toolbar.buttons["Step Over"].click()
    wait_until(lambda: paused_at(first, line), what="the open panel after a step")
    assert second.status.text == status and second.source.current_line == line - 1
    session.terminate()


def test_a_relay_panel_offers_a_session_selector_once_there_are_two(relay, app, panels):
    path, line, _call = app
    panel = DebuggerPanel(relay)
    panels(panel)
    wait_until(lambda: panel.status.text.startswith("no session"), what="the empty panel")
    assert all(b.disabled for b in panel.toolbar.buttons.values())
    relay.breakpoints.add(path, line)
    one = relay.launch(path, name="one")
    wait_until(lambda: panel.session == one and paused_at(panel, line), what="the first session")
    assert panel.toolbar.selector.layout.display == "none"
    two = relay.launch(path, name="two")
    two.wait_for_stop(20)
    wait_until(lambda: len(panel.toolbar.selector.options) == 2, what="the second session in the selector")
    assert panel.toolbar.selector.layout.display == "flex" and panel.session == one
    panel.toolbar.selector.value = two.id  # the user picks it
    wait_until(lambda: panel.status.text.startswith("two (debugpy) · paused"), what="the picked session")
    one.terminate()
    panel.select("one")
    wait_until(lambda: panel.status.text.startswith("one (debugpy) · terminated"), what="the first session, ended")
    assert panel.session == one and panel.toolbar.selector.value == one.id
    two.terminate()


def test_mycel_panel_shows_flows_stages_and_the_thread_timeline(relay, panels):
    from tests.peers.mycel_peer import start_peer

    peer = start_peer()
    try:
        relay.breakpoints.add_stage("create_user", "transform")
        session = relay.connect_mycel(peer.url, name="pipeline")
        panel = DebuggerPanel(session)
        panels(panel)
        wait_until(lambda: panel.flows.flows, what="the flows")
        assert {f["name"] for f in panel.flows.flows} >= {"create_user", "get_users", "process_order"}
        assert panel.toolbar.buttons["Pause"].disabled  # Mycel cannot pause
        reply = peer.request("create_user", {"name": "Alice", "email": " ALICE@EXAMPLE.COM "})
        wait_until(lambda: "paused at" in panel.status.text, what="the stage stop")
        assert panel.status.text.startswith("pipeline (mycel) · paused") and "in transform()" in panel.status.text
        assert panel._mycel.layout.display == "flex"
        wait_until(lambda: "transform" in panel.flows.stages.get("create_user", []), what="the stages seen")
        assert panel.flows.stages["create_user"][:2] == ["sanitize", "validate_input"]
        assert (panel.flows.current_flow, panel.flows.current_stage) == ("create_user", "transform")
        assert "jdr-current-stage" in panel.flows.value
        names = [e["event"] for e in panel.timeline.events]
        assert names[0].endswith("flowStart") and any(n.endswith("stageEnter") for n in names)
        inputs = first_scope(panel)
        assert inputs.name == "input" and inputs.child("name").value == '"Alice"'
        relay.breakpoints.clear()
        panel.toolbar.buttons["Continue"].click()
        assert reply.result(10)
        wait_until(lambda: any(e["event"].endswith("flowEnd") for e in panel.timeline.events), what="the flow end")
        session.terminate()
    finally:
        peer.stop()


LOOP = """
import time
count = 0
while True:
    count += 1  # LOOP
    time.sleep(0.01)
"""


def test_pause_stop_and_restart_buttons(relay, write, panels):
    path = write("loop.py", LOOP)
    session = relay.launch(path, name="loop")
    panel = DebuggerPanel(session)
    panels(panel)
    buttons = panel.toolbar.buttons
    wait_until(lambda: panel.status.text == "loop (debugpy) · running", what="the running state")
    assert [name for name, b in buttons.items() if not b.disabled] == ["Pause", "Restart", "Stop"]
    buttons["Pause"].click()
    wait_until(lambda: "paused at loop.py:" in panel.status.text, what="the pause")
    assert panel.status.text.endswith("in <module>() — pause")
    assert panel.stack.frames[0].startswith("<module>() — loop.py:")
    buttons["Stop"].click()
    wait_until(lambda: panel.status.text == "loop (debugpy) · terminated — stopped by the user", what="the stop")
    assert session.state == "terminated"
    relay.breakpoints.add(path, line_of(path, "# LOOP"))
    buttons["Restart"].click()
    wait_until(lambda: paused_at_loop(panel, path), timeout=30, what="the restarted target at its breakpoint")
    assert panel.status.text.endswith("— breakpoint")
    session.terminate()


def paused_at_loop(panel: DebuggerPanel, path: str) -> bool:
    return panel.source.current_line == line_of(path, "# LOOP") and "paused" in panel.status.text


def test_stepping_in_a_tight_loop_ends_on_the_last_stop_without_errors(relay, write, panels):
    path = write("spin.py", """
        total = 0
        for i in range(100000):
            total += i  # SPIN
        """)
    relay.breakpoints.add(path, line_of(path, "# SPIN"))
    session = relay.launch(path)
    session.wait_for_stop(20)
    panel = DebuggerPanel(session)
    panels(panel)
    wait_until(lambda: panel.source.current_line == 3, what="the first stop")
    panel.watch.add("i")
    relay.breakpoints.clear()
    for _ in range(200):  # a cell stepping as fast as it can, while the panel follows
        session.next()
    wait_until(lambda: panel.watch.values.get("i") == session.evaluate("i").value, what="the last stop")
    assert panel.status.error == ""
    session.terminate()


def test_a_panel_without_a_relay_owns_one_and_bad_input_is_a_relay_error():
    panel = DebuggerPanel()
    try:
        wait_until(lambda: panel.status.text.startswith("no session"), what="the empty panel")
        assert panel.relay.sessions == []
    finally:
        panel.close()
    assert not panel.alive
    with pytest.raises(RelayError) as closed:
        panel.relay.launch("app.py")
    assert closed.value.code == "not_running"
    with pytest.raises(RelayError) as bad:
        DebuggerPanel("s1")
    assert bad.value.code == "invalid_request" and "not str" in bad.value.message


def test_the_tasks_view_draws_the_tree_when_opened_and_again_at_the_next_stop(relay, write, panels):
    from tests.test_tasks import PROGRAM, _lines  # the async program the tasks operation is tested on

    path = write("app.py", PROGRAM)
    lines = _lines(path)
    relay.breakpoints.add(path, lines["producer"])
    session = relay.launch(path)
    session.wait_for_stop(30)
    panel = DebuggerPanel(session)
    panels(panel)
    wait_until(lambda: "paused" in panel.status.text, what="the panel to show the stop")
    assert panel.tasks.lines == []  # read only once opened: it costs an evaluate in the target
    panel.tasks._toggle.value = True
    wait_until(lambda: panel.tasks.lines, what="the tasks tree")
    assert panel.tasks.lines[0] == "event loop 0 (on thread MainThread): 4 tasks"
    shown = short_path(path)
    assert f"    ├── producer (pending) at {shown}:{lines['producer']} in produce() — stopped here" in panel.tasks.lines
    assert "producer (pending)" in panel.tasks._text.value
    relay.breakpoints.clear()
    panel.toolbar.buttons["Continue"].click()
    wait_until(lambda: "terminated" in panel.status.text, what="the end")
    wait_until(lambda: panel.tasks.lines == [], what="the tree cleared")
    assert "tasks show at a stop" in panel.tasks._text.value


def test_the_history_view_steps_back_through_a_recorded_function_and_forward_to_the_live_stop(relay, write, panels):
    from tests.test_record import PROGRAM  # the recorded function of the magics' test

    path = write("average.py", PROGRAM)
    relay.breakpoints.add(path, line_of(path, "result = average"))
    session = relay.launch(path)
    session.wait_for_stop(30)
    session.record("average")
    relay.breakpoints.clear()
    relay.breakpoints.add(path, line_of(path, "# stop"))
    session.continue_(timeout=30)
    panel = DebuggerPanel(session)
    panels(panel)
    wait_until(lambda: "paused" in panel.status.text, what="the panel to show the stop")
    panel.history._toggle.value = True
    wait_until(lambda: panel.history.lines, what="the recorded states")
    assert panel.history.lines[0].startswith("recording average (")
    assert any("count -= 1  # the bug: one too few   [count = 2]" in line for line in panel.history.lines)
    assert panel.history.lines[-1] == "  (live stop)"
    panel.history.back.click()
    returns = line_of(path, "return mean")
    wait_until(lambda: panel.stack.frames == [f"average (recorded state 16 of 16) — average.py:{returns}"],
               what="the last recorded state in the call stack")
    wait_until(lambda: any(line.startswith("> #16 ") for line in panel.history.lines), what="the state marked")
    panel.history.back.click()
    panel.history.back.click()
    wait_until(lambda: "recorded state 14 of 16" in panel.stack.frames[0], what="two states further back")
    wait_until(lambda: {n.name: n.value for n in first_scope(panel).nodes}.get("count") == "2",
               what="the recorded locals")
    for _ in range(3):
        panel.history.forward.click()
    wait_until(lambda: panel.history.lines and panel.history.lines[-1] == "  (live stop)", what="the live stop")
    wait_until(lambda: panel.stack.frames and panel.stack.frames[0].startswith("<module>()"),
               what="the live frame again")
    relay.breakpoints.clear()
    panel.toolbar.buttons["Continue"].click()
    wait_until(lambda: "terminated" in panel.status.text, what="the end")
