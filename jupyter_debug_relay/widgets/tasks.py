"""The asyncio tasks of a paused target as a tree (``tasks``), shown when opened and read again at each stop."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import Bool, List, Unicode, observe

from .format import MONO, esc


class TasksView(widgets.VBox):
    """``lines`` (``text.tasks_lines`` of a ``tasks`` answer) under a toggle; ``wanted`` asks for them again."""

    opened = Bool(False)
    lines = List()  # of str, one per row of the tree
    note = Unicode("")  # what stands instead of the tree (not paused, a backend without tasks, an error)

    def __init__(self, wanted: Callable[[], None]) -> None:
        self._wanted = wanted
        self._toggle = widgets.ToggleButton(description="Tasks", icon="sitemap", tooltip="asyncio tasks at this stop",
                                            layout=widgets.Layout(width="auto"))
        self._tree = widgets.HTML(layout=widgets.Layout(display="none"))
        super().__init__([self._toggle, self._tree])
        self.add_class("jdr-tasks")
        self._toggle.observe(self._toggled, "value")

    def _toggled(self, change: dict) -> None:
        self.opened = bool(change["new"])
        self._tree.layout.display = "block" if self.opened else "none"
        if self.opened:
            self._wanted()

    def clear(self, note: str = "") -> None:
        self.lines, self.note = [], note

    @observe("lines", "note")
    def _render(self, change: object = None) -> None:
        if not self.lines:
            self._tree.value = f"<span style='color:#666'>{esc(self.note or 'no asyncio tasks')}</span>"
            return
        self._tree.value = f"<pre style='{MONO} margin:0'>{esc(chr(10).join(self.lines))}</pre>"
