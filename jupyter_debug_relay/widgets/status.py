"""The status line: where the session is, the warning of how its target runs, plus the last error or note."""

from __future__ import annotations

import ipywidgets as widgets
from traitlets import Unicode, observe

from ..errors import RelayError
from .format import esc


class StatusLine(widgets.HTML):
    """``report (debugpy) · paused at app.py:12 in compute() — breakpoint``; errors and notes below it."""

    text = Unicode("no session")
    warning = Unicode("")  # the session's start warnings, in one line (a speed-up off in its target, and why)
    error = Unicode("")
    note = Unicode("")

    def __init__(self) -> None:
        super().__init__()
        self.add_class("jdr-status")
        self._render()

    def show_error(self, error: RelayError) -> None:
        self.note = ""
        self.error = f"{error.code}: {error.message}" + (f" — {error.hint}" if error.hint else "")

    def show_note(self, note: str) -> None:
        self.error = ""
        self.note = note

    @observe("text", "warning", "error", "note")
    def _render(self, change: object = None) -> None:
        parts = [f'<div class="jdr-status-text" style="font-weight:600">{esc(self.text)}</div>']
        if self.warning:
            parts.append(f'<div class="jdr-status-warning" style="color:#8a5300">{esc(self.warning)}</div>')
        if self.error:
            parts.append(f'<div class="jdr-status-error" style="color:#b00020">{esc(self.error)}</div>')
        if self.note:
            parts.append(f'<div class="jdr-status-note" style="color:#555">{esc(self.note)}</div>')
        self.value = "".join(parts)
