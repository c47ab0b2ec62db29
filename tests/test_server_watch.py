"""Over real HTTP: PATCH a session (name, idle timeout), hover values, and watch expressions returned with each stop."""

from __future__ import annotations

import time

from tests.server_fixtures import error, line_of, ok, write

APP = """
words = ["alpha"] * 100
count = 0
for n in range(3):
    count += n  # add
print("count", count)
"""


def test_patch_renames_a_session_and_its_idle_timeout_stops_it(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    sid = ok(api.post("/sessions", json={"name": "first"}))["session"]["id"]
    ok(api.post("/sessions", json={"name": "taken"}))
    renamed = ok(api.patch(f"/sessions/{sid}", json={"name": "agent-1"}))
    assert renamed["session"]["name"] == "agent-1" and renamed["timeout_minutes"] is None
    assert ok(api.get("/sessions/agent-1"))["session"]["id"] == sid  # the new name addresses it
    assert error(api.patch(f"/sessions/{sid}", json={"name": "taken"}), 400, "invalid_request")["details"] == {
        "field": "name"}
    assert error(api.patch(f"/sessions/{sid}", json={"timeout_minutes": -1}), 400, "invalid_request")["details"][
        "field"] == "timeout_minutes"
    error(api.patch("/sessions/s99", json={"name": "x"}), 404, "session_not_found")

    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# add")}))
    assert ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))["state"] == "paused"
    assert ok(api.patch(f"/sessions/{sid}", json={"timeout_minutes": 0.01}))["timeout_minutes"] == 0.01
    deadline = time.monotonic() + 15
    while ok(api.get("/sessions"))["sessions"][0]["state"] != "terminated":  # a GET of the session would touch it
        assert time.monotonic() < deadline, "the idle session was not stopped"
        time.sleep(0.2)


def test_hover_gives_a_short_value(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# add")}))
    ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    short = ok(api.post(f"/sessions/{sid}/hover", json={"expression": "words"}))["variable"]
    assert short["truncated"] is True and len(short["value"]) == 121 and short["value"].endswith("…")
    assert ok(api.post(f"/sessions/{sid}/hover", json={"expression": "count"}))["variable"]["value"] == "0"
    error(api.post(f"/sessions/{sid}/hover", json={"expression": "nope"}), 400, "evaluation_failed")
    error(api.post(f"/sessions/{sid}/hover", json={}), 400, "invalid_request")
    ok(api.delete(f"/sessions/{sid}"))


def test_watch_expressions_come_with_every_stop(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    before = ok(api.post(f"/sessions/{sid}/watch", json={"expression": "count * 10"}))["watches"]
    assert before == [{"index": 1, "expression": "count * 10", "value": None, "type": "", "error": None}]
    ok(api.post(f"/sessions/{sid}/watch", json={"expression": "missing_name"}))
    assert len(ok(api.post(f"/sessions/{sid}/watch", json={"expression": "count * 10"}))["watches"]) == 2

    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# add")}))
    first = ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    assert first["watches"][0]["value"] == "0" and "missing_name" in first["watches"][1]["error"]
    ok(api.post(f"/sessions/{sid}/continue", json={}))
    again = ok(api.post(f"/sessions/{sid}/continue", json={}))
    assert [w["value"] for w in again["watches"]] == ["10", None]
    assert ok(api.get(f"/sessions/{sid}/watch"))["watches"][0]["value"] == "10"

    left = ok(api.delete(f"/sessions/{sid}/watch/2"))["watches"]
    assert [w["expression"] for w in left] == ["count * 10"]
    assert error(api.delete(f"/sessions/{sid}/watch/5"), 400, "invalid_request")["details"] == {"field": "index"}
    ok(api.delete(f"/sessions/{sid}/watch/1"))
    assert "watches" not in ok(api.post(f"/sessions/{sid}/step-over", json={}))  # no watches: nothing added
    ok(api.delete(f"/sessions/{sid}"))
