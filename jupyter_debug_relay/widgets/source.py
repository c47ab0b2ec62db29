"""The source view: lines around the current line, current and breakpoint lines marked, a clickable gutter."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import Int, List, Unicode, observe

from .format import MONO, esc, file_name

WINDOW = 17  # lines shown; the current line sits in the middle when the file allows


class SourceView(widgets.VBox):
    """Shows ``lines`` from ``first_line``; clicking a line number calls ``on_toggle(line)``."""

    path = Unicode("")
    lines = List(Unicode())
    current_line = Int(0)  # 0: no current line (running, or another file)
    first_line = Int(1)
    breakpoint_lines = List(Int())
    message = Unicode("no source yet")

    def __init__(self, on_toggle: Callable[[int], None]) -> None:
        self._title = widgets.HTML()
        self._gutter = [widgets.Button(layout=widgets.Layout(width="56px", height="20px", margin="0", padding="0"))
                        for _ in range(WINDOW)]
        self._code = [widgets.HTML(layout=widgets.Layout(height="20px", margin="0 0 0 6px", flex="1"))
                      for _ in range(WINDOW)]
        rows = []
        for index, (gutter, code) in enumerate(zip(self._gutter, self._code, strict=True)):
            gutter.add_class("jdr-gutter")
            gutter.on_click(lambda _b, index=index: self._clicked(index))
            rows.append(widgets.HBox([gutter, code], layout=widgets.Layout(align_items="center")))
        self._on_toggle = on_toggle
        super().__init__([self._title, *rows])
        self.add_class("jdr-source")
        self._render()

    def show(self, path: str, lines: list[str], current_line: int, message: str = "") -> None:
        """Show ``lines`` of ``path`` around ``current_line`` (or around the top when it is 0)."""
        first = max(1, min(current_line - WINDOW // 2, len(lines) - WINDOW + 1))
        with self.hold_trait_notifications():
            self.path, self.lines, self.current_line, self.first_line, self.message = (
                path, lines, current_line, first, message)

    def clear(self, message: str) -> None:
        self.show("", [], 0, message)

    def gutter_button(self, line: int) -> widgets.Button:
        """The line-number button of ``line`` (it must be on screen)."""
        index = line - self.first_line
        if not 0 <= index < min(WINDOW, len(self.lines) - self.first_line + 1):
            raise IndexError(f"line {line} is not shown (lines {self.first_line}–{self.first_line + WINDOW - 1})")
        return self._gutter[index]

    def _clicked(self, index: int) -> None:
        line = self.first_line + index
        if self.path and line <= len(self.lines):
            self._on_toggle(line)

    @observe("path", "lines", "current_line", "first_line", "breakpoint_lines", "message")
    def _render(self, change: object = None) -> None:
        title = esc(file_name(self.path)) if self.path else ""
        note = f' <span style="color:#666">{esc(self.message)}</span>' if self.message else ""
        self._title.value = f"<b>{title}</b>{note}"
        marks = set(self.breakpoint_lines)
        for index, (gutter, code) in enumerate(zip(self._gutter, self._code, strict=True)):
            number = self.first_line + index
            if number > len(self.lines):
                gutter.description, gutter.disabled, gutter.button_style = "", True, ""
                gutter.layout.visibility = "hidden"
                code.value = ""
                continue
            gutter.layout.visibility = "visible"
            gutter.disabled = False
            gutter.description = f"● {number}" if number in marks else str(number)
            gutter.button_style = "danger" if number in marks else ""
            gutter.tooltip = f"toggle a breakpoint at line {number}"
            current = number == self.current_line
            style = "background:#fff3b0;font-weight:600;" if current else ""
            css = "jdr-code jdr-current" if current else "jdr-code"
            arrow = "▶ " if current else "  "
            code.value = (f'<pre class="{css}" data-line="{number}" style="margin:0;{MONO}{style}">'
                          f"{arrow}{esc(self.lines[number - 1])}</pre>")
