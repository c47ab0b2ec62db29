"""The comm channel ``jupyter_debug_relay``, protocol v1: hello, batched events with flow control, requests.

See docs/comm-protocol.md for every message and its JSON Schema.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
import threading
import time
from typing import Any

from ..errors import RelayError
from ..facade.events import STATE_EVENTS, Event, EventQueue, dropped_event
from ..facade.relay import Relay
from ..model import as_dict
from ..operations import OPERATIONS

log = logging.getLogger(__name__)

VERSION = 1
MAX_BACKLOG = 2000  # events waiting for one comm
MAX_BACKLOG_BYTES = 1 << 20  # UTF-8 bytes of output text waiting for one comm (and no more than its ring holds)
MAX_BATCH = 500  # events per message
MAX_REQUESTS = 100  # requests in one "requests" message
OUTPUT_INTERVAL = 0.01  # seconds between two messages that carry only output


class Peer:
    """One open comm: its bounded backlog, the thread that sends it in batches, and its requests."""

    def __init__(self, channel: CommChannel, comm: Any, since: int | None) -> None:
        self.channel, self.comm = channel, comm
        relay = channel.relay
        self._backlog = EventQueue(relay.manager.bus.rings, MAX_BACKLOG, MAX_BACKLOG_BYTES)
        self._early: list[Event] | None = []  # what arrives before the hello's seq is known
        self._lock = threading.Condition()
        self._closed = False
        comm.on_msg(self._on_msg)
        comm.on_close(lambda _msg: self.close())
        self._unsubscribe = relay.subscribe(self._offer)  # first, so no event falls between hello and the stream
        seq = relay.manager.bus.last_seq
        self._send({"type": "hello", "v": VERSION, "seq": seq,
                    "sessions": [as_dict(s.info()) for s in relay.sessions],
                    "breakpoints": [as_dict(bp) for bp in relay.breakpoints.list()],
                    "exceptions": relay.manager.breakpoints.exceptions})
        replay = relay.events_since(since, until=seq) if since is not None else []
        with self._lock:  # the replay, then what happened after the hello: each event once, in order
            early, self._early = self._early or [], None
            for event in replay + [e for e in early if e.seq > seq]:
                self._backlog.put(event)
        self._thread = threading.Thread(target=self._pump, name="relay comm", daemon=True)
        self._thread.start()

    # -- events out -------------------------------------------------------------------------

    def _offer(self, event: Event) -> None:
        """Called on the relay loop: queue the event (the queue lets go of the oldest output past its bounds)."""
        with self._lock:
            if self._early is not None:
                self._early.append(event)
                return
            self._backlog.put(event)
            self._lock.notify()

    def _take(self) -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        events, size = self._backlog.take_dropped()
        if events:
            batch.append(_message(dropped_event("", self.channel.relay.manager.bus.last_seq, events, size)))
        while len(batch) < MAX_BATCH and (event := self._backlog.get()) is not None:
            message = _message(event)
            last = batch[-1] if batch else None
            if (last is not None and message["event"] == "output" and last["event"] == "output"
                    and last["session"] == message["session"]
                    and last["body"]["category"] == message["body"]["category"]):
                last["body"] = {**last["body"], "text": last["body"]["text"] + message["body"]["text"],
                                "cursor": message["body"]["cursor"], "count": last["body"].get("count", 1) + 1}
                last["seq"], last["ts"] = message["seq"], message["ts"]
            else:
                batch.append(message)
        return batch

    def _pump(self) -> None:
        while True:
            with self._lock:
                while not self._backlog and not self._closed:
                    self._lock.wait(1.0)
                if self._closed:
                    return
                batch = self._take()
            if len(batch) == 1:
                self._send(batch[0])
            elif batch:
                self._send({"type": "batch", "v": VERSION, "events": batch})
            if all(m["event"] not in STATE_EVENTS for m in batch):
                time.sleep(OUTPUT_INTERVAL)  # output alone: let the next burst gather into one message

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self.comm.send(message)
        except Exception:  # a closed kernel socket must not kill the pump
            log.debug("comm send failed", exc_info=True)

    # -- requests in ------------------------------------------------------------------------

    def _on_msg(self, msg: dict[str, Any]) -> None:
        """Start the request (or each of a ``requests`` message) on the relay loop; each is answered when it
        ends, holding no thread meanwhile."""
        data = msg.get("content", {}).get("data")
        if isinstance(data, dict) and data.get("type") == "requests":
            requests = data.get("requests")
            if not isinstance(requests, list) or not 0 < len(requests) <= MAX_REQUESTS:
                self._respond(None, error=RelayError(
                    "invalid_request", f"\"requests\" must be a list of 1 to {MAX_REQUESTS} requests.",
                    "Send more as several messages."))
                return
            for request in requests:
                self._start(request)
            return
        self._start(data)

    def _start(self, data: Any) -> None:
        request_id = _request_id(data)
        try:
            name, args = _operation_of(data)
            future = self.channel.relay.operations.submit(name, args)
        except RelayError as exc:
            self._respond(request_id, error=exc)
            return
        future.add_done_callback(lambda done: self._answer(request_id, name, done))

    def _answer(self, request_id: Any, name: str, done: concurrent.futures.Future) -> None:
        try:
            body = as_dict(done.result())
        except RelayError as exc:
            self._respond(request_id, error=exc)
        except Exception as exc:
            log.error("comm request %s failed", name, exc_info=exc)
            self._respond(request_id, error=RelayError(
                "invalid_request", f"{name} failed: {type(exc).__name__}: {exc}",
                "This is a bug in jupyter_debug_relay; the session is unchanged."))
        else:
            self._respond(request_id, body=body)

    def _respond(self, request_id: Any, body: dict[str, Any] | None = None, error: RelayError | None = None) -> None:
        message: dict[str, Any] = {"type": "response", "v": VERSION, "id": request_id, "ok": error is None}
        if error is None:
            message["body"] = body or {}
        else:
            message["error"] = {"code": error.code, "message": error.message, "hint": error.hint}
        self._send(message)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._lock.notify()
        self._unsubscribe()
        self.channel.peers.discard(self)


def _message(event: Event) -> dict[str, Any]:
    return {"type": "event", "v": VERSION, **event.to_dict()}


def _request_id(data: Any) -> str | int | None:
    """The request's id when it is one a response may carry (a string or an integer), else None."""
    request_id = data.get("id") if isinstance(data, dict) else None
    return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None


def _operation_of(data: Any) -> tuple[str, dict[str, Any]]:
    """The operation a v1 request names and its arguments in the operations' spelling."""
    if not isinstance(data, dict) or data.get("type") != "request":
        raise RelayError("invalid_request", "A message to the kernel must be {\"type\": \"request\", ...}.")
    if data.get("v", VERSION) != VERSION:
        raise RelayError("invalid_request", f"Protocol version {data.get('v')!r} is not supported; use {VERSION}.")
    if _request_id(data) is None:
        raise RelayError("invalid_request", "A request needs an \"id\" (a string or an integer).")
    command, args = data.get("command"), data.get("args", {})
    if not isinstance(command, str) or command not in COMMANDS:
        raise RelayError("invalid_request", f"Unknown command {command!r}.", "Commands: " + ", ".join(COMMANDS))
    if not isinstance(args, dict):
        raise RelayError("invalid_request", "\"args\" must be an object.")
    name, defaults = COMMANDS[command]
    args = {**defaults, **{_snake(key): value for key, value in args.items()}}
    if name == "add_breakpoint" and args.get("kind") == "exception":  # v1 sets the exception mode here too
        name, args = "set_exceptions", {"mode": args.get("mode")}
    if "session" in data and OPERATIONS[name].takes_session:
        args["session"] = data["session"]
    return name, args


def _snake(key: str) -> str:
    """``threadId`` -> ``thread_id``: v1 spells arguments in camelCase, the operations in snake_case."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), key)


# v1 command -> (operation, the defaults v1 gives it): each operation by its own name, plus its v1 aliases.
COMMANDS: dict[str, tuple[str, dict[str, Any]]] = {
    **{op.name: (op.name, {}) for op in OPERATIONS.values()},
    **{alias: (op.name, defaults) for op in OPERATIONS.values() for alias, defaults in op.aliases.items()},
}


class CommChannel:
    """Keeps one ``Peer`` per open comm (the extension registers the comm target); every peer gets every event."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.peers: set[Peer] = set()

    def open(self, comm: Any, open_msg: dict[str, Any]) -> None:
        """A frontend opened a comm: answer its hello and stream it the events (since ``data.since`` if given)."""
        data = open_msg.get("content", {}).get("data") or {}
        since = data.get("since") if isinstance(data, dict) else None
        self.peers.add(Peer(self, comm, since if isinstance(since, int) and not isinstance(since, bool) else None))

    def close(self) -> None:
        """Close every open comm."""
        for peer in list(self.peers):
            peer.close()
            try:
                peer.comm.close()
            except Exception:
                log.debug("comm close failed", exc_info=True)
