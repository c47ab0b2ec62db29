"""A recording's states (``history``) with back and forward buttons: where a recorded function's values came from."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets

from .toggled_lines import ToggledLines


class HistoryView(ToggledLines):
    """``lines``: ``text.history_lines`` of a ``history`` answer; ``move(n)`` shows the state n back (negative:
    forward), ``wanted`` reads the states again."""

    def __init__(self, wanted: Callable[[], None], move: Callable[[int], None]) -> None:
        self.back = widgets.Button(description="back", icon="step-backward", tooltip="the recorded state before",
                                   layout=widgets.Layout(width="auto"))
        self.forward = widgets.Button(description="forward", icon="step-forward", tooltip="the recorded state after "
                                      "(past the last: the live stop)", layout=widgets.Layout(width="auto"))
        self.back.on_click(lambda _: move(1))
        self.forward.on_click(lambda _: move(-1))
        super().__init__("History", "history", "the states of a recorded function (record NAME)", wanted,
                         [self.back, self.forward])
        self.add_class("jdr-history")
