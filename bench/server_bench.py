"""Server benchmark: HTTP step-over, status poll, evaluate and an MCP tool call beside the Python API, in one run.

Prints median and p99 (ms) per path, then 20 HTTP clients polling and evaluating at once (errors counted).
Step and status are timed twice: with httpx, and with the standard library's http.client on one kept-alive
connection, since httpx spends about 0.9 ms of Python in the caller on every request (py-spy: eight times the
server's own time on a status poll).
Goals: HTTP step <= 3 ms median, status <= 1 ms, 20 clients with no error (seed 004's KPIs: 200 ms, 50 ms).

    python bench/server_bench.py [-n 200]
"""

from __future__ import annotations

import argparse
import http.client
import os
import sys
import tempfile
import threading
import time

import anyio
import httpx
from common import STEPPING_TARGET, Samples, Table, record
from mcp.client import ClientSession

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from jupyter_debug_relay import Relay  # noqa: E402
from jupyter_debug_relay.server import RelayServer, ServerConfig  # noqa: E402

TOKEN = "bench-token"


def timed(fn, n: int) -> Samples:
    samples = Samples()
    for _ in range(n):
        samples.time(fn)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200)
    n = parser.parse_args().n
    with tempfile.TemporaryDirectory() as folder, Relay() as relay:
        program = os.path.join(folder, "target.py")
        with open(program, "w") as f:
            f.write(STEPPING_TARGET)
        server = RelayServer(relay, ServerConfig(port=0, token=TOKEN)).start()
        http = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        plain = KeepAlive(server.url)
        try:
            relay.breakpoints.add(program, 3)
            session = relay.launch(program)
            session.wait_for_stop()
            sid = session.id

            def http_ok(response: httpx.Response) -> None:
                if response.status_code != 200:
                    raise SystemExit(f"HTTP {response.status_code}: {response.text}")

            rows = [
                ("python step (next)", timed(session.next, n)),
                ("http step-over", timed(lambda: http_ok(http.post(f"/sessions/{sid}/step-over", json={})), n)),
                ("http step-over (http.client)", timed(lambda: plain.call("POST", f"/sessions/{sid}/step-over"), n)),
                ("python status", timed(session.info, n)),
                ("http status", timed(lambda: http_ok(http.get(f"/sessions/{sid}")), n)),
                ("http status (http.client)", timed(lambda: plain.call("GET", f"/sessions/{sid}"), n)),
                ("python evaluate", timed(lambda: session.evaluate("i * 2"), n)),
                ("http evaluate", timed(lambda: http_ok(http.post(f"/sessions/{sid}/evaluate",
                                                                  json={"expression": "i * 2"})), n)),
            ]
            rows.append(("mcp evaluate (streamable HTTP)", mcp_calls(server.url, sid, n)))
            table = Table("path (ms)", "n", "median", "p99")
            for name, samples in rows:
                table.row(name, samples.n, samples.median, samples.p(99))
            clients, each = 20, max(n // 10, 10)
            errors, samples = crowd(server.url, sid, clients, each)
            table.row(f"{clients} clients x {each} calls at once", samples.n, samples.median, samples.p(99))
            print(f"{clients} clients x {each} calls: {len(errors)} failed of {clients * each}"
                  + (f"; first: {errors[0]}" if errors else ""))
            session.terminate()
            record("server", {**{name: samples.summary() for name, samples in rows},
                              "crowd": {"clients": clients, "calls": clients * each, "failed": len(errors),
                                        **samples.summary()}})
        finally:
            http.close()
            plain.close()
            server.stop()


class KeepAlive:
    """The standard library's HTTP client on one kept-alive connection: the same requests without the ~0.9 ms of
    Python that httpx spends on each one in the caller (so the row shows what the server and the wire cost)."""

    def __init__(self, url: str) -> None:
        host, _, port = url.removeprefix("http://").rpartition(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=30)
        self.headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

    def call(self, method: str, path: str) -> None:
        self.connection.request(method, path, "{}" if method == "POST" else None, self.headers)
        response = self.connection.getresponse()
        text = response.read()
        if response.status != 200:
            raise SystemExit(f"HTTP {response.status}: {text[:500]!r}")

    def close(self) -> None:
        self.connection.close()


def mcp_calls(url: str, sid: str, n: int) -> Samples:
    """Timed MCP ``evaluate`` tool calls through the SDK's client over streamable HTTP."""
    from mcp.client.streamable_http import streamable_http_client

    samples = Samples()

    async def run() -> None:
        import httpx2

        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http, \
                streamable_http_client(f"{url}/mcp/", http_client=http) as (read, write), \
                ClientSession(read, write) as client:
            await client.initialize()
            for _ in range(n):
                started = time.perf_counter()
                with anyio.fail_after(30):
                    result = await client.call_tool("evaluate", {"session": sid, "expression": "i * 2"})
                samples.add((time.perf_counter() - started) * 1000)
                if result.is_error:
                    raise SystemExit(result.content[0].text)

    anyio.run(run)
    return samples


def crowd(url: str, sid: str, clients: int, each: int) -> tuple[list[str], Samples]:
    """``clients`` threads, each with its own connection, polling status and evaluating: what failed (an answer
    other than 200, a timeout, a refused connection: every call that did not come back) and the answered ones'
    times."""
    errors: list[str] = []
    samples = Samples()
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
            for k in range(each):
                started = time.perf_counter()
                try:
                    response = (http.get(f"/sessions/{sid}") if k % 2 else
                                http.post(f"/sessions/{sid}/evaluate", json={"expression": "i"}))
                except Exception as exc:  # a timeout, a refused or dropped connection: a failed call
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                with lock:
                    samples.add((time.perf_counter() - started) * 1000)
                    if response.status_code != 200:
                        errors.append(f"HTTP {response.status_code}: {response.text[:200]}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30 * each)
    if any(t.is_alive() for t in threads):
        errors.append("a client thread did not end within its calls' timeouts")
    return errors, samples


if __name__ == "__main__":
    main()
