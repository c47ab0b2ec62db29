"""A Mycel thread's own events (flowStart, stageEnter/Exit, ruleEval ...) as a timeline."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
from traitlets import Int, List, observe

from .format import MONO, esc

SHOWN = 60  # newest events shown


def _detail(body: dict[str, Any]) -> str:
    parts = [str(body[key]) for key in ("stage", "name", "target", "expression") if body.get(key)]
    if "durationUs" in body:
        parts.append(f"{body['durationUs']} µs")
    if body.get("error"):
        parts.append(f"error: {body['error']}")
    return " · ".join(parts)


class TimelineView(widgets.HTML):
    """``events`` of thread ``thread_id``, oldest first, as ``session.timeline(thread_id)`` answers."""

    thread_id = Int(0)
    events = List()  # of {"event", "body", "ts"}

    def __init__(self) -> None:
        super().__init__()
        self.add_class("jdr-timeline")

    @observe("events", "thread_id")
    def _render(self, change: object = None) -> None:
        if not self.events:
            self.value = "<b>Timeline</b> <span style='color:#666'>no events yet</span>"
            return
        start = self.events[0].get("ts", 0.0)
        rows = []
        for entry in self.events[-SHOWN:]:
            name = str(entry.get("event", "")).removeprefix("event.")
            offset = (entry.get("ts", start) - start) * 1000
            rows.append(f'<div style="{MONO}"><span style="color:#888">+{offset:8.1f} ms</span> '
                        f"<b>{esc(name)}</b> {esc(_detail(entry.get('body') or {}))}</div>")
        hidden = len(self.events) - SHOWN
        more = f"<div style='color:#666'>{hidden} earlier events not shown</div>" if hidden > 0 else ""
        self.value = f"<b>Timeline of thread {self.thread_id}</b>{more}{''.join(rows)}"
