"""Remote relays: another relay server (its own process and file tree) whose sessions are sessions here."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from remote_fixtures import TOKEN, Proxy, new_remote

from jupyter_debug_relay import Relay
from jupyter_debug_relay.errors import RelayError

APP = """\
import time
total = 0
for i in range(4):
    total += i  # loop
    print("line", i, flush=True)
time.sleep(1.5)  # slow
print("done", total, flush=True)
"""


RELAY_OPTIONS = {"record": False, "request_timeout": 20}  # the local relay gives a remote 20 s to answer

@pytest.fixture(scope="module")
def remote():
    server = new_remote()
    try:
        yield server
    finally:
        server.stop()


def call(relay: Relay, operation: str, /, **args):
    return relay.operations.call(operation, args)


def line_of(path: str, marker: str) -> int:
    return next(i for i, text in enumerate(Path(path).read_text().splitlines(), 1) if marker in text)


def direct(remote) -> httpx.Client:
    """A client of the remote relay itself, past this relay: what another user there sees."""
    return httpx.Client(base_url=remote.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)


def test_a_remote_session_is_a_session_here_for_every_verb(remote, relay):
    app = remote.write("app.py", APP)
    added = call(relay, "remote_add", name="lab", url=remote.url, token_file=str(remote.token_file))
    assert added["remote"]["state"] == "connected"
    bp = relay.breakpoints.add(app, line_of(app, "# loop"))
    started = call(relay, "launch", program=app, on="lab")["session"]
    assert started.name.startswith("lab/s") and started.backend == "remote"
    name = started.name
    stop = call(relay, "wait", session=name)["stop"]
    assert stop.frame.path == app and stop.frame.line == line_of(app, "# loop")
    assert stop.source_line.strip() == "total += i  # loop" and stop.breakpoint_ids == [bp.id]
    assert [s.name for s in call(relay, "sessions")["sessions"]] == [name]
    assert call(relay, "evaluate", session=name, expression="total + 100")["variable"].value == "100"
    frames = call(relay, "stack", session=name)["frames"]
    scopes = call(relay, "scopes", session=name, frame_id=frames[0].id)["scopes"]
    names = [v.name for v in call(relay, "variables", session=name, ref=scopes[0].ref).items]
    assert "total" in names and "i" in names
    moved = call(relay, "next", session=name)["stop"]
    assert moved.frame.line == line_of(app, 'print("line"')
    call(relay, "set_variable", session=name, ref=scopes[0].ref, name="total", value="1000")
    source = call(relay, "source", session=name)
    assert source["source"] == APP and len(source["hash"]) == 64
    assert relay.get(name).source(moved.frame) == APP  # the second time from the cache, by its hash
    with pytest.raises(RelayError) as restart:
        call(relay, "restart", session=name)
    assert restart.value.code == "unsupported" and "remote relay" in restart.value.message
    relay.breakpoints.remove(bp.id)
    with pytest.raises(RelayError) as ended:
        call(relay, "continue", session=name, timeout=20)
    assert ended.value.code == "target_exited" and relay.get(name).state == "terminated"
    text = "".join(c.text for c in call(relay, "output", session=name).chunks)
    assert "line 0" in text and "done 1006" in text  # 1000 set here, then 1 + 2 + 3 there
    listed = call(relay, "remote_list")["remotes"]
    assert [r["name"] for r in listed] == ["lab"] and "token" not in str(listed)
    call(relay, "remote_remove", name="lab")
    assert call(relay, "remote_list")["remotes"] == []


def test_a_launch_on_a_remote_answers_the_breakpoints_the_remote_could_not_bind(remote, relay):
    app = remote.write("bound.py", APP)
    call(relay, "remote_add", name="lab", url=remote.url, token_file=str(remote.token_file))
    bound = relay.breakpoints.add(app, line_of(app, "# loop"))
    library = relay.breakpoints.add(json.__file__, line_of(json.__file__, "_default_encoder = JSONEncoder("))
    started = call(relay, "launch", program=app, on="lab")
    assert [(bp.id, bp.status) for bp in started["unverified"]] == [(library.id, "unverified")]
    assert "excluded" in started["unverified"][0].message  # the remote's own reason: just-my-code leaves it out
    name = started["session"].name
    assert call(relay, "wait", session=name)["stop"].breakpoint_ids == [bound.id]
    assert relay.breakpoints.get(bound.id).status == "verified"
    call(relay, "terminate", session=name)
    call(relay, "remote_remove", name="lab")


def test_a_launch_answer_holds_the_remote_word_even_when_its_events_come_late(remote, relay, monkeypatch):
    from jupyter_debug_relay.remote import backend

    async def late(*args):  # the event stream lags: its breakpoint events come after the launch's answer
        async for event in backend_follow(*args):
            if event.event == "breakpoint":
                await asyncio.sleep(0.5)
            yield event

    backend_follow = backend.follow
    monkeypatch.setattr(backend, "follow", late)
    app = remote.write("late.py", APP)
    call(relay, "remote_add", name="lab", url=remote.url, token_file=str(remote.token_file))
    bound = relay.breakpoints.add(app, line_of(app, "# loop"))
    started = call(relay, "launch", program=app, on="lab")
    assert started["unverified"] == [] and relay.breakpoints.get(bound.id).status == "verified"
    name = started["session"].name
    assert call(relay, "wait", session=name)["stop"].breakpoint_ids == [bound.id]
    assert relay.breakpoints.get(bound.id).status == "verified"  # the late events said the same, or nothing more
    call(relay, "terminate", session=name)
    call(relay, "remote_remove", name="lab")


def test_sessions_already_on_the_remote_are_listed_and_a_removed_remote_keeps_them(remote, relay):
    app = remote.write("wait.py", "import time\nfor i in range(600):\n    time.sleep(0.05)  # tick\n")
    with direct(remote) as other:
        made = other.post("/sessions/s0/launch".replace("s0", other.post("/sessions", json={}).json()["session"]["id"]),
                          json={"program": app, "wait": False}).json()["session"]
        try:
            added = call(relay, "remote_add", name="lab", url=remote.url, token_file=str(remote.token_file))
            assert f"lab/{made['id']}" in added["remote"]["sessions"]
            paused = call(relay, "pause", session=f"lab/{made['id']}")["stop"]
            assert paused.frame.path == app
            assert other.get(f"/sessions/{made['id']}").json()["session"]["state"] == "paused"
            call(relay, "remote_remove", name="lab")
            assert other.get(f"/sessions/{made['id']}").json()["session"]["state"] == "paused"  # let go of, not ended
        finally:
            other.post(f"/sessions/{made['id']}/terminate", json={})


def test_wrong_token_plain_http_and_unknown_names_are_refused(remote, relay, tmp_path):
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-token\n")
    with pytest.raises(RelayError) as refused:
        call(relay, "remote_add", name="lab", url=remote.url, token_file=str(wrong))
    assert refused.value.code == "unauthorized" and "token" in refused.value.message
    began = time.monotonic()
    with pytest.raises(RelayError) as clear:
        call(relay, "remote_add", name="far", url="http://192.0.2.10:8765", token_file=str(remote.token_file))
    assert clear.value.code == "unauthorized" and "plain HTTP" in clear.value.message
    assert time.monotonic() - began < 2  # refused before any connection was tried
    with pytest.raises(RelayError) as missing:
        call(relay, "remote_add", name="lab", url=remote.url, token_file=str(tmp_path / "none"))
    assert missing.value.code == "file_not_found"
    with pytest.raises(RelayError) as unknown:
        call(relay, "launch", program="app.py", on="nowhere")
    assert unknown.value.code == "invalid_request" and "nowhere" in unknown.value.message
    assert call(relay, "remote_list")["remotes"] == []


CUT_APP = APP.replace("time.sleep(1.5)", "time.sleep(3)") + 'print("end", flush=True)  # last\n'


def test_a_cut_in_the_middle_of_a_step_loses_and_repeats_nothing(relay):
    proxy = Proxy()
    remote = new_remote("--allow-host", f"127.0.0.1:{proxy.port}")  # the Host the relay sees through the proxy
    proxy.target = remote.port
    app = remote.write("cut.py", CUT_APP)
    try:
        call(relay, "remote_add", name="lab", url=f"http://127.0.0.1:{proxy.port}", token_file=str(remote.token_file))
        relay.breakpoints.add(app, line_of(app, "# loop"))
        name = call(relay, "launch", program=app, on="lab")["session"].name
        session = relay.get(name)
        call(relay, "wait", session=name)
        seen: list = []
        unsubscribe = relay.subscribe(seen.append, session.id)
        relay.breakpoints.clear()
        call(relay, "next", session=name)  # to the print
        call(relay, "next", session=name)  # back to the loop, i = 1
        relay.breakpoints.add(app, line_of(app, "# loop"))
        call(relay, "continue", session=name)  # i = 2
        relay.breakpoints.clear()
        relay.breakpoints.add(app, line_of(app, "# slow"))
        call(relay, "continue", session=name)
        relay.breakpoints.clear()
        stepped: list = []
        stepping = threading.Thread(target=lambda: stepped.append(call(relay, "next", session=name, timeout=30)))
        stepping.start()  # over the 3 s sleep
        time.sleep(0.3)
        proxy.cut()
        deadline = time.monotonic() + 10
        while session.state != "disconnected" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert session.state == "disconnected"
        with pytest.raises(RelayError) as down:
            call(relay, "threads", session=name)
        assert down.value.code == "connection_failed" and "disconnected" in down.value.message
        late = relay.breakpoints.add(app, line_of(app, "# last"))  # added while the link is down
        proxy.restore()
        stepping.join(40)
        assert stepped and stepped[0]["stop"].frame.line == line_of(app, 'print("done"')
        stop = call(relay, "continue", session=name, timeout=20)["stop"]
        assert stop.frame.line == line_of(app, "# last") and stop.breakpoint_ids == [late.id]
        unsubscribe()
        kinds = [e.event for e in seen]
        assert kinds.count("stopped") == 6, kinds  # next, next, continue, continue, the cut next, continue: once each
        assert "disconnected" in [e.body["state"] for e in seen if e.event == "session"]
        lines = "".join(e.body.get("text", "") for e in seen if e.event == "output")
        assert [lines.count(f"line {i}") for i in (1, 2, 3)] == [1, 1, 1] and lines.count("done") == 1
        call(relay, "terminate", session=name)
    finally:
        proxy.close()
        remote.stop()


def test_a_restarted_remote_says_it_lost_the_session(relay, tmp_path):
    server = new_remote()
    try:
        app = server.write("app.py", APP)
        call(relay, "remote_add", name="lab", url=server.url, token_file=str(server.token_file))
        name = call(relay, "launch", program=app, on="lab", stop_on_entry=True)["session"].name
        call(relay, "wait", session=name)
        server.stop()
        server.start()  # same port, same token, no sessions
        session = relay.get(name)
        deadline = time.monotonic() + 20
        while session.state != "failed" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert session.state == "failed"
        error = session.info().error
        assert error["code"] == "session_not_found" and "restarted" in error["message"]
        assert "lab" in error["message"] and name.split("/")[1] in error["message"]
    finally:
        server.stop()


def test_the_token_is_in_no_recording_and_no_command_line(remote, tmp_path):
    home = tmp_path / "home"
    with Relay(home=str(home), request_timeout=20) as relay:
        app = remote.write("rec.py", APP)
        call(relay, "remote_add", name="lab", url=remote.url, token_file=str(remote.token_file))
        name = call(relay, "launch", program=app, on="lab", stop_on_entry=True)["session"].name
        call(relay, "wait", session=name)
        call(relay, "terminate", session=name)
        relay.flush_recordings()
    for path in home.rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(errors="replace"), path
    assert TOKEN not in open(f"/proc/{remote.proc.pid}/cmdline").read()
    assert TOKEN not in open(f"/proc/{os.getpid()}/cmdline").read()


def test_events_reach_a_reader_that_attached_while_launching(remote, relay):
    app = remote.write("fast.py", "print('quick', flush=True)\n")
    call(relay, "remote_add", name="lab", url=remote.url, token_file=str(remote.token_file))
    name = call(relay, "launch", program=app, on="lab")["session"].name
    session = relay.get(name)
    deadline = time.monotonic() + 20
    while session.state != "terminated" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session.state == "terminated"
    assert "quick" in "".join(c.text for c in call(relay, "output", session=name).chunks)




def test_the_cli_adds_lists_and_removes_remotes_of_a_sessions_relay(remote, tmp_path):
    home = tmp_path / "home"
    with Relay(home=str(home), request_timeout=20) as relay:
        relay.create(name="anchor")  # a live session: the CLI's commands go to the relay that owns it
        env = {**os.environ, "JUPYTER_DEBUG_RELAY_HOME": str(home)}

        def cli(*words: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", *words], env=env,
                                  capture_output=True, text=True, timeout=60)

        added = cli("remote", "add", "lab", remote.url, "--token-file", str(remote.token_file), "--json")
        assert added.returncode == 0, added.stderr
        assert json.loads(added.stdout)["remote"]["name"] == "lab"
        assert TOKEN not in added.stdout
        listed = json.loads(cli("remote", "list", "--json").stdout)["remotes"]
        assert [(r["name"], r["state"]) for r in listed] == [("lab", "connected")]
        assert cli("remote", "remove", "lab").returncode == 0
        assert relay.operations.call("remote_list")["remotes"] == []


def test_the_http_api_adds_a_remote_and_drives_its_session(remote):
    from server_fixtures import live_server, ok

    app = remote.write("http_app.py", "x = 1\nx += 1  # two\nprint(x)\n")
    with live_server() as (_, http):
        ok(http.post("/remotes", json={"name": "lab", "url": remote.url, "token_file": str(remote.token_file)}))
        here = ok(http.post("/sessions", json={}))["session"]["id"]
        started = ok(http.post(f"/sessions/{here}/launch", json={"program": app, "on": "lab", "stop_on_entry": True}))
        assert started["state"] == "paused" and started["session"]["name"].startswith("lab/")
        stepped = ok(http.post(f"/sessions/{here}/step-over", json={}))
        assert stepped["stop"]["frame"]["line"] == 2 and stepped["stop"]["source_line"].strip() == "x += 1  # two"
        assert [r["sessions"] for r in ok(http.get("/remotes"))["remotes"]] == [[started["session"]["name"]]]
        ok(http.post(f"/sessions/{here}/terminate", json={}))
        ok(http.delete("/remotes/lab"))


def test_attach_on_a_remote_reaches_a_process_there_and_detach_leaves_it_running(remote, relay):
    service = remote.write("service.py", "import time\ncounter = 0\nwhile True:\n    counter += 1  # tick\n"
                                         "    time.sleep(0.01)\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = subprocess.Popen([sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", service],
                              cwd=remote.tree, start_new_session=True)
    try:
        call(relay, "remote_add", name="lab", url=remote.url, token_file=str(remote.token_file))
        deadline = time.monotonic() + 20
        while True:
            try:
                name = call(relay, "attach", port=port, on="lab")["session"].name
                break
            except RelayError as exc:  # debugpy there is still starting
                assert exc.code in ("connection_failed", "adapter_failed"), exc
                assert time.monotonic() < deadline
                time.sleep(0.2)
        relay.breakpoints.add(service, line_of(service, "# tick"))
        stop = call(relay, "wait", session=name, timeout=15)["stop"]
        assert stop.frame.path == service and stop.source_line.strip() == "counter += 1  # tick"
        relay.breakpoints.clear()
        call(relay, "detach", session=name)
        assert relay.get(name).state == "terminated"
        time.sleep(0.3)
        assert target.poll() is None, "detach must leave the target running"
    finally:
        os.killpg(target.pid, 9)
        target.wait(5)


def test_what_a_hostile_remote_sends_is_data_and_a_misfit_fails_its_session(relay, tmp_path):
    """A server posing as a relay sends a stop whose fields hold code: it is never run, the session fails."""
    import socket as sockets

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    mark = tmp_path / "ran"
    payload = f"__import__('os').system('touch {mark}')"
    info = {"id": "s1", "name": "s1", "state": "running", "uid": "u", "created_at": 1.0, "capabilities": {}}

    async def events(request):
        async def stream():
            yield "id: 5\n\n"
            body = {"reason": payload, "thread_id": payload, "frame": {"path": payload, "line": payload}}
            yield f"id: 6\nevent: stopped\ndata: {json.dumps({'event': 'stopped', 'body': body})}\n\n"
            await asyncio.sleep(30)
        return StreamingResponse(stream(), media_type="text/event-stream")

    app = Starlette(routes=[
        Route("/info", lambda r: JSONResponse({"name": "jupyter_debug_relay"})),
        Route("/sessions", lambda r: JSONResponse({"sessions": [info]})),
        Route("/sessions/s1", lambda r: JSONResponse({"session": info})),
        Route("/sessions/s1/exception-breakpoints", lambda r: JSONResponse({}), methods=["POST"]),
        Route("/sessions/s1/events", events),
    ])
    listener = sockets.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    token = tmp_path / "token"
    token.write_text("any\n")
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        call(relay, "remote_add", name="odd", url=f"http://127.0.0.1:{listener.getsockname()[1]}",
             token_file=str(token))
        session = relay.get("odd/s1")
        deadline = time.monotonic() + 10
        while session.state != "failed" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert session.state == "failed" and session.info().error["code"] == "protocol_error"
        assert not mark.exists()
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()
