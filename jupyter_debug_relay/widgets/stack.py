"""The call stack of the stopped thread, with a thread picker when there are several threads."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import Int, List, Unicode

from ..model import Frame, Thread
from .format import frame_label


class CallStack(widgets.VBox):
    """``frames`` are labels (``compute() — app.py:12``); picking a frame or thread calls back."""

    frames = List(Unicode())
    threads = List(Unicode())
    thread_id = Int(0)
    selected = Int(-1)

    def __init__(self, on_frame: Callable[[int], None], on_thread: Callable[[int], None]) -> None:
        self._thread_picker = widgets.Dropdown(description="Thread", layout=widgets.Layout(display="none"))
        self._list = widgets.Select(options=[], rows=6, layout=widgets.Layout(width="auto"))
        self._quiet = False
        self._on_frame, self._on_thread = on_frame, on_thread
        self._thread_picker.observe(self._thread_picked, names="value")
        self._list.observe(self._frame_picked, names="index")
        super().__init__([widgets.HTML("<b>Call stack</b>"), self._thread_picker, self._list])
        self.add_class("jdr-stack")

    def show(self, threads: list[Thread], thread_id: int, frames: list[Frame]) -> None:
        self._quiet = True
        try:
            self.threads = [f"{t.id}: {t.name}" for t in threads]
            self.thread_id = thread_id
            self._thread_picker.options = [(f"{t.name} ({t.id})" + (" ■" if t.stopped else ""), t.id)
                                           for t in threads]
            self._thread_picker.value = thread_id if any(t.id == thread_id for t in threads) else None
            self._thread_picker.layout.display = "flex" if len(threads) > 1 else "none"
            self.frames = [frame_label(f) for f in frames]
            self._list.options = [(label, i) for i, label in enumerate(self.frames)]
            self.select(0 if frames else -1)
        finally:
            self._quiet = False

    def select(self, index: int) -> None:
        self._quiet, quiet = True, self._quiet
        try:
            self.selected = index
            self._list.index = index if index >= 0 else None
        finally:
            self._quiet = quiet

    def clear(self) -> None:
        self.show([], 0, [])

    def _frame_picked(self, change: dict) -> None:
        if not self._quiet and change["new"] is not None:
            self.selected = change["new"]
            self._on_frame(change["new"])

    def _thread_picked(self, change: dict) -> None:
        if not self._quiet and change["new"] is not None:
            self._on_thread(change["new"])
