"""The neutral model every backend translates its wire into."""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

SESSION_STATES = ("created", "launching", "running", "paused", "terminated", "failed")


_LEAVES = (str, int, float, bool, type(None))
_LEAF_TYPES = frozenset(_LEAVES)  # leaves are copied in place, without a call: a session's info has ~150 of them


def as_dict(obj: Any) -> Any:
    """A JSON-ready copy of a model object (dataclasses, lists and dicts of them)."""
    if isinstance(obj, _LEAVES):
        return obj
    if isinstance(obj, dict):
        return {k: v if type(v) in _LEAF_TYPES else as_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [x if type(x) in _LEAF_TYPES else as_dict(x) for x in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {name: v if type(v := getattr(obj, name)) in _LEAF_TYPES else as_dict(v)
                for name in _field_names(type(obj))}
    return obj


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


Model = TypeVar("Model")


def from_json(kind: type[Model], data: dict[str, Any]) -> Model:
    """A model object from its JSON form (an answer's, a recording's): keys it has no field for are left out, and
    nested objects stay dicts (``stop_from_json`` makes a stop's)."""
    names = _field_names(kind)
    return kind(**{key: value for key, value in data.items() if key in names})


@dataclass
class Frame:
    """One stack frame; ``path`` is None for code with no file (see ``source_ref``)."""

    id: int
    name: str
    path: str | None
    line: int
    column: int = 1
    source_ref: int = 0
    native: bool = False  # native code with no source file (at most the adapter's disassembly)


@dataclass
class ExceptionInfo:
    """The exception a stop is about."""

    type: str
    message: str
    traceback: str = ""


class SourceText(str):
    """A frame's source text; ``note`` says (a sentence) when its file changed on disk since the target loaded it."""

    note: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.note)


@dataclass
class StopInfo:
    """Where and why a target stopped."""

    reason: str
    thread_id: int
    frame: Frame | None = None
    breakpoint_ids: list[int] = field(default_factory=list)
    exception: ExceptionInfo | None = None
    description: str = ""
    stopped_threads: list[int] = field(default_factory=list)
    also_hit: list[int] = field(default_factory=list)  # threads at a breakpoint too: each continue reports the next
    output_line: str | None = None  # the line of output an output breakpoint matched
    source_changed: bool = False  # the frame's file changed on disk since the target loaded it
    source_note: str = ""  # the sentence that says so
    source_line: str = ""  # the text of the line stopped on (from its file or the peer); empty when unknown


def stop_from_json(data: dict[str, Any]) -> StopInfo:
    """A stop from its JSON form (an answer's, a recording's ``stopped`` event), its frame and exception too."""
    stop = from_json(StopInfo, data)
    frame, exception = data.get("frame"), data.get("exception")
    stop.frame = from_json(Frame, frame) if isinstance(frame, dict) else None
    stop.exception = from_json(ExceptionInfo, exception) if isinstance(exception, dict) else None
    return stop


@dataclass
class Thread:
    """A thread of the target (for Mycel: a debug thread of one request)."""

    id: int
    name: str
    stopped: bool = False


@dataclass
class Scope:
    """A group of variables of one frame."""

    name: str
    ref: int
    expensive: bool = False


@dataclass
class Variable:
    """A value: its repr cut to a length (``truncated``), and ``ref`` when it has children."""

    name: str
    value: str
    type: str = ""
    ref: int = 0
    named: int = 0
    indexed: int = 0
    evaluate_name: str = ""
    truncated: bool = False
    cycle: bool = False  # the value is one of its ancestors in the tree (a reference back): expanding it repeats

    @property
    def group(self) -> bool:
        """Whether it is one of debugpy's presentation groups ("special variables", ...): a folder, no value."""
        return self.name.endswith(" variables") and not self.value and bool(self.ref)


@dataclass
class Watch:
    """A watch expression of a session and, at a stop, its value (or why it has none)."""

    index: int  # 1-based, as `watch rm N` takes it
    expression: str
    value: str | None = None
    type: str = ""
    error: str | None = None


@dataclass
class VariablePage:
    """A page of children: ``items`` from ``start``, out of ``total``."""

    items: list[Variable]
    start: int
    total: int


BREAKPOINT_STATUSES = ("pending", "verified", "unverified", "refused", "removed")


@dataclass
class Breakpoint:
    """A breakpoint owned by the relay; ``id`` is stable across sessions.

    ``status``: ``pending`` (no session has judged it yet, or its file does not exist yet), ``verified``,
    ``unverified`` (a session has it but could not bind it), ``refused`` (it cannot be set as given: a
    line with no code, a condition the target's language rejects, a kind the backend lacks), ``removed`` (it
    is gone: what ``remove`` answers and its last ``breakpoint`` event says); ``message`` says why when it is
    not verified. ``session``: the session it belongs to, or None for every session.
    """

    id: int
    kind: str  # line | function | exception | stage | output
    path: str | None = None
    line: int | None = None
    name: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    task: str | None = None  # a line breakpoint of one asyncio task: it stops only in the task of this name
    enabled: bool = True
    verified: bool = False
    message: str = ""
    flow: str | None = None
    stage: str | None = None
    rule_index: int | None = None
    status: str = "pending"
    pattern: str | None = None  # an output breakpoint's regular expression
    session: str | None = None  # the one session it belongs to (made through that session); None: every session
    content: str | None = None  # a line breakpoint given by content: the text its line holds, found again on edits
    warning: str = ""  # a doubt about its line: an ambiguous or weak content match, a line edited away


@dataclass
class BreakpointResult:
    """What a backend says of one breakpoint it was given; ``refused`` when it will never take it as given."""

    verified: bool
    line: int | None = None
    message: str = ""
    refused: bool = False


@dataclass
class OutputChunk:
    """A piece of target output; ``seq`` is its cursor."""

    seq: int
    category: str
    text: str
    ts: float = field(default_factory=time.time)


@dataclass
class OutputPage:
    """Output read from a cursor: ``cursor`` is where the next read starts."""

    chunks: list[OutputChunk]
    cursor: int
    dropped: int

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.chunks)


@dataclass
class SessionInfo:
    """A snapshot of a session."""

    id: str
    name: str
    backend: str
    state: str
    target: str
    capabilities: dict[str, Any]
    created_at: float
    last_activity: float
    exit_code: int | None = None
    error: dict[str, Any] | None = None
    stop: StopInfo | None = None
    pid: int | None = None
    parent: str | None = None
    stopped_by_user: bool = False  # ended by terminate: its exit code is the relay's kill, not the target's doing
    waiting_for_input: bool = False  # a running target blocked reading the stdin the relay holds
    uid: str | None = None  # the unique id of its recording (YYYYMMDD-HHMMSS-xxxx), when the relay records
    startup: dict[str, float] = field(default_factory=dict)  # ms per phase of its (last) start, in order
    warnings: list[str] = field(default_factory=list)  # how the target runs less well than it could, and why


@dataclass
class AsyncFrame:
    """A link of a task's chain of awaits: a coroutine (or a function it called) and the line it is at."""

    name: str
    path: str
    line: int


@dataclass
class AsyncTask:
    """An asyncio task of the target at a stop: where it waits (or runs) and which tasks it awaits."""

    id: str  # its identity in the target while it lives (the same at the next stop)
    name: str
    state: str  # pending | done | cancelled
    coroutine: str  # the qualified name of its coroutine
    path: str | None = None  # where it waits: the innermost frame of its chain outside asyncio's own files
    line: int | None = None
    stack: list[AsyncFrame] = field(default_factory=list)  # its chain, outermost first: the innermost links
    depth: int = 0  # links in its whole chain
    awaits: list[str] = field(default_factory=list)  # ids of the tasks it awaits (await, gather, its TaskGroup's)
    future: str = ""  # the future it awaits when that is no task ("Future pending", "gather pending")
    loop: int = 0  # its event loop: an index into ``AsyncTasks.loops``
    running: bool = False  # it runs a step now: its thread is paused in it
    stopped: bool = False  # the stop is in it
    exception: str = ""  # the exception it ended with: its type and message


@dataclass
class AsyncLoop:
    """An open asyncio event loop of the target, and the thread running it ("" when it is not running)."""

    index: int
    thread: str
    running: bool
    tasks: int


@dataclass
class AsyncTasks:
    """The target's asyncio tasks at a stop, on every open event loop; ``note`` says why none, or that some are left
    out (``total`` counts them all)."""

    tasks: list[AsyncTask] = field(default_factory=list)
    loops: list[AsyncLoop] = field(default_factory=list)
    total: int = 0
    note: str = ""


@dataclass
class ProcessInfo:
    """A local Python process to attach to: by ``pid``, or by ``port`` where debugpy listens for a client."""

    pid: int
    command: str  # its command line, secret-looking values masked
    debugpy: bool = False  # debugpy is loaded in it or named on its command line
    port: int | None = None  # the port debugpy listens on for it: attach(port=...)
    listening: list[int] = field(default_factory=list)  # every TCP port the process itself listens on


@dataclass
class RecordedCode:
    """A code object a target records: its qualified name, file, first line and the lines recorded (None: all)."""

    name: str
    path: str
    first: int
    range: list[int] | None = None


# One recorded event: its number, its call, its code (index into the codes), kind (line, return, exception), line,
# the locals it changed ((name, repr or None where deleted)), and the value returned or raised.
RecordedEvent = tuple[int, int, int, str, int, list[tuple[str, str | None]], str | None]


@dataclass
class RecordingBatch:
    """A target recorder's answer to record, since or off: its codes, its ring's figures and events after a
    number (``more``: others are waiting)."""

    codes: list[RecordedCode]
    tool: int
    cap: int
    bytes: int
    dropped: int
    first: int
    last: int
    events: list[RecordedEvent] = field(default_factory=list)
    more: bool = False
    how: str = "compiled"  # compiled (a record after each statement) or sys.monitoring (a callback a line)
    why: str = ""  # why not compiled, when it is not


@dataclass
class RecordedValue:
    """A local at a recorded state: its repr as recorded (cut to a length), and whether the line run before changed
    it (in ``changes``: whether this line changes it; ``deleted`` when it deletes it)."""

    name: str
    value: str
    changed: bool = False
    deleted: bool = False


@dataclass
class RecordedStep:
    """One recorded state: a line about to run in a call of recorded code, that call's return (``value``) or an
    exception raised there (``value``: its type and message). ``locals`` is filled for the state shown."""

    index: int  # 1-based, in the history the relay holds
    call: int  # which call of the recorded code (a number of the target's)
    kind: str  # line | return | exception
    function: str
    path: str
    line: int
    changes: list[RecordedValue] = field(default_factory=list)  # what running this line changed
    value: str = ""
    source_line: str = ""
    locals: list[RecordedValue] = field(default_factory=list)
    partial: bool = False  # the call's first states fell out of the ring: some locals are not known


@dataclass
class Recording:
    """What a session records and what the relay holds of it: ``states`` recorded states, ``position`` the one shown
    (None: the live stop), ``dropped`` fallen out of the byte cap (``cap``)."""

    what: str
    functions: list[str] = field(default_factory=list)  # each recorded code: "name (path:line)"
    states: int = 0
    position: int | None = None
    dropped: int = 0
    bytes: int = 0
    cap: int = 0
    recording: bool = True  # still recording in the target
    note: str = ""
