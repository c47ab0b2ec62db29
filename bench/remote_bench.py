"""Remote relay benchmark: a step through a remote relay against a step over HTTP on that relay, in one run, and
the time from a restored link to the first event.

The remote relay is ``jupyter-debug-relay serve`` in a process of its own on loopback. Rows, interleaved in
blocks so that drift hits both alike:
- ``http step-over on the relay``: ``POST /sessions/ID/step-over`` with httpx, straight to the relay (the local
  HTTP step);
- ``step through the remote relay``: ``next`` on the remote session here (Python API), forwarded to the same
  relay, its stop back through the event stream.
Then ``reconnect``: the link (a TCP proxy) is cut, the target is stepped on the remote meanwhile, the link is
restored: the time from the restore to the stop event here.
Goal: the step through a remote relay within 2x the local HTTP step.

    python bench/remote_bench.py [-n 200] [--cuts 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time

import httpx
from common import STEPPING_TARGET, Samples, Table, record, wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from remote_fixtures import TOKEN, Proxy, new_remote  # noqa: E402

from jupyter_debug_relay import Relay  # noqa: E402

BLOCK = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--cuts", type=int, default=10)
    options = parser.parse_args()
    proxy = Proxy()
    remote = new_remote("--allow-host", f"127.0.0.1:{proxy.port}")
    proxy.target = remote.port
    program = remote.write("target.py", STEPPING_TARGET)
    http = httpx.Client(base_url=remote.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    try:
        with Relay(record=False) as relay:
            relay.operations.call("remote_add", {"name": "lab", "url": f"http://127.0.0.1:{proxy.port}",
                                                 "token_file": str(remote.token_file)})
            relay.breakpoints.add(program, 3)
            here = relay.get(relay.operations.call("launch", {"program": program, "on": "lab"})["session"].id)
            here.wait_for_stop(timeout=30)
            there = http.post("/sessions", json={}).json()["session"]["id"]
            http.post(f"/sessions/{there}/breakpoints", json={"path": program, "line": 3})  # the relay's own there
            answer = http.post(f"/sessions/{there}/launch", json={"program": program, "timeout": 30}).json()
            assert answer["state"] == "paused", answer["state"]
            local, through = Samples(), Samples()

            def http_step() -> None:
                response = http.post(f"/sessions/{there}/step-over", json={})
                if response.status_code != 200 or response.json()["state"] != "paused":
                    raise SystemExit(f"HTTP step: {response.status_code} {response.text[:300]}")

            for block in range(max(1, options.n // BLOCK)):
                runs = [(local, http_step), (through, here.next)]
                for samples, step in runs if block % 2 == 0 else reversed(runs):
                    for _ in range(BLOCK):
                        samples.time(step)
            restored = reconnects(relay, here, http, proxy, options.cuts)
            table = Table("path (ms)", "n", "median", "p99")
            table.row("http step-over on the relay (httpx)", local.n, local.median, local.p(99))
            table.row("step through the remote relay", through.n, through.median, through.p(99))
            table.row("restored link to the first event", restored.n, restored.median, restored.p(99))
            print(f"step through the remote relay / local HTTP step: {through.median / local.median:.2f}x "
                  "(goal <= 2x)")
            here.terminate()
            http.post(f"/sessions/{there}/terminate", json={})
            record("remote", {"http step-over on the relay": local.summary(),
                              "step through the remote relay": through.summary(),
                              "ratio": round(through.median / local.median, 2),
                              "restored link to the first event": restored.summary()})
    finally:
        http.close()
        proxy.close()
        remote.stop()


def reconnects(relay: Relay, here, http: httpx.Client, proxy: Proxy, cuts: int) -> Samples:
    """Cut the link, step the target on the remote meanwhile, restore: ms from the restore to the stop here."""
    samples = Samples()
    for _ in range(cuts):
        arrived, when = threading.Event(), []

        def seen(event, arrived=arrived, when=when) -> None:
            if event.event == "stopped" and not arrived.is_set():
                when.append(time.perf_counter())
                arrived.set()

        proxy.cut()
        wait_until(lambda: here.state == "disconnected", 10, "the disconnected state")
        remote_id = here.info().target.split("/")[1]
        assert http.post(f"/sessions/{remote_id}/step-over", json={}).json()["state"] == "paused"
        unsubscribe = relay.subscribe(seen, here.id)
        began = time.perf_counter()
        proxy.restore()
        if not arrived.wait(10):
            raise SystemExit("no stop event within 10 s of the restored link")
        unsubscribe()
        samples.add((when[0] - began) * 1000)
        wait_until(lambda: here.state == "paused", 10, "the paused state")
    return samples


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()
