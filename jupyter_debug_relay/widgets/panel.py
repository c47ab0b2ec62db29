"""The debugger panel: every widget of the package, wired to a Relay and kept live by its event bus."""

from __future__ import annotations

import keyword
import os
import re
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from traitlets import Int, Unicode

from ..errors import RelayError
from ..facade.events import Event
from ..facade.handles import SessionHandle
from ..facade.relay import Relay
from ..model import Breakpoint, Frame, Thread, as_dict
from ..text import history_lines, tasks_lines, warnings_line
from .breakpoints import BreakpointList
from .evaluate import EvaluateBox
from .flows import FlowsView
from .format import status_sentence
from .history import HistoryView
from .lifecycle import close_children
from .output import OutputView
from .source import SourceView
from .stack import CallStack
from .status import StatusLine
from .tasks import TasksView
from .timeline import TimelineView
from .toggled_lines import ToggledLines
from .toolbar import Toolbar
from .variable_node import VariableNode
from .variables import VariablesTree
from .watch import WatchList
from .worker import Worker

# Refresh keys, in the order they run, and the least time between two refreshes of each (seconds).
INTERVALS = {"sessions": 0.1, "breakpoints": 0.1, "stop": 0.05, "output": 0.25, "timeline": 0.25}
# What an event of the shown session makes stale (events of other sessions touch only the selector).
STALE = {
    "session": ("sessions", "stop"),
    "stopped": ("stop", "timeline"),
    "continued": ("stop",),
    "exited": ("sessions", "stop", "output"),
    "terminated": ("sessions", "stop", "output"),
    "error": ("stop",),
    "output": ("output",),
    "dropped": ("output",),
    "raw": ("timeline",),
    "record": ("stop",),
    "history": ("stop",),  # a recorded state shown (here, or by another front end): stack and variables are its
}
ENDED = ("terminated", "failed")
HISTORY_SHOWN = 12  # the last recorded states the History view lists


def _same_file(a: str | None, b: str | None) -> bool:
    return bool(a and b) and os.path.realpath(a) == os.path.realpath(b)


def _identifier(name: str) -> str:
    """A notebook variable name for a target's value name (``'ana'`` -> ``ana``, ``[0]`` -> ``v_0``)."""
    text = re.sub(r"\W+", "_", name).strip("_") or "value"
    if text[0].isdigit() or keyword.iskeyword(text):
        text = f"v_{text}"
    return text


def _notebook_namespace() -> dict[str, Any]:
    """The namespace of the running IPython shell, or a plain dict outside one."""
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


class DebuggerPanel(widgets.VBox):
    """A debugger for a relay's sessions: toolbar, status, source, stack, variables, watch, evaluate,
    breakpoints, output, and for Mycel sessions the flows and a timeline.

    ``DebuggerPanel(session)`` shows that session; ``DebuggerPanel(relay)`` shows the relay's newest
    session and follows new ones; ``DebuggerPanel()`` makes its own relay (closed with the panel).
    """

    session_id = Unicode("")
    frame_index = Int(-1)
    _closed = True  # until __init__ has subscribed; close() then has something to undo

    def __init__(self, relay_or_session: Relay | SessionHandle | None = None) -> None:
        session: SessionHandle | None = None
        if relay_or_session is None:
            relay, self._owns_relay = Relay(), True
        elif isinstance(relay_or_session, SessionHandle):
            session, relay, self._owns_relay = relay_or_session, relay_or_session.relay, False
        elif isinstance(relay_or_session, Relay):
            relay, self._owns_relay = relay_or_session, False
        else:
            raise RelayError("invalid_request", f"A DebuggerPanel shows a Relay or a session, not "
                             f"{type(relay_or_session).__name__}.", "Pass relay, or a session from relay.launch().")
        self.relay = relay
        self.namespace = _notebook_namespace()  # where "copy" puts values
        self._session: SessionHandle | None = None
        self._picked = session is not None  # a session chosen by the user is not switched away from
        self._frames: list[Frame] = []
        self._thread_id: int | None = None
        self._output_cursor = 0

        self.toolbar = Toolbar(self._action, self._select_id)
        self.status = StatusLine()
        self.source = SourceView(self._toggle_breakpoint)
        self.stack = CallStack(lambda index: self._post(lambda: self._show_frame(index)),
                               lambda thread_id: self._post(lambda: self._show_thread(thread_id)))
        self.variables = VariablesTree(self._fetch, self._post, self._copy)
        self.watch = WatchList(lambda: self._post(self._evaluate_watches))
        self.evaluate = EvaluateBox(self._evaluate)
        self.breakpoints = BreakpointList(self._enable_breakpoint, self._remove_breakpoint)
        self.tasks = TasksView(lambda: self._post(self._show_tasks))
        self.history = HistoryView(lambda: self._post(self._show_history), lambda n: self._post(lambda: self._move(n)))
        self.output = OutputView()
        self.flows = FlowsView()
        self.timeline = TimelineView()
        self._mycel = widgets.VBox([self.flows, self.timeline], layout=widgets.Layout(display="none"))
        left = widgets.VBox([self.source, self.output, self._mycel], layout=widgets.Layout(flex="3", min_width="0"))
        right = widgets.VBox([self.stack, self.variables, self.watch, self.evaluate, self.breakpoints, self.tasks,
                               self.history],
                             layout=widgets.Layout(flex="2", min_width="0", margin="0 0 0 12px"))
        super().__init__([self.toolbar, self.status, widgets.HBox([left, right])])
        self.add_class("jdr-panel")

        self._worker = Worker(INTERVALS, self._refresh, self.status.show_error)
        self._unsubscribe = relay.subscribe(self._on_event)
        self._closed = False
        if session is not None:
            self._post(lambda: self._use(session))
        self._worker.mark(*INTERVALS)

    # -- public ------------------------------------------------------------------------------

    @property
    def session(self) -> SessionHandle | None:
        """The session shown."""
        return self._session

    def select(self, session: SessionHandle | str) -> None:
        """Show another session (a handle, an id or a name)."""
        key = session.id if isinstance(session, SessionHandle) else session
        self._select_id(key)

    @property
    def alive(self) -> bool:
        """True until ``close()``: the panel is subscribed and its worker runs."""
        return not self._closed and self._worker.alive

    def close(self) -> None:
        """Unsubscribe, stop the worker, close every widget (and the relay the panel made)."""
        if self._closed:
            return
        self._closed = True
        self._unsubscribe()
        self._worker.close()
        close_children(self)
        super().close()
        if self._owns_relay:
            self.relay.close()

    # -- events (relay loop: only mark what is stale, never call the facade) -------------------

    def _on_event(self, event: Event) -> None:
        if event.event == "breakpoint":
            self._worker.mark("breakpoints")
        elif event.session == self.session_id:
            self._worker.mark(*STALE.get(event.event, ()))
        elif event.event in ("session", "exited", "terminated"):
            self._worker.mark("sessions")

    # -- worker ------------------------------------------------------------------------------

    def _post(self, job: Callable[[], None]) -> None:
        self._worker.post(job)

    def _refresh(self, key: str) -> None:
        getattr(self, f"_refresh_{key}")()

    def _use(self, session: SessionHandle) -> None:
        if session == self._session:
            return
        self._session, self.session_id = session, session.id
        self.toolbar.show_selected(session.id)
        self._frames, self._thread_id, self._output_cursor = [], None, 0
        self.output.reset()
        self.flows.flows, self.flows.stages, self.timeline.events = [], {}, []
        self._worker.mark(*INTERVALS)

    def _select_id(self, key: str) -> None:
        def job() -> None:
            self._picked = True
            self._use(self.relay.get(key))
        self._post(job)

    def _refresh_sessions(self) -> None:
        sessions = self.relay.sessions
        current = self._session
        if sessions and (current is None or (not self._picked and current.state in ENDED)):
            live = [s for s in sessions if s.state not in ENDED]
            newest = (live or sessions)[-1]
            if newest != current:
                self._use(newest)
        options = [(f"{s.id} · {s.name} ({s.backend}, {s.state})", s.id) for s in sessions]
        self.toolbar.set_sessions(options, self.session_id or None)

    def _refresh_stop(self) -> None:
        session = self._session
        if session is None:
            self.status.text, self.status.warning = "no session — launch one, e.g. relay.launch('app.py')", ""
            self.toolbar.state = ""
            return
        info = session.info()
        self.toolbar.capabilities, self.toolbar.state = info.capabilities, info.state
        self._mycel.layout.display = "flex" if info.backend == "mycel" else "none"
        if info.state != "paused" or info.stop is None:
            self._frames = []
            self.stack.clear()
            self.variables.clear()
            self.source.current_line = 0
            if info.state in ENDED:  # a running target keeps the last stop's watch values; an ended one has none
                self.watch.values = {}
            for view, what in ((self.tasks, "tasks"), (self.history, "the recorded states")):
                view.clear(f"the program is {info.state}: {what} show at a stop")
        else:
            self._thread_id = info.stop.thread_id
            self._show_thread(info.stop.thread_id, session.threads())
            if self.tasks.opened:
                self._show_tasks()
            if self.history.opened:
                self._show_history()
        self.status.warning = warnings_line(info.warnings)
        self.status.text = status_sentence(info)  # last: what it says is on screen by then

    def _show_tasks(self) -> None:
        """The tasks tree of the stop (read only while the Tasks view is open: it costs an evaluate)."""
        self._show_lines(self.tasks, lambda session: tasks_lines(as_dict(session.tasks())), "tasks")

    def _show_history(self) -> None:
        """The last recorded states (read only while the History view is open)."""
        self._show_lines(self.history, lambda session: history_lines(as_dict(session.history(count=HISTORY_SHOWN))),
                         "the recorded states")

    def _show_lines(self, view: ToggledLines, read: Callable[[SessionHandle], list[str]], what: str) -> None:
        session = self._session
        if session is None or session.info().state != "paused":
            view.clear(f"{what} show at a stop")
            return
        try:
            view.lines = read(session)
        except RelayError as exc:
            view.clear(exc.message + (f" {exc.hint}" if exc.hint else ""))

    def _move(self, steps: int) -> None:
        """Show the recorded state ``steps`` back (negative: forward); the stop's views then show that state."""
        session = self._require_session()
        try:
            if steps > 0:
                session.back(steps)
            else:
                session.forward(-steps)
        except RelayError as exc:
            self.status.show_error(exc)
            return
        self._refresh_stop()

    def _show_thread(self, thread_id: int, threads: list[Thread] | None = None) -> None:
        session = self._require_session()
        threads = threads if threads is not None else session.threads()
        self._thread_id = thread_id
        self._frames = session.stack(thread_id)
        self.stack.show(threads, thread_id, self._frames)
        self._show_frame(0)

    def _show_frame(self, index: int) -> None:
        if not 0 <= index < len(self._frames):
            self.source.current_line = 0
            self.variables.clear()
            return
        session = self._require_session()
        frame = self._frames[index]
        self.frame_index = index
        self.stack.select(index)
        try:
            lines = session.source(frame).splitlines()
            self.source.show(frame.path or frame.name, lines, frame.line)
        except RelayError as error:
            self.source.clear(f"{frame.path or frame.name}: no source ({error.message})")
        self._mark_breakpoint_lines()
        if session.backend == "mycel":
            self.flows.current_flow = (frame.path or "").removeprefix("flow:")
            self.flows.current_stage = frame.name
        self.variables.show(session.scopes(frame.id))
        self._evaluate_watches()

    def _refresh_breakpoints(self) -> None:
        breakpoints = self.relay.breakpoints.list()
        self._mark_breakpoint_lines(breakpoints)  # the gutter first: whoever sees the new list sees its marks
        self.breakpoints.show(breakpoints)

    def _mark_breakpoint_lines(self, breakpoints: list[Breakpoint] | None = None) -> None:
        path = self.source.path
        known = self.breakpoints.breakpoints if breakpoints is None else breakpoints
        self.source.breakpoint_lines = sorted({bp.line for bp in known
                                               if bp.kind == "line" and bp.line and _same_file(bp.path, path)})

    def _refresh_output(self) -> None:
        if self._session is None:
            return
        page = self._session.output(since=self._output_cursor)
        self._output_cursor = page.cursor
        if page.chunks or page.dropped != self.output.dropped_bytes:
            self.output.add(page.chunks, page.dropped)

    def _refresh_timeline(self) -> None:
        session = self._session
        if session is None or session.backend != "mycel":
            return
        if not self.flows.flows:
            self.flows.flows = list(session.inspect("flows") or [])
        if self._thread_id is None:
            return
        events = session.timeline(self._thread_id)
        self.flows.see(events)
        self.timeline.thread_id, self.timeline.events = self._thread_id, events

    # -- user actions (posted to the worker) --------------------------------------------------

    def _require_session(self) -> SessionHandle:
        if self._session is None:
            raise RelayError("not_running", "The panel shows no session yet.", "Launch or attach a session first.")
        return self._session

    def _frame_id(self) -> int | None:
        return self._frames[self.frame_index].id if 0 <= self.frame_index < len(self._frames) else None

    def _action(self, name: str) -> None:
        self.toolbar.busy = True

        def job() -> None:
            try:
                session, thread = self._require_session(), self._thread_id
                {
                    "Continue": lambda: session.continue_(thread, wait=False),
                    "Pause": lambda: session.pause(wait=False),
                    "Step Over": lambda: session.next(thread, wait=False),
                    "Step Into": lambda: session.step_in(thread, wait=False),
                    "Step Out": lambda: session.step_out(thread, wait=False),
                    "Restart": session.restart,
                    "Stop": session.terminate,
                }[name]()
            finally:
                self.toolbar.busy = False
            self.status.show_note("")
            self._worker.mark("sessions", "stop")

        self._post(job)

    def _toggle_breakpoint(self, line: int) -> None:
        path = self.source.path

        def job() -> None:
            here = [bp for bp in self.relay.breakpoints.list()
                    if bp.kind == "line" and bp.line == line and _same_file(bp.path, path)]
            for bp in here:
                self.relay.breakpoints.remove(bp.id)
            if not here:
                self.relay.breakpoints.add(path, line)
            self._refresh_breakpoints()

        self._post(job)

    def _enable_breakpoint(self, bp_id: int, enabled: bool) -> None:
        self._post(lambda: self.relay.breakpoints.enable(bp_id, enabled))

    def _remove_breakpoint(self, bp_id: int) -> None:
        self._post(lambda: self.relay.breakpoints.remove(bp_id))

    def _fetch(self, ref: int, start: int, count: int):
        return self._require_session().variables(ref, start, count)

    def _evaluate(self, expression: str) -> None:
        def job() -> None:
            try:
                result = self._require_session().evaluate(expression, self._frame_id(), "repl").value
            except RelayError as error:
                result = f"{error.code}: {error.message}"
            self.evaluate.record(expression, result)

        self._post(job)

    def _evaluate_watches(self) -> None:
        session = self._session
        if session is None or session.state != "paused":
            return
        values = {}
        for expression in self.watch.expressions:
            try:
                values[expression] = session.evaluate(expression, self._frame_id(), "watch").value
            except RelayError as error:
                values[expression] = f"{error.code}: {error.message}"
        self.watch.values = values

    def _copy(self, node: VariableNode) -> None:
        expression = getattr(node.item, "evaluate_name", "") or node.name

        def job() -> None:
            from ..pull import pull  # written alongside the magics; imported when first used

            value = pull(self._require_session(), expression, frame_id=self._frame_id())
            name = _identifier(node.name)
            self.namespace[name] = value
            self.status.show_note(f"copied {expression} into the notebook as {name} ({type(value).__name__})")

        self._post(job)
