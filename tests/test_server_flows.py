"""Seed 004's flows (3.1-3.9) and edge cases (4.1-4.8) over real HTTP against a live relay server."""

from __future__ import annotations

import pytest

from jupyter_debug_relay.operations import OPERATIONS
from jupyter_debug_relay.server.routes import ROUTES
from tests.conftest import wait_until
from tests.server_fixtures import line_of, live_server, write

APP = """
def total(items):
    acc = 0
    for item in items:
        acc += item  # add
    return acc

values = [3, 4, 5]
result = total(values)  # call
print("result", result)
"""


@pytest.fixture
def api():
    with live_server() as (_, client):
        yield client


def ok(response):
    assert response.status_code == 200, response.text
    return response.json()


def error(response, status: int, code: str):
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert body["code"] == code and body["message"] and body["hint"], body
    return body


def test_every_operation_has_a_route_and_every_route_an_operation():
    assert {r.op_name for r in ROUTES} == set(OPERATIONS)


@pytest.mark.smoke
def test_happy_path_3_1(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    session = ok(api.post("/sessions", json={"name": "flow"}))["session"]
    assert session["state"] == "created"
    sid = session["id"]
    bp = ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# add")}))

    started = ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    assert started["session"]["id"] == sid and started["state"] == "paused"
    assert started["stop"]["reason"] == "breakpoint"
    assert started["stop"]["frame"]["line"] == line_of(app, "# add")
    assert started["line_text"].strip() == "acc += item  # add"
    assert started["stop"]["source_line"] == started["line_text"]  # the stop carries its line, the events too
    assert ok(api.get(f"/sessions/{sid}"))["session"]["stop"]["source_line"].strip() == "acc += item  # add"
    assert ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"][0]["verified"] is True

    status = ok(api.get(f"/sessions/{sid}"))["session"]
    assert status["state"] == "paused" and status["stop"]["frame"]["name"] == "total"
    frames = ok(api.get(f"/sessions/{sid}/stacktrace"))["frames"]
    assert [f["name"] for f in frames[:2]] == ["total", "<module>"]
    scopes = ok(api.get(f"/sessions/{sid}/frames/{frames[0]['id']}/scopes"))["scopes"]
    local = ok(api.get(f"/sessions/{sid}/variables/{scopes[0]['ref']}", params={"start": 0, "count": 50}))
    assert {v["name"]: v["value"] for v in local["items"]}["item"] == "3"
    value = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "acc + item * 10"}))["variable"]
    assert value["value"] == "30" and value["type"] == "int"

    step = ok(api.post(f"/sessions/{sid}/step-over", json={}))
    assert step["state"] == "paused" and step["stop"]["reason"] == "step"
    assert step["stop"]["frame"]["line"] == line_of(app, "for item")
    ok(api.delete(f"/sessions/{sid}/breakpoints/{bp['breakpoint']['id']}"))
    end = ok(api.post(f"/sessions/{sid}/continue", json={}))
    assert end["state"] == "terminated" and end["exit_code"] == 0 and end["stop"] is None
    out = ok(api.get(f"/sessions/{sid}/output"))
    assert "result 12" in "".join(c["text"] for c in out["chunks"]) and out["has_more"] is False
    assert ok(api.get(f"/sessions/{sid}"))["session"]["state"] == "terminated"
    ok(api.delete(f"/sessions/{sid}"))


def test_launch_in_a_new_session_and_paged_output_3_3(api, tmp_path):
    app = write(tmp_path, "train.py", """
        import os, sys, time
        for i in range(5):
            print("line", i, flush=True)
            time.sleep(0.05)  # a chunk of output each (piped stdout would come whole at the end)
        print("args", sys.argv[1:], os.environ["CUDA_VISIBLE_DEVICES"], os.getcwd())
    """)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    end = ok(api.post(f"/sessions/{sid}/launch", json={
        "program": app, "args": ["--epochs", "10"], "env": {"CUDA_VISIBLE_DEVICES": "0"}, "cwd": str(tmp_path)}))
    assert end["state"] == "terminated" and end["exit_code"] == 0
    first = ok(api.get(f"/sessions/{sid}/output", params={"limit": 1}))
    assert len(first["chunks"]) == 1 and first["has_more"] is True
    rest = ok(api.get(f"/sessions/{sid}/output", params={"since": first["cursor"]}))
    text = "".join(c["text"] for c in first["chunks"] + rest["chunks"])
    assert f"args ['--epochs', '10'] 0 {tmp_path}" in text and rest["has_more"] is False
    assert text.index("line 0") < text.index("line 4")


NO_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # this environment's plugins (hypothesis, xdist ...) load slowly


def test_pytest_under_the_debugger_3_4(api, tmp_path):
    test_file = write(tmp_path, "test_math.py", """
        def divide(a, b):
            return a / b

        def test_divide():
            assert divide(6, 3) == 2  # here
    """)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": test_file, "line": line_of(test_file, "# here")}))
    stop = ok(api.post(f"/sessions/{sid}/launch", json={
        "module": "pytest", "args": ["-q", "-p", "no:cacheprovider", f"{test_file}::test_divide"],
        "cwd": str(tmp_path), "timeout": 60, "env": NO_PLUGINS}))
    assert stop["state"] == "paused" and stop["stop"]["frame"]["name"] == "test_divide"
    end = ok(api.post(f"/sessions/{sid}/continue", json={"timeout": 60}))
    assert end["state"] == "terminated" and end["exit_code"] == 0


def test_conditional_hit_and_log_breakpoints_3_5(api, tmp_path):
    app = write(tmp_path, "main.py", """
        def process(i):
            return i
        for i in range(1000):
            process(i)  # here
    """)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    line = line_of(app, "# here")
    cond = ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line, "condition": "i > 100"}))
    ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "i"}))["variable"]["value"] == "101"
    ok(api.patch(f"/sessions/{sid}/breakpoints/{cond['breakpoint']['id']}", json={"enabled": False}))
    ok(api.post(f"/sessions/{sid}/terminate", json={}))

    error(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line, "condition": "i >"}), 400,
          "invalid_condition")
    ok(api.delete(f"/sessions/{sid}/breakpoints/{cond['breakpoint']['id']}"))
    second = ok(api.post("/sessions", json={}))["session"]["id"]  # a session's breakpoints are its own
    hit = ok(api.post(f"/sessions/{second}/breakpoints", json={"path": app, "line": line, "hit_condition": "== 50"}))
    log = ok(api.post(f"/sessions/{second}/breakpoints", json={"path": app, "line": line - 1,
                                                                "log_message": "at {i}"}))
    ok(api.post(f"/sessions/{second}/launch", json={"program": app}))
    assert ok(api.post(f"/sessions/{second}/evaluate", json={"expression": "i"}))["variable"]["value"] == "49"
    ok(api.delete(f"/sessions/{second}/breakpoints/{hit['breakpoint']['id']}"))
    ok(api.delete(f"/sessions/{second}/breakpoints/{log['breakpoint']['id']}"))
    ok(api.post(f"/sessions/{second}/continue", json={}))
    text = "".join(c["text"] for c in ok(api.get(f"/sessions/{second}/output"))["chunks"])
    assert "at 0\n" in text and "at 48\n" in text and "at 60\n" not in text


def test_exception_stops_with_its_type_3_6(api, tmp_path):
    app = write(tmp_path, "crash.py", """
        def parse(text):
            return int(text)  # boom
        parse("nope")
    """)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"mode": "uncaught"}))
    stop = ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    assert stop["stop"]["reason"] == "exception" and stop["stop"]["exception"]["type"].endswith("ValueError")
    assert stop["line_text"].strip() == "return int(text)  # boom"
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "text"}))["variable"]["value"] == "'nope'"
    ok(api.delete(f"/sessions/{sid}"))


def test_invalid_breakpoint_locations_3_7_and_4_2(api, tmp_path):
    app = write(tmp_path, "short.py", "x = 1\n\ny = 2\n")
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    blank = ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 2}))["breakpoint"]
    assert blank["verified"] is False and "nearest executable line is 3" in blank["message"]
    beyond = error(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 99}), 400, "invalid_line")
    assert beyond["details"]["lines"] == 3
    missing = ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": str(tmp_path / "later.py"), "line": 1}))
    assert missing["breakpoint"]["verified"] is False and "pending" in missing["breakpoint"]["message"]


def test_a_breakpoint_place_written_in_the_path(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    by_line = ok(api.post("/breakpoints", json={"path": f"{app}:{line_of(app, '# add')}"}))["breakpoint"]
    assert (by_line["path"], by_line["line"]) == (app, line_of(app, "# add"))
    by_text = ok(api.post("/breakpoints", json={"path": f"{app}:'result = total(values)'"}))["breakpoint"]
    assert (by_text["line"], by_text["content"]) == (line_of(app, "# call"), "result = total(values)")
    lineless = error(api.post("/breakpoints", json={"path": app}), 400, "invalid_request")
    assert "FILE:LINE" in lineless["hint"]


def test_a_text_no_line_holds_is_told_without_the_magics_syntax(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    nowhere = error(api.post("/breakpoints", json={"path": app, "content": "no line reads like this"}), 400,
                    "invalid_line")
    assert "no line reads like this" in nowhere["message"] and "%bp" not in nowhere["hint"]


def test_a_launch_into_a_session_not_created_says_to_create_it(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    absent = error(api.post("/sessions/agent-7/launch", json={"program": app}), 404, "session_not_found")
    assert "create" in absent["hint"] and "launch one first" not in absent["hint"]
    # over HTTP the path names a session, so there is none to leave out: the hint says how to make it here
    assert absent["hint"] == 'Make it first (create: POST /sessions {"name": "agent-7"}), then send this request again.'
    assert absent["details"]["field"] == "session" and ok(api.get("/sessions"))["sessions"] == []


@pytest.fixture
def paused(api, tmp_path):
    """A session of ``APP`` paused in ``total``, deleted at the end."""
    app = write(tmp_path, "app.py", APP)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# add")}))
    assert ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))["state"] == "paused"
    yield sid
    ok(api.delete(f"/sessions/{sid}"))


def test_evaluate_in_a_frame_the_stop_lacks_names_the_frame(api, paused):
    frames = ok(api.get(f"/sessions/{paused}/stacktrace"))["frames"]
    unknown = max(f["id"] for f in frames) + 1000
    gone = error(api.post(f"/sessions/{paused}/evaluate", json={"expression": "acc", "frame_id": unknown}), 400,
                 "invalid_request")
    assert str(unknown) in gone["message"] and "stack" in gone["hint"] and "expression" not in gone["hint"]
    assert gone["details"]["field"] == "frame_id"
    caller = ok(api.post(f"/sessions/{paused}/evaluate", json={"expression": "values", "frame_id": frames[1]["id"]}))
    assert caller["variable"]["value"] == "[3, 4, 5]"


def test_an_evaluation_error_keeps_the_adapters_message_not_its_traceback(api, paused):
    raised = error(api.post(f"/sessions/{paused}/evaluate", json={"expression": "acc / 0"}), 400,
                   "evaluation_failed")
    assert raised["details"]["adapter_message"] == "ZeroDivisionError: division by zero"
    assert raised["details"]["type"] == "ZeroDivisionError"


def test_idle_session_times_out_3_8(api, tmp_path):
    app = write(tmp_path, "idle.py", "x = 1  # here\n")
    sid = ok(api.post("/sessions", json={"timeout_minutes": 0.02}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 1}))
    assert ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))["state"] == "paused"
    # The list of sessions touches none of them (a status poll would keep this one alive).
    wait_until(lambda: [s["state"] for s in ok(api.get("/sessions"))["sessions"] if s["id"] == sid] == ["terminated"],
               20, "the idle session to end", poll=0.2)
    assert ok(api.get(f"/sessions/{sid}"))["session"]["state"] == "terminated"
    assert ok(api.post(f"/sessions/{sid}/step-over", json={}))["state"] == "terminated"


def test_target_death_and_wrong_state_3_9(api, tmp_path):
    app = write(tmp_path, "dies.py", """
        import os
        x = 1  # here
        os._exit(3)
    """)
    error(api.get("/sessions/s99"), 404, "session_not_found")
    error(api.post("/sessions/nope/step-over", json={}), 404, "session_not_found")
    error(api.get("/sessions/nope/breakpoints"), 404, "session_not_found")
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    error(api.post(f"/sessions/{sid}/step-over", json={}), 409, "not_paused")
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# here")}))
    ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    error(api.post(f"/sessions/{sid}/launch", json={"program": app}), 400, "invalid_request")
    end = ok(api.post(f"/sessions/{sid}/continue", json={}))
    assert end == {"state": "terminated", "stop": None, "exit_code": 3, "thread_end": None}


def test_still_running_is_200_and_pause_stops_it_4_4(api, tmp_path):
    app = write(tmp_path, "spin.py", """
        import time
        n = 0
        while True:
            n += 1
            time.sleep(0.01)
    """)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    started = ok(api.post(f"/sessions/{sid}/launch", json={"program": app, "timeout": 0.5}))
    assert started["state"] == "running" and started["stop"] is None
    assert ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 0.3})) == {"state": "running", "stop": None}
    paused = ok(api.post(f"/sessions/{sid}/pause", json={}))
    assert paused["state"] == "paused" and paused["stop"]["reason"] == "pause"
    ok(api.delete(f"/sessions/{sid}"))


def test_syntax_error_4_1(api, tmp_path):
    app = write(tmp_path, "broken.py", "x = 1\nif x == 1\n    pass\n")
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    body = error(api.post(f"/sessions/{sid}/launch", json={"program": app}), 400, "syntax_error")
    assert body["details"]["line"] == 2 and body["details"]["text"].strip() == "if x == 1"


def test_stdin_4_6(api, tmp_path):
    app = write(tmp_path, "ask.py", """
        name = input("name? ")
        print("hello", name)
    """)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    assert ok(api.post(f"/sessions/{sid}/launch", json={"program": app, "wait": False}))["state"] == "running"
    ok(api.post(f"/sessions/{sid}/input", json={"text": "Ada\n"}))
    assert ok(api.post(f"/sessions/{sid}/wait", json={}))["exit_code"] == 0
    assert "hello Ada" in "".join(c["text"] for c in ok(api.get(f"/sessions/{sid}/output"))["chunks"])


def test_large_and_circular_values_4_7_and_4_8(api, tmp_path):
    app = write(tmp_path, "big.py", """
        class Node:
            def __init__(self):
                self.parent = self
        big = list(range(100_000))
        node = Node()
        text = "é" * 5000
        x = 1  # here
    """)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# here")}))
    ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    big = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "big"}))["variable"]
    assert big["ref"] > 0
    page = ok(api.get(f"/sessions/{sid}/variables/{big['ref']}", params={"start": 500, "count": 10}))
    assert page["total"] >= 100_000 and [v["value"] for v in page["items"] if v["name"].isdigit()][:1] == ["500"]
    text = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "text"}))["variable"]
    assert text["truncated"] is True and "é" in text["value"]
    node = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "node"}))["variable"]
    child = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/variables/{node['ref']}"))["items"]}["parent"]
    again = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/variables/{child['ref']}"))["items"]}["parent"]
    assert again["type"] == "Node"
    ok(api.delete(f"/sessions/{sid}"))


def test_bad_input_is_400_naming_the_field_never_422(api):
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    assert error(api.post(f"/sessions/{sid}/evaluate", json={"expression": 5}), 400,
                 "invalid_request")["details"]["field"] == "expression"
    assert "frame" in error(api.post(f"/sessions/{sid}/evaluate", json={"expression": "1", "frame": 1}), 400,
                            "invalid_request")["message"]
    assert error(api.get(f"/sessions/{sid}/variables/abc"), 400, "invalid_request")["details"]["field"] == "ref"
    assert error(api.get(f"/sessions/{sid}/output", params={"since": "-1"}), 400,
                 "invalid_request")["details"]["field"] == "since"
    error(api.post(f"/sessions/{sid}/launch", json={"program": "x.py", "timeout": "soon"}), 400, "invalid_request")
    error(api.post("/sessions", content=b"{not json"), 400, "invalid_request")
    error(api.post("/sessions", json=[1, 2]), 400, "invalid_request")
    error(api.post(f"/sessions/{sid}/launch", json={"program": "a.py", "session": "s1"}), 400, "invalid_request")
    error(api.get("/no/such/route"), 404, "not_found")
    error(api.put("/sessions"), 405, "method_not_allowed")


def test_info_health_config(api):
    assert api.get("/health", headers={"Authorization": ""}).json() == {"status": "ok"}
    info = ok(api.get("/info"))
    assert info["backends"] == ["debugpy", "dap", "mycel", "ez"] and "launch" in info["operations"]
    assert ok(api.get("/config"))["redact"] is True and "token" not in ok(api.get("/config"))


def test_the_same_breakpoint_spec_twice_answers_the_existing_breakpoint(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    spec = {"path": app, "line": line_of(app, "# add"), "condition": "item == 4"}
    first = ok(api.post(f"/sessions/{sid}/breakpoints", json=spec))["breakpoint"]
    assert ok(api.post(f"/sessions/{sid}/breakpoints", json=spec))["breakpoint"] == first
    changed = ok(api.post(f"/sessions/{sid}/breakpoints", json={**spec, "condition": "item == 5"}))["breakpoint"]
    assert changed["id"] == first["id"] and changed["condition"] == "item == 5"
    assert "replaced breakpoint" in changed["message"]
    assert [bp["id"] for bp in ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]] == [first["id"]]
