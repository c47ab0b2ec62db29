"""A session of a remote relay as a backend: each verb goes through the remote's HTTP API, each event comes
through its event stream, resumed after a broken link from the last event seen, each event once."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..backends.base import Backend, BackendEvents
from ..errors import RelayError
from ..model import (
    AsyncTasks,
    Breakpoint,
    BreakpointResult,
    Frame,
    Scope,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
)
from .client import Remote
from .stream import RemoteEvent, follow

log = logging.getLogger(__name__)

STEPS = {"continue": "continue", "next": "step-over", "stepIn": "step-into", "stepOut": "step-out"}
RETRY_MAX = 0.5  # seconds between attempts to reach a remote that went away, at most
_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def parsed(kind: Any, data: Any, remote: str) -> Any:
    """``data`` from the remote read as the model ``kind`` (plain data: nothing in it is run or unpickled)."""
    adapter = _ADAPTERS.get(kind) or _ADAPTERS.setdefault(kind, TypeAdapter(kind))
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise RelayError("protocol_error", f"The remote relay {remote} sent a {getattr(kind, '__name__', kind)} "
                         f"that does not fit: {exc.errors()[0]['msg']}.") from None


class RemoteBackend(Backend):
    """Session ``session`` of ``remote``; ``plan`` (``{"operation", "args"}``) starts its target there first."""

    kind = "remote"
    binds_pending = True  # the remote judges the paths: its files are not here

    def __init__(self, events: BackendEvents, remote: Remote, session: str, plan: dict[str, Any] | None = None,
                 request_timeout: float = 30.0) -> None:
        super().__init__(events)
        self.remote, self.session, self.plan = remote, session, plan
        self.owned = plan is not None  # started here: ended with the relay; others are only let go of
        self.leaving = False  # the relay closes or forgets the remote: end the mirror, not the remote session
        self.target = f"{remote.name}/{session}"
        self.request_timeout = request_timeout
        self.last_seq: int | None = None
        self.identity: tuple[Any, Any] | None = None  # the remote session's (uid, created_at)
        self.sent: dict[int, tuple[int, tuple[Any, ...]]] = {}  # local breakpoint id -> (remote id, its spec)
        self.sources: dict[str, tuple[str, str]] = {}  # a file's (SHA-256, text) as the remote last gave it
        self.disconnected = False
        self.opened = False  # the event stream was open once
        self._open = asyncio.Event()
        self._follower: asyncio.Task[Any] | None = None

    @property
    def peer_name(self) -> str:
        return f"remote relay {self.remote.name}"

    def _path(self, tail: str = "") -> str:
        return f"/sessions/{self.session}{tail}"

    async def _call(self, method: str, tail: str, body: dict[str, Any] | None = None, **params: Any) -> Any:
        return await self.remote.call(method, self._path(tail), body, params)

    # -- starting and following ---------------------------------------------------------------

    async def start(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        self._follower = follower = asyncio.ensure_future(self._follow())
        opened = asyncio.ensure_future(self._open.wait())
        await asyncio.wait({follower, opened}, timeout=self.request_timeout, return_when=asyncio.FIRST_COMPLETED)
        opened.cancel()
        if follower.done():
            raise follower.exception() or RelayError("connection_failed", f"{self.target} ended its event stream.")
        if not self._open.is_set():
            follower.cancel()
            raise RelayError("connection_failed", f"The remote relay {self.remote.name} did not open the event "
                             f"stream of {self.session}.")
        info = (await self._call("GET", ""))["session"]
        self.identity = (info.get("uid"), info.get("created_at"))
        self.capabilities = info.get("capabilities") or {}
        await self.apply_breakpoints(breakpoints, exceptions)
        if self.plan is not None:
            operation, args = self.plan["operation"], dict(self.plan["args"])
            if operation == "launch":
                args.setdefault("exceptions", exceptions)
            info = (await self._call("POST", f"/{operation}", {**args, "wait": False}))["session"]
            self.capabilities = info.get("capabilities") or {}
            await self._judge_all()
        self.pid = info.get("pid")
        self.warnings = [w for w in info.get("warnings") or [] if isinstance(w, str)]  # the remote's start's
        if info.get("state") == "paused" and info.get("stop"):
            self.events.on_stopped(self._stop(info["stop"]))
        elif info.get("state") in ("terminated", "failed"):
            self.events.on_exited(info.get("exit_code"))

    async def _follow(self) -> None:
        delay = 0.05
        while True:
            try:
                if self.disconnected:
                    await self._same_session()
                async for event in follow(self.remote, self.session, self.last_seq, self._opened):
                    self._take(event)
                    delay = 0.05
            except RelayError as exc:
                if not self.opened:  # never opened: the start fails with it
                    raise
                if exc.code != "connection_failed":
                    self.events.on_lost(exc)
                    return
                if not self.disconnected:
                    self.disconnected, self.remote.connected = True, False
                    self._open.clear()
                    self.events.on_disconnected()
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)

    async def _same_session(self) -> None:
        """After a broken link: the remote must still hold the same session (a restarted one lost it)."""
        try:
            info = (await self._call("GET", ""))["session"]
        except RelayError as exc:
            if exc.code != "session_not_found":
                raise
            info = None
        if info is None or (info.get("uid"), info.get("created_at")) != self.identity:
            raise RelayError("session_not_found", f"The remote relay {self.remote.name} restarted and no longer has "
                             f"session {self.session}: its target is gone.",
                             f"Start it again there (launch --on {self.remote.name}).")

    def _opened(self) -> None:
        self._open.set()
        self.opened = True
        if self.disconnected:
            self.disconnected, self.remote.connected = False, True
            self.events.on_reconnected()

    def _take(self, event: RemoteEvent) -> None:
        if event.seq is not None:
            if self.last_seq is not None and event.seq <= self.last_seq:
                return  # seen before the link broke
            self.last_seq = event.seq
        body = event.data.get("body") or {}
        name = event.event
        if name == "stopped":
            self.events.on_stopped(self._stop(body))
        elif name == "continued":
            self.events.on_continued(body.get("thread_id"))
        elif name == "output":
            self.events.on_output(str(body.get("category", "stdout")), str(body.get("text", "")))
        elif name == "thread":
            self.events.on_thread(int(body.get("thread_id", 0)), str(body.get("reason", "")))
        elif name in ("exited", "terminated"):
            self.events.on_exited(body.get("exit_code"))
        elif name == "breakpoint":
            self._breakpoint(body.get("breakpoint") or {})
        elif name == "session" and body.get("state") == "failed":
            error = (body.get("info") or {}).get("error") or {}
            self.events.on_lost(RelayError(str(error.get("code") or "adapter_failed"),
                                           f"On the remote relay {self.remote.name}: {error.get('message', 'failed')}",
                                           str(error.get("hint") or "")))
        elif name == "raw":
            self.events.on_raw(str(body.get("protocol", "")), str(body.get("name", "")), body.get("body") or {})
        elif name == "dropped":
            self.events.on_output("console", f"--- the remote relay {self.remote.name} no longer had "
                                  f"{body.get('events', 'some')} events of {self.session} ---\n")

    def _stop(self, data: dict[str, Any]) -> StopInfo:
        stop = parsed(StopInfo, data, self.remote.name)
        stop.breakpoint_ids = [i for i in map(self._local_id, stop.breakpoint_ids) if i is not None]
        return stop

    def _breakpoint(self, data: dict[str, Any]) -> None:
        local_id = self._judged(data)
        if local_id is not None:
            self.events.on_breakpoint(local_id, self.breakpoint_results[local_id])

    def _judged(self, data: dict[str, Any]) -> int | None:
        """Keep the remote's latest word on one of its breakpoints (what ``took_breakpoints`` records); its id here."""
        local_id = self._local_id(data.get("id"))
        if local_id is not None:
            self.breakpoint_results[local_id] = _result(data)
        return local_id

    def _local_id(self, remote_id: Any) -> int | None:
        """The id here of the remote's breakpoint ``remote_id`` (None: not one of ours)."""
        return next((local_id for local_id, (sent_id, _) in self.sent.items() if sent_id == remote_id), None)

    async def _judge_all(self) -> None:
        """Take the remote's word on every breakpoint once its start has judged them: asked, not waited for on the
        event stream, which may not have brought those events yet when the start's answer is here."""
        for data in (await self._call("GET", "/breakpoints"))["breakpoints"]:
            if data.get("status") != "pending":
                self._judged(data)
            elif (local_id := self._local_id(data.get("id"))) is not None:
                self.breakpoint_results.pop(local_id, None)  # not judged there yet: no word to record

    # -- breakpoints --------------------------------------------------------------------------

    async def apply_breakpoints(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        """The remote session's breakpoints made to be ``breakpoints`` (also those changed while the link was down)."""
        enabled = [bp for bp in breakpoints if bp.enabled and bp.kind in ("line", "function")]
        for local_id in [i for i in self.sent if i not in {bp.id for bp in enabled}]:
            await self._remove(local_id)
        for bp in enabled:
            self.breakpoint_results[bp.id] = await self._send(bp)
        if self.plan is None or self.plan["operation"] != "launch" or self._open.is_set():
            await self.set_exception_breakpoints(exceptions)

    async def _send(self, bp: Breakpoint) -> BreakpointResult:
        spec = (bp.kind, bp.path, bp.line, bp.name, bp.condition, bp.hit_condition, bp.log_message)
        kept = self.sent.get(bp.id)
        if kept is not None and kept[1] == spec:
            return self.breakpoint_results.get(bp.id, BreakpointResult(bp.verified, bp.line, bp.message))
        if kept is not None:
            await self._remove(bp.id)
        body = {"kind": bp.kind, "path": bp.path, "line": bp.line, "name": bp.name, "condition": bp.condition,
                "hit_condition": bp.hit_condition, "log_message": bp.log_message}
        made = (await self._call("POST", "/breakpoints", {k: v for k, v in body.items() if v is not None}))
        made = made["breakpoint"]
        self.sent[bp.id] = (int(made["id"]), spec)
        result = _result(made)
        if made.get("status") != "pending":  # pending: no session there has judged it yet, so nothing to record
            self.breakpoint_results[bp.id] = result
        return result

    async def _remove(self, local_id: int) -> None:
        remote_id, _ = self.sent.pop(local_id)
        try:
            await self._call("DELETE", f"/breakpoints/{remote_id}")
        except RelayError as exc:
            if exc.code not in ("invalid_request", "not_found"):
                raise

    async def set_breakpoints(self, path: str, bps: list[Breakpoint]) -> list[BreakpointResult]:
        for local_id, (_, spec) in list(self.sent.items()):
            if spec[0] == "line" and spec[1] == path and local_id not in {bp.id for bp in bps}:
                await self._remove(local_id)
        return [await self._send(bp) for bp in bps]

    async def set_function_breakpoints(self, bps: list[Breakpoint]) -> list[BreakpointResult]:
        for local_id, (_, spec) in list(self.sent.items()):
            if spec[0] == "function" and local_id not in {bp.id for bp in bps}:
                await self._remove(local_id)
        return [await self._send(bp) for bp in bps]

    async def set_exception_breakpoints(self, mode: str) -> None:
        await self._call("POST", "/exception-breakpoints", {"mode": mode})

    # -- running and looking ------------------------------------------------------------------

    async def resume(self, action: str, thread_id: int | None) -> None:
        await self._call("POST", f"/{STEPS[action]}", {"thread_id": thread_id, "wait": False})

    async def pause(self, thread_id: int | None) -> None:
        await self._call("POST", "/pause", {"thread_id": thread_id, "wait": False})

    async def threads(self) -> list[Thread]:
        return parsed(list[Thread], (await self._call("GET", "/threads"))["threads"], self.remote.name)

    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        answer = await self._call("GET", "/stacktrace", thread_id=thread_id, start=start, levels=levels)
        return parsed(list[Frame], answer["frames"], self.remote.name), int(answer["total"])

    async def scopes(self, frame_id: int) -> list[Scope]:
        return parsed(list[Scope], (await self._call("GET", f"/frames/{frame_id}/scopes"))["scopes"],
                      self.remote.name)

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        return parsed(VariablePage, await self._call("GET", f"/variables/{ref}", start=start, count=count),
                      self.remote.name)

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        answer = await self._call("POST", "/evaluate", {"expression": expression, "frame_id": frame_id,
                                                        "context": context})
        return parsed(Variable, answer["variable"], self.remote.name)

    async def tasks(self, frame_id: int) -> AsyncTasks:
        return parsed(AsyncTasks, (await self._call("GET", "/tasks"))["async_tasks"], self.remote.name)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        answer = await self._call("POST", f"/variables/{ref}/set", {"name": name, "value": value})
        return parsed(Variable, answer["variable"], self.remote.name)

    async def completions(self, text: str, frame_id: int | None) -> list[str]:
        answer = await self._call("POST", "/completions", {"text": text, "frame_id": frame_id})
        return [str(t) for t in answer["targets"]]

    async def source(self, frame: Frame) -> str:
        """The stopped frame's text from the remote, kept here by its hash: a text seen before is not sent again."""
        known = self.sources.get(frame.path or "")
        answer = await self._call("GET", "/source", known_hash=known[0] if known else None)
        digest = str(answer.get("hash") or "")
        if known is not None and answer.get("same") and digest == known[0]:
            return known[1]
        text = str(answer.get("source", ""))
        if frame.path and hashlib.sha256(text.encode()).hexdigest() == digest:
            self.sources[frame.path] = (digest, text)
        return text

    async def send_input(self, text: str, eof: bool = False) -> None:
        await self._call("POST", "/input", {"text": text, "eof": eof})

    async def detach(self) -> None:
        await self._call("POST", "/detach", {})
        await self.close()

    async def terminate(self) -> None:
        if not self.leaving:
            try:
                await self._call("POST", "/terminate", {})
            except RelayError as exc:
                log.info("terminate of %s failed: %s", self.target, exc)
        await self.close()

    async def close(self) -> None:
        if self._follower is not None and self._follower is not asyncio.current_task():
            self._follower.cancel()
        self._follower = None


def _result(data: dict[str, Any]) -> BreakpointResult:
    return BreakpointResult(bool(data.get("verified")), data.get("line"), str(data.get("message") or ""),
                            data.get("status") == "refused")
