"""The evaluate box: an expression evaluated in the selected frame, with a history."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import List, Tuple, Unicode, observe

from .format import MONO, esc

KEEP = 50  # history entries kept


class EvaluateBox(widgets.VBox):
    """Type an expression and press Enter; ``history`` holds (expression, result) pairs, newest last."""

    history = List(Tuple(Unicode(), Unicode()))

    def __init__(self, on_evaluate: Callable[[str], None]) -> None:
        self._on_evaluate = on_evaluate
        self._quiet = False
        self.input = widgets.Text(placeholder="evaluate in the selected frame (Enter)", continuous_update=False,
                                  layout=widgets.Layout(width="auto"))
        self.input.observe(self._submitted, names="value")
        self._recall = widgets.Dropdown(options=[("", "")], description="History", layout=widgets.Layout(width="auto"))
        self._recall.observe(self._recalled, names="value")
        self._log = widgets.HTML()
        super().__init__([widgets.HTML("<b>Evaluate</b>"), self.input, self._recall, self._log])
        self.add_class("jdr-evaluate")

    def submit(self, expression: str) -> None:
        self._set_input(expression)
        if expression.strip():
            self._on_evaluate(expression.strip())

    def record(self, expression: str, result: str) -> None:
        """Add a result (called once the evaluation is done)."""
        self.history = [*self.history, (expression, result)][-KEEP:]
        self._set_input("")

    def _set_input(self, text: str) -> None:
        self._quiet = True
        try:
            self.input.value = text
        finally:
            self._quiet = False

    def _submitted(self, change: dict) -> None:
        if not self._quiet:
            self.submit(change["new"])

    def _recalled(self, change: dict) -> None:
        if change["new"]:
            self._set_input(change["new"])

    @observe("history")
    def _render(self, change: object = None) -> None:
        lines = [f'<div style="{MONO}"><b>&gt; {esc(e)}</b><br>{esc(r)}</div>' for e, r in self.history[-10:]]
        self._log.value = "".join(lines)
        expressions = list(dict.fromkeys(e for e, _r in reversed(self.history)))
        self._recall.options = [("", ""), *((e, e) for e in expressions)]
