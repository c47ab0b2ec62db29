"""Mycel flows: each flow's source and target and the stages it has run, the current stage marked."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
from traitlets import Dict, List, Unicode, observe

from .format import esc


def _end(point: Any) -> str:
    if isinstance(point, dict):
        return f"{point.get('connector', '?')} {point.get('operation', '')}".strip()
    return str(point or "?")


class FlowsView(widgets.HTML):
    """``flows`` as ``inspect("flows")`` answers; ``stages`` per flow in the order they were seen."""

    flows = List(Dict())
    stages = Dict()  # flow name -> [stage, ...]
    current_flow = Unicode("")
    current_stage = Unicode("")

    def __init__(self) -> None:
        super().__init__()
        self.add_class("jdr-flows")

    def see(self, timeline: list[dict[str, Any]]) -> None:
        """Learn stages from a thread's events (``event.stageEnter`` bodies name the flow and the stage)."""
        stages = {flow: list(names) for flow, names in self.stages.items()}
        for entry in timeline:
            body = entry.get("body") or {}
            flow, stage = body.get("flowName"), body.get("stage")
            if entry.get("event", "").endswith("stageEnter") and flow and stage and stage not in stages.get(flow, []):
                stages.setdefault(flow, []).append(stage)
        self.stages = stages

    @observe("flows", "stages", "current_flow", "current_stage")
    def _render(self, change: object = None) -> None:
        rows = []
        for flow in self.flows:
            name = str(flow.get("name", "?"))
            chips = []
            for stage in self.stages.get(name, []):
                here = name == self.current_flow and stage == self.current_stage
                style = "background:#fff3b0;font-weight:600;" if here else "background:#eef;"
                css = "jdr-stage jdr-current-stage" if here else "jdr-stage"
                chips.append(f'<span class="{css}" style="{style}padding:0 4px;margin-right:3px;border-radius:3px">'
                             f"{esc(stage)}</span>")
            rules = flow.get("transform") or {}
            rule_text = f" · {len(rules)} transform rules" if rules else ""
            rows.append(f"<tr><td><b>{esc(name)}</b></td><td>{esc(_end(flow.get('from')))} → "
                        f"{esc(_end(flow.get('to')))}{esc(rule_text)}</td><td>{''.join(chips) or '—'}</td></tr>")
        self.value = ("<b>Flows</b><table style='border-collapse:collapse'><tr><th>flow</th><th>from → to</th>"
                      f"<th>stages seen</th></tr>{''.join(rows)}</table>")
