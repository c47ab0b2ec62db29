"""The Mycel demo's pipeline runtime: requests through flows, their events, stage and CEL-rule breakpoints."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from ...protocols.jsonrpc import ErrorCode
from .cel import CelCompileError, CelError, condition_holds, evaluate_cel, require_cel
from .model import (
    DEMO_CONNECTORS,
    DEMO_FLOWS,
    DEMO_QUEUED,
    DEMO_TRANSFORMS,
    DEMO_TYPES,
    FIELD_TYPES,
    Connector,
    Flow,
    Lookup,
)

EVENT_BACKLOG = 256


class RpcError(Exception):
    """A JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ClientSession:
    """One attached client: its breakpoints per flow and its event backlog (full: events are dropped)."""

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.breakpoints: dict[str, list[dict[str, Any]]] = {}
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(EVENT_BACKLOG)


class DebugThread:
    """One request going through a flow while a debugger is attached."""

    def __init__(self, flow: str, session: ClientSession) -> None:
        self.id = "t" + secrets.token_hex(8)
        self.flow = flow
        self.session: ClientSession | None = session
        self.stage = "input"
        self.name = ""
        self.activation: dict[str, Any] = {}
        self.rule: dict[str, Any] | None = None
        self.step_into = False
        self.step_next = False
        self.resume: asyncio.Future[str] | None = None

    @property
    def paused(self) -> bool:
        return self.resume is not None and not self.resume.done()

    def info(self) -> dict[str, Any]:
        """The thread as the ThreadInfo of ``debug.threads``."""
        return {
            "id": self.id,
            "flowName": self.flow,
            "stage": self.stage,
            "name": self.name,
            "paused": self.paused,
        }

    def variables(self) -> dict[str, Any]:
        """What ``debug.variables`` answers: the activation, plus the current rule inside a transform."""
        out = {k: v for k, v in self.activation.items() if k in ("input", "output", "enriched", "steps")}
        if self.rule is not None:
            out["rule"] = dict(self.rule)
        return out


class StageFailed(Exception):
    """A stage failed; the flow ends with this error."""


class PipelineRuntime:
    """The flows of a Mycel-like service run on in-memory tables, with a debugger's sessions and threads."""

    def __init__(
        self,
        flows: tuple[Flow, ...] = DEMO_FLOWS,
        connectors: tuple[Connector, ...] = DEMO_CONNECTORS,
        types: dict[str, list[dict[str, Any]]] | None = None,
        transforms: dict[str, dict[str, str]] | None = None,
        queued: dict[str, tuple[dict[str, Any], ...]] | None = None,
    ) -> None:
        require_cel()
        self.flows = {f.name: f for f in flows}
        self.connectors = {c.name: c for c in connectors}
        self.types = DEMO_TYPES if types is None else types
        self.transforms = DEMO_TRANSFORMS if transforms is None else transforms
        self.tables: dict[str, list[dict[str, Any]]] = {
            "users": [{"id": 1, "email": "bob@example.com", "name": "Bob"}]
        }
        queued = DEMO_QUEUED if queued is None else queued
        self.queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        for conn in connectors:
            if conn.manual:
                self.queues[conn.name] = asyncio.Queue()
                for message in queued.get(conn.name, ()):
                    self.queues[conn.name].put_nowait(dict(message))
        self.sessions: dict[str, ClientSession] = {}
        self.threads: dict[str, DebugThread] = {}
        self._tasks: set[asyncio.Task] = set()

    async def close(self) -> None:
        """End every request in flight."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- requests through flows ---------------------------------------------

    def submit(self, flow: str, data: dict[str, Any]) -> tuple[str, asyncio.Task]:
        """Start one request through ``flow``; returns its debug thread id ("" with no debugger) and task.

        The task's result is ``{"output": ..., "error": ""}``.
        """
        if flow not in self.flows:
            raise RpcError(ErrorCode.FLOW_NOT_FOUND, "flow not found")
        session = next(iter(self.sessions.values()), None)
        thread = DebugThread(flow, session) if session is not None else None
        if thread is not None:
            self.threads[thread.id] = thread
        return (thread.id if thread else ""), self._spawn(self._run_flow(self.flows[flow], data, thread))

    def publish(self, connector: str, message: dict[str, Any]) -> str:
        """Deliver a message: queued for manual consume, else run at once; returns the thread id."""
        conn = self.connectors.get(connector)
        if conn is None:
            raise RpcError(ErrorCode.INTERNAL_ERROR, f"connector {json.dumps(connector)} not found")
        if conn.manual:
            self.queues[connector].put_nowait(message)
            return ""
        return self.submit(self._flow_of(connector).name, message)[0]

    def _flow_of(self, connector: str) -> Flow:
        flow = next((f for f in self.flows.values() if f.source[0] == connector), None)
        if flow is None:
            raise RpcError(ErrorCode.INTERNAL_ERROR, f"connector {json.dumps(connector)} feeds no flow")
        return flow

    def _emit(self, thread: DebugThread | None, event: str, **body: Any) -> None:
        if thread is not None:
            self._broadcast(event, {"threadId": thread.id, "flowName": thread.flow, **body})

    def _broadcast(self, event: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "method": event, "params": params}
        for session in self.sessions.values():
            with contextlib.suppress(asyncio.QueueFull):
                session.events.put_nowait(message)

    async def _run_flow(self, flow: Flow, data: dict[str, Any], thread: DebugThread | None) -> dict[str, Any]:
        started = time.perf_counter()
        env: dict[str, Any] = {"input": copy.deepcopy(data), "output": {}, "ctx": {}}
        if thread is not None:
            thread.activation = env
        self._emit(thread, "event.flowStart", input=env["input"])
        error = ""
        try:
            for stage in flow.stages:
                await self._run_stage(flow, stage, env, thread)
        except StageFailed as exc:
            error = str(exc)
        finally:
            if thread is not None:
                self.threads.pop(thread.id, None)
        self._emit(thread, "event.flowEnd", output=env["output"], durationUs=_since(started), error=error)
        return {"output": env["output"], "error": error}

    async def _run_stage(
        self, flow: Flow, stage: str, env: dict[str, Any], thread: DebugThread | None
    ) -> None:
        lookup = {"enrich": flow.enrich, "step": flow.step}.get(stage)
        sub = lookup.name if lookup is not None else ""
        if thread is not None:
            thread.stage, thread.name = stage, sub
        self._emit(thread, "event.stageEnter", stage=stage, name=sub, input=env["input"])
        reason = self._stage_stop(thread, stage)
        if thread is not None and reason:
            await self._pause(thread, reason)
        started = time.perf_counter()
        result, error = None, ""
        try:
            if stage == "transform":
                result = await self._transform(flow, env, thread)
            else:
                result = self._STAGES[stage](self, flow, env)
        except StageFailed as exc:
            error = str(exc)
            raise
        finally:
            exit_body = {"output": result, "durationUs": _since(started), "error": error}
            self._emit(thread, "event.stageExit", stage=stage, name=sub, **exit_body)

    def _sanitize(self, flow: Flow, env: dict[str, Any]) -> Any:
        env["input"] = {
            k: v.replace("<", "").replace(">", "") if isinstance(v, str) else v
            for k, v in env["input"].items()
        }
        return env["input"]

    def _validate_input(self, flow: Flow, env: dict[str, Any]) -> Any:
        for field in self.types.get(flow.validate or "", []):
            value = env["input"].get(field["name"])
            if value is None:
                if field["required"]:
                    raise StageFailed(f"validation failed: field {field['name']!r} is required")
            elif not isinstance(value, FIELD_TYPES[field["type"]]) or (
                isinstance(value, bool) and field["type"] != "bool"
            ):
                raise StageFailed(f"validation failed: field {field['name']!r} must be a {field['type']}")
        return env["input"]

    def _lookup(self, lookup: Lookup, env: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            key = evaluate_cel(lookup.key, env)
        except CelError as exc:
            raise StageFailed(f"{lookup.name}: {exc}") from exc
        return [dict(row) for row in self.tables.get(lookup.table, []) if row.get(lookup.field) == key]

    def _enrich(self, flow: Flow, env: dict[str, Any]) -> Any:
        assert flow.enrich is not None
        rows = self._lookup(flow.enrich, env)
        env.setdefault("enriched", {})[flow.enrich.name] = rows[0] if rows else None
        return env["enriched"]

    def _step(self, flow: Flow, env: dict[str, Any]) -> Any:
        assert flow.step is not None
        rows = self._lookup(flow.step, env)
        env.setdefault("steps", {})[flow.step.name] = {"count": len(rows), "rows": rows}
        return env["steps"][flow.step.name]

    def _write(self, flow: Flow, env: dict[str, Any]) -> Any:
        table = self.tables.setdefault(flow.target[1], [])
        row = {"id": len(table) + 1, **env["output"]}
        table.append(row)
        env["output"] = dict(row)
        return env["output"]

    def _read(self, flow: Flow, env: dict[str, Any]) -> Any:
        rows = [dict(row) for row in self.tables.get(flow.target[1], [])]
        env["output"] = {flow.target[1]: rows, "count": len(rows)}
        return env["output"]

    _STAGES: ClassVar[dict[str, Callable[[PipelineRuntime, Flow, dict[str, Any]], Any]]] = {
        "sanitize": _sanitize,
        "validate_input": _validate_input,
        "enrich": _enrich,
        "step": _step,
        "write": _write,
        "read": _read,
    }

    async def _transform(self, flow: Flow, env: dict[str, Any], thread: DebugThread | None) -> Any:
        output: dict[str, Any] = {}
        env["output"] = output
        for index, rule in enumerate(flow.rules):
            info = {"index": index, "target": rule.target, "expression": rule.expression}
            if thread is not None:
                thread.rule = dict(info)
                reason = self._rule_stop(thread, index)
                if reason:
                    await self._pause(thread, reason, rule=info)
            value, error, verb = None, "", ""
            try:
                value = evaluate_cel(rule.expression, env)
            except CelError as exc:
                error = str(exc)
                verb = "compile" if isinstance(exc, CelCompileError) else "evaluate"
            self._emit(
                thread,
                "event.ruleEval",
                stage="transform",
                ruleIndex=index,
                target=rule.target,
                expression=rule.expression,
                result=value,
                error=error,
            )
            if error:
                raise StageFailed(f"failed to {verb} expression for {rule.target!r}: {error}")
            if thread is not None and thread.rule is not None:
                thread.rule["result"] = value
            _set_nested(output, rule.target, value)
        if thread is not None:
            thread.rule = None
        return output

    # -- breakpoints and pausing ----------------------------------------------

    def _matching(self, thread: DebugThread, stage: str, rule_index: int | None) -> bool:
        if thread.session is None:
            return False
        for bp in thread.session.breakpoints.get(thread.flow, []):
            if bp["stage"] != stage:
                continue
            if rule_index is None and stage == "transform" and bp["ruleIndex"] >= 0:
                continue
            if rule_index is not None and bp["ruleIndex"] != rule_index:
                continue
            condition = bp.get("condition", "")
            if not condition or condition_holds(condition, thread.activation):
                return True
        return False

    def _stage_stop(self, thread: DebugThread | None, stage: str) -> str:
        if thread is None or thread.session is None:
            return ""
        if self._matching(thread, stage, None):
            return "breakpoint"
        return "step" if thread.step_next or thread.step_into else ""

    def _rule_stop(self, thread: DebugThread, index: int) -> str:
        if thread.session is None:
            return ""
        if self._matching(thread, "transform", index):
            return "breakpoint"
        return "stepInto" if thread.step_into else ""

    async def _pause(self, thread: DebugThread, reason: str, rule: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"stage": thread.stage, "name": thread.name, "reason": reason}
        if rule is not None:
            body["rule"] = rule
        thread.resume = asyncio.get_running_loop().create_future()
        self._emit(thread, "event.stopped", **body)
        action = await thread.resume
        thread.resume = None
        self._broadcast("event.continued", {"threadId": thread.id})
        thread.step_into = action == "stepInto"
        thread.step_next = action == "next"


def _since(started: float) -> int:
    return int((time.perf_counter() - started) * 1_000_000)


def _set_nested(target: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[leaf] = value

