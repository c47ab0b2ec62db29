"""The breakpoints list: kind, place, condition, hit condition, verified state and message; enable and remove."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import List

from ..model import Breakpoint
from ..text import breakpoint_text
from .format import MONO, esc, file_name, one_line, value_box
from .lifecycle import close_all


class BreakpointList(widgets.VBox):
    """One row per breakpoint: an enabled checkbox, its description, a remove button."""

    breakpoints = List()  # of Breakpoint

    def __init__(self, on_enable: Callable[[int, bool], None], on_remove: Callable[[int], None]) -> None:
        self._on_enable, self._on_remove = on_enable, on_remove
        self._rows = widgets.VBox()
        super().__init__([widgets.HTML("<b>Breakpoints</b>"), self._rows])
        self.add_class("jdr-breakpoints")

    @property
    def lines(self) -> list[str]:
        """The rows as text, as shown."""
        return [breakpoint_text(bp, file_name) for bp in self.breakpoints]

    def show(self, breakpoints: list[Breakpoint]) -> None:
        rows = []
        for bp in breakpoints:
            enabled = widgets.Checkbox(value=bp.enabled, indent=False, layout=widgets.Layout(width="28px"))
            enabled.observe(lambda change, bp_id=bp.id: self._on_enable(bp_id, change["new"]), names="value")
            color = "#222" if bp.verified else "#a06000"
            line = breakpoint_text(bp, file_name)
            text = value_box()
            text.value = one_line(f'<span style="{MONO}color:{color}">{esc(line)}</span>', line)
            text.add_class("jdr-breakpoint-text")
            remove = widgets.Button(icon="trash", tooltip=f"remove breakpoint {bp.id}",
                                    layout=widgets.Layout(width="32px"))
            remove.on_click(lambda _b, bp_id=bp.id: self._on_remove(bp_id))
            rows.append(widgets.HBox([enabled, text, remove], layout=widgets.Layout(align_items="center")))
        old = self._rows.children
        self._rows.children = rows  # the rows, then at once the list: row() reads both
        self.breakpoints = list(breakpoints)
        for row in old:
            close_all(row)

    def row(self, bp_id: int) -> widgets.HBox:
        """The row of breakpoint ``bp_id`` (checkbox, text, remove button)."""
        for bp, row in zip(self.breakpoints, self._rows.children, strict=True):
            if bp.id == bp_id:
                return row
        raise KeyError(f"no breakpoint {bp_id} in the list")
