"""One output budget per session: the ring holds the text, history and queues refer to it; drops are exact."""

from __future__ import annotations

import asyncio
import gc
import os
import queue
import time
from typing import Any

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.engine.events import STATE_EVENTS, Event, EventBus, EventQueue
from jupyter_debug_relay.engine.output import OutputRing
from jupyter_debug_relay.errors import RelayError
from tests.test_kernel_comm import Frontend, open_frontend

MIB = 1 << 20
BIG = """
import sys
block = "z" * (10 * 1024 * 1024)
for _ in range(10):
    sys.stdout.write(block + "\\n")
    sys.stdout.flush()
"""
WRITTEN = 10 * (10 * MIB + 1)


def rss_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def held_text(events: Any) -> int:
    return sum(utf8(e.body.get("text", "")) for e in events)


def drain(q: EventQueue) -> tuple[list[Event], int, int]:
    """Everything a consumer gets from ``q``: the events, and the events and bytes it is told were dropped."""
    got, events, size = [], 0, 0
    while q:
        dropped, lost = q.take_dropped()
        events, size = events + dropped, size + lost
        event = q.get()
        if event is not None:
            got.append(event)
    return got, events, size


# -- the ring ---------------------------------------------------------------------------------


def test_the_ring_keeps_its_cap_and_counts_every_byte_it_lets_go():
    ring = OutputRing(4096)
    written = 0
    for i in range(1000):
        text = f"line {i} é\n"
        ring.append("stdout", text)
        written += utf8(text)
    kept = sum(utf8(c.text) for c in ring.read().chunks)
    assert kept == ring.size <= 4096 and kept + ring.dropped == written
    assert ring.first == ring.read().chunks[0].seq and ring.get(ring.first - 1) is None
    assert ring.get(999).text == "line 999 é\n" and ring.get(1000) is None


def test_a_chunk_bigger_than_the_ring_keeps_its_tail_and_says_what_was_cut():
    ring = OutputRing(4096)
    chunk, size, cut = ring.append("stdout", "é" * 5000 + "END")
    assert chunk.text.endswith("END") and size == utf8(chunk.text) <= 4096
    assert cut == 10003 - size == ring.dropped


# -- the history --------------------------------------------------------------------------------


def test_the_history_holds_no_output_text_and_a_replay_counts_exactly_what_it_misses():
    bus, ring = EventBus(), OutputRing(2048)
    bus.rings["s1"] = ring
    bus.publish("s1", "session", {"state": "running"})
    for i in range(200):
        bus.output("s1", ring, "stdout", f"{i:04d}" + "x" * 95 + "\n")
    bus.publish("s1", "stopped", {"reason": "pause"})
    assert held_text(bus.history) == 0  # the text is in the ring only
    replay = bus.since(0)
    dropped, rest = replay[0], replay[1:]
    kept = [e for e in rest if e.event == "output"]
    assert [e.event for e in rest if e.event != "output"] == ["session", "stopped"]  # state is never dropped
    assert "".join(e.body["text"] for e in kept) == ring.read().text
    assert dropped.event == "dropped" and dropped.body == {"events": 200 - len(kept), "bytes": ring.dropped}
    assert [e.seq for e in rest] == sorted(e.seq for e in rest)
    assert bus.since(bus.last_seq) == [] and bus.since(rest[-2].seq) == [rest[-1]]  # nothing missed, no dropped


def test_a_replay_older_than_the_history_counts_the_events_it_misses():
    bus, ring = EventBus(history=50), OutputRing(1 << 20)
    bus.rings["s1"] = ring
    for _ in range(120):
        bus.output("s1", ring, "stdout", "y" * 10)
    from_start = bus.since(0)
    assert from_start[0].body == {"events": 70, "bytes": 700} and len(from_start) == 51
    later = bus.since(30)
    assert later[0].body == {"events": 40} and len(later) == 51  # the sizes of events 31..70 are gone
    upto = bus.since(100, until=110)
    assert [e.seq for e in upto] == list(range(101, 111))


# -- the queues -------------------------------------------------------------------------------


def test_a_queue_lets_go_of_output_its_ring_no_longer_holds_and_counts_it_exactly():
    ring = OutputRing(4096)
    q = EventQueue({"s1": ring}, max_events=10_000)
    written = 0
    for i in range(500):
        chunk, size, _ = ring.append("stdout", f"{i:03d}" + "ü" * 60 + "\n")
        written += size
        q.put(Event("s1", "output", {"category": "stdout", "text": chunk.text, "cursor": chunk.seq}, i + 1,
                    size=size))
        if i == 100:
            q.put(Event("s1", "stopped", {"reason": "step"}, 10_000))
        assert q.bytes <= ring.cap  # never more than the ring holds
    got, events, size = drain(q)
    outputs = [e for e in got if e.event == "output"]
    assert [e.event for e in got if e.event != "output"] == ["stopped"]
    assert "".join(e.body["text"] for e in outputs) == ring.read().text
    assert events == 500 - len(outputs) and size + held_text(outputs) == written


@pytest.mark.parametrize(("max_events", "max_bytes"), [(60, None), (10_000, 300)])
def test_a_queue_over_its_bounds_lets_go_of_the_oldest_output_never_of_state(max_events, max_bytes):
    rings = {"s1": OutputRing(1 << 20), "s2": OutputRing(1 << 20)}
    q = EventQueue(rings, max_events, max_bytes)
    written = seq = 0
    states = []
    for i in range(300):
        session = f"s{i % 2 + 1}"
        ring = rings[session]
        chunk, size, _ = ring.append("stdout", f"{i}\n")
        seq += 1
        q.put(Event(session, "output", {"category": "stdout", "text": chunk.text, "cursor": chunk.seq}, seq,
                    size=size))
        written += size
        if i % 7 == 0:
            seq += 1
            name = sorted(STATE_EVENTS)[i % len(STATE_EVENTS)]
            q.put(Event(session, name, {}, seq))
            states.append(seq)
        assert max_bytes is None or q.bytes <= max_bytes
    got, events, size = drain(q)
    outputs = [e for e in got if e.event == "output"]
    assert [e.seq for e in got if e.event != "output"] == states  # every state event, in order
    assert [e.seq for e in got] == sorted(e.seq for e in got)
    assert outputs[-1].body["text"] == "299\n" and events == 300 - len(outputs) > 0
    assert size + held_text(outputs) == written


def test_a_subscriber_is_told_exactly_what_its_full_queue_let_go():
    async def scenario() -> tuple[list[Event], int]:
        bus, ring = EventBus(), OutputRing(1 << 20)
        bus.rings["s1"] = ring
        seen: list[Event] = []
        bus.subscribe(seen.append, maxsize=50)
        written = 0
        for i in range(1000):  # all at once: the subscriber's task runs only when the loop gets control
            bus.output("s1", ring, "stdout", f"line {i}\n")
            written += len(f"line {i}\n")
        bus.publish("s1", "exited", {"exit_code": 0})
        await asyncio.sleep(0.05)
        return seen, written

    seen, written = asyncio.run(scenario())
    dropped = [e for e in seen if e.event == "dropped"]
    outputs = [e for e in seen if e.event == "output"]
    assert dropped and seen[-1].event == "exited"
    assert sum(e.body["events"] for e in dropped) + len(outputs) == 1000
    assert sum(e.body["bytes"] for e in dropped) + held_text(outputs) == written


# -- real targets -----------------------------------------------------------------------------


def test_a_hundred_mib_of_output_leaves_the_relay_bounded_and_the_sums_exact(write):
    app = write("big.py", BIG)
    counted = {"text": 0, "dropped": 0}

    def count(event: Event) -> None:  # a subscriber that keeps nothing
        if event.event == "output":
            counted["text"] += utf8(event.body["text"])
        elif event.event == "dropped":
            counted["dropped"] += event.body["bytes"]

    with Relay() as relay:
        gc.collect()
        before = rss_mb()
        relay.subscribe(count)
        session = relay.launch(app)
        with pytest.raises(RelayError, match="exited with code 0"):
            session.wait_for_stop(120)
        page = session.output()
        replay = relay.events_since(0)
        gc.collect()
        growth = rss_mb() - before
        kept = sum(utf8(c.text) for c in page.chunks)
        print(f"relay RSS growth after 100 MiB of output: {growth:.1f} MB")
        assert page.dropped + kept == WRITTEN
        assert growth <= 40, f"the relay grew by {growth:.0f} MB"
        assert held_text(relay.manager.bus.history) == 0
        lost = sum(e.body["bytes"] for e in replay if e.event == "dropped")
        assert lost + held_text(e for e in replay if e.event == "output") == WRITTEN
        assert counted["text"] + counted["dropped"] == WRITTEN


def test_a_hundred_mib_through_a_comm_keeps_the_kernel_bounded_and_the_dropped_bytes_exact(kernel, write):
    app = write("big.py", BIG)
    front = open_frontend(kernel)
    kernel.magic("import gc; gc.collect()")
    before = rss_mb(kernel.pid)
    assert front.request("launch", program=app)["ok"]
    text, dropped, peak = receive(front, lambda: rss_mb(kernel.pid))
    kernel.magic("gc.collect()")
    growth = rss_mb(kernel.pid) - before
    print(f"kernel RSS growth after 100 MiB through a comm: {growth:.1f} MB (peak {peak - before:.1f} MB); "
          f"{text:,} bytes received, {dropped:,} dropped")
    assert text + dropped == WRITTEN
    assert growth <= 40, f"the kernel grew by {growth:.0f} MB (peak {peak - before:.0f} MB)"
    late = open_frontend(kernel, {"since": 0})  # a replay says exactly what it no longer has
    text, dropped, _ = receive(late, lambda: 0.0)
    assert late.hello["sessions"][0]["state"] == "terminated"
    assert text + dropped == WRITTEN and dropped > 0


def receive(front: Frontend, rss: Any) -> tuple[int, int, float]:
    """Read ``front``'s comm until a second after ``terminated``, counting the events it already holds (those
    that came while it waited for an answer) first: output bytes, dropped bytes, peak ``rss()``."""
    text = dropped = 0
    peak = rss()
    ended = None
    deadline = time.monotonic() + 180
    while ended is None or time.monotonic() < ended + 1.0:
        assert time.monotonic() < deadline, "the target did not end"
        for event in front.events:
            if event["event"] == "output":
                text += utf8(event["body"]["text"])
            elif event["event"] == "dropped":
                dropped += event["body"]["bytes"]
            elif event["event"] == "terminated" and ended is None:
                ended = time.monotonic()
        front.events.clear()
        try:
            comm, data = front.kernel.comm_data(timeout=0.5)
        except queue.Empty:
            continue
        if comm == front.comm_id:
            front.take(data)
        peak = max(peak, rss())
    return text, dropped, peak
