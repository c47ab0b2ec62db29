"""What the relay reads from `ez debugserver`: the declared shape of the data of each event it consumes.

The EZ server is loose about what it leaves out, so nearly every field may be absent; a field
that is there must have its type.
"""

from __future__ import annotations

from pydantic import with_config
from typing_extensions import NotRequired, TypedDict

from ..messages import STRICT, shapes


@with_config(STRICT)
class Location(TypedDict):
    file: NotRequired[str | None]
    line: NotRequired[int | None]
    column: NotRequired[int | None]


@with_config(STRICT)
class Stopped(TypedDict):
    reason: NotRequired[str | None]
    location: NotRequired[Location | None]


@with_config(STRICT)
class Output(TypedDict):
    text: str
    category: NotRequired[str | None]


@with_config(STRICT)
class Error(TypedDict):
    message: NotRequired[str | None]
    command: NotRequired[str | None]
    location: NotRequired[Location | None]


@with_config(STRICT)
class Exited(TypedDict):
    exitCode: NotRequired[int | None]


@with_config(STRICT)
class BreakpointSet(TypedDict):
    line: NotRequired[int | None]


@with_config(STRICT)
class StackFrame(TypedDict):
    function: NotRequired[str | None]
    file: NotRequired[str | None]
    line: NotRequired[int | None]
    column: NotRequired[int | None]


@with_config(STRICT)
class StackTrace(TypedDict):
    frames: NotRequired[list[StackFrame] | None]


@with_config(STRICT)
class EzVariable(TypedDict):
    name: str
    value: NotRequired[str | None]
    type: NotRequired[str | None]


@with_config(STRICT)
class Variables(TypedDict):
    variables: NotRequired[list[EzVariable] | None]


@with_config(STRICT)
class EvaluateResult(TypedDict):
    result: NotRequired[str | None]
    type: NotRequired[str | None]


EVENTS = shapes("event", {
    "stopped": Stopped, "output": Output, "error": Error, "exited": Exited, "breakpointSet": BreakpointSet,
    "stackTrace": StackTrace, "variables": Variables, "evaluateResult": EvaluateResult,
})

# The protocol's vocabulary: the commands that resume, the stop reasons it sends, what it can do.
RESUME_COMMANDS = {"continue": "continue", "next": "stepOver", "stepIn": "stepInto", "stepOut": "stepOut"}
STOP_REASONS = ("entry", "step", "breakpoint")
CAPABILITIES = {
    "supportsConditionalBreakpoints": False,
    "supportsHitConditionalBreakpoints": False,
    "supportsLogPoints": False,
    "supportsFunctionBreakpoints": False,
    "supportsSetVariable": False,
    "supportsCompletionsRequest": False,
    "supportsTerminateRequest": True,
}
