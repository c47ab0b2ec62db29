"""What the relay reads from Mycel: the declared shape of each notification and result it consumes, the
protocol's vocabulary (stages, stop reasons, actions, error codes), and a stop in the neutral model."""

from __future__ import annotations

from typing import Any

from pydantic import with_config
from typing_extensions import NotRequired, TypedDict

from ...model import Breakpoint, ExceptionInfo, Frame, StopInfo
from ...protocols.jsonrpc import ErrorCode
from ..messages import OPEN, STRICT, Shape

PIPELINE_STAGES = ("input", "sanitize", "filter", "accept", "validate_input", "enrich", "step", "transform",
                   "dedupe", "validate_output", "cache_hit", "cache_miss", "read", "write")  # Mycel's order
INSPECTABLE = ("flows", "flow", "connectors", "types", "transforms")
STOP_REASONS = {
    "breakpoint": "breakpoint",
    "step": "step",
    "stepInto": "step",
    "exception": "exception",
    "error": "exception",
    "pause": "pause",
    "entry": "entry",
}
ACTIONS = {
    "continue": "debug.continue",
    "next": "debug.next",
    "stepOut": "debug.next",
    "stepIn": "debug.stepInto",
}
MYCEL_ERRORS = {
    ErrorCode.SESSION_NOT_FOUND: ("not_running",
                                  "Mycel no longer knows this debug session; reconnect (session.reconnect())."),
    ErrorCode.THREAD_NOT_FOUND: ("invalid_request",
                                 "That Mycel thread has ended or never existed; list threads with threads()."),
    ErrorCode.FLOW_NOT_FOUND: ("invalid_request", "There is no such flow; list them with inspect('flows')."),
    ErrorCode.EVAL_ERROR: ("evaluation_failed", "Check the CEL expression: its variables, functions and quotes."),
}


@with_config(STRICT)
class Rule(TypedDict):
    index: NotRequired[int | None]
    target: NotRequired[str | None]
    expression: NotRequired[str | None]


@with_config(OPEN)
class ThreadEvent(TypedDict):
    threadId: str
    flowName: NotRequired[str | None]


@with_config(OPEN)
class StoppedEvent(TypedDict):
    threadId: str
    flowName: NotRequired[str | None]
    stage: NotRequired[str | None]
    name: NotRequired[str | None]
    reason: NotRequired[str | None]
    rule: NotRequired[Rule | None]
    error: NotRequired[Any]


@with_config(STRICT)
class Attached(TypedDict):
    sessionId: NotRequired[str]
    flows: NotRequired[list[str] | None]


@with_config(STRICT)
class Ready(TypedDict):
    sources: NotRequired[list[dict[str, Any]] | None]


@with_config(STRICT)
class ThreadInfo(TypedDict):
    id: str
    flowName: NotRequired[str | None]
    stage: NotRequired[str | None]
    name: NotRequired[str | None]
    paused: NotRequired[bool | None]


@with_config(STRICT)
class Threads(TypedDict):
    threads: list[ThreadInfo]


@with_config(STRICT)
class Evaluated(TypedDict):
    result: NotRequired[Any]
    type: NotRequired[str | None]


@with_config(OPEN)
class Source(TypedDict):
    connector: str


# A flow is passed on whole (inspect): undeclared keys are kept.
Flow = with_config(OPEN)(TypedDict("Flow", {"name": str, "from": NotRequired[Source | None]}))

NOTIFICATIONS: dict[str, Shape[Any]] = {
    "event.stopped": Shape("an event.stopped notification", StoppedEvent),
    "event.continued": Shape("an event.continued notification", ThreadEvent),
    "event.flowStart": Shape("an event.flowStart notification", ThreadEvent),
    "event.flowEnd": Shape("an event.flowEnd notification", ThreadEvent),
}
RESULTS: dict[str, Shape[Any]] = {
    "debug.attach": Shape("a debug.attach result", Attached),
    "debug.ready": Shape("a debug.ready result", Ready),
    "debug.threads": Shape("a debug.threads result", Threads),
    "debug.variables": Shape("a debug.variables result", dict[str, Any]),
    "debug.evaluate": Shape("a debug.evaluate result", Evaluated),
    "inspect.flows": Shape("an inspect.flows result", list[Flow]),
}


def stop_info(body: StoppedEvent, thread_id: int, frame_id: int) -> StopInfo:
    """A stop from an ``event.stopped``.

    Its one ``Frame`` is named after its stage (``transform rule 1 (name)`` inside a transform rule), with
    ``path`` ``flow:<flow name>``, ``line`` the stage's place in ``PIPELINE_STAGES`` (1-based; 0 for a stage
    not in it) and ``column`` the rule index + 1 inside a rule (else 1); inside a rule its ``source_line`` is
    the rule, ``target = expression``. Reasons: breakpoint -> breakpoint, step and stepInto -> step,
    exception/error -> exception, pause -> pause, entry -> entry; anything else -> pause, named in the
    description.
    """
    flow, stage = body.get("flowName") or "", body.get("stage") or ""
    rule: Rule = body.get("rule") or {}
    index = rule.get("index")
    where = f"{stage} {body.get('name') or ''}".strip() if index is None else \
        f"{stage} rule {index} ({rule.get('target') or ''})"
    frame = Frame(id=frame_id, name=where, path=f"flow:{flow}",
                  line=PIPELINE_STAGES.index(stage) + 1 if stage in PIPELINE_STAGES else 0,
                  column=1 if index is None else index + 1)
    raw_reason = body.get("reason") or ""
    description = f"{flow} paused at {where} ({raw_reason or 'no reason given'})"
    source_line = f"{rule.get('target') or ''} = {rule['expression']}" if rule.get("expression") else ""
    if source_line:
        description += f": {source_line}"
    stop = StopInfo(STOP_REASONS.get(raw_reason, "pause"), thread_id, frame, description=description,
                    stopped_threads=[thread_id], source_line=source_line)
    if stop.reason == "exception":
        stop.exception = ExceptionInfo("MycelError", str(body.get("error", "")))
    return stop


def stage_problem(bp: Breakpoint, flows: list[str]) -> str:
    """Why Mycel cannot take a stage breakpoint (empty when it can); ``flows``: the runtime's, once known."""
    if bp.kind != "stage" or not bp.flow or not bp.stage:
        return "a Mycel breakpoint needs a flow and a stage"
    if flows and bp.flow not in flows:
        return f"Mycel has no flow {bp.flow!r}; its flows are {', '.join(flows)}"
    if bp.stage not in PIPELINE_STAGES:
        return f"{bp.stage!r} is not a Mycel stage; stages are {', '.join(PIPELINE_STAGES)}"
    if bp.rule_index is not None and bp.rule_index >= 0 and bp.stage != "transform":
        return f"a rule index applies to the transform stage only, not {bp.stage!r}"
    return ""
