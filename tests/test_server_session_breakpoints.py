"""Per-session breakpoints over real HTTP: one made through a session stops that session only; global ones stop all."""

from __future__ import annotations

from tests.server_fixtures import line_of, ok, write

APP = """
total = 0
for i in range(3):
    total += i  # add
print("total", total)
"""


def test_a_sessions_breakpoint_stops_that_session_only(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    line = line_of(app, "# add")
    owner = ok(api.post("/sessions", json={"name": "owner"}))["session"]["id"]
    other = ok(api.post("/sessions", json={"name": "other"}))["session"]["id"]
    made = ok(api.post(f"/sessions/{owner}/breakpoints", json={"path": app, "line": line}))["breakpoint"]
    assert made["session"] == owner
    again = ok(api.post(f"/sessions/{owner}/breakpoints", json={"path": app, "line": line}))["breakpoint"]
    assert again["id"] == made["id"]  # the same spec twice is the same breakpoint
    assert [b["id"] for b in ok(api.get(f"/sessions/{owner}/breakpoints"))["breakpoints"]] == [made["id"]]
    assert ok(api.get(f"/sessions/{other}/breakpoints"))["breakpoints"] == []

    other_run = ok(api.post(f"/sessions/{other}/launch", json={"program": app}))
    assert other_run["state"] == "terminated" and other_run["exit_code"] == 0  # ran past the owner's breakpoint
    owner_run = ok(api.post(f"/sessions/{owner}/launch", json={"program": app}))
    assert owner_run["state"] == "paused" and owner_run["stop"]["frame"]["line"] == line
    assert ok(api.get(f"/sessions/{owner}/breakpoints"))["breakpoints"][0]["verified"] is True

    refused = api.delete(f"/sessions/{other}/breakpoints/{made['id']}")
    assert refused.status_code == 400 and refused.json()["error"]["details"] == {"field": "id"}
    assert api.get("/sessions/s99/breakpoints").json()["error"]["code"] == "session_not_found"
    ok(api.delete(f"/sessions/{owner}"))


def test_a_global_breakpoint_stops_every_session_and_shows_in_each(api, tmp_path):
    app = write(tmp_path, "app.py", APP)
    line = line_of(app, "# add")
    made = ok(api.post("/breakpoints", json={"path": app, "line": line, "condition": "i == 1"}))["breakpoint"]
    assert made["session"] is None
    first = ok(api.post("/sessions", json={}))["session"]["id"]
    second = ok(api.post("/sessions", json={}))["session"]["id"]
    own = ok(api.post(f"/sessions/{second}/breakpoints", json={"path": app, "line": line_of(app, "print(")}))
    for sid in (first, second):
        assert ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))["stop"]["frame"]["line"] == line
    assert [b["id"] for b in ok(api.get(f"/sessions/{first}/breakpoints"))["breakpoints"]] == [made["id"]]
    assert [b["id"] for b in ok(api.get(f"/sessions/{second}/breakpoints"))["breakpoints"]] == \
        [made["id"], own["breakpoint"]["id"]]
    assert ok(api.post(f"/sessions/{first}/continue", json={}))["state"] == "terminated"
    assert ok(api.post(f"/sessions/{second}/continue", json={}))["stop"]["frame"]["line"] == line_of(app, "print(")
    for sid in (first, second):
        ok(api.delete(f"/sessions/{sid}"))
