"""Seed 004 §5.7 over HTTP: breakpoints saved on every change and restored at start, profiles, export and import."""

from __future__ import annotations

import json
import time

from tests.server_fixtures import line_of, live_server, write

APP = """
def total(items):
    acc = 0
    for item in items:
        acc += item  # add
    return acc

print("result", total([3, 4, 5]))  # call
"""


def ok(response):
    assert response.status_code == 200, response.text
    return response.json()


def saved_file(home, until, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        path = home / "breakpoints.json"
        data = json.loads(path.read_text()) if path.exists() else None
        if data is not None and until(data):
            return data
        assert time.monotonic() < deadline, data
        time.sleep(0.05)


def test_breakpoints_are_saved_on_every_change_and_restored_at_start(tmp_path):
    app = write(tmp_path, "app.py", APP)
    home = tmp_path / "home"
    with live_server(persist=True, home=str(home)) as (_, api):
        sid = ok(api.post("/sessions", json={}))["session"]["id"]
        bp = ok(api.post("/breakpoints",
                         json={"path": app, "line": line_of(app, "# add"), "condition": "item == 4"}))["breakpoint"]
        saved = saved_file(home, lambda d: len(d["breakpoints"]) == 1)
        assert saved["breakpoints"][0] == {"kind": "line", "path": app, "line": line_of(app, "# add"),
                                           "condition": "item == 4", "enabled": True}
        ok(api.post("/breakpoints", json={"kind": "function", "name": "total"}))
        ok(api.patch(f"/breakpoints/{bp['id']}", json={"enabled": False}))
        saved_file(home, lambda d: len(d["breakpoints"]) == 2 and d["breakpoints"][0]["enabled"] is False)
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 1}))  # the session's own: not kept
        ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"mode": "raised"}))
    assert len(saved_file(home, lambda d: True)["breakpoints"]) == 2
    assert saved_file(home, lambda d: True)["exceptions"] == "raised"  # written at the latest when the server stops

    with live_server(persist=True, home=str(home)) as (_, api):
        sid = ok(api.post("/sessions", json={}))["session"]["id"]
        now = ok(api.get("/breakpoints"))
        assert [(b["kind"], b.get("line"), b.get("name"), b["condition"], b["enabled"]) for b in now["breakpoints"]] \
            == [("line", line_of(app, "# add"), None, "item == 4", False), ("function", None, "total", None, True)]
        assert now["exceptions"] == "raised"
        ok(api.delete(f"/breakpoints/{now['breakpoints'][1]['id']}"))
        saved_file(home, lambda d: len(d["breakpoints"]) == 1)


def test_a_server_without_persistence_leaves_the_home_alone(tmp_path):
    app = write(tmp_path, "app.py", APP)
    with live_server(home=str(tmp_path / "home")) as (_, api):
        sid = ok(api.post("/sessions", json={}))["session"]["id"]
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 1}))
    assert not (tmp_path / "home").exists()


def test_named_profiles_are_saved_listed_shown_and_loaded(tmp_path):
    app = write(tmp_path, "app.py", APP)
    add = {"path": app, "line": line_of(app, "# add"), "hit_condition": ">= 2"}
    with live_server(home=str(tmp_path / "home")) as (_, api):
        assert ok(api.get("/breakpoint-profiles")) == {"profiles": []}
        sid = ok(api.post("/sessions", json={}))["session"]["id"]
        bp = ok(api.post("/breakpoints", json=add))["breakpoint"]
        kept = ok(api.put("/breakpoint-profiles/smoke"))  # no body: the relay's breakpoints now
        assert kept == {"name": "smoke", "breakpoints": [{"kind": "line", "enabled": True, **add}],
                        "exceptions": "uncaught"}
        call = {"kind": "line", "path": app, "line": line_of(app, "# call")}
        ok(api.put("/breakpoint-profiles/calls", json={"breakpoints": [call], "exceptions": "uncaught"}))
        assert ok(api.get("/breakpoint-profiles")) == {"profiles": ["calls", "smoke"]}
        assert ok(api.get("/breakpoint-profiles/smoke")) == kept

        ok(api.delete(f"/breakpoints/{bp['id']}"))
        loaded = ok(api.post("/breakpoint-profiles/smoke/load"))
        assert [(b["line"], b["hit_condition"]) for b in loaded["breakpoints"]] == [(add["line"], ">= 2")]
        again = ok(api.post("/breakpoint-profiles/smoke/load"))  # the same spec twice: the same breakpoint
        assert again["breakpoints"][0]["id"] == loaded["breakpoints"][0]["id"]
        assert ok(api.post("/breakpoint-profiles/calls/load"))["exceptions"] == "uncaught"
        assert len(ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]) == 2

        missing = api.get("/breakpoint-profiles/nope")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        bad = api.put("/breakpoint-profiles/..secret", json={})
        assert bad.status_code == 400 and bad.json()["error"]["details"] == {"field": "name"}
        wrong = api.put("/breakpoint-profiles/x", json={"breakpoints": [{"line": "ten"}]})
        assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "invalid_request"
        assert "breakpoints" in wrong.json()["error"]["message"]


def test_a_session_exported_then_imported_starts_again_where_it_stopped(tmp_path):
    app = write(tmp_path, "app.py", APP)
    with live_server(home=str(tmp_path / "home")) as (_, api):
        sid = ok(api.post("/sessions", json={"name": "first"}))["session"]["id"]
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# add"),
                                                          "condition": "item == 5"}))
        started = ok(api.post(f"/sessions/{sid}/launch", json={"program": app, "args": ["--api-key", "k-123"],
                                                               "env": {"MODE": "x"}}))
        assert started["state"] == "paused"
        exported = ok(api.get(f"/sessions/{sid}/export"))["export"]
        assert exported["version"] == 1 and exported["name"] == "first"
        assert exported["start"] == {"operation": "launch", "args": {
            "program": app, "args": ["--api-key", "<redacted>"], "env": {"MODE": "x"}}}
        assert [b["condition"] for b in exported["breakpoints"]] == ["item == 5"]
        ok(api.delete(f"/sessions/{sid}"))
        ok(api.delete("/breakpoints/1"))

        masked = api.post("/sessions/import", json=exported)
        assert masked.status_code == 400 and masked.json()["error"]["details"] == {"field": "start.args.args[1]"}
        exported["start"]["args"]["args"] = []
        again = ok(api.post("/sessions/import", json={**exported, "name": "second"}))
        assert again["session"]["name"] == "second" and again["state"] == "paused"
        assert again["stop"]["frame"]["line"] == line_of(app, "# add")
        assert ok(api.post(f"/sessions/{again['session']['id']}/evaluate", json={"expression": "item"})
                  )["variable"]["value"] == "5"
        ok(api.delete(f"/sessions/{again['session']['id']}"))

        made_here = ok(api.post("/sessions", json={}))["session"]["id"]
        unknown = api.get(f"/sessions/{made_here}/export")
        assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "unsupported"
        assert api.get("/sessions/s99/export").status_code == 404
        bad = api.post("/sessions/import", json={"start": {"operation": "rm -rf"}})
        assert bad.status_code == 400 and "operation" in bad.json()["error"]["message"]


def test_a_session_launched_from_the_python_api_exports_over_http_and_imports_back(tmp_path):
    app = write(tmp_path, "app.py", APP)
    with live_server(home=str(tmp_path / "home")) as (server, api):
        relay = server.relay
        relay.breakpoints.add(app, line_of(app, "# add"), condition="item == 4")
        session = relay.launch(app, args=["--password", "hunter2"], name="py")
        session.wait_for_stop()
        exported = ok(api.get(f"/sessions/{session.id}/export"))["export"]
        assert exported["name"] == "py" and exported["start"] == {"operation": "launch", "args": {
            "program": app, "args": ["--password", "<redacted>"]}}
        assert [b["condition"] for b in exported["breakpoints"]] == ["item == 4"]
        session.terminate()
        clear = session.export(redact=False)
        assert clear["start"]["args"]["args"] == ["--password", "hunter2"]
        again = relay.import_session(clear)
        assert again.state == "paused" and again.evaluate("item").value == "4"
        again.terminate()
