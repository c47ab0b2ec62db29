"""The event bus: every session event, fanned out to bounded per-subscriber queues."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

# Events that carry state: never dropped, whatever the pressure.
STATE_EVENTS = frozenset({"session", "stopped", "continued", "exited", "terminated", "breakpoint", "error"})


@dataclass
class Event:
    """One thing that happened in a session; ``seq`` orders all events of a relay."""

    session: str
    event: str
    body: dict[str, Any]
    seq: int = 0
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "seq": self.seq, "ts": self.ts, "event": self.event, "body": self.body}


class Subscription:
    """One subscriber: a bounded queue drained by a task that calls its callback."""

    def __init__(self, bus: EventBus, callback: Callable[[Event], None], session: str | None, maxsize: int) -> None:
        self.bus, self.callback, self.session, self.maxsize = bus, callback, session, maxsize
        self.queue: deque[Event] = deque()
        self.dropped = 0
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._deliver())

    def offer(self, event: Event) -> None:
        if self.session is not None and event.session != self.session:
            return
        if len(self.queue) >= self.maxsize and not self._drop_oldest_output():
            if event.event not in STATE_EVENTS:
                self.dropped += 1
                return
        self.queue.append(event)
        self._wake.set()

    def _drop_oldest_output(self) -> bool:
        for i, queued in enumerate(self.queue):
            if queued.event not in STATE_EVENTS:
                del self.queue[i]
                self.dropped += 1
                return True
        return False

    async def _deliver(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.queue:
                if self.dropped:
                    count, self.dropped = self.dropped, 0
                    self._call(Event(self.session or "", "dropped", {"events": count}, seq=self.bus.last_seq))
                self._call(self.queue.popleft())

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
        self.history: deque[Event] = deque(maxlen=history)
        self._seq = itertools.count(1)
        self.last_seq = 0

    def publish(self, session: str, name: str, body: dict[str, Any]) -> Event:
        event = Event(session=session, event=name, body=body, seq=next(self._seq))
        self.last_seq = event.seq
        self.history.append(event)
        for sub in list(self.subscribers):
            sub.offer(event)
        return event

    def subscribe(
        self, callback: Callable[[Event], None], session: str | None = None, maxsize: int = 10000
    ) -> Subscription:
        """Call ``callback(event)`` on the relay loop for every event (of one session, if given)."""
        sub = Subscription(self, callback, session, maxsize)
        self.subscribers.add(sub)
        return sub

    def since(self, seq: int) -> list[Event]:
        return [e for e in self.history if e.seq > seq]
