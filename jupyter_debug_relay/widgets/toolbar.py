"""The toolbar: execution buttons enabled by session state, and the session selector."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import Bool, Dict, Unicode, observe

# Button description -> (icon, states in which it means something).
ACTIONS: dict[str, tuple[str, frozenset[str]]] = {
    "Continue": ("play", frozenset({"paused"})),
    "Pause": ("pause", frozenset({"running"})),
    "Step Over": ("arrow-right", frozenset({"paused"})),
    "Step Into": ("arrow-down", frozenset({"paused"})),
    "Step Out": ("arrow-up", frozenset({"paused"})),
    "Restart": ("refresh", frozenset({"running", "paused", "terminated", "failed"})),
    "Stop": ("stop", frozenset({"launching", "running", "paused"})),
}
# Capability that, when False, disables a button whatever the state.
CAPABILITY = {"Pause": "supportsPause", "Step Out": "supportsStepOut"}


class Toolbar(widgets.HBox):
    """Continue, Pause, Step Over, Step Into, Step Out, Restart, Stop and a session selector."""

    state = Unicode("")
    capabilities = Dict()
    busy = Bool(False)

    def __init__(self, on_action: Callable[[str], None], on_select: Callable[[str], None]) -> None:
        self.buttons = {
            name: widgets.Button(description=name, tooltip=name, icon=icon, disabled=True,
                                 layout=widgets.Layout(width="auto"))
            for name, (icon, _states) in ACTIONS.items()
        }
        for name, button in self.buttons.items():
            button.add_class("jdr-action")
            button.on_click(lambda _b, name=name: on_action(name))
        self.selector = widgets.Dropdown(options=[], description="Session", layout=widgets.Layout(width="260px",
                                                                                                   display="none"))
        self._on_select = on_select
        self._quiet = False
        self.selector.observe(self._selected, names="value")
        super().__init__([*self.buttons.values(), self.selector], layout=widgets.Layout(flex_flow="row wrap"))
        self.add_class("jdr-toolbar")

    def set_sessions(self, options: list[tuple[str, str]], selected: str | None) -> None:
        """Offer ``(label, id)`` pairs; the selector shows only when there is a choice."""
        self._quiet = True
        try:
            self.selector.options = options
        finally:
            self._quiet = False
        self.show_selected(selected)
        self.selector.layout.display = "flex" if len(options) > 1 else "none"

    def show_selected(self, session_id: str | None) -> None:
        """Show ``session_id`` as the selected session (without calling back)."""
        self._quiet = True
        try:
            offered = any(value == session_id for _label, value in self.selector.options)
            self.selector.value = session_id if offered else None
        finally:
            self._quiet = False

    def _selected(self, change: dict) -> None:
        if not self._quiet and change["new"]:
            self._on_select(change["new"])

    @observe("state", "capabilities", "busy")
    def _enable(self, change: object = None) -> None:
        for name, (_icon, states) in ACTIONS.items():
            capable = self.capabilities.get(CAPABILITY.get(name, ""), True) is not False
            self.buttons[name].disabled = self.busy or not capable or self.state not in states
