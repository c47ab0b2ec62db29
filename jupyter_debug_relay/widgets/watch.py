"""Watch expressions: re-evaluated in the selected frame at every stop."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import Dict, List, Unicode, observe

from .format import MONO, esc, one_line, value_box
from .lifecycle import close_children


class WatchList(widgets.VBox):
    """``expressions`` and their last ``values``; adding one calls ``on_change`` to evaluate it."""

    expressions = List(Unicode())
    values = Dict()  # expression -> text shown (value, or the error)

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change
        self._input = widgets.Text(placeholder="expression to watch", continuous_update=False,
                                   layout=widgets.Layout(flex="1"))
        self._add = widgets.Button(description="Watch", icon="eye", layout=widgets.Layout(width="auto"))
        self._add.on_click(lambda _b: self.add(self._input.value))
        self._input.observe(lambda change: self.add(change["new"]), names="value")  # Enter (or leaving the box)
        self._rows = widgets.VBox()
        super().__init__([widgets.HTML("<b>Watch</b>"), widgets.HBox([self._input, self._add]), self._rows])
        self.add_class("jdr-watch")

    def add(self, expression: str) -> None:
        expression = expression.strip()
        if expression and expression not in self.expressions:
            self.expressions = [*self.expressions, expression]
            self._input.value = ""
            self._on_change()

    def remove(self, expression: str) -> None:
        self.expressions = [e for e in self.expressions if e != expression]
        self.values = {k: v for k, v in self.values.items() if k != expression}

    @observe("expressions", "values")
    def _render(self, change: object = None) -> None:
        close_children(self._rows)
        rows = []
        for expression in self.expressions:
            shown = self.values.get(expression, "—")
            text = value_box()
            text.value = one_line(f'<span style="{MONO}"><b>{esc(expression)}</b> = {esc(shown)}</span>',
                                  f"{expression} = {shown}")
            drop = widgets.Button(icon="times", tooltip=f"stop watching {expression}",
                                  layout=widgets.Layout(width="32px"))
            drop.on_click(lambda _b, e=expression: self.remove(e))
            rows.append(widgets.HBox([text, drop], layout=widgets.Layout(align_items="center")))
        self._rows.children = rows
