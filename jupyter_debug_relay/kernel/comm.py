"""The comm channel ``jupyter_debug_relay``, protocol v1: hello, batched events with flow control, requests.

See docs/comm-protocol.md for every message and its JSON Schema.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ..engine.events import STATE_EVENTS, Event, EventQueue, dropped_event
from ..errors import RelayError
from ..model import as_dict
from ..relay import Relay, SessionHandle

log = logging.getLogger(__name__)

TARGET = "jupyter_debug_relay"
VERSION = 1
MAX_BACKLOG = 2000  # events waiting for one comm
MAX_BACKLOG_BYTES = 1 << 20  # UTF-8 bytes of output text waiting for one comm (and no more than its ring holds)
MAX_BATCH = 500  # events per message
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
        data = msg.get("content", {}).get("data")
        request_id = data.get("id") if isinstance(data, dict) else None
        try:
            verb, session, args = _check_request(data)
        except RelayError as exc:
            self._respond(request_id, error=exc)
            return
        self.channel.pool.submit(self._answer, request_id, verb, session, args)

    def _answer(self, request_id: Any, verb: str, session: str | None, args: dict[str, Any]) -> None:
        try:
            handler = VERBS[verb]
            handle = self.channel.relay.get(session) if session else None
            if handle is None and verb in NEEDS_SESSION:
                raise RelayError("invalid_request", f"{verb} needs a \"session\".", "Add \"session\": \"s1\".")
            body = handler(self.channel.relay, handle, _Args(verb, args))
            self._respond(request_id, body=as_dict(body) if body is not None else {})
        except RelayError as exc:
            self._respond(request_id, error=exc)
        except Exception as exc:
            log.exception("comm request %s failed", verb)
            self._respond(request_id, error=RelayError("invalid_request", f"{verb} failed: {exc}"))

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


def _check_request(data: Any) -> tuple[str, str | None, dict[str, Any]]:
    if not isinstance(data, dict) or data.get("type") != "request":
        raise RelayError("invalid_request", "A message to the kernel must be {\"type\": \"request\", ...}.")
    if data.get("v", VERSION) != VERSION:
        raise RelayError("invalid_request", f"Protocol version {data.get('v')!r} is not supported; use {VERSION}.")
    if not isinstance(data.get("id"), (str, int)) or isinstance(data.get("id"), bool):
        raise RelayError("invalid_request", "A request needs an \"id\" (a string or an integer).")
    verb = data.get("command")
    if verb not in VERBS:
        raise RelayError("invalid_request", f"Unknown command {verb!r}.", "Commands: " + ", ".join(sorted(VERBS)))
    session = data.get("session")
    if session is not None and not isinstance(session, str):
        raise RelayError("invalid_request", "\"session\" must be a session id or name.")
    args = data.get("args", {})
    if not isinstance(args, dict):
        raise RelayError("invalid_request", "\"args\" must be an object.")
    return verb, session, args


class _Args:
    """A request's arguments, each read with its type checked."""

    def __init__(self, verb: str, args: dict[str, Any]) -> None:
        self.verb, self.args = verb, args

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        if key not in self.args or self.args[key] is None:
            if required:
                raise RelayError("invalid_request", f"{self.verb} needs the argument {key!r}.")
            return default
        value = self.args[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float))):
            raise RelayError("invalid_request", f"{self.verb}: {key!r} has the wrong type ({type(value).__name__}).")
        return value


Handler = Callable[[Relay, SessionHandle | None, _Args], Any]


def _resume(action: str) -> Handler:
    def run(relay: Relay, s: SessionHandle | None, a: _Args) -> dict[str, Any]:
        assert s is not None
        verb = getattr(s, action)
        stop = verb(thread_id=a.get("threadId", int), wait=a.get("wait", bool, False),
                    timeout=a.get("timeout", (int, float), 10.0))
        return {"state": s.state, "stop": stop}
    return run


def _set_breakpoint(relay: Relay, s: SessionHandle | None, a: _Args) -> dict[str, Any]:
    kind = a.get("kind", str, "line")
    bps = relay.breakpoints
    condition = a.get("condition", str)
    if kind == "line":
        bp = bps.add(a.get("path", str, required=True), a.get("line", int, required=True), condition,
                     a.get("hitCondition", str), a.get("logMessage", str))
    elif kind == "function":
        bp = bps.add_function(a.get("name", str, required=True), condition)
    elif kind == "stage":
        bp = bps.add_stage(a.get("flow", str, required=True), a.get("stage", str, required=True),
                           a.get("ruleIndex", int), condition)
    elif kind == "exception":
        return {"exceptions": bps.exceptions(a.get("mode", str, required=True))}
    else:
        raise RelayError("invalid_request", f"Unknown breakpoint kind {kind!r}.",
                         "Kinds: line, function, exception, stage.")
    return {"breakpoint": bp}


def _connect(relay: Relay, s: SessionHandle | None, a: _Args) -> dict[str, Any]:
    kind, name = a.get("kind", str, required=True), a.get("name", str)
    if kind == "mycel":
        handle = relay.connect_mycel(a.get("url", str, required=True), name=name)
    elif kind == "ez":
        handle = relay.connect_ez(a.get("program", str, required=True), ez=a.get("ez", str, "ez"), name=name)
    elif kind == "dap":
        handle = relay.connect_dap(adapter=a.get("adapter", (list, str)), host=a.get("host", str),
                                   port=a.get("port", int), launch=a.get("launch", dict), attach=a.get("attach", dict),
                                   program=a.get("program", str), args=a.get("args", list), cwd=a.get("cwd", str),
                                   stop_on_entry=a.get("stopOnEntry", bool, False), name=name)
    else:
        raise RelayError("invalid_request", f"Unknown kind {kind!r}.", "Kinds: mycel, ez, dap.")
    return {"session": handle.info()}


VERBS: dict[str, Handler] = {
    "sessions": lambda r, s, a: {"sessions": [h.info() for h in r.sessions]},
    "status": lambda r, s, a: {"session": s.info()},
    "launch": lambda r, s, a: {"session": r.launch(
        a.get("program", str), args=a.get("args", list), cwd=a.get("cwd", str), env=a.get("env", dict),
        python=a.get("python", str), module=a.get("module", str), stop_on_entry=a.get("stopOnEntry", bool, False),
        just_my_code=a.get("justMyCode", bool, True), subprocess=a.get("subprocess", bool, False),
        name=a.get("name", str)).info()},
    "attach": lambda r, s, a: {"session": r.attach(
        port=a.get("port", int), host=a.get("host", str, "127.0.0.1"), pid=a.get("pid", int),
        name=a.get("name", str)).info()},
    "connect": _connect,
    "continue": _resume("continue_"),
    "next": _resume("next"),
    "stepIn": _resume("step_in"),
    "stepOut": _resume("step_out"),
    "pause": _resume("pause"),
    "threads": lambda r, s, a: {"threads": s.threads()},
    "stack": lambda r, s, a: {"frames": s.stack(a.get("threadId", int), a.get("start", int, 0),
                                                a.get("levels", int))},
    "scopes": lambda r, s, a: {"scopes": s.scopes(a.get("frameId", int))},
    "variables": lambda r, s, a: s.variables(a.get("ref", int, required=True), a.get("start", int, 0),
                                             a.get("count", int, 100)),
    "evaluate": lambda r, s, a: {"variable": s.evaluate(a.get("expression", str, required=True),
                                                        a.get("frameId", int), a.get("context", str, "repl"))},
    "setVariable": lambda r, s, a: {"variable": s.set_variable(a.get("ref", int, required=True),
                                                               a.get("name", str, required=True),
                                                               a.get("value", str, required=True))},
    "setBreakpoint": _set_breakpoint,
    "removeBreakpoint": lambda r, s, a: {"breakpoint": r.breakpoints.remove(a.get("id", int, required=True))},
    "enableBreakpoint": lambda r, s, a: {"breakpoint": r.breakpoints.enable(a.get("id", int, required=True),
                                                                            a.get("enabled", bool, True))},
    "breakpoints": lambda r, s, a: {"breakpoints": r.breakpoints.list(),
                                    "exceptions": r.manager.breakpoints.exceptions},
    "output": lambda r, s, a: s.output(a.get("since", int, 0), a.get("limit", int)),
    "input": lambda r, s, a: s.send_input(a.get("text", str, required=True)),
    "terminate": lambda r, s, a: s.terminate() or {"state": s.state, "exit_code": s.exit_code},
    "detach": lambda r, s, a: s.detach() or {"state": s.state},
    "restart": lambda r, s, a: s.restart() or {"state": s.state},
    "reconnect": lambda r, s, a: s.reconnect() or {"state": s.state},
}
NEEDS_SESSION = frozenset(VERBS) - {"sessions", "launch", "attach", "connect", "setBreakpoint", "removeBreakpoint",
                                    "enableBreakpoint", "breakpoints"}


class CommChannel:
    """Registers the comm target and keeps one ``Peer`` per open comm; every peer gets every event."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.peers: set[Peer] = set()
        self.pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="relay comm request")
        self._manager: Any = None

    def register(self) -> None:
        from comm import get_comm_manager

        self._manager = get_comm_manager()
        self._manager.register_target(TARGET, self._open)

    def _open(self, comm: Any, open_msg: dict[str, Any]) -> None:
        data = open_msg.get("content", {}).get("data") or {}
        since = data.get("since") if isinstance(data, dict) else None
        self.peers.add(Peer(self, comm, since if isinstance(since, int) and not isinstance(since, bool) else None))

    def close(self) -> None:
        for peer in list(self.peers):
            peer.close()
            try:
                peer.comm.close()
            except Exception:
                log.debug("comm close failed", exc_info=True)
        if self._manager is not None:
            self._manager.unregister_target(TARGET, self._open)
        self.pool.shutdown(wait=False, cancel_futures=True)
