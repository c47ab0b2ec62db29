"""The event bus: every session event, fanned out to bounded per-subscriber queues.

Output text lives in the sessions' output rings only. The history keeps an output event without its
text and reads the text back from the ring on replay; a queue lets go of an output event once its chunk
has left the ring. So a session's output held anywhere is bounded by its ring's cap, and whatever is let
go of is counted, exactly, in a ``dropped`` event ``{"events", "bytes"}``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .output import OutputRing

log = logging.getLogger(__name__)

# Events that carry state: never dropped, whatever the pressure.
STATE_EVENTS = frozenset({"session", "stopped", "continued", "exited", "terminated", "breakpoint", "error"})


@dataclass
class Event:
    """One thing that happened in a session; ``seq`` orders all events of a relay.

    ``size`` is what losing the event loses of the output: the UTF-8 bytes of an ``output`` event's text,
    the ``bytes`` of a ``dropped`` event.
    """

    session: str
    event: str
    body: dict[str, Any]
    seq: int = 0
    ts: float = field(default_factory=time.time)
    size: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "seq": self.seq, "ts": self.ts, "event": self.event, "body": self.body}


class EventQueue:
    """Events waiting for one consumer, in order; output is let go of past the bounds and counted.

    Bounds: ``max_events`` events (the oldest output, ``thread`` or ``raw`` event goes first), ``max_bytes``
    bytes of output text if given, and the rings: an output event whose chunk has left its session's ring
    is let go of at once. State events are never let go of. A ``dropped`` event put here is added to the
    count, which the consumer takes with ``take_dropped`` before the next event.
    """

    def __init__(self, rings: Mapping[str, OutputRing], max_events: int, max_bytes: int | None = None) -> None:
        self.rings, self.max_events, self.max_bytes = rings, max_events, max_bytes
        self._held: OrderedDict[int, Event] = OrderedDict()
        self._droppable: dict[str | None, deque[Event]] = {}  # per session its output, None: thread and raw
        self.bytes = 0
        self.dropped_events = 0
        self.dropped_bytes: int | None = 0  # None: some of the dropped output's size is not known

    def __len__(self) -> int:
        return len(self._held)

    def __bool__(self) -> bool:
        """Whether there is anything to hand out: an event or a count of dropped ones."""
        return bool(self._held) or self.dropped_events > 0

    def put(self, event: Event) -> None:
        name = event.event
        if name in STATE_EVENTS:
            self._held[event.seq] = event
            return
        if name == "dropped":
            self.dropped_events += event.body.get("events", 0)
            self._count(event.size if "bytes" in event.body else None)
            return
        self._held[event.seq] = event
        key = event.session if name == "output" else None
        line = self._droppable.get(key)
        if line is None:
            line = self._droppable[key] = deque()
        line.append(event)
        if key is not None:
            self.bytes += event.size
            ring = self.rings.get(key)
            if ring is not None and line[0].body["cursor"] < ring.first:
                first = ring.first
                while line and line[0].body["cursor"] < first:
                    self._drop(key, line)
        if len(self._held) > self.max_events:
            while len(self._held) > self.max_events and self._drop_oldest(False):
                pass
        if self.max_bytes is not None and self.bytes > self.max_bytes:
            while self.bytes > self.max_bytes and self._drop_oldest(True):
                pass

    def get(self) -> Event | None:
        """The oldest event, or None."""
        if not self._held:
            return None
        _, event = self._held.popitem(last=False)
        name = event.event
        if name not in STATE_EVENTS:
            key = event.session if name == "output" else None
            line = self._droppable[key]
            line.popleft()
            if not line:
                del self._droppable[key]
            self.bytes -= event.size
        return event

    def take_dropped(self) -> tuple[int, int | None]:
        """How many events and output bytes (None: not known) were let go of since the last call."""
        counts = self.dropped_events, self.dropped_bytes
        self.dropped_events = self.dropped_bytes = 0
        return counts

    def _drop_oldest(self, output_only: bool) -> bool:
        lines = [(line[0].seq, key) for key, line in self._droppable.items() if key is not None or not output_only]
        if not lines:
            return False
        _, key = min(lines)
        self._drop(key, self._droppable[key])
        return True

    def _drop(self, key: str | None, line: deque[Event]) -> None:
        event = line.popleft()
        if not line:
            del self._droppable[key]
        del self._held[event.seq]
        self.bytes -= event.size
        self.dropped_events += 1
        self._count(event.size)

    def _count(self, size: int | None) -> None:
        self.dropped_bytes = None if size is None or self.dropped_bytes is None else self.dropped_bytes + size


class Subscription:
    """One subscriber: a bounded queue drained by a task that calls its callback."""

    def __init__(self, bus: EventBus, callback: Callable[[Event], None], session: str | None, maxsize: int) -> None:
        self.bus, self.callback, self.session = bus, callback, session
        self.queue = EventQueue(bus.rings, maxsize)
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._deliver())

    def offer(self, event: Event) -> None:
        if self.session is not None and event.session != self.session:
            return
        self.queue.put(event)
        self._wake.set()

    async def _deliver(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            queue = self.queue
            while True:
                if queue.dropped_events:
                    events, size = queue.take_dropped()
                    self._call(dropped_event(self.session or "", self.bus.last_seq, events, size))
                event = queue.get()
                if event is None:
                    break
                self._call(event)

    def _call(self, event: Event) -> None:
        try:
            self.callback(event)
        except Exception:  # a subscriber's bug must not stop delivery to others
            log.exception("event subscriber failed on %s", event.event)

    def close(self) -> None:
        self._task.cancel()
        self.bus.subscribers.discard(self)


class EventBus:
    """Publishes events in order and keeps a bounded history for replay."""

    def __init__(self, history: int = 2000) -> None:
        self.subscribers: set[Subscription] = set()
        self.taps: list[Callable[[Event], None]] = []  # called in publish itself: must only hand the event on
        self.history: deque[Event] = deque(maxlen=history)
        self.rings: dict[str, OutputRing] = {}  # each session's output ring, by session id
        self._seq = itertools.count(1)
        self.last_seq = 0
        self._fallen_bytes = 0  # the size of the events that fell out of the history

    def publish(self, session: str, name: str, body: dict[str, Any], size: int = 0) -> Event:
        event = Event(session=session, event=name, body=body, seq=next(self._seq), size=size)
        self.last_seq = event.seq
        history = self.history
        if len(history) == history.maxlen:
            self._fallen_bytes += history[0].size
        if name == "output":  # the text stays in the ring only
            history.append(Event(session, name, {"category": body["category"], "cursor": body["cursor"]},
                                 event.seq, event.ts, size))
        else:
            history.append(event)
        for tap in self.taps:
            tap(event)
        for sub in list(self.subscribers):
            sub.offer(event)
        return event

    def output(self, session: str, ring: OutputRing, category: str, text: str) -> None:
        """Keep ``text`` in ``ring`` and publish it; a cut off its head is published as ``dropped`` first."""
        chunk, size, cut = ring.append(category, text)
        if cut:
            self.publish(session, "dropped", {"events": 1, "bytes": cut}, cut)
        self.publish(session, "output", {"category": category, "text": chunk.text, "cursor": chunk.seq}, size)

    def subscribe(
        self, callback: Callable[[Event], None], session: str | None = None, maxsize: int = 10000
    ) -> Subscription:
        """Call ``callback(event)`` on the relay loop for every event (of one session, if given)."""
        sub = Subscription(self, callback, session, maxsize)
        self.subscribers.add(sub)
        return sub

    def since(self, seq: int, until: int | None = None) -> list[Event]:
        """The events after ``seq`` (up to ``until``), first a ``dropped`` event counting those no longer kept.

        Its ``bytes`` are left out when the relay no longer knows them: ``seq`` is older than the history
        and not 0.
        """
        history = self.history
        seq = max(seq, 0)
        first = history[0].seq if history else self.last_seq + 1
        missed = max(0, min(first - 1, self.last_seq if until is None else until) - seq)
        size: int | None = self._fallen_bytes if seq == 0 else 0 if missed == 0 else None
        events: list[Event] = []
        for event in history:
            if event.seq <= seq:
                continue
            if until is not None and event.seq > until:
                break
            if event.event == "output":
                ring = self.rings.get(event.session)
                chunk = ring.get(event.body["cursor"]) if ring is not None else None
                if chunk is None:
                    missed += 1
                    size = None if size is None else size + event.size
                    continue
                event = Event(event.session, "output", {**event.body, "text": chunk.text}, event.seq, event.ts,
                              event.size)
            events.append(event)
        if missed:
            events.insert(0, dropped_event("", seq, missed, size))
        return events


def dropped_event(session: str, seq: int, events: int, size: int | None) -> Event:
    """The ``dropped`` event for ``events`` events lost with ``size`` bytes of output (None: not known)."""
    body: dict[str, Any] = {"events": events} if size is None else {"events": events, "bytes": size}
    return Event(session, "dropped", body, seq, size=size or 0)
