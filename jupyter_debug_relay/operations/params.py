"""Every operation's parameters as a strict pydantic model: types, defaults and bounds, declared once."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from ..protocols.timeouts import MAX_TIMEOUT

MAX_PAGE = 10_000  # children in one page of variables


def _capped(seconds: float) -> float:
    return min(seconds, MAX_TIMEOUT)


Line = Annotated[StrictInt, Field(ge=1, description="A 1-based line number.")]
Ref = Annotated[StrictInt, Field(ge=1, description="A variables reference (a `ref` from scopes or variables).")]
Id = Annotated[StrictInt, Field(ge=1)]
Start = Annotated[StrictInt, Field(ge=0, description="Index of the first item (0-based).")]
Count = Annotated[StrictInt, Field(ge=1, le=MAX_PAGE, description="How many items, at most.")]
Levels = Annotated[StrictInt, Field(ge=1, description="How many frames, at most.")]
Timeout = Annotated[float, Field(ge=0, description=f"Seconds to wait; more than {MAX_TIMEOUT:g} is cut to it."),
                    AfterValidator(_capped)]
Port = Annotated[StrictInt, Field(ge=1, le=65535)]
Pid = Annotated[StrictInt, Field(ge=1)]
Text = Annotated[StrictStr, Field(min_length=1)]
ExceptionMode = Literal["raised", "uncaught", "none"]
EvalContext = Literal["repl", "watch", "hover", "clipboard", "variables"]


class Params(BaseModel):
    """Parameters of an operation: strict (no "3" for 3), no unknown fields, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SessionParams(Params):
    """An operation on one session; without ``session`` it acts on the most recent one."""

    session: StrictStr | None = Field(None, description="A session id (s1) or name; default: the most recent.")


class WaitParams(SessionParams):
    """Waiting for the next stop or the end of the target."""

    timeout: Timeout = 10.0


class ResumeParams(WaitParams):
    """A step, continue or pause: on one thread (default: the stopped one), waiting for the next stop."""

    thread_id: StrictInt | None = None
    wait: StrictBool = True


class LaunchParams(Params):
    """A Python script (or ``module``) started under debugpy."""

    program: StrictStr | None = None
    module: StrictStr | None = None
    args: list[StrictStr] | None = None
    cwd: StrictStr | None = None
    env: dict[StrictStr, StrictStr] | None = None
    python: StrictStr | None = None
    stop_on_entry: StrictBool = False
    just_my_code: StrictBool = True
    subprocess: StrictBool = False
    name: StrictStr | None = None


class AttachParams(Params):
    """A running Python process: ``python -m debugpy --listen PORT`` (port) or any process (pid)."""

    port: Port | None = None
    host: StrictStr = "127.0.0.1"
    pid: Pid | None = None
    just_my_code: StrictBool = True
    name: StrictStr | None = None


class ConnectParams(Params):
    """A Mycel service (``url``), an EZ program (``program``), or any DAP adapter."""

    kind: Literal["mycel", "ez", "dap"]
    url: StrictStr | None = None
    program: StrictStr | None = None
    ez: StrictStr = "ez"
    adapter: list[StrictStr] | StrictStr | None = None
    host: StrictStr | None = None
    port: Port | None = None
    launch: dict | None = None
    attach: dict | None = None
    args: list[StrictStr] | None = None
    cwd: StrictStr | None = None
    env: dict[StrictStr, StrictStr] | None = None
    stop_on_entry: StrictBool = False
    name: StrictStr | None = None


class StackParams(SessionParams):
    """Frames of a stopped thread, from ``start``."""

    thread_id: StrictInt | None = None
    start: Start = 0
    levels: Levels | None = None


class FrameParams(SessionParams):
    """A frame of the stop (default: the top one)."""

    frame_id: StrictInt | None = None


class VariablesParams(SessionParams):
    """A page of a value's children."""

    ref: Ref
    start: Start = 0
    count: Count = 100


class EvaluateParams(FrameParams):
    """An expression evaluated in a frame of the stopped target."""

    expression: Text
    context: EvalContext = "repl"


class SetVariableParams(SessionParams):
    """A new value for a child of ``ref``; the value is an expression of the target's language."""

    ref: Ref
    name: Text
    value: Text


class CompletionsParams(FrameParams):
    """What could complete ``text`` in a frame."""

    text: StrictStr


class OutputParams(SessionParams):
    """Output from a cursor."""

    since: Start = 0
    limit: Count | None = None


class InputParams(SessionParams):
    """Text for the target's stdin."""

    text: StrictStr


class AddBreakpointParams(Params):
    """A breakpoint of the relay: line (path, line), function (name), or Mycel stage (flow, stage)."""

    kind: Literal["line", "function", "stage"] = "line"
    path: Text | None = None
    line: Line | None = None
    name: Text | None = None
    flow: Text | None = None
    stage: Text | None = None
    rule_index: StrictInt | None = None
    condition: StrictStr | None = None
    hit_condition: StrictStr | None = None
    log_message: StrictStr | None = None


class BreakpointIdParams(Params):
    """One breakpoint by its id."""

    id: Id


class UpdateBreakpointParams(BreakpointIdParams):
    """Turn a breakpoint on or off."""

    enabled: StrictBool = True


class ExceptionsParams(Params):
    """When sessions stop on exceptions."""

    mode: ExceptionMode


class NoParams(Params):
    """No parameters."""


# -- issue 16 ------------------------------------------------------------------------------------------


class ConditionErrorsParams(Params):
    """Whether a breakpoint whose condition fails to evaluate stops (as VS Code does) or lets the target run."""

    stop: StrictBool = True
