"""What the relay reads from Mycel: the declared shape of each notification and result it consumes."""

from __future__ import annotations

from typing import Any

from pydantic import with_config
from typing_extensions import NotRequired, TypedDict

from .messages import OPEN, STRICT, Shape


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
    paused: NotRequired[bool | None]


@with_config(STRICT)
class Threads(TypedDict):
    threads: list[ThreadInfo]


@with_config(STRICT)
class Evaluated(TypedDict):
    result: NotRequired[Any]
    type: NotRequired[str | None]


@with_config(STRICT)
class Source(TypedDict):
    connector: str


Flow = with_config(STRICT)(TypedDict("Flow", {"name": str, "from": NotRequired[Source | None]}))

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
