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
    """An operation on one session; without ``session`` it acts on the most recent one whose start did not fail."""

    session: StrictStr | None = Field(None, description="A session id (s1) or name; default: the most recent.")


class WaitParams(SessionParams):
    """Waiting for the next stop or the end of the target."""

    timeout: Timeout = Field(
        10.0, description='Seconds to wait for the next stop or the end; past it the target is still running.')


class ResumeParams(WaitParams):
    """A step, continue or pause: on one thread (default: the stopped one), waiting for the next stop."""

    thread_id: StrictInt | None = Field(None, description='The thread; default: the stopped thread.')
    wait: StrictBool = Field(True, description='Wait for the next stop or the end (up to timeout) and return it.')


class SourceParams(SessionParams):
    """The stopped frame's source text; not sent again when the caller has the text of ``known_hash``."""

    known_hash: StrictStr | None = Field(None, description="The SHA-256 of the text the caller has (a cache).")
    frame_id: StrictInt | None = Field(None, description="A frame of the stop (an id from stack) whose file to show; "
                                       "default: the stop's own frame.")


class StartOptions(BaseModel):
    """What launch, attach and connect add where a front end waits for the start (HTTP, MCP, the CLI): wait for the
    first stop or the end, and how long."""

    model_config = ConfigDict(extra="forbid", strict=True)

    wait: StrictBool = Field(True, description="Wait for the first stop or the end; false answers at once.")
    timeout: Timeout = Field(10.0, description="Seconds to wait; past them the answer is state running.")


class LaunchParams(Params):
    """A Python script (or ``module``) started under debugpy."""

    program: StrictStr | None = Field(None, description='The script (or, for a DAP adapter, the executable) to debug.')
    module: StrictStr | None = Field(None, description='A module to run as with python -m, instead of a program.')
    args: list[StrictStr] | None = Field(None, description="The target's command-line arguments.")
    cwd: StrictStr | None = Field(None, description="The target's working directory; default: the kernel's.")
    env: dict[StrictStr, StrictStr] | None = Field(None, description="Environment variables added to the target's.")
    python: StrictStr | None = Field(None, description="The Python interpreter for the target; default: the kernel's.")
    stop_on_entry: StrictBool = Field(False, description="Stop at the program's first line.")
    just_my_code: StrictBool = Field(True, description='Step through and stop in your own code only, not in libraries.')
    subprocess: StrictBool = Field(
        False, description="Debug the target's child processes too, each as a child session.")
    exceptions: ExceptionMode | None = Field(
        None, description="Stop on raised, uncaught or no exceptions, in this session only; default: the relay's "
        "mode (set_exceptions), uncaught unless changed.")
    name: StrictStr | None = Field(None, description='A name for the session, usable wherever its id is.')
    on: StrictStr | None = Field(None, description="A remote relay's name (remote_add): start the target there.")


class AttachParams(Params):
    """A running Python process: ``python -m debugpy --listen PORT`` (port) or any process (pid)."""

    port: Port | None = Field(None, description='The TCP port the peer listens on.')
    host: StrictStr = Field("127.0.0.1", description='The host the peer listens on.')
    pid: Pid | None = Field(None, description='The id of a running Python process to attach to.')
    path_mappings: dict[StrictStr, StrictStr] | None = Field(
        None, description="Where the target's files are here, for a target in a container or on another host: "
        "{remote folder: local folder}. Breakpoints on local files bind there; stops and stacks name local files.")
    just_my_code: StrictBool = Field(True, description='Step through and stop in your own code only, not in libraries.')
    name: StrictStr | None = Field(None, description='A name for the session, usable wherever its id is.')
    on: StrictStr | None = Field(None, description="A remote relay's name (remote_add): start the target there.")


class ConnectParams(Params):
    """A Mycel service (``url``), an EZ program (``program``), or any DAP adapter."""

    kind: Literal["mycel", "ez", "dap"] = Field(
        ..., description='What to connect to: mycel (url), ez (program) or dap (adapter and/or program).')
    url: StrictStr | None = Field(None, description='The Mycel debug endpoint, e.g. ws://127.0.0.1:9090/debug.')
    program: StrictStr | None = Field(None, description='The script (or, for a DAP adapter, the executable) to debug.')
    ez: StrictStr = Field("ez", description='The ez command.')
    adapter: list[StrictStr] | StrictStr | None = Field(
        None, description='The DAP adapter: a command (list or string) or a registry name such as lldb.')
    host: StrictStr | None = Field(None, description='The host the peer listens on.')
    port: Port | None = Field(None, description='The TCP port the peer listens on.')
    launch: dict | None = Field(None, description="The DAP launch request's arguments, as the adapter documents them.")
    attach: dict | None = Field(None, description="The DAP attach request's arguments, as the adapter documents them.")
    args: list[StrictStr] | None = Field(None, description="The target's command-line arguments.")
    cwd: StrictStr | None = Field(None, description="The target's working directory; default: the kernel's.")
    env: dict[StrictStr, StrictStr] | None = Field(None, description="Environment variables added to the target's.")
    stop_on_entry: StrictBool = Field(False, description="Stop at the program's first line.")
    name: StrictStr | None = Field(None, description='A name for the session, usable wherever its id is.')


class StackParams(SessionParams):
    """Frames of a stopped thread, from ``start``."""

    thread_id: StrictInt | None = Field(None, description='The thread; default: the stopped thread.')
    start: Start = Field(0, description='Index of the first item (0-based).')
    levels: Levels | None = Field(None, description='How many frames, at most.')


class FrameParams(SessionParams):
    """A frame of the stop (default: the top one)."""

    frame_id: StrictInt | None = Field(None, description='The frame; default: the top frame of the stop.')


class VariablesParams(SessionParams):
    """A page of a value's children."""

    ref: Ref = Field(..., description="The value's reference (a ref from scopes or variables).")
    start: Start = Field(0, description='Index of the first item (0-based).')
    count: Count = Field(100, description='How many items, at most.')


class EvaluateParams(FrameParams):
    """An expression evaluated in a frame of the stopped target."""

    expression: Text = Field(..., description="The expression, in the target's language.")
    context: EvalContext = Field(
        "repl", description="Where the expression comes from: repl, watch, hover, clipboard (whole value), variables.")


class SetVariableParams(SessionParams):
    """A new value for a child of ``ref``; the value is an expression of the target's language."""

    ref: Ref = Field(..., description='The variables reference holding the variable.')
    name: Text = Field(..., description="The variable's name.")
    value: Text = Field(..., description="The new value: an expression in the target's language.")


class CompletionsParams(FrameParams):
    """What could complete ``text`` in a frame."""

    text: StrictStr = Field(..., description='The text to complete.')


class OutputParams(SessionParams):
    """Output from a cursor."""

    since: Start = Field(0, description="The output cursor to read from (a previous page's cursor).")
    limit: Count | None = Field(None, description='How many chunks, at most.')


class InputParams(SessionParams):
    """Text for the target's stdin."""

    text: StrictStr = Field("", description="The text for the target's stdin (add a newline to end a line).")
    eof: bool = Field(False, description="Close the target's stdin after the text: its reads return end of file.")


class AddBreakpointParams(Params):
    """A breakpoint of the relay: line (path, line or content), function (name), Mycel stage (flow, stage) or output
    (pattern)."""

    kind: Literal["line", "function", "stage", "output"] = Field(
        "line", description='line (path, line or content), function (name), stage (flow, stage) or output (pattern).')
    path: Text | None = Field(None, description='The source file (or FILE:LINE, or FILE:"TEXT OF THE LINE").')
    line: Line | None = Field(None, description='The line (1-based); with content, the line to look near.')
    content: Text | None = Field(
        None, description='Instead of a line: text of the line to stop at (e.g. "total += x"), found again after '
        'edits.')
    name: Text | None = Field(None, description='The function, for a function breakpoint.')
    flow: Text | None = Field(None, description='The Mycel flow.')
    stage: Text | None = Field(None, description='The Mycel pipeline stage.')
    rule_index: StrictInt | None = Field(None, description="The CEL rule's index in its stage (-1: after the last).")
    condition: StrictStr | None = Field(
        None, description="Stop only when this expression, in the target's language, is true.")
    hit_condition: StrictStr | None = Field(
        None, description='Stop only on these hits: a count (5), a comparison (>= 2) or a modulo (% 10).')
    log_message: StrictStr | None = Field(
        None, description='Print this message (with {expressions}) instead of stopping.')
    task: StrictStr | None = Field(None, description='Only in this asyncio task.')
    pattern: Text | None = Field(
        None, description="For an output breakpoint: pause just after a line of output matching this regex.")


class ScopedBreakpointParams(AddBreakpointParams):
    """A breakpoint of every session, or (``session`` given) of that session only."""

    session: StrictStr | None = Field(
        None, description="Only this session stops there; default: every session.")


class BreakpointScope(Params):
    """The breakpoints of every session, or those a session sees (its own and every session's)."""

    session: StrictStr | None = Field(
        None, description="Only the breakpoints this session sees: its own and the global ones; default: all.")


class BreakpointIdParams(Params):
    """One breakpoint by its id (with ``session``: one that session sees)."""

    id: Id = Field(..., description="The breakpoint's id.")
    session: StrictStr | None = Field(
        None, description="A session: the breakpoint must be its own or a global one; default: any breakpoint.")


class UpdateBreakpointParams(BreakpointIdParams):
    """Change a breakpoint in place: on or off, its condition, hit condition or log message (left out: unchanged)."""

    enabled: StrictBool | None = Field(None, description='Whether the breakpoint is on; default: unchanged.')
    condition: StrictStr | None = Field(
        None, description='A new condition in the target\'s language; "" removes it; default: unchanged.')
    hit_condition: StrictStr | None = Field(
        None, description='A new hit condition (5, >= 2, % 10); "" removes it; default: unchanged.')
    log_message: StrictStr | None = Field(
        None, description='A new log message (the breakpoint prints instead of stopping); "" removes it.')


class ExceptionsParams(Params):
    """When sessions stop on exceptions."""

    mode: ExceptionMode = Field(..., description='raised (every exception), uncaught, or none.')
    types: list[Text] | None = Field(
        None, description='Only these exception types (ValueError, mymodule.MyError) and their subclasses; '
        'default: every type.')


class NoParams(Params):
    """No parameters."""


# -- server operations -------------------------------------------------------------------------------------

TimeoutMinutes = Annotated[float, Field(gt=0, le=7 * 24 * 60, description="Idle minutes before the session is "
                                        "stopped; default: the relay's idle timeout.")]


class CreateParams(Params):
    """An empty session to launch, attach or connect into later; it ends after ``timeout_minutes`` idle."""

    name: StrictStr | None = None
    timeout_minutes: TimeoutMinutes | None = None


class UpdateSessionParams(SessionParams):
    """A session's new name and/or idle timeout (what is left out stays)."""

    name: Annotated[StrictStr, Field(min_length=1, description="The session's new name.")] | None = None
    timeout_minutes: TimeoutMinutes | None = None


class IntoSession(Params):
    """Starting a target in a session made by ``create`` (``session``); without it, in a new session."""

    session: StrictStr | None = Field(None, description="A session made by create, still in state created; "
                                      "default: a new session.")


# -- issue 16 ------------------------------------------------------------------------------------------


class ConditionErrorsParams(Params):
    """Whether a breakpoint whose condition fails to evaluate stops (as VS Code does) or lets the target run."""

    stop: StrictBool = True
