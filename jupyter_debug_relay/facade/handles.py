"""Session handles: a debug session seen from the caller's thread, typed by what its backend can do.

``SessionHandle`` has every session's verbs; ``DapSessionHandle`` adds what only DAP adapters have,
``MycelSessionHandle`` the runtime's own verbs. ``handle_for`` picks the type by the session's backend.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ..backends import factory
from ..engine.events import Event
from ..engine.session import Session
from ..errors import RelayError
from ..model import (
    AsyncTasks,
    Breakpoint,
    Frame,
    OutputPage,
    RecordedStep,
    Recording,
    Scope,
    SessionInfo,
    SourceText,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
    Watch,
)
from ..operations.snapshot import Snapshot


class Relay(Protocol):
    """What a handle needs of the relay that owns it (``facade.relay.Relay``)."""

    operations: Any
    breakpoints: Any

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any: ...

    def _run(self, fn: Callable[[], Any]) -> Any: ...

    def subscribe(self, callback: Callable[[Event], None], session: str | None = None) -> Callable[[], None]: ...


class SessionHandle:
    """A debug session seen from the caller's thread; every call waits with a timeout."""

    def __init__(self, relay: Relay, session: Session) -> None:
        self._relay = relay
        self._session = session
        self.id = session.id
        self.unverified: list[Breakpoint] = []  # from the start that made it: breakpoints it could not bind, and why
        self.warnings: list[str] = []  # from the start that made it: how its target runs less well, and why

    def __repr__(self) -> str:
        return f"<Session {self.id} {self.name!r} {self.state}>"

    @property
    def adapter(self) -> str:
        """The debug adapter's name (DAP sessions), else the backend's kind."""
        return self._session.backend.kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionHandle) and other._session is self._session

    def __hash__(self) -> int:
        return hash(self.id)

    def _call(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        self._session.touch()
        return self._relay.call(coro, timeout)

    @property
    def relay(self) -> Relay:
        """The relay that owns this session (its breakpoints, its event bus)."""
        return self._relay

    @property
    def name(self) -> str:
        return self._session.name

    @property
    def state(self) -> str:
        return self._session.state

    @property
    def backend(self) -> str:
        return self._session.backend.kind

    @property
    def exit_code(self) -> int | None:
        return self._session.exit_code

    @property
    def stop(self) -> StopInfo | None:
        return self._session.stop

    def info(self) -> SessionInfo:
        """A snapshot of the session; asking for it counts as activity (the idle timeout starts again). A deleted
        session is ``session_not_found``."""
        def polled() -> SessionInfo:
            return self._relay.manager.get(self.id).info()  # the lookup touches it
        return self._relay._run(polled)

    def _op(self, operation: str, /, **args: Any) -> Any:
        """Run ``operation`` on this session through the relay's dispatcher."""
        return self._relay.operations.call(operation, {"session": self.id, **args})

    # -- execution --------------------------------------------------------------------------

    def wait_for_stop(self, timeout: float = 10.0) -> StopInfo:
        """The current stop, or the next one; raises ``target_exited`` or ``timeout``."""
        return self._op("wait", timeout=timeout)["stop"]

    def _run_until_stop(self, operation: str, thread_id: int | None, wait: bool, timeout: float) -> StopInfo | None:
        """Run ``operation`` and return its stop; None when it waits for none, or when the target ran to its end
        meanwhile (``state`` is then ``terminated`` and ``exit_code`` says how). A session that had ended before
        the call raises ``target_exited``."""
        ended = self.state in ("terminated", "failed")
        try:
            return self._op(operation, thread_id=thread_id, wait=wait, timeout=timeout)["stop"]
        except RelayError as exc:
            if exc.code != "target_exited" or ended:
                raise
            return None

    def continue_(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._run_until_stop("continue", thread_id, wait, timeout)

    def next(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._run_until_stop("next", thread_id, wait, timeout)

    def step_in(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._run_until_stop("step_in", thread_id, wait, timeout)

    def step_out(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._run_until_stop("step_out", thread_id, wait, timeout)

    def pause(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._op("pause", thread_id=thread_id, wait=wait, timeout=timeout)["stop"]

    # -- inspection -------------------------------------------------------------------------

    def threads(self) -> list[Thread]:
        return self._op("threads")["threads"]

    def stack(self, thread_id: int | None = None, start: int = 0, levels: int | None = None) -> list[Frame]:
        return self._op("stack", thread_id=thread_id, start=start, levels=levels)["frames"]

    def snapshot(self, **bounds: Any) -> Snapshot:
        """The stop at once: source around it, top frames, bounded locals, watches, last output (see ``snapshot``)."""
        return self._op("snapshot", **bounds)["snapshot"]

    def tasks(self) -> AsyncTasks:
        """The target's asyncio tasks on every event loop at this stop: where each waits, which tasks it awaits."""
        return self._op("tasks")["async_tasks"]

    def record(self, target: str | None = None, off: bool = False) -> Recording:
        """Record every line ``target`` runs (a function's name, or ``FILE:FIRST-LAST``); ``off`` stops it."""
        return self._op("record", target=target, off=off)["recording"]

    def history(self, start: int | None = None, count: int = 20) -> dict[str, Any]:
        """The recorded states (``recording``, ``steps``, ``start``, ``total``)."""
        return self._op("history", start=start, count=count)

    def back(self, steps: int = 1) -> RecordedStep | None:
        """Show the recorded state ``steps`` back: stack, variables and evaluate answer for it until continue."""
        return self._op("back", steps=steps)["recorded"]

    def forward(self, steps: int = 1) -> RecordedStep | None:
        """Show the recorded state ``steps`` forward (None: the live stop again)."""
        return self._op("forward", steps=steps)["recorded"]

    def scopes(self, frame_id: int | None = None) -> list[Scope]:
        return self._op("scopes", frame_id=frame_id)["scopes"]

    def variables(self, ref: int, start: int = 0, count: int = 100) -> VariablePage:
        return self._op("variables", ref=ref, start=start, count=count)

    def evaluate(self, expression: str, frame_id: int | None = None, context: str = "repl") -> Variable:
        return self._op("evaluate", expression=expression, frame_id=frame_id, context=context)["variable"]

    def update(self, name: str | None = None, timeout_minutes: float | None = None) -> SessionInfo:
        """Rename the session and/or give it a new idle timeout (minutes)."""
        return self._op("update_session", name=name, timeout_minutes=timeout_minutes)["session"]

    def export(self, redact: bool = True) -> dict[str, Any]:
        """How the target was started and the breakpoints this session sees, as JSON-ready data (secrets masked)."""
        return self._op("export", redact=redact)["export"]

    def hover(self, expression: str, frame_id: int | None = None) -> Variable:
        """A short value of ``expression``, as an editor's hover shows it."""
        return self._op("hover", expression=expression, frame_id=frame_id)["variable"]

    def watch(self, expression: str) -> list[Watch]:
        """Evaluate ``expression`` at every stop (its value comes with each step's answer); all the watches."""
        return self._op("add_watch", expression=expression)["watches"]

    def watches(self) -> list[Watch]:
        """The watch expressions and their values at the stop."""
        return self._op("watches")["watches"]

    def unwatch(self, index: int) -> list[Watch]:
        """Stop watching watch ``index`` (1-based); the watches left."""
        return self._op("remove_watch", index=index)["watches"]

    def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return self._op("set_variable", ref=ref, name=name, value=value)["variable"]

    def set_expression(self, expression: str, value: str, frame_id: int | None = None) -> Variable:
        """Assign ``value`` to ``expression`` (``p.x``, ``d['k']``, ``arr[3]``) in a frame; the new value."""
        return self._op("set_expression", expression=expression, value=value, frame_id=frame_id)["variable"]

    def completions(self, text: str, frame_id: int | None = None) -> list[str]:
        return self._op("completions", text=text, frame_id=frame_id)["targets"]

    def source(self, frame: Frame | None = None) -> SourceText:
        """The source text (a ``str``); ``.changed``/``.note`` say when the file changed since the target loaded it."""
        return self._call(self._session.source(frame))

    # -- output and input -------------------------------------------------------------------

    def output(self, since: int = 0, limit: int | None = None) -> OutputPage:
        return self._op("output", since=since, limit=limit)

    def clear_output(self) -> int:
        """Forget the output kept so far; returns the cursor the next output gets."""
        return self._op("clear_output")["cursor"]

    def send_input(self, text: str = "", eof: bool = False) -> None:
        """Write ``text`` to the target's stdin; ``eof=True`` then closes it (``sys.stdin.read()`` returns)."""
        self._op("input", text=text, eof=eof)

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        return self._relay.subscribe(callback, session=self.id)

    def custom_request(self, command: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self._session.require_live()
        return self._call(self._session.backend.custom_request(command, arguments or {}))

    # -- ending -----------------------------------------------------------------------------

    def terminate(self) -> None:
        self._op("terminate")

    def delete(self) -> None:
        """End the session if it runs and remove it from the relay (``relay.get`` no longer finds it)."""
        self._op("delete")

    def detach(self) -> None:
        self._op("detach")

    def restart(self) -> None:
        """Start the target again: through the adapter's own ``restart`` when it has one, else afresh."""
        self._op("restart")


class DapSessionHandle(SessionHandle):
    """A session on a DAP adapter (debugpy, lldb, ...): adds what only DAP adapters have.

    Each verb is checked against the adapter's declared capabilities (``unsupported`` when it lacks one).
    """

    def _dap(self) -> Any:
        self._session.require_live()
        return self._session.backend

    @property
    def adapter(self) -> str:
        """The debug adapter's name."""
        return self._session.backend.adapter_name

    def _frame_or_stop(self, frame_id: int | None) -> int | None:
        if frame_id is not None:
            return frame_id
        stop = self._session.stop
        return stop.frame.id if stop is not None and stop.frame is not None else None

    def data_breakpoint_info(self, name: str, ref: int | None = None, frame_id: int | None = None
                             ) -> dict[str, Any]:
        """Whether variable ``name`` (a child of ``ref``, or in a frame) can be watched: ``dataId``, ``accessTypes``."""
        backend = self._dap()
        return self._call(backend.data_breakpoint_info(name, ref, None if ref else self._frame_or_stop(frame_id)))

    def set_data_breakpoint(self, data_id: str, access_type: str | None = "write", condition: str | None = None,
                            hit_condition: str | None = None) -> dict[str, Any]:
        """Stop when the data of ``data_id`` (see ``data_breakpoint_info``) is accessed; the adapter's answer."""
        return self._call(self._dap().set_data_breakpoint(data_id, access_type, condition, hit_condition))

    def remove_data_breakpoint(self, data_id: str) -> None:
        self._call(self._dap().remove_data_breakpoint(data_id))

    def set_instruction_breakpoint(self, reference: str, offset: int = 0, condition: str | None = None,
                                   hit_condition: str | None = None) -> dict[str, Any]:
        """Stop at the instruction at ``reference`` (an address) plus ``offset`` bytes; the adapter's answer."""
        return self._call(self._dap().set_instruction_breakpoint(reference, offset, condition, hit_condition))

    def remove_instruction_breakpoint(self, reference: str, offset: int = 0) -> None:
        self._call(self._dap().remove_instruction_breakpoint(reference, offset))

    def disassemble(self, reference: str | None = None, count: int = 16, offset: int = 0,
                    instruction_offset: int = 0, frame_id: int | None = None) -> list[dict[str, Any]]:
        """``count`` instructions at ``reference``, by default at the stopped frame's instruction pointer."""
        backend = self._dap()
        return self._call(backend.disassemble(reference, self._frame_or_stop(frame_id), offset, instruction_offset,
                                              count))

    def read_memory(self, reference: str, count: int, offset: int = 0) -> dict[str, Any]:
        """``{"address", "data": bytes, "unreadable"}`` for ``count`` bytes at ``reference`` plus ``offset``."""
        return self._call(self._dap().read_memory(reference, offset, count))

    def write_memory(self, reference: str, data: bytes, offset: int = 0, allow_partial: bool = False) -> int:
        """Write ``data`` at ``reference`` plus ``offset``; returns how many bytes were written."""
        return self._call(self._dap().write_memory(reference, offset, bytes(data), allow_partial))

    def modules(self, start: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """The target's loaded modules (executables, shared libraries) as the adapter describes them."""
        return self._call(self._dap().modules(start, count))

    def loaded_sources(self) -> list[dict[str, Any]]:
        return self._call(self._dap().loaded_sources())


class MycelSessionHandle(SessionHandle):
    """A session on a Mycel runtime: adds the runtime's own verbs (inspect, ready, consume, timeline, reconnect)."""

    def inspect(self, what: str, name: str | None = None) -> Any:
        """The runtime's flows, one flow, connectors, types or transforms."""
        return self._op("inspect", what=what, name=name)["inspection"]

    def ready(self) -> list[dict[str, Any]]:
        """Tell the runtime to start; returns its event sources (those with manual consume)."""
        return self._op("ready")["sources"]

    def consume(self, connector: str) -> dict[str, Any]:
        """Pull one message from a manual-consume connector through its pipeline."""
        return self._op("consume", connector=connector)

    def timeline(self, thread_id: int | None = None) -> list[dict[str, Any]]:
        """The runtime's own events (flowStart, stageExit, ruleEval ...) of a thread (default: the stopped one)."""
        return self._op("timeline", thread_id=thread_id)["events"]

    def reconnect(self) -> None:
        """Open the socket again (after a drop): attach, the relay's stage breakpoints as they are now, ready.

        The runtime's threads ran on meanwhile; the threads the session already knew keep their ids.
        """
        self._op("reconnect")


def handle_for(relay: Relay, session: Session) -> SessionHandle:
    """The handle type for a session's backend: DAP verbs on DAP sessions, Mycel verbs on Mycel sessions."""
    backend = session.backend
    if factory.is_dap(backend):
        return DapSessionHandle(relay, session)
    if factory.is_mycel(backend):
        return MycelSessionHandle(relay, session)
    return SessionHandle(relay, session)
