"""The replay panel: a recording read-only, its timeline moving back and forth through the stops.

It shows each stop as the store recorded it (the stack, the top frame's variables, the output up to it) with
the same widgets as the live panel; what it reads comes from ``replay.Recording``, never from a target.
"""

from __future__ import annotations

import dataclasses
import os

import ipywidgets as widgets
from traitlets import Int

from ..errors import RelayError
from ..model import Scope, VariablePage
from ..store.replay import Recording, ReplayStop
from .lifecycle import close_children
from .output import OutputView
from .source import SourceView
from .stack import CallStack
from .variables import VariablesTree

_RECORDED = 1  # the ref of the recorded scope: its page is the snapshot's variables


class ReplayPanel(widgets.VBox):
    """A recording's stops, one at a time: ``show(i)``, ``next()``, ``previous()``, or the slider and buttons."""

    index = Int(-1)

    def __init__(self, recording: Recording | str) -> None:
        self.recording = recording if isinstance(recording, Recording) else Recording.open(recording)
        stops = self.recording.stops
        self._title = widgets.HTML(f"<b>Replay</b> of {self.recording.uid} ({self.recording.name}) — read-only, "
                                   f"{len(stops)} stops")
        self._previous = widgets.Button(description="◀", tooltip="previous stop", layout=widgets.Layout(width="44px"))
        self._next = widgets.Button(description="▶", tooltip="next stop", layout=widgets.Layout(width="44px"))
        self._slider = widgets.IntSlider(min=0, max=max(len(stops) - 1, 0), description="Stop",
                                         disabled=not stops, continuous_update=False)
        self._where = widgets.HTML()
        self._previous.on_click(lambda _b: self.previous())
        self._next.on_click(lambda _b: self.next())
        self._slider.observe(lambda change: self.show(change["new"]), names="value")
        self.source = SourceView(lambda line: None)
        self.stack = CallStack(self._show_frame, lambda thread_id: None)
        self.variables = VariablesTree(self._page, lambda job: job(), lambda node: None)
        self.output = OutputView()
        timeline = widgets.HBox([self._previous, self._slider, self._next, self._where],
                                layout=widgets.Layout(align_items="center"))
        left = widgets.VBox([self.source, self.output], layout=widgets.Layout(flex="3", min_width="0"))
        right = widgets.VBox([self.stack, self.variables], layout=widgets.Layout(flex="2", margin="0 0 0 12px"))
        super().__init__([self._title, timeline, widgets.HBox([left, right])])
        self.add_class("jdr-replay")
        if stops:
            self.show(0)
        else:
            self.source.clear("this recording has no stops")

    @property
    def stop(self) -> ReplayStop | None:
        """The stop shown."""
        return self.recording.stops[self.index] if 0 <= self.index < len(self.recording.stops) else None

    def show(self, index: int) -> None:
        """Show stop ``index`` (clamped to the recording's stops)."""
        stops = self.recording.stops
        if not stops:
            return
        index = max(0, min(index, len(stops) - 1))
        stop = stops[index]
        self.index = index
        self._slider.value = index
        self._previous.disabled, self._next.disabled = index == 0, index == len(stops) - 1
        self._where.value = f"<code>{stop.describe()}</code>"
        frames = stop.frames or ([stop.stop.frame] if stop.stop.frame else [])
        self.stack.show([], stop.stop.thread_id, frames)
        self._show_frame(0)
        self.variables.show([Scope(stop.scope or "Locals", _RECORDED)] if stop.variables else [])
        self.output.reset()
        self.output.add(self.recording.output_until(index), 0)

    def next(self) -> None:
        self.show(self.index + 1)

    def previous(self) -> None:
        self.show(self.index - 1)

    def close(self) -> None:
        close_children(self)
        super().close()

    def _show_frame(self, index: int) -> None:
        stop = self.stop
        frames = (stop.frames or ([stop.stop.frame] if stop.stop.frame else [])) if stop else []
        if not 0 <= index < len(frames):
            self.source.clear("no frame recorded")
            return
        frame = frames[index]
        self.stack.select(index)
        try:
            with open(frame.path or "", encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            self.source.clear(f"{frame.path or frame.name}: the file is not here any more")
            return
        note = "" if index == 0 or stop.variables else "variables are recorded for the top frame only"
        self.source.show(os.path.abspath(frame.path or ""), lines, frame.line, note)

    def _page(self, ref: int, start: int, count: int) -> VariablePage:
        stop = self.stop
        if ref != _RECORDED or stop is None:
            raise RelayError("unsupported", "A recording keeps the top frame's variables only, not their children.",
                             "Debug the program live to look deeper.")
        items = [dataclasses.replace(v, ref=0, evaluate_name="") for v in stop.variables]
        return VariablePage(items[start:start + count], start, len(items))
