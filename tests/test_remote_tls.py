"""TLS for remote relays: serving beyond loopback needs it, a pinned fingerprint or a CA is checked before any
byte of a request (the token above all) is sent."""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import threading

import pytest
import trustme
from remote_fixtures import TOKEN, new_remote

from jupyter_debug_relay import Relay
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.remote import tls
from jupyter_debug_relay.server import RelayServer, ServerConfig
from jupyter_debug_relay.server.runner import exposure

RELAY_OPTIONS = {"record": False, "request_timeout": 20}  # the local relay gives a remote 20 s to answer

@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


@pytest.fixture(scope="module")
def served(ca, tmp_path_factory):
    """A remote relay serving https with a certificate of the test's CA for 127.0.0.1; its fingerprint."""
    folder = tmp_path_factory.mktemp("certs")
    issued = ca.issue_cert("127.0.0.1")
    cert, key = folder / "cert.pem", folder / "key.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    server = new_remote("--tls-cert", str(cert), "--tls-key", str(key))
    try:
        yield server, tls.file_fingerprint(str(cert))
    finally:
        server.stop()


def add(relay, server, **extra):
    return relay.operations.call("remote_add", {"name": "lab", "url": server.url,
                                                "token_file": str(server.token_file), **extra})


def test_a_pinned_certificate_is_trusted_and_every_verb_works_over_tls(served, relay):
    server, fingerprint = served
    assert server.url.startswith("https://127.0.0.1:")
    app = server.write("tls_app.py", "x = 41\nx += 1  # here\nprint(x)\n")
    added = add(relay, server, fingerprint=tls.shown(fingerprint))
    assert added["remote"]["fingerprint"] == tls.shown(fingerprint)
    name = relay.operations.call("launch", {"program": app, "on": "lab", "stop_on_entry": True})["session"].name
    relay.operations.call("wait", {"session": name})
    assert relay.operations.call("next", {"session": name})["stop"].frame.line == 2
    assert relay.operations.call("evaluate", {"session": name, "expression": "x"})["variable"].value == "41"
    relay.operations.call("terminate", {"session": name})


def test_a_certificate_of_an_unknown_ca_or_another_fingerprint_is_refused(served, relay):
    server, fingerprint = served
    with pytest.raises(RelayError) as unknown:
        add(relay, server)
    assert unknown.value.code == "unauthorized" and "certificate was refused" in unknown.value.message
    other = "00" * 32
    with pytest.raises(RelayError) as pinned:
        add(relay, server, fingerprint=other)
    assert pinned.value.code == "unauthorized" and "Nothing was sent" in pinned.value.message
    with pytest.raises(RelayError) as malformed:
        add(relay, server, fingerprint="not-a-fingerprint")
    assert malformed.value.code == "invalid_request"
    assert relay.operations.call("remote_list")["remotes"] == []


def test_nothing_is_sent_to_a_server_whose_fingerprint_differs(ca, tmp_path, relay):
    """A TLS server of the test's own records what it receives: with the wrong pin, not one byte of the request."""
    issued = ca.issue_cert("127.0.0.1")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    issued.configure_cert(context)
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            conn.settimeout(5)
            data = b""
            try:
                with context.wrap_socket(conn, server_side=True) as tls_conn:
                    while chunk := tls_conn.recv(65536):
                        data += chunk
                        if b"\r\n\r\n" in data:
                            break
            except (OSError, ssl.SSLError):
                pass
            received.append(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    url = f"https://127.0.0.1:{listener.getsockname()[1]}"
    right = tls.fingerprint_of(ssl.PEM_cert_to_DER_cert(issued.cert_chain_pems[0].bytes().decode()))
    for pin in ("ab" * 32, right):
        with pytest.raises(RelayError):
            relay.operations.call("remote_add", {"name": "x", "url": url, "token_file": str(token_file),
                                                 "fingerprint": pin})
    thread.join(10)
    listener.close()
    assert received[0] == b""  # the wrong pin: the handshake ended before any request
    assert b"GET /info" in received[1] and TOKEN.encode() in received[1]  # the right pin: the request went out


def test_serving_beyond_loopback_needs_tls_or_says_it_is_insecure(tmp_path):
    with pytest.raises(RelayError) as refused:
        exposure(ServerConfig(host="192.0.2.10"))
    assert refused.value.code == "unauthorized" and "--tls-self-signed" in refused.value.hint
    assert "PLAIN HTTP" in exposure(ServerConfig(host="192.0.2.10", insecure=True))
    assert exposure(ServerConfig(host="192.0.2.10", tls_cert="c.pem", tls_key="k.pem")) == ""
    assert exposure(ServerConfig(host="127.0.0.1")) == ""
    with Relay(record=False) as relay, pytest.raises(RelayError):
        RelayServer(relay, ServerConfig(host="0.0.0.0", port=0))  # refused before it binds
    cli = subprocess.run([sys.executable, "-m", "jupyter_debug_relay.cli", "serve", "--host", "0.0.0.0", "--port",
                          "0"], capture_output=True, text=True, timeout=60)
    assert cli.returncode == 2 and "Refusing to serve plain HTTP on 0.0.0.0" in cli.stderr


def test_a_self_signed_server_prints_the_fingerprint_a_client_pins(relay):
    server = new_remote("--tls-self-signed")
    try:
        printed = server.lines[1]
        assert printed.startswith("TLS certificate SHA-256 fingerprint: ")
        fingerprint = printed.rsplit(" ", 1)[1]
        assert add(relay, server, fingerprint=fingerprint)["remote"]["state"] == "connected"
        restarted_with = fingerprint
        relay.operations.call("remote_remove", {"name": "lab"})
        server.stop()
        server.start()  # the certificate is kept in the home: a pinned client trusts it after a restart
        assert server.lines[1].rsplit(" ", 1)[1] == restarted_with
    finally:
        server.stop()
