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
import warnings
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ..engine.events import Event
from ..engine.manager import SessionManager
from ..engine.output import DEFAULT_CAP
from ..engine.session import BackendFactory
from ..errors import BreakpointWarning, RelayError, TargetWarning
from ..model import Breakpoint, ProcessInfo
from ..operations import OPERATIONS, Dispatcher
from ..operations.remote import leave
from ..protocols import tasks
from ..protocols.timeouts import clamp_timeout
from ..remote.registry import Remotes
from ..store.profiles import ProfileStore
from ..store.recorder import SessionStore
from ..text import unbound_lines, warnings_line
from .handles import SessionHandle, handle_for

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
        record: bool = True,
        home: str | None = None,
        redact: bool = True,
    ) -> None:
        """``record``: keep every session's events in the session store under ``home`` (default
        ``$JUPYTER_DEBUG_RELAY_HOME``, else ``debug_relay/`` in the Jupyter data dir), secrets masked unless
        ``redact`` is False, and run the commands other processes append to a session's ``commands.jsonl``."""
        self.request_timeout = clamp_timeout(request_timeout)
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(tasks.log_loop_exception)  # logged, never printed into a cell
        self._thread = threading.Thread(target=self._loop.run_forever, name="relay loop", daemon=True)
        self._thread.start()
        store = SessionStore(home, redact=redact) if record else None
        self._manager = SessionManager(output_cap, idle_timeout, max_value_length, store)
        self._store = store
        self.profiles = ProfileStore()  # named breakpoint sets in the home
        self.remotes = Remotes()  # other machines' relays, whose sessions are sessions here
        self._closed = False
        self._closers: list[Callable[[], Awaitable[None]]] = []
        self.operations = Dispatcher(self)
        if store is not None:
            store.runner, store.known = self.operations.run_in, OPERATIONS
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

    def on_loop(self) -> bool:
        """Whether this code runs on the relay loop (an operation can be awaited in place)."""
        return threading.current_thread() is self._thread

    def _run(self, fn: Callable[[], Any]) -> Any:
        async def run() -> Any:
            return fn()
        return self.call(run())

    @property
    def manager(self) -> SessionManager:
        return self._manager

    @property
    def home(self) -> str | None:
        """The session store's folder this relay records into and takes commands from; None when it does not record."""
        return str(self._store.home.root) if self._store is not None else None

    # -- sessions ---------------------------------------------------------------------------

    def start(self, factory: BackendFactory, name: str | None = None, timeout: float | None = None) -> SessionHandle:
        """Start a session on any backend made by ``factory(events)``."""
        session = self.call(self._manager.start(factory, name), timeout or 60.0)
        return handle_for(self, session)

    def _started(self, result: dict[str, Any]) -> SessionHandle:
        """The handle of a session a start made; the breakpoints it could not bind are its ``unverified``, and a
        ``BreakpointWarning`` (pointing at the caller's line) names them."""
        handle = handle_for(self, self._manager.sessions[result["session"].id])
        handle.unverified = list(result.get("unverified") or [])
        handle.warnings = list(result.get("warnings") or [])
        if handle.warnings:
            warnings.warn(TargetWarning(f"Session {handle.name}: {warnings_line(handle.warnings)}"), stacklevel=3)
        if handle.unverified:
            many = len(handle.unverified) != 1
            warnings.warn(BreakpointWarning(f"Session {handle.name} started, but {len(handle.unverified)} "
                                            f"breakpoint{'s' if many else ''} will not stop it:"
                                            f"{unbound_lines(handle.unverified)}"),
                          stacklevel=3)
        return handle

    def import_session(self, exported: dict[str, Any], wait: bool = True, timeout: float = 10.0) -> SessionHandle:
        """Start a session's export (``SessionHandle.export()``) again in a new session with its breakpoints."""
        return self._started(self.operations.call("import", {**exported, "wait": wait, "timeout": timeout}))

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
        exceptions: str | None = None,
    ) -> SessionHandle:
        """Launch a Python script (or ``module=``) under debugpy.

        The target's pydevd talks to the relay directly; with ``subprocess=True`` debugpy's adapter
        stays in between, since it is what gathers the target's child processes. ``exceptions``
        (raised, uncaught or none) is this session's own exception mode; by default it follows
        ``breakpoints.exceptions(...)``, which is ``uncaught`` unless changed.
        """
        return self._started(self.operations.call("launch", dict(
            program=program, args=args, cwd=cwd, env=env, python=python, module=module, stop_on_entry=stop_on_entry,
            just_my_code=just_my_code, subprocess=subprocess, name=name, exceptions=exceptions)))

    def attach(
        self, port: int | None = None, host: str = "127.0.0.1", pid: int | None = None,
        just_my_code: bool = True, name: str | None = None, path_mappings: dict[str, str] | None = None,
    ) -> SessionHandle:
        """Attach to ``python -m debugpy --listen PORT`` (port) or to a running process (pid).

        ``path_mappings`` (``{remote folder: local folder}``) is for a target whose files sit elsewhere
        (a container, another host): breakpoints on the local files bind in it, and its stops name them.
        """
        return self._started(self.operations.call("attach", dict(
            port=port, host=host, pid=pid, just_my_code=just_my_code, name=name, path_mappings=path_mappings)))

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

    def remote_add(self, name: str, url: str, token_file: str, fingerprint: str | None = None) -> dict[str, Any]:
        """Add a remote relay (its token read from ``token_file``): its sessions become sessions here as NAME/s1."""
        return self.operations.call("remote_add", dict(name=name, url=url, token_file=token_file,
                                                       fingerprint=fingerprint))["remote"]

    def remote_list(self) -> list[dict[str, Any]]:
        """The remote relays: name, URL, state, certificate fingerprint and their sessions here."""
        return self.operations.call("remote_list")["remotes"]

    def remote_remove(self, name: str) -> dict[str, Any]:
        """Forget a remote relay; its sessions go on there."""
        return self.operations.call("remote_remove", {"name": name})["remote"]

    def processes(self) -> list[ProcessInfo]:
        """The local Python processes to attach to (pid, command line, the port debugpy listens on)."""
        return self.operations.call("processes")["processes"]

    def doctor(self, pythons: list[str] | None = None, debugpy: str | None = None) -> dict[str, Any]:
        """The debugpy each target Python runs and which of the relay's speed-ups are on there, each off one with why
        and what to do (``pythons``: interpreters to check; default: this one and every Python 3.8+ found)."""
        return self.operations.call("doctor", {"pythons": pythons or [], "debugpy": debugpy})["doctor"]

    def ray_tasks(self, address: str = "auto", join: bool = False) -> list[dict[str, Any]]:
        """The paused tasks and actor methods of a Ray cluster (``auto``: this process's, or the local one); ``join``
        also attaches to every worker of a job started with ``ray_runtime_env()``, so breakpoints stop its tasks."""
        return self.operations.call("ray_tasks", {"address": address, "join": join})["tasks"]

    def ray_attach(self, id: str | None = None, all: bool = False, address: str = "auto", timeout: float = 20.0
                   ) -> list[SessionHandle]:
        """Attach to one paused Ray task (``id``) or to ``all``: a session each, paused on the task's line."""
        found = self.operations.call("ray_attach", {"id": id, "all": all, "address": address, "timeout": timeout})
        return [self.get(info.id) for info in found["sessions"]]

    @property
    def sessions(self) -> list[SessionHandle]:
        return [handle_for(self, s) for s in self._run(lambda: list(self._manager.sessions.values()))]

    def get(self, key: str) -> SessionHandle:
        """A session by id (``s1``) or name."""
        return handle_for(self, self._run(lambda: self._manager.get(key)))

    def subscribe(self, callback: Callable[[Event], None], session: str | None = None) -> Callable[[], None]:
        """Call ``callback(event)`` (on the relay loop) for every event; returns the unsubscribe function."""
        return self.subscribe_after(callback, session)[0]

    def subscribe_after(self, callback: Callable[[Event], None], session: str | None = None
                        ) -> tuple[Callable[[], None], int]:
        """``subscribe``, and the seq of the last event before it: the callback gets every event after that one."""
        bus = self._manager.bus
        sub, last = self._run(lambda: (bus.subscribe(callback, session), bus.last_seq))
        return (lambda: None if self._closed else self._loop.call_soon_threadsafe(sub.close)), last

    def events_since(self, seq: int, until: int | None = None) -> list[Event]:
        """The kept events after ``seq`` (up to ``until``), after a ``dropped`` event counting any no longer kept."""
        return self._run(lambda: self._manager.bus.since(seq, until))

    def flush_recordings(self) -> None:
        """Wait until every event so far is in the session store's files (a no-op when not recording)."""
        if self._manager.store is not None:
            self._manager.store.flush()

    # -- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """End every session, reap every process, stop the loop. Safe to call twice."""
        if self._closed:
            return
        try:
            self.call(self._close_front_ends(), 5.0)
        except RelayError:
            pass
        try:
            self.call(leave(self), 20.0)
        except RelayError:
            pass
        try:
            self.call(self._manager.close(), 20.0)
        except RelayError:
            pass
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        _open_relays.discard(self)

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Have ``closer()`` awaited on the relay loop when the relay closes (a front end serving from the loop)."""
        self._closers.append(closer)

    async def _close_front_ends(self) -> None:
        closers, self._closers = self._closers, []
        await asyncio.gather(*(closer() for closer in closers), return_exceptions=True)

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

    def add(self, path: str, line: int | None = None, condition: str | None = None, hit_condition: str | None = None,
            log_message: str | None = None, content: str | None = None, task: str | None = None) -> Breakpoint:
        """A breakpoint on ``line`` of ``path``, or on the line holding ``content`` (found again after edits);
        with ``task``, it stops only in the asyncio task of that name."""
        return self._op("add_breakpoint", path=path, line=line, condition=condition, hit_condition=hit_condition,
                        log_message=log_message, content=content, task=task)["breakpoint"]

    def add_function(self, name: str, condition: str | None = None) -> Breakpoint:
        return self._op("add_breakpoint", kind="function", name=name, condition=condition)["breakpoint"]

    def add_stage(self, flow: str, stage: str, rule_index: int | None = None, condition: str | None = None
                  ) -> Breakpoint:
        return self._op("add_breakpoint", kind="stage", flow=flow, stage=stage, rule_index=rule_index,
                        condition=condition)["breakpoint"]

    def add_output(self, pattern: str) -> Breakpoint:
        """Pause a session just after a line of its output matches ``pattern`` (a regex, ``re.search``)."""
        return self._op("add_breakpoint", kind="output", pattern=pattern)["breakpoint"]

    def exceptions(self, mode: str, types: list[str] | None = None) -> str:
        """Stop on ``raised``, ``uncaught`` or ``none`` exceptions; of ``types`` (and subclasses) only when given."""
        return self._op("set_exceptions", mode=mode, types=types)["exceptions"]

    @property
    def exception_types(self) -> list[str]:
        """The exception types the exception mode is limited to (empty: every type)."""
        return self._relay._run(lambda: list(self._store().exception_types))

    def condition_errors(self, stop: bool = True) -> bool:
        """Whether a breakpoint whose condition fails (a NameError, a TypeError) stops there; default: it does."""
        return self._op("condition_errors", stop=stop)["stop_on_error"]

    def list(self) -> list[Breakpoint]:
        """Every breakpoint, where the edits of its file took it."""
        return self._op("breakpoints")["breakpoints"]

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

    def update(self, bp_id: int, condition: str | None = None, hit_condition: str | None = None,
               log_message: str | None = None, enabled: bool | None = None) -> Breakpoint:
        """Change a breakpoint in place, on every live session; ``None`` leaves a field as it is, ``""`` removes it."""
        return self._op("update_breakpoint", id=bp_id, condition=condition, hit_condition=hit_condition,
                        log_message=log_message, enabled=enabled)["breakpoint"]
    def save(self, name: str) -> dict[str, Any]:
        """Keep the global breakpoints and the exception mode as profile ``name`` in the home; the profile."""
        return self._op("save_profile", name=name)["profile"]

    def load(self, name: str) -> list[Breakpoint]:
        """Make profile ``name``'s breakpoints (one already there is kept) and set its exception mode."""
        return self._op("load_profile", name=name)["breakpoints"]

    def profiles(self) -> list[str]:
        """The names of the saved profiles."""
        return self._op("profiles")["profiles"]
