"""Attacks on the relay server: no token, a wrong one, DNS rebinding, huge bodies, browsers, leaked secrets."""

from __future__ import annotations

import json
import os
import stat
import threading

import httpx
import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.redact import REDACTED
from jupyter_debug_relay.server import RelayServer, ServerConfig
from tests.server_fixtures import TOKEN, line_of, live_server, write


@pytest.fixture
def served():
    with live_server() as pair:
        yield pair


def code(response) -> str:
    return response.json()["error"]["code"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
                                     {"Authorization": f"Bearer {TOKEN}x"}, {"Authorization": "Bearer"}])
def test_every_route_but_health_needs_the_token(served, headers):
    server, _ = served
    with httpx.Client(base_url=server.url, headers=headers) as anon:
        for method, path in (("GET", "/sessions"), ("POST", "/sessions"), ("GET", "/openapi.json"),
                             ("GET", "/info"), ("POST", "/shutdown"), ("POST", "/mcp"), ("GET", "/sessions/s1/events"),
                             ("GET", "/no/such/route")):
            response = anon.request(method, path)
            assert response.status_code == 401 and code(response) == "unauthorized", (method, path)
            assert response.headers["www-authenticate"] == "Bearer"
        assert anon.get("/health").json() == {"status": "ok"}
    assert served[1].get("/sessions").json() == {"sessions": []}  # nothing was created by the refused calls


def test_a_foreign_host_header_is_refused_dns_rebinding(served):
    server, client = served
    for host in (f"evil.example:{server.config.port}", "evil.example", "127.0.0.1:1", "localhost.evil.example"):
        response = client.get("/sessions", headers={"Host": host})
        assert response.status_code == 403 and code(response) == "forbidden", host
    assert client.get("/health", headers={"Host": "evil.example"}).status_code == 403
    assert client.get("/sessions", headers={"Host": f"localhost:{server.config.port}"}).status_code == 200


def test_request_bodies_are_capped(served):
    _, client = served
    big = json.dumps({"expression": "x" * (2 << 20)})
    response = client.post("/sessions/s1/evaluate", content=big, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and code(response) == "too_large"

    def chunks():
        for _ in range(40):
            yield b" " * 65536  # no Content-Length: counted as it arrives

    streamed = client.post("/sessions", content=chunks())
    assert streamed.status_code == 413 and code(streamed) == "too_large"


def test_no_cors_unless_configured(served, tmp_path):
    _, client = served
    response = client.get("/sessions", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in response.headers
    preflight = client.options("/sessions", headers={"Origin": "http://evil.example",
                                                     "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers and preflight.status_code >= 400
    with live_server(cors_origins=("http://app.example",)) as (_, allowed):
        ok = allowed.get("/sessions", headers={"Origin": "http://app.example"})
        assert ok.headers["access-control-allow-origin"] == "http://app.example"
        other = allowed.get("/sessions", headers={"Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_random_token_goes_to_a_private_file_and_loopback_is_the_default(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("JUPYTER_DEBUG_RELAY_TOKEN", raising=False)
    with Relay() as relay:
        server = RelayServer(relay, ServerConfig(port=0)).start()
        try:
            assert server.config.host == "127.0.0.1" and server.url.startswith("http://127.0.0.1:")
            mode = stat.S_IMODE(os.stat(server.token_file).st_mode)
            assert mode == 0o600
            saved = json.loads(open(server.token_file).read())
            assert saved["url"] == server.url and len(saved["token"]) >= 32
            headers = {"Authorization": f"Bearer {saved['token']}"}
            assert httpx.get(server.url + "/sessions", headers=headers).status_code == 200
            path = server.token_file
        finally:
            server.stop()
        assert not os.path.exists(path)  # removed when the server stops
        monkeypatch.setenv("JUPYTER_DEBUG_RELAY_TOKEN", "from-env")
        server = RelayServer(relay, ServerConfig(port=0)).start()
        try:
            assert server.token_file is None
            assert httpx.get(server.url + "/info", headers={"Authorization": "Bearer from-env"}).status_code == 200
        finally:
            server.stop()


SECRETS = """
import os, sys
password = "hunter2"
config = {"user": "bob", "api_key": "abc123"}
AWS_SECRET_KEY = "s3cr3t"
count = 3
x = 1  # here
"""


def test_secrets_are_masked_for_agents_unless_redact_is_off(tmp_path):
    app = write(tmp_path, "secrets.py", SECRETS)
    for redact in (True, False):
        with live_server(redact=redact) as (_, client):
            sid = client.post("/sessions", json={}).json()["session"]["id"]
            client.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": line_of(app, "# here")})
            started = client.post(f"/sessions/{sid}/launch", json={
                "program": app, "args": ["--token", "tok-123", "--name", "n"], "env": {"DB_PASSWORD": "pw"}}).json()
            assert started["state"] == "paused"

            def value(expr: str, sid: str = sid) -> str:
                return client.post(f"/sessions/{sid}/evaluate", json={"expression": expr}).json()["variable"]["value"]

            scopes = client.get(f"/sessions/{sid}/frames/{started['stop']['frame']['id']}/scopes").json()["scopes"]
            local = {v["name"]: v["value"] for v in
                     client.get(f"/sessions/{sid}/variables/{scopes[0]['ref']}").json()["items"]}
            target = client.get(f"/sessions/{sid}").json()["session"]["target"]
            env = value("os.environ['DB_PASSWORD']")
            if redact:
                assert value("password") == local["password"] == REDACTED
                assert local["AWS_SECRET_KEY"] == REDACTED and "abc123" not in local["config"]
                assert "bob" in local["config"] and local["count"] == "3"
                assert "tok-123" not in target and "--name n" in target
                assert env == REDACTED
            else:
                assert value("password") == local["password"] == "'hunter2'"
                assert "abc123" in local["config"] and "tok-123" in target and env == "'pw'"
            client.delete(f"/sessions/{sid}")


def test_a_long_wait_holds_no_thread_others_answer_at_once(served, tmp_path):
    _, client = served
    app = write(tmp_path, "spin.py", "import time\nwhile True:\n    time.sleep(0.01)\n")
    sid = client.post("/sessions", json={}).json()["session"]["id"]
    client.post(f"/sessions/{sid}/launch", json={"program": app, "wait": False})
    waits = [threading.Thread(target=client.post, args=(f"/sessions/{sid}/wait",), kwargs={"json": {"timeout": 3}})
             for _ in range(50)]
    for t in waits:
        t.start()
    response = client.get(f"/sessions/{sid}", timeout=2)
    assert response.json()["session"]["state"] == "running"  # answered before the waits' 3 s
    for t in waits:
        t.join()
    client.delete(f"/sessions/{sid}")
