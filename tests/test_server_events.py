"""Server-Sent Events over a live server: ids are event seqs, Last-Event-ID resumes with no gap and no duplicate."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from tests.server_fixtures import TOKEN, line_of, live_server, write


def read_events(client: httpx.Client, sid: str, until: str, last: int | None = None,
                stop_after: int | None = None) -> list[tuple[int, str, dict]]:
    """Events of ``sid`` until one named ``until`` (or ``stop_after`` events: then the connection is dropped)."""
    headers = {"Last-Event-ID": str(last)} if last is not None else {}
    events: list[tuple[int, str, dict]] = []
    with client.stream("GET", f"/sessions/{sid}/events", headers=headers, timeout=30) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        fields: dict[str, str] = {}
        for line in response.iter_lines():
            if line:
                if not line.startswith(":"):
                    key, _, value = line.partition(": ")
                    fields[key] = value
                continue
            if "event" in fields:
                events.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
                if fields["event"] == until or len(events) == stop_after:
                    break
            fields = {}
    return events


def test_sse_resume_after_a_dropped_connection_loses_and_repeats_nothing(tmp_path):
    app = write(tmp_path, "count.py", """
        for i in range(30):
            print("tick", i, flush=True)  # here
    """)
    with live_server() as (_, client):
        sid = client.post("/sessions", json={}).json()["session"]["id"]
        client.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# here")})
        client.post(f"/sessions/{sid}/launch", json={"program": app})
        for _ in range(8):  # events pile up in history while nobody listens
            client.post(f"/sessions/{sid}/continue", json={})
        first = read_events(client, sid, until="terminated", last=0, stop_after=10)
        assert len(first) == 10
        client.delete(f"/sessions/{sid}/breakpoints/1")
        client.post(f"/sessions/{sid}/continue", json={"wait": False})
        rest = read_events(client, sid, until="terminated", last=first[-1][0])
        seqs = [seq for seq, _, _ in first + rest]
        assert seqs == sorted(set(seqs)), "an event came twice or out of order"
        assert rest[-1][1] == "terminated" and all(e[2]["session"] == sid for e in first + rest)
        everything = read_events(client, sid, until="terminated", last=0)
        assert [e[0] for e in everything] == seqs, "the resumed stream missed an event"
        printed = "".join(e[2]["body"]["text"] for e in everything if e[1] == "output")
        assert all(f"tick {i}\n" in printed for i in range(30))


def test_sse_of_an_unknown_session_is_404_and_bad_last_event_id_400():
    with live_server() as (_, client):
        assert client.get("/sessions/s9/events").json()["error"]["code"] == "session_not_found"
        sid = client.post("/sessions", json={}).json()["session"]["id"]
        response = client.get(f"/sessions/{sid}/events", headers={"Last-Event-ID": "abc"})
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_request"


def test_cli_serve_prints_the_url_and_shutdown_reaps_every_target(tmp_path):
    app = write(tmp_path, "forever.py", "import time\nx = 1  # here\nwhile True:\n    time.sleep(0.05)\n")
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_debug_relay.cli", "serve", "--port", "0", "--token", TOKEN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        sid = client.post("/sessions", json={}).json()["session"]["id"]
        client.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 2})
        pid = client.post(f"/sessions/{sid}/launch", json={"program": app}).json()["session"]["pid"]
        second = client.post("/sessions", json={}).json()["session"]["id"]
        client.post(f"/sessions/{second}/launch", json={"program": app, "wait": False})
        assert client.post("/shutdown").json() == {"shutting_down": True}
        assert proc.wait(20) == 0
        assert pid is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
