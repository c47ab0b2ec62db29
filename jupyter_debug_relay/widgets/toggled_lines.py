"""Lines of text under a toggle button, read only while open (what they show costs a request to the target)."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import Bool, List, Unicode, observe

from .format import MONO, esc


class ToggledLines(widgets.VBox):
    """``lines`` shown under a toggle named ``title``; opening it calls ``wanted``, which sets ``lines`` (or ``note``,
    what stands instead of them). ``controls`` show beside the lines while open."""

    opened = Bool(False)
    lines = List()  # of str
    note = Unicode("")

    def __init__(self, title: str, icon: str, tooltip: str, wanted: Callable[[], None],
                 controls: list[widgets.Widget] | None = None) -> None:
        self._wanted = wanted
        self._toggle = widgets.ToggleButton(description=title, icon=icon, tooltip=tooltip,
                                            layout=widgets.Layout(width="auto"))
        self._text = widgets.HTML()
        self._body = widgets.VBox([*([widgets.HBox(controls)] if controls else []), self._text],
                                  layout=widgets.Layout(display="none"))
        super().__init__([self._toggle, self._body])
        self._toggle.observe(self._toggled, "value")

    def _toggled(self, change: dict) -> None:
        self.opened = bool(change["new"])
        self._body.layout.display = "flex" if self.opened else "none"
        if self.opened:
            self._wanted()

    def clear(self, note: str = "") -> None:
        self.lines, self.note = [], note

    @observe("lines", "note")
    def _render(self, change: object = None) -> None:
        if not self.lines:
            self._text.value = f"<span style='color:#666'>{esc(self.note)}</span>"
            return
        self._text.value = f"<pre style='{MONO} margin:0'>{esc(chr(10).join(self.lines))}</pre>"
