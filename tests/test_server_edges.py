"""Seed 004 flows and edge cases not covered in test_server_flows, over real HTTP: 3.2, 4.3, 4.5 and 4.9."""

from __future__ import annotations

import time

from jupyter_debug_relay.transports import procfs
from tests.server_fixtures import debugpy_service, error, line_of, ok, write

THREADS = """
import threading
def work(n):
    total = n * 2  # work
    return total
threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""

SPAWNS = """
import subprocess, sys
child = subprocess.run([sys.executable, "-c", "print('from the child')"], capture_output=True, text=True)
print("child said", child.stdout.strip())
done = True  # after
"""

ODD = """
class Bad:
    def __repr__(self):
        raise RuntimeError("no repr")

def deep(n):
    if n == 0:
        return n  # bottom
    return deep(n - 1)

café = "naïve ✓"
bad = Bad()
deep(40)
"""


def test_attach_to_a_running_process_3_2(api, tmp_path):
    with debugpy_service(tmp_path) as (service, port, target):
        sid = ok(api.post("/sessions", json={}))["session"]["id"]
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": service, "line": line_of(service, "# tick")}))
        deadline = time.monotonic() + 20
        while True:
            answer = api.post(f"/sessions/{sid}/attach", json={"port": port})
            if answer.status_code == 200:
                break
            assert answer.json()["error"]["code"] in ("connection_failed", "adapter_failed"), answer.text
            assert time.monotonic() < deadline, answer.text
            sid = ok(api.post("/sessions", json={}))["session"]["id"]  # a failed start leaves its session failed
            ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": service, "line": line_of(service, "# tick")}))
            time.sleep(0.2)
        stop = answer.json()
        if stop["state"] != "paused":
            stop = ok(api.post(f"/sessions/{sid}/wait", json={}))
        assert stop["stop"]["frame"]["line"] == line_of(service, "# tick")
        first = int(ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "counter"}))["variable"]["value"])
        ok(api.post(f"/sessions/{sid}/continue", json={}))  # the loop comes round to the breakpoint again
        assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "counter"}))["variable"]["value"] == \
            str(first + 1)
        assert ok(api.post(f"/sessions/{sid}/detach", json={}))["state"] == "terminated"
        time.sleep(0.3)
        assert target.poll() is None, "detach leaves the target running"


def test_threads_hitting_one_breakpoint_4_3(api, tmp_path):
    app = write(tmp_path, "threads.py", THREADS)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# work")}))
    first = ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    assert first["state"] == "paused" and first["stop"]["frame"]["name"] == "work"
    threads = ok(api.get(f"/sessions/{sid}/threads"))["threads"]
    assert len(threads) >= 2 and any(t["stopped"] for t in threads)
    second = ok(api.post(f"/sessions/{sid}/continue", json={}))
    assert second["state"] == "paused" and second["stop"]["frame"]["name"] == "work"  # the other thread
    for _ in range(3):  # a thread that hit the breakpoint at the same time is reported as it resumes
        if ok(api.post(f"/sessions/{sid}/continue", json={}))["state"] == "terminated":
            break
    else:
        raise AssertionError("the threaded target did not end")


def test_a_child_process_runs_free_and_the_parent_is_debugged_4_5(api, tmp_path):
    app = write(tmp_path, "spawns.py", SPAWNS)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# after")}))
    stop = ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    assert stop["state"] == "paused" and stop["stop"]["frame"]["line"] == line_of(app, "# after")
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "child.returncode"}))["variable"][
        "value"] == "0"
    out = "".join(c["text"] for c in ok(api.get(f"/sessions/{sid}/output"))["chunks"])
    assert "child said from the child" in out
    assert [s["id"] for s in ok(api.get("/sessions"))["sessions"]] == [sid]  # no session for the child
    ok(api.delete(f"/sessions/{sid}"))


def test_unicode_a_failing_repr_and_a_deep_stack_4_9(api, tmp_path):
    app = write(tmp_path, "odd.py", ODD)
    sid = ok(api.post("/sessions", json={}))["session"]["id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# bottom")}))
    ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "café"}))["variable"]["value"] == "'naïve ✓'"
    page = ok(api.get(f"/sessions/{sid}/stacktrace", params={"start": 0, "levels": 10}))
    assert len(page["frames"]) == 10 and page["total"] >= 42
    rest = ok(api.get(f"/sessions/{sid}/stacktrace", params={"start": 40, "levels": 10}))
    assert rest["frames"][-1]["name"] == "<module>"
    bad = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "bad"}))["variable"]
    assert bad["type"] == "Bad" and bad["value"]  # a repr that raises still shows something
    error(api.post(f"/sessions/{sid}/evaluate", json={"expression": "repr(bad)"}), 400, "evaluation_failed")
    ok(api.delete(f"/sessions/{sid}"))


def test_delete_removes_a_session_and_terminate_keeps_it_listed(api, tmp_path):
    app = write(tmp_path, "app.py", "x = 1  # here\nprint(x)\n")
    kept, gone = (ok(api.post("/sessions", json={}))["session"]["id"] for _ in range(2))
    pids = {}
    for sid in (kept, gone):
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 1}))
        assert ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))["state"] == "paused"
        pids[sid] = ok(api.get(f"/sessions/{sid}"))["session"]["pid"]
    assert ok(api.post(f"/sessions/{kept}/terminate", json={}))["state"] == "terminated"
    assert ok(api.get(f"/sessions/{kept}"))["session"]["state"] == "terminated"  # kept, with its output
    assert ok(api.delete(f"/sessions/{gone}")) == {"deleted": True}
    assert procfs.state(pids[gone]) in (None, "Z")  # its target ended with it
    error(api.get(f"/sessions/{gone}"), 404, "session_not_found")
    error(api.delete(f"/sessions/{gone}"), 404, "session_not_found")
    assert [s["id"] for s in ok(api.get("/sessions"))["sessions"]] == [kept]
