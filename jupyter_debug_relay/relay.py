"""The synchronous facade: ``Relay`` and session handles, callable from any thread.

The engine lives on one asyncio loop in a daemon thread ("relay loop"). Every
call here submits a coroutine to that loop and waits for it with a timeout,
so nothing blocks the caller's thread without one.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

from .backends import factory
from .engine.events import Event
from .engine.manager import SessionManager
from .engine.output import DEFAULT_CAP
from .engine.session import BackendFactory, Session
from .errors import RelayError
from .model import (
    Breakpoint,
    Frame,
    OutputPage,
    Scope,
    SessionInfo,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
)
from .operations import Dispatcher
from .protocols import tasks
from .protocols.timeouts import clamp_timeout

MARGIN = 5.0  # seconds a facade call waits beyond the engine's own timeout

_open_relays: weakref.WeakSet[Relay] = weakref.WeakSet()


@atexit.register
def _close_open_relays() -> None:
    for relay in list(_open_relays):
        relay.close()


class Relay:
    """Owns the relay loop, the session manager and the breakpoints; a context manager."""

    def __init__(
        self,
        *,
        output_cap: int = DEFAULT_CAP,
        idle_timeout: float = 3600.0,
        request_timeout: float = 30.0,
        max_value_length: int = 1000,
    ) -> None:
        self.request_timeout = clamp_timeout(request_timeout)
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(tasks.log_loop_exception)  # logged, never printed into a cell
        self._thread = threading.Thread(target=self._loop.run_forever, name="relay loop", daemon=True)
        self._thread.start()
        self._manager = SessionManager(output_cap, idle_timeout, max_value_length)
        self._closed = False
        self.operations = Dispatcher(self)
        self.breakpoints = Breakpoints(self)
        _open_relays.add(self)

    # -- running on the loop ----------------------------------------------------------------

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        """Run ``coro`` on the relay loop and wait for its result, at most ``timeout`` seconds."""
        if self._closed:
            coro.close()
            raise RelayError("not_running", "This relay is closed.", "Create a new Relay().")
        if threading.current_thread() is self._thread:
            coro.close()
            raise RelayError("invalid_request", "Relay calls cannot be made from an event callback.",
                             "Do the work outside the callback, e.g. on another thread.")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        limit = (timeout if timeout is not None else self.request_timeout) + MARGIN
        try:
            return future.result(limit)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise RelayError("timeout", f"The relay did not answer within {limit:g} s.") from None

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        """Start ``coro`` on the relay loop without waiting; the future holds its outcome."""
        if self._closed:
            coro.close()
            raise RelayError("not_running", "This relay is closed.", "Create a new Relay().")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _run(self, fn: Callable[[], Any]) -> Any:
        async def run() -> Any:
            return fn()
        return self.call(run())

    @property
    def manager(self) -> SessionManager:
        return self._manager

    # -- sessions ---------------------------------------------------------------------------

    def start(self, factory: BackendFactory, name: str | None = None, timeout: float | None = None) -> SessionHandle:
        """Start a session on any backend made by ``factory(events)``."""
        session = self.call(self._manager.start(factory, name), timeout or 60.0)
        return handle_for(self, session)

    def _started(self, result: dict[str, Any]) -> SessionHandle:
        return handle_for(self, self._manager.sessions[result["session"].id])

    def create(self, name: str | None = None, timeout_minutes: float | None = None) -> SessionHandle:
        """An empty session to launch, attach or connect in later (``launch(..., session=...)`` in the HTTP API)."""
        return self._started(self.operations.call("create", {"name": name, "timeout_minutes": timeout_minutes}))

    def launch(
        self,
        program: str | None = None,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        python: str | None = None,
        module: str | None = None,
        stop_on_entry: bool = False,
        just_my_code: bool = True,
        subprocess: bool = False,
        name: str | None = None,
    ) -> SessionHandle:
        """Launch a Python script (or ``module=``) under debugpy.

        The target's pydevd talks to the relay directly; with ``subprocess=True`` debugpy's adapter
        stays in between, since it is what gathers the target's child processes.
        """
        return self._started(self.operations.call("launch", dict(
            program=program, args=args, cwd=cwd, env=env, python=python, module=module, stop_on_entry=stop_on_entry,
            just_my_code=just_my_code, subprocess=subprocess, name=name)))

    def attach(
        self, port: int | None = None, host: str = "127.0.0.1", pid: int | None = None,
        just_my_code: bool = True, name: str | None = None,
    ) -> SessionHandle:
        """Attach to ``python -m debugpy --listen PORT`` (port) or to a running process (pid)."""
        return self._started(self.operations.call("attach", dict(
            port=port, host=host, pid=pid, just_my_code=just_my_code, name=name)))

    def connect_ez(self, program: str, ez: str = "ez", cwd: str | None = None, name: str | None = None
                   ) -> SessionHandle:
        """Debug an EZ program under ``ez debugserver PROGRAM`` (line-delimited JSON on its stdio)."""
        return self._started(self.operations.call("connect", dict(kind="ez", program=program, ez=ez, cwd=cwd,
                                                                  name=name)))

    def connect_dap(
        self,
        adapter: list[str] | str | None = None,
        host: str | None = None,
        port: int | None = None,
        launch: dict[str, Any] | None = None,
        attach: dict[str, Any] | None = None,
        program: str | None = None,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stop_on_entry: bool = False,
        name: str | None = None,
    ) -> SessionHandle:
        """Debug through any DAP adapter: a command or registry name on stdio, a port over TCP, or both.

        Without ``adapter``, the registry picks one by the type of ``program`` (``lldb`` for executables).
        """
        return self._started(self.operations.call("connect", dict(
            kind="dap", adapter=adapter, host=host, port=port, launch=launch, attach=attach, program=program,
            args=args, cwd=cwd, env=env, stop_on_entry=stop_on_entry, name=name)))

    def connect_mycel(self, url: str, name: str | None = None) -> SessionHandle:
        """Debug a Mycel service over JSON-RPC 2.0 on a WebSocket (``ws://host:9090/debug``)."""
        return self._started(self.operations.call("connect", dict(kind="mycel", url=url, name=name)))

    @property
    def sessions(self) -> list[SessionHandle]:
        return [handle_for(self, s) for s in self._run(lambda: list(self._manager.sessions.values()))]

    def get(self, key: str) -> SessionHandle:
        """A session by id (``s1``) or name."""
        return handle_for(self, self._run(lambda: self._manager.get(key)))

    def subscribe(self, callback: Callable[[Event], None], session: str | None = None) -> Callable[[], None]:
        """Call ``callback(event)`` (on the relay loop) for every event; returns the unsubscribe function."""
        sub = self._run(lambda: self._manager.bus.subscribe(callback, session))
        return lambda: None if self._closed else self._loop.call_soon_threadsafe(sub.close)

    def events_since(self, seq: int, until: int | None = None) -> list[Event]:
        """The kept events after ``seq`` (up to ``until``), after a ``dropped`` event counting any no longer kept."""
        return self._run(lambda: self._manager.bus.since(seq, until))

    # -- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """End every session, reap every process, stop the loop. Safe to call twice."""
        if self._closed:
            return
        try:
            self.call(self._manager.close(), 20.0)
        except RelayError:
            pass
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        _open_relays.discard(self)

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Breakpoints:
    """``relay.breakpoints``: the relay's breakpoints, applied to every session, live."""

    def __init__(self, relay: Relay) -> None:
        self._relay = relay

    def _store(self):
        return self._relay.manager.breakpoints

    def _op(self, operation: str, /, **args: Any) -> Any:
        return self._relay.operations.call(operation, args)

    def add(self, path: str, line: int, condition: str | None = None, hit_condition: str | None = None,
            log_message: str | None = None) -> Breakpoint:
        return self._op("add_breakpoint", path=path, line=line, condition=condition, hit_condition=hit_condition,
                        log_message=log_message)["breakpoint"]

    def add_function(self, name: str, condition: str | None = None) -> Breakpoint:
        return self._op("add_breakpoint", kind="function", name=name, condition=condition)["breakpoint"]

    def add_stage(self, flow: str, stage: str, rule_index: int | None = None, condition: str | None = None
                  ) -> Breakpoint:
        return self._op("add_breakpoint", kind="stage", flow=flow, stage=stage, rule_index=rule_index,
                        condition=condition)["breakpoint"]

    def exceptions(self, mode: str) -> str:
        return self._op("set_exceptions", mode=mode)["exceptions"]

    def condition_errors(self, stop: bool = True) -> bool:
        """Whether a breakpoint whose condition fails (a NameError, a TypeError) stops there; default: it does."""
        return self._op("condition_errors", stop=stop)["stop_on_error"]

    def list(self) -> list[Breakpoint]:
        return self._relay._run(lambda: self._store().list())

    def get(self, bp_id: int) -> Breakpoint:
        return self._relay._run(lambda: self._store().get(bp_id))

    def remove(self, bp_id: int) -> Breakpoint:
        return self._op("remove_breakpoint", id=bp_id)["breakpoint"]

    def clear(self, path: str | None = None) -> list[Breakpoint]:
        gone = self._relay._run(lambda: self._store().clear(path))
        for bp in gone:
            self._relay.call(self._relay.manager.sync_breakpoints(bp))
        return gone

    def enable(self, bp_id: int, enabled: bool = True) -> Breakpoint:
        return self._op("update_breakpoint", id=bp_id, enabled=enabled)["breakpoint"]


class SessionHandle:
    """A debug session seen from the caller's thread; every call waits with a timeout."""

    def __init__(self, relay: Relay, session: Session) -> None:
        self._relay = relay
        self._session = session
        self.id = session.id

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
        """A snapshot of the session; asking for it counts as activity (the idle timeout starts again)."""
        def polled() -> SessionInfo:
            self._session.touch()
            return self._session.info()
        return self._relay._run(polled)

    def _op(self, operation: str, /, **args: Any) -> Any:
        """Run ``operation`` on this session through the relay's dispatcher."""
        return self._relay.operations.call(operation, {"session": self.id, **args})

    # -- execution --------------------------------------------------------------------------

    def wait_for_stop(self, timeout: float = 10.0) -> StopInfo:
        """The current stop, or the next one; raises ``target_exited`` or ``timeout``."""
        return self._op("wait", timeout=timeout)["stop"]

    def continue_(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._op("continue", thread_id=thread_id, wait=wait, timeout=timeout)["stop"]

    def next(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._op("next", thread_id=thread_id, wait=wait, timeout=timeout)["stop"]

    def step_in(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._op("step_in", thread_id=thread_id, wait=wait, timeout=timeout)["stop"]

    def step_out(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._op("step_out", thread_id=thread_id, wait=wait, timeout=timeout)["stop"]

    def pause(self, thread_id: int | None = None, wait: bool = True, timeout: float = 10.0) -> StopInfo | None:
        return self._op("pause", thread_id=thread_id, wait=wait, timeout=timeout)["stop"]

    # -- inspection -------------------------------------------------------------------------

    def threads(self) -> list[Thread]:
        return self._op("threads")["threads"]

    def stack(self, thread_id: int | None = None, start: int = 0, levels: int | None = None) -> list[Frame]:
        return self._op("stack", thread_id=thread_id, start=start, levels=levels)["frames"]

    def scopes(self, frame_id: int | None = None) -> list[Scope]:
        return self._op("scopes", frame_id=frame_id)["scopes"]

    def variables(self, ref: int, start: int = 0, count: int = 100) -> VariablePage:
        return self._op("variables", ref=ref, start=start, count=count)

    def evaluate(self, expression: str, frame_id: int | None = None, context: str = "repl") -> Variable:
        return self._op("evaluate", expression=expression, frame_id=frame_id, context=context)["variable"]

    def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return self._op("set_variable", ref=ref, name=name, value=value)["variable"]

    def completions(self, text: str, frame_id: int | None = None) -> list[str]:
        return self._op("completions", text=text, frame_id=frame_id)["targets"]

    def source(self, frame: Frame | None = None) -> str:
        return self._call(self._session.source(frame))

    # -- output and input -------------------------------------------------------------------

    def output(self, since: int = 0, limit: int | None = None) -> OutputPage:
        return self._op("output", since=since, limit=limit)

    def send_input(self, text: str) -> None:
        self._op("input", text=text)

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        return self._relay.subscribe(callback, session=self.id)

    def custom_request(self, command: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self._session.require_live()
        return self._call(self._session.backend.custom_request(command, arguments or {}))

    # -- ending -----------------------------------------------------------------------------

    def terminate(self) -> None:
        self._op("terminate")

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

    def _mycel(self) -> Any:
        return self._session.backend

    def inspect(self, what: str, name: str | None = None) -> Any:
        """The runtime's flows, one flow, connectors, types or transforms."""
        return self._call(self._mycel().inspect(what, name))

    def ready(self) -> list[dict[str, Any]]:
        """Tell the runtime to start; returns its event sources (those with manual consume)."""
        return self._call(self._mycel().ready())

    def consume(self, connector: str) -> dict[str, Any]:
        """Pull one message from a manual-consume connector through its pipeline."""
        return self._call(self._mycel().consume(connector))

    def timeline(self, thread_id: int) -> list[dict[str, Any]]:
        """The runtime's own events (flowStart, stageEnter/Exit, ruleEval ...) of one thread."""
        return self._relay._run(lambda: self._mycel().timeline(thread_id))

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
