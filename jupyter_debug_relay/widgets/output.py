"""The target's output: stdout and stderr apart, the newest lines kept, what was dropped counted."""

from __future__ import annotations

from collections import deque

import ipywidgets as widgets
from traitlets import Bool, Int, Unicode, observe

from ..model import OutputChunk
from .format import MONO, esc

MAX_LINES = 400  # lines kept per stream
MAX_LINE = 400  # characters kept per line


class _Tail:
    """The last ``MAX_LINES`` lines of one stream, and how many fell out."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=MAX_LINES)
        self.partial = ""
        self.dropped = 0

    def add(self, text: str) -> None:
        *complete, self.partial = (self.partial + text).split("\n")
        self.partial = self.partial[-MAX_LINE:]
        self.dropped += max(0, len(self.lines) + len(complete) - MAX_LINES)
        self.lines.extend(line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…" for line in complete[-MAX_LINES:])

    @property
    def text(self) -> str:
        return "\n".join([*self.lines, self.partial] if self.partial else self.lines)


class OutputView(widgets.VBox):
    """Tail-follows the output while ``follow`` is on; ``updates`` counts renders (the update rate)."""

    stdout = Unicode("")
    stderr = Unicode("")
    dropped_lines = Int(0)  # lines this view let go of
    dropped_bytes = Int(0)  # bytes the relay's output ring let go of before they were read
    follow = Bool(True)
    updates = Int(0)

    def __init__(self) -> None:
        self._out, self._err = _Tail(), _Tail()
        self._follow = widgets.ToggleButton(value=True, description="Follow", icon="arrow-down",
                                            tooltip="keep showing the newest output",
                                            layout=widgets.Layout(width="auto"))
        widgets.link((self._follow, "value"), (self, "follow"))
        self._info = widgets.HTML()
        self._stdout_view = widgets.HTML(layout=widgets.Layout(width="100%"))
        self._stderr_view = widgets.HTML(layout=widgets.Layout(width="100%", display="none"))
        self._stdout_view.add_class("jdr-stdout")
        self._stderr_view.add_class("jdr-stderr")
        header = widgets.HBox([widgets.HTML("<b>Output</b>"), self._follow, self._info],
                              layout=widgets.Layout(align_items="center"))
        super().__init__([header, self._stdout_view, self._stderr_view])
        self.add_class("jdr-output")
        self._render()

    def add(self, chunks: list[OutputChunk], ring_dropped: int) -> None:
        """Take newly read chunks; shown at once while following, else held until follow is on again."""
        for chunk in chunks:
            (self._err if chunk.category == "stderr" else self._out).add(chunk.text)
        self.dropped_bytes = ring_dropped
        if self.follow:
            self._publish()

    def reset(self) -> None:
        self._out, self._err = _Tail(), _Tail()
        self.dropped_bytes = 0
        self._publish()

    @observe("follow")
    def _refollow(self, change: dict) -> None:
        if change["new"]:
            self._publish()

    def _publish(self) -> None:
        self.stdout, self.stderr = self._out.text, self._err.text
        self.dropped_lines = self._out.dropped + self._err.dropped
        self._render()
        self.updates += 1

    def _render(self) -> None:
        box = ("display:flex;flex-direction:column-reverse;max-height:14em;overflow:auto;"
               "border:1px solid #ddd;padding:2px 4px;")
        shown = esc(self.stdout) if self.stdout or self.stderr else '<span style="color:#888">no output yet</span>'
        self._stdout_view.value = f'<div style="{box}"><pre style="margin:0;{MONO}">{shown}</pre></div>'
        self._stderr_view.value = (f'<div style="{box}border-color:#e0a0a0;background:#fff5f5">'
                                   f'<pre style="margin:0;{MONO}color:#b00020">{esc(self.stderr)}</pre></div>')
        self._stderr_view.layout.display = "flex" if self.stderr else "none"
        notes = []
        if self.dropped_lines:
            notes.append(f"{self.dropped_lines:,} older lines not shown")
        if self.dropped_bytes:
            notes.append(f"{self.dropped_bytes:,} bytes dropped by the relay's buffer")
        self._info.value = f'<span style="color:#a06000">{esc("; ".join(notes))}</span>'
