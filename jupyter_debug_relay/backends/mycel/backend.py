"""The Mycel backend: Mycel Studio's debug protocol (JSON-RPC 2.0 over WebSocket) in the neutral model.

Mapping:

- A Mycel debug thread (one request through a flow, id "t" + 16 hex) is a ``Thread`` with a
  small integer id given in order of appearance.
- A paused thread has one ``Frame`` (see ``mycel_messages.stop_info``); frame ids are new at
  every stop. The Scopes are the keys of ``debug.variables``: input, output, enriched, steps, rule.
- ``stage`` breakpoints (flow, stage, rule_index, condition) are sent per flow with
  ``debug.setBreakpoints``; rule_index None means -1 (the whole stage).
- Actions: continue -> debug.continue, next and stepOut -> debug.next (stepOut leaves a
  transform for the next stage), stepIn -> debug.stepInto. Mycel cannot pause.
- Several threads may be paused at once, each driven by its id. When a thread is continued
  or ends while another is still paused (and no step is pending), that other thread's stop is
  reported again, so the session shows it as paused.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections import OrderedDict, deque
from typing import Any

from ...errors import RelayError
from ...model import (
    Breakpoint,
    BreakpointResult,
    Frame,
    Scope,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
)
from ...protocols.jsonrpc import ErrorCode, JsonRpcChannel
from ...protocols.timeouts import MIN_TIMEOUT, clamp_timeout
from ...transports.websocket import DEFAULT_MAX_FRAME, WebSocketTransport
from ..base import Backend, BackendEvents
from . import messages as wire
from .values import ValueRefs
from .verbs import MycelVerbs, _Pull

NOT_PAUSED = "Mycel cannot pause a thread: set a stage breakpoint and wait for the stop."
CLIENT_NAME = "jupyter_debug_relay"
TIMELINE_EVENTS = 500
KEPT_FINISHED_THREADS = 200


class MycelBackend(MycelVerbs, Backend):
    """A Mycel service's debug endpoint (``ws://host:9090/debug``); the runtime outlives the session."""

    kind = "mycel"

    def __init__(self, events: BackendEvents, url: str, *, request_timeout: float = 30.0,
                 max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(events)
        self.url = url
        self.target = url
        self.request_timeout = clamp_timeout(request_timeout)
        self.max_frame = max_frame
        self.session_id = ""
        self.flows: list[str] = []
        self.sources: list[dict[str, Any]] = []
        self._channel: JsonRpcChannel | None = None
        self._closing = False
        self._stage_bps: list[Breakpoint] = []
        self._sent_flows: set[str] = set()
        self._thread_numbers = itertools.count(1)
        self._numbers = itertools.count(1)
        self._ids: dict[str, int] = {}
        self._names: dict[int, str] = {}
        self._paused: OrderedDict[int, StopInfo] = OrderedDict()
        self._actions: dict[int, str] = {}
        self._frames: dict[int, int] = {}
        self._values = ValueRefs(self._numbers)
        self._timelines: dict[int, deque[dict[str, Any]]] = {}
        self._finished: deque[int] = deque()
        self._flow_sources: dict[str, str] | None = None
        self._pulls: list[_Pull] = []

    # -- connection ---------------------------------------------------------------------

    async def start(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        """The setup handshake: attach, set the stage breakpoints, ready.

        After ``close()`` or a lost connection it connects again: the threads already seen keep their ids.
        """
        await self._connect()
        try:
            await self.apply_breakpoints(breakpoints, exceptions)
            await self.ready()
            if self._ids:  # a reconnect
                await self._adopt_paused()
        except RelayError:
            await self._disconnect()
            raise

    async def _connect(self) -> None:
        transport = await WebSocketTransport.connect(
            self.url, timeout=self.request_timeout, max_frame=self.max_frame
        )
        self._closing = False
        self._sent_flows.clear()
        self._flow_sources = None
        self._channel = JsonRpcChannel(
            transport,
            peer=self.peer,
            timeout=self.request_timeout,
            errors=wire.MYCEL_ERRORS,
            on_notification=self._on_notification,
            on_closed=self._on_closed,
        )
        self._channel.start()
        try:
            result: wire.Attached = await self._call("debug.attach", {"clientName": CLIENT_NAME})
        except RelayError:
            await self._disconnect()
            raise
        self.session_id = result.get("sessionId", "")
        self.flows = list(result.get("flows") or [])
        self.capabilities = {
            "supportsStageBreakpoints": True,
            "supportsRuleBreakpoints": True,
            "supportsConditionalBreakpoints": True,
            "supportsEvaluate": True,
            "supportsStepOut": True,
            "supportsPause": False,
            "supportsSetVariable": False,
            "supportsMultipleThreads": True,
            "sessionId": self.session_id,
            "flows": self.flows,
            "sources": self.sources,
        }

    @property
    def peer(self) -> str:
        return f"Mycel at {self.url}"

    async def _disconnect(self) -> None:
        self._closing = True
        for task in self._tasks:
            task.cancel()
        for pending in self._pulls:
            pending.stopped.cancel()
        self._pulls.clear()
        self._forget_pauses()
        if self._channel is not None:
            await self._channel.close()

    def _on_closed(self, error: RelayError) -> None:
        if self._closing:
            return
        self._forget_pauses()
        self.events.on_lost(error)

    def violated(self, error: RelayError) -> None:
        if not self._closing:
            self._on_closed(error)
            self._closing = True  # once: what the peer sends from now on is not acted on

    def _forget_pauses(self) -> None:
        self._paused.clear()
        self._actions.clear()
        self._frames.clear()
        self._values.forget()

    async def _call(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None
    ) -> Any:
        if self._channel is None:
            raise RelayError(
                "not_running", f"The Mycel session at {self.url} is not connected.", "Connect with start()."
            )
        try:
            result = await self._channel.request(method, params, timeout=timeout)
        except RelayError as exc:
            rpc_code, rpc_message = exc.details.get("rpc_code"), exc.details.get("rpc_message", "")
            if rpc_code == ErrorCode.INVALID_PARAMS and "not paused" in rpc_message:
                raise RelayError("not_paused", exc.message, NOT_PAUSED, exc.details) from None
            if rpc_code == ErrorCode.SESSION_NOT_FOUND:  # the runtime forgot this session: over until a reconnect
                self.violated(exc)
            raise
        shape = wire.RESULTS.get(method)
        return result if shape is None else self.checked(shape, result)

    @property
    def peer_name(self) -> str:
        return self.peer

    async def detach(self) -> None:
        """Say ``debug.detach`` and close the socket; Mycel lets its threads run on."""
        try:
            await self._call("debug.detach", timeout=MIN_TIMEOUT)
        finally:
            await self._disconnect()

    async def terminate(self) -> None:
        """Detach if the peer still answers, then close; the Mycel runtime keeps running."""
        with contextlib.suppress(RelayError):
            await self._call("debug.detach", timeout=MIN_TIMEOUT)
        await self._disconnect()

    async def close(self) -> None:
        """Close the socket now; safe to call twice."""
        await self._disconnect()

    def paused_threads(self) -> list[int]:
        """The ids of the threads paused now, the most recently stopped last."""
        return list(self._paused)

    # -- breakpoints ------------------------------------------------------------------------

    async def set_stage_breakpoints(self, bps: list[Breakpoint]) -> list[BreakpointResult]:
        """Replace all stage breakpoints: a ``debug.setBreakpoints`` per flow, clearing flows left empty."""
        results: list[BreakpointResult] = []
        by_flow: dict[str, list[dict[str, Any]]] = {}
        for bp in bps:
            problem = wire.stage_problem(bp, self.flows)
            results.append(BreakpointResult(verified=not problem, message=problem))
            if not problem:
                spec: dict[str, Any] = {
                    "stage": bp.stage,
                    "ruleIndex": -1 if bp.rule_index is None else bp.rule_index,
                }
                if bp.condition:
                    spec["condition"] = bp.condition
                by_flow.setdefault(str(bp.flow), []).append(spec)
        for flow in sorted(self._sent_flows - by_flow.keys()):
            await self._call("debug.setBreakpoints", {"flow": flow, "breakpoints": []})
        for flow, specs in by_flow.items():
            await self._call("debug.setBreakpoints", {"flow": flow, "breakpoints": specs})
        self._sent_flows = set(by_flow)
        self._stage_bps = list(bps)
        return results

    # -- execution --------------------------------------------------------------------------

    def _latest_paused(self) -> int:
        if not self._paused:
            raise RelayError("not_paused", "No Mycel thread is paused.", NOT_PAUSED)
        return next(reversed(self._paused))

    def _mycel_id(self, thread_id: int) -> str:
        if thread_id not in self._names:
            raise RelayError(
                "invalid_request", f"No Mycel thread {thread_id} is known.", "List them with threads()."
            )
        return self._names[thread_id]

    async def resume(self, action: str, thread_id: int | None) -> None:
        """continue, next, stepIn or stepOut one paused thread (the last one stopped by default)."""
        if action not in wire.ACTIONS:
            raise RelayError(
                "invalid_request", f"Mycel cannot {action!r}.", f"Use one of {', '.join(wire.ACTIONS)}."
            )
        tid = self._latest_paused() if thread_id is None else thread_id
        name = self._mycel_id(tid)
        if tid not in self._paused:
            raise RelayError("not_paused", f"Mycel thread {tid} ({name}) is not paused.", NOT_PAUSED)
        self._actions[tid] = action
        try:
            await self._call(wire.ACTIONS[action], {"threadId": name})
        except RelayError:
            self._actions.pop(tid, None)
            raise

    async def threads(self) -> list[Thread]:
        result: wire.Threads = await self._call("debug.threads")
        return [Thread(self._thread_id(info["id"]), f"{info.get('flowName') or ''} {info['id']}",
                       bool(info.get("paused"))) for info in result["threads"]]

    async def _adopt_paused(self) -> None:
        """After a reconnect: a thread the runtime holds paused (it stopped while the relay was away) is paused
        for the session too, so ``threads()`` and a step on it agree."""
        result: wire.Threads = await self._call("debug.threads")
        for info in result["threads"]:
            tid = self._thread_id(info["id"])
            if info.get("paused") and tid not in self._paused:
                self._stopped(tid, {"threadId": info["id"], "flowName": info.get("flowName"),
                                    "stage": info.get("stage"), "name": info.get("name"), "reason": "pause"})

    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        stop = self._paused.get(thread_id)
        if stop is None or stop.frame is None:
            raise RelayError("not_paused", f"Mycel thread {thread_id} is not paused.", NOT_PAUSED)
        frames = [stop.frame][start : None if levels is None else start + levels]
        return frames, 1

    def _frame_thread(self, frame_id: int | None) -> int:
        if frame_id is None:
            return self._latest_paused()
        if frame_id not in self._frames:
            raise RelayError(
                "not_paused",
                f"Frame {frame_id} is gone: its thread resumed.",
                "Take the frame of the current stop.",
            )
        return self._frames[frame_id]

    async def scopes(self, frame_id: int) -> list[Scope]:
        tid = self._frame_thread(frame_id)
        values: dict[str, Any] = await self._call("debug.variables", {"threadId": self._mycel_id(tid)})
        return [
            Scope(name, self._values.ref(tid, value, "" if name == "rule" else name))
            for name, value in values.items()
        ]

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        return self._values.page(ref, start, count)

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        """A CEL expression against the paused thread's data (``debug.evaluate``)."""
        tid = self._frame_thread(frame_id)
        params = {"threadId": self._mycel_id(tid), "expression": expression}
        result: wire.Evaluated = await self._call("debug.evaluate", params)
        variable = self._values.variable(tid, expression, result.get("result"), expression)
        variable.type = str(result.get("type") or variable.type)
        return variable

    async def custom_request(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Any Mycel method by name; a result that is not an object comes as ``{"result": ...}``."""
        result = await self._call(command, arguments)
        return result if isinstance(result, dict) else {"result": result}

    # -- events -------------------------------------------------------------------------------

    def _thread_id(self, name: str) -> int:
        if name not in self._ids:
            tid = next(self._thread_numbers)
            self._ids[name], self._names[tid] = tid, name
            self._timelines[tid] = deque(maxlen=TIMELINE_EVENTS)
        return self._ids[name]

    def _on_notification(self, method: str, params: Any) -> None:
        if self._closing:
            return
        shape = wire.NOTIFICATIONS.get(method)
        if shape is None:
            body = params if isinstance(params, dict) else {}
        else:
            try:
                body = self.checked(shape, params)
            except RelayError:
                return
        name = body.get("threadId")
        tid = self._thread_id(name) if isinstance(name, str) and name else None
        if tid is not None:
            self._timelines[tid].append({"event": method, "body": body, "ts": time.time()})
        self.events.on_raw("mycel", method, body)
        if tid is None:
            return
        if method == "event.stopped":
            self._stopped(tid, body)
        elif method == "event.continued":
            self._continued(tid)
        elif method == "event.flowStart":
            self._flow_started(tid, body)
        elif method == "event.flowEnd":
            self._flow_ended(tid, body)
        elif method == "event.stageExit" and body.get("error"):
            stage = " ".join(str(body[key]) for key in ("stage", "name") if body.get(key))
            self._failed(tid, body, f"stage {stage or '?'}")

    def _stopped(self, tid: int, body: wire.StoppedEvent) -> None:
        self._forget_pause(tid)
        self._actions.pop(tid, None)
        stop = wire.stop_info(body, tid, next(self._numbers))
        assert stop.frame is not None
        self._frames[stop.frame.id] = tid
        if stop.reason == "breakpoint":
            rule: wire.Rule = body.get("rule") or {}
            stop.breakpoint_ids = self._hit(body.get("flowName") or "", body.get("stage") or "", rule.get("index"))
        self._paused[tid] = stop
        for pending in self._pulls:
            if pending.thread_id == tid and not pending.stopped.done():
                pending.stopped.set_result(None)
        self.events.on_stopped(stop)

    def _hit(self, flow: str, stage: str, index: int | None) -> list[int]:
        hit = []
        for bp in self._stage_bps:
            rule_index = -1 if bp.rule_index is None else bp.rule_index
            if bp.flow != flow or bp.stage != stage:
                continue
            if index is not None and rule_index != index:
                continue
            if index is None and stage == "transform" and rule_index >= 0:
                continue
            hit.append(bp.id)
        return hit

    def _forget_pause(self, tid: int) -> None:
        self._paused.pop(tid, None)
        for frame in [f for f, owner in self._frames.items() if owner == tid]:
            del self._frames[frame]
        self._values.forget(tid)

    def _continued(self, tid: int) -> None:
        self._forget_pause(tid)
        self.events.on_continued(tid)
        if self._actions.get(tid) == "continue":
            del self._actions[tid]
            self._report_remaining()

    def _flow_started(self, tid: int, body: wire.ThreadEvent) -> None:
        self.events.on_thread(tid, "started")
        connector = (self._flow_sources or {}).get(body.get("flowName") or "")
        pending = next((p for p in self._pulls if p.connector == connector and p.thread_id is None), None)
        if pending is not None:
            pending.thread_id = tid

    def _failed(self, tid: int, body: dict[str, Any], what: str) -> None:
        """An error the runtime reports (a stage or a flow failed), as a line of the session's stderr."""
        error = body["error"]
        text = error if isinstance(error, str) else json.dumps(error, default=str)
        self.events.on_output("stderr", f"[thread {tid}] {body.get('flowName') or '?'}: {what} failed: {text}\n")

    def _flow_ended(self, tid: int, body: dict[str, Any]) -> None:
        self._forget_pause(tid)
        self.events.on_thread(tid, "exited")
        if body.get("error"):
            self._failed(tid, body, "flow")
        self.events.on_finished(tid, {"flow": body.get("flowName") or "", "output": body.get("output"),
                                      "error": body.get("error") or None, "duration_us": body.get("durationUs")})
        if self._actions.pop(tid, None) is not None:
            self._report_remaining()
        self._finished.append(tid)
        while len(self._finished) > KEPT_FINISHED_THREADS:
            old = self._finished.popleft()
            self._timelines.pop(old, None)
            self._ids.pop(self._names.pop(old, ""), None)

    def _report_remaining(self) -> None:
        """After a thread left its pause for good, show the session a thread that is still paused."""
        if self._paused and not self._actions:
            self.events.on_stopped(self._paused[next(reversed(self._paused))])
