"""What the relay reads from a DAP adapter: the declared shape of each body it consumes, and its translation.

Only the fields the relay uses are declared (others are dropped, or kept untouched in the
objects passed on whole). ``EVENTS``, ``RESPONSES`` and ``REVERSE`` map a name to its shape.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import with_config
from typing_extensions import NotRequired, TypedDict

from ...errors import RelayError
from ...model import BreakpointResult, ExceptionInfo, Frame, Scope, Thread, Variable
from ..messages import OPEN, STRICT, shapes

OUTPUT_CATEGORIES = {"stdout": "stdout", "stderr": "stderr", "console": "console", "important": "console"}

# -- events -------------------------------------------------------------------------------------


@with_config(STRICT)
class StoppedEvent(TypedDict):
    reason: str
    threadId: NotRequired[int | None]
    description: NotRequired[str | None]
    text: NotRequired[str | None]
    allThreadsStopped: NotRequired[bool | None]
    hitBreakpointIds: NotRequired[list[int] | None]


@with_config(STRICT)
class ContinuedEvent(TypedDict):
    threadId: NotRequired[int | None]
    allThreadsContinued: NotRequired[bool | None]


@with_config(STRICT)
class OutputEvent(TypedDict):
    output: str
    category: NotRequired[str | None]


@with_config(STRICT)
class ThreadEvent(TypedDict):
    reason: str
    threadId: int


@with_config(OPEN)
class DapBreakpoint(TypedDict):
    verified: bool
    id: NotRequired[int | None]
    line: NotRequired[int | None]
    message: NotRequired[str | None]


@with_config(STRICT)
class BreakpointEvent(TypedDict):
    reason: str
    breakpoint: DapBreakpoint


@with_config(OPEN)
class ProcessEvent(TypedDict):
    systemProcessId: NotRequired[int | None]


@with_config(OPEN)
class ForkedEvent(TypedDict):
    pid: int


@with_config(STRICT)
class ExitedEvent(TypedDict):
    exitCode: int


# -- responses ----------------------------------------------------------------------------------


@with_config(OPEN)
class ExceptionFilter(TypedDict):
    filter: str


@with_config(OPEN)
class Capabilities(TypedDict):
    exceptionBreakpointFilters: NotRequired[list[ExceptionFilter] | None]


@with_config(STRICT)
class DapThread(TypedDict):
    id: int
    name: NotRequired[str]


@with_config(STRICT)
class ThreadsResponse(TypedDict):
    threads: list[DapThread]


@with_config(STRICT)
class Source(TypedDict):
    path: NotRequired[str | None]
    sourceReference: NotRequired[int | None]


@with_config(STRICT)
class StackFrame(TypedDict):
    id: int
    name: str
    source: NotRequired[Source | None]
    line: NotRequired[int]
    column: NotRequired[int]
    instructionPointerReference: NotRequired[str | None]


@with_config(STRICT)
class StackTraceResponse(TypedDict):
    stackFrames: list[StackFrame]
    totalFrames: NotRequired[int | None]


@with_config(STRICT)
class PushedStack(StackTraceResponse):
    """The relay boot's ``relayStack`` event: a stopped thread's top frame, as ``stackTrace`` answers it."""

    threadId: int


@with_config(STRICT)
class BootWarning(TypedDict):
    """The relay boot's ``relayBootWarning`` event: what it could not do, and the error that stopped it."""

    what: str
    error: str


@with_config(STRICT)
class FeaturesReport(TypedDict):
    """The relay boot's ``relayFeatures`` event: the target's debugpy and Python, each feature on (None) or why it is
    off, and those waiting for a module not loaded yet."""

    debugpy: str | None
    python: str
    features: dict[str, str | None]
    waiting: NotRequired[dict[str, str]]


@with_config(STRICT)
class DapScope(TypedDict):
    name: str
    variablesReference: int
    expensive: NotRequired[bool | None]
    namedVariables: NotRequired[int | None]
    indexedVariables: NotRequired[int | None]


@with_config(STRICT)
class ScopesResponse(TypedDict):
    scopes: list[DapScope]


@with_config(STRICT)
class DapVariable(TypedDict):
    name: str
    value: str
    type: NotRequired[str | None]
    variablesReference: NotRequired[int]
    namedVariables: NotRequired[int | None]
    indexedVariables: NotRequired[int | None]
    evaluateName: NotRequired[str | None]


@with_config(STRICT)
class VariablesResponse(TypedDict):
    variables: list[DapVariable]


@with_config(STRICT)
class EvaluateResponse(TypedDict):
    result: str
    type: NotRequired[str | None]
    variablesReference: NotRequired[int]
    namedVariables: NotRequired[int | None]
    indexedVariables: NotRequired[int | None]


@with_config(STRICT)
class SetVariableResponse(TypedDict):
    value: str
    type: NotRequired[str | None]
    variablesReference: NotRequired[int | None]
    namedVariables: NotRequired[int | None]
    indexedVariables: NotRequired[int | None]


@with_config(STRICT)
class BreakpointsResponse(TypedDict):
    breakpoints: list[DapBreakpoint]


@with_config(STRICT)
class ExceptionDetails(TypedDict):
    typeName: NotRequired[str | None]
    message: NotRequired[str | None]
    stackTrace: NotRequired[str | None]


@with_config(STRICT)
class ExceptionInfoResponse(TypedDict):
    exceptionId: str
    description: NotRequired[str | None]
    details: NotRequired[ExceptionDetails | None]


@with_config(STRICT)
class CompletionItem(TypedDict):
    label: str
    text: NotRequired[str | None]


@with_config(STRICT)
class CompletionsResponse(TypedDict):
    targets: list[CompletionItem]


@with_config(STRICT)
class SourceResponse(TypedDict):
    content: str


@with_config(STRICT)
class ReadMemoryResponse(TypedDict):
    address: str
    data: NotRequired[str | None]
    unreadableBytes: NotRequired[int | None]


@with_config(STRICT)
class WriteMemoryResponse(TypedDict):
    bytesWritten: NotRequired[int | None]


@with_config(STRICT)
class DisassembleResponse(TypedDict):
    instructions: list[dict[str, Any]]


@with_config(STRICT)
class ModulesResponse(TypedDict):
    modules: list[dict[str, Any]]


@with_config(STRICT)
class LoadedSourcesResponse(TypedDict):
    sources: list[dict[str, Any]]


# -- reverse requests ---------------------------------------------------------------------------


@with_config(STRICT)
class RunInTerminalArguments(TypedDict):
    args: list[str]
    cwd: NotRequired[str | None]
    env: NotRequired[dict[str, str | None] | None]


@with_config(STRICT)
class ConnectTo(TypedDict):
    host: NotRequired[str]
    port: NotRequired[int]


@with_config(OPEN)
class ChildConfiguration(TypedDict):
    connect: NotRequired[ConnectTo | None]
    subProcessId: NotRequired[int | None]
    name: NotRequired[str | None]


@with_config(STRICT)
class StartDebuggingArguments(TypedDict):
    configuration: ChildConfiguration


EVENTS = shapes("event", {
    "stopped": StoppedEvent, "continued": ContinuedEvent, "output": OutputEvent, "thread": ThreadEvent,
    "breakpoint": BreakpointEvent, "process": ProcessEvent, "exited": ExitedEvent, "relayForked": ForkedEvent,
    "relayStack": PushedStack, "relayBootWarning": BootWarning,
    "relayFeatures": FeaturesReport,
})
RESPONSES = shapes("response", {
    "initialize": Capabilities, "threads": ThreadsResponse, "stackTrace": StackTraceResponse,
    "scopes": ScopesResponse, "variables": VariablesResponse, "evaluate": EvaluateResponse,
    "setVariable": SetVariableResponse, "setExpression": SetVariableResponse, "setBreakpoints": BreakpointsResponse,
    "setFunctionBreakpoints": BreakpointsResponse, "setDataBreakpoints": BreakpointsResponse,
    "setInstructionBreakpoints": BreakpointsResponse, "exceptionInfo": ExceptionInfoResponse,
    "completions": CompletionsResponse, "source": SourceResponse, "readMemory": ReadMemoryResponse,
    "writeMemory": WriteMemoryResponse, "disassemble": DisassembleResponse, "modules": ModulesResponse,
    "loadedSources": LoadedSourcesResponse,
})
REVERSE = shapes("request", {"runInTerminal": RunInTerminalArguments, "startDebugging": StartDebuggingArguments})

# -- translation into the neutral model ---------------------------------------------------------


def thread(t: DapThread) -> Thread:
    return Thread(id=t["id"], name=t.get("name", ""))


def frame(f: StackFrame) -> Frame:
    source = f.get("source") or {}
    return Frame(id=f["id"], name=f["name"], path=source.get("path"), line=f.get("line", 0),
                 column=f.get("column", 1), source_ref=source.get("sourceReference") or 0,
                 native=not source.get("path"))  # at most the adapter's disassembly: no source file


def scope(s: DapScope) -> Scope:
    return Scope(name=s["name"], ref=s["variablesReference"], expensive=bool(s.get("expensive")))


def child_counts(v: DapScope | DapVariable | EvaluateResponse | SetVariableResponse) -> tuple[int, int]:
    """(named, indexed) children of a scope or a value."""
    return v.get("namedVariables") or 0, v.get("indexedVariables") or 0


def variable(name: str, value: str, v: DapVariable | EvaluateResponse | SetVariableResponse,
             evaluate_name: str | None = None) -> Variable:
    named, indexed = child_counts(v)
    return Variable(name=name, value=value, type=v.get("type") or "", ref=v.get("variablesReference") or 0,
                    named=named, indexed=indexed,
                    evaluate_name=evaluate_name if evaluate_name is not None else v.get("evaluateName") or "")


def breakpoint_result(bp: DapBreakpoint) -> BreakpointResult:
    return BreakpointResult(verified=bp["verified"], line=bp.get("line"), message=bp.get("message") or "")


# pydevd appends this to the type when the exception was raised below the frame it pauses in (Ray's task runner).
_PAUSED_AT_NOTE = re.compile(r"\s*\(note: full exception trace is shown but execution is paused at: [^)]*\)$")


def exception_info(info: ExceptionInfoResponse) -> ExceptionInfo:
    details = info.get("details") or {}
    return ExceptionInfo(type=_PAUSED_AT_NOTE.sub("", details.get("typeName") or info["exceptionId"]),
                         message=details.get("message") or info.get("description") or "",
                         traceback=details.get("stackTrace") or "")


def stop_description(body: StoppedEvent) -> str:
    return body.get("description") or body.get("text") or ""


def error_line(message: str) -> str:
    """The line that says what went wrong: a compiler-style ``error:`` line (lldb, gdb), else a traceback's last."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return errors[0] if errors else lines[-1] if lines else message


def evaluation_failed(expression: str, adapter_message: str) -> RelayError:
    """``evaluation_failed`` for an expression that raised in the target: its exception's type and message (the
    adapter's message without the traceback before it)."""
    line = error_line(adapter_message)
    named = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)): ?(.*)$", line)
    details = {"command": "evaluate", "adapter_message": line,
               "type": named[1] if named else "", "message": named[2] if named else line}
    return RelayError("evaluation_failed", f"{expression!r} failed in the target: {line}", details=details)
