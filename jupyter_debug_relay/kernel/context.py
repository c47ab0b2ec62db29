"""What every word of the magics works on: the kernel's relay, its current session, the selected frame.

``Context`` holds that state and the helpers the words share (run an operation, wait for a stop and show it);
a group of words is a ``Words`` over the one ``Context`` of the kernel (see ``commands.Commands``).
"""

from __future__ import annotations

from typing import Any

from ..errors import RelayError
from ..facade.handles import SessionHandle
from ..facade.relay import Relay
from ..model import StopInfo
from ..operations import OPERATIONS, parse
from .grammar import Command
from .results import StopResult

_SOURCE, _SESSIONS = OPERATIONS["source"], OPERATIONS["sessions"]
_ENDED = ("terminated", "failed")


class Context:
    """The relay of one kernel, its current session and the frame selected in each session."""

    def __init__(self, relay: Relay, namespace: dict[str, Any] | None = None) -> None:
        self.relay = relay
        self.namespace = namespace if namespace is not None else {}  # where `pull` puts values
        self.current: str | None = None
        self._current: SessionHandle | None = None
        self.selected: dict[str, tuple[int, int, int]] = {}  # session id -> (id of the stop, index, frame id)

    def session(self, name: str | None = None) -> SessionHandle:
        """The named session, or the current one."""
        if name is None and self._current is not None:
            return self._current  # ids are never reused: no hop to look it up again
        key = name or self.current
        if key is None:
            if self.relay.sessions:  # e.g. started by a comm request: the operations' default one is current
                return self.adopt(self.relay.get(self.relay.operations.call("status", {})["session"].id))
            raise RelayError("session_not_found", "No debug session is running in this kernel.",
                             "Start one with `%debug_session launch SCRIPT` (see `%debug_session help`).")
        return self.relay.get(key)

    def adopt(self, handle: SessionHandle) -> SessionHandle:
        """Make ``handle`` the current session."""
        self.current, self._current = handle.id, handle
        return handle

    def forget(self, handle: SessionHandle) -> None:
        """A deleted session is no longer current (nor its selected frame kept)."""
        self.selected.pop(handle.id, None)
        if self.current == handle.id:
            self.current, self._current = None, None

    def run(self, command: Command, handle: SessionHandle | None = None, **args: Any) -> Any:
        """Run the command's operation with its arguments (and ``args``) on ``handle``'s session."""
        given = {**command.args, **args}
        if handle is not None:
            given["session"] = handle.id
        return self.relay.operations.call(command.magic.operation, given)

    def start(self, command: Command, **args: Any) -> tuple[SessionHandle, dict[str, Any]]:
        """Run a command that starts a session: the session, now current, and the start's answer (the breakpoints
        it could not bind, its warnings)."""
        out = self.run(command, **args)
        return self.adopt(self.relay.get(out["session"].id)), out

    def frame_id(self, handle: SessionHandle) -> int | None:
        """The frame selected with ``frame N`` at the session's present stop (None: the top one)."""
        stop = handle.stop
        chosen = self.selected.get(handle.id)
        if stop is not None and chosen is not None and chosen[0] == id(stop):
            return chosen[2]
        return None

    def prefix(self, handle: SessionHandle) -> str:
        """``[name] `` before a result when more than one session lives, else nothing."""
        live = [h for h in self.relay.sessions if h.state not in _ENDED]
        return f"[{handle.name}] " if len(live) > 1 else ""

    def stop_result(self, handle: SessionHandle, stop: StopInfo | None, waited: float | None = None,
                    prefix: str | None = None) -> StopResult:
        """Where ``handle`` stands, at ``stop``, with the stop's source."""
        source = None
        if stop is not None and stop.frame is not None:
            try:
                source = handle.source(stop.frame)
            except RelayError:
                source = None
        return StopResult(handle.name, handle.state, stop=stop, exit_code=handle.exit_code, source=source,
                          waited=waited, prefix=self.prefix(handle) if prefix is None else prefix)

    def wait(self, handle: SessionHandle, timeout: Any, prefix: str | None = None) -> StopResult:
        """Wait for the session's next stop (or its end, or ``timeout``)."""
        args = {"session": handle.id} if timeout is None else {"session": handle.id, "timeout": timeout}
        return self.stepped(handle, "wait", args, prefix)

    def stepped(self, handle: SessionHandle, name: str, args: dict[str, Any], prefix: str | None = None
                ) -> StopResult:
        """Run a step or a wait and gather what its result shows (source, live sessions) in the same hop.

        The stop it waits for, or "still running" past the timeout, or the end of the target.
        """
        op, params = parse(name, args)
        session = {"session": handle.id}
        note = ""

        async def step_and_look() -> tuple[StopInfo | None, float | None, str | None, list[Any], Any, list[Any]]:
            nonlocal note
            stop, waited, source, end, watches = None, None, None, None, []
            try:
                result = await op.run(self.relay, params)
                stop, end, watches = result["stop"], result.get("thread_end"), result.get("watches", [])
            except RelayError as exc:
                if exc.code not in ("timeout", "target_exited"):
                    raise
                waited = params.timeout if exc.code == "timeout" else None
                note = exc.details.get("note") or ""
            if stop is not None and stop.frame is not None:
                try:
                    source = (await _SOURCE.run(self.relay, _SOURCE.params(**session)))["source"]
                except RelayError:
                    source = None
            return stop, waited, source, (await _SESSIONS.run(self.relay, _SESSIONS.params()))["sessions"], end, watches

        budget = op.budget(params, self.relay.request_timeout)
        stop, waited, source, infos, end, watches = self.relay.call(step_and_look(), budget)
        if prefix is None:
            live = [i for i in infos if i.state not in _ENDED]
            prefix = f"[{handle.name}] " if len(live) > 1 else ""
        return StopResult(handle.name, handle.state, stop=stop, exit_code=handle.exit_code, source=source,
                          waited=waited, prefix=prefix, thread_end=end, note=note, watches=watches)


class Words:
    """A group of words of ``%debug_session`` (methods ``do_WORD``) and ``%bp`` (``bp_WORD``) over a ``Context``."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.relay = context.relay
