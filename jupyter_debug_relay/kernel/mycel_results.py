"""Result objects of the Mycel magics (inspect, ready, consume, timeline): readable text, the data as attributes."""

from __future__ import annotations

import json
from typing import Any

from .results import Result, _table

VALUE_WIDTH = 80  # a value shown inline is cut to this many characters


def _short(value: Any) -> str:
    """A JSON value on one line, cut to ``VALUE_WIDTH``."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= VALUE_WIDTH else text[:VALUE_WIDTH - 1] + "…"


def _endpoint(end: Any) -> str:
    if not isinstance(end, dict):
        return "?"
    return f"{end.get('connector') or '?'} {end.get('operation') or ''}".strip()


def _flow_line(flow: dict[str, Any]) -> str:
    """``create_user: api POST /users -> postgres users (2 rules)``."""
    rules = flow.get("transform") or {}
    extras = [f"{len(rules)} rule{'s' if len(rules) != 1 else ''}"] if rules else []
    extras += [what for what, key in (("steps", "hasSteps"), ("cache", "hasCache"), ("retry", "hasRetry"))
               if flow.get(key)]
    tail = f" ({', '.join(extras)})" if extras else ""
    return f"{flow.get('name', '?')}: {_endpoint(flow.get('from'))} -> {_endpoint(flow.get('to'))}{tail}"


def _flow_detail(flow: dict[str, Any]) -> list[str]:
    lines = [_flow_line(flow)]
    for index, (target, expression) in enumerate((flow.get("transform") or {}).items()):
        lines.append(f"  rule {index}: {target} = {expression}")
    for key, value in flow.items():
        if key not in ("name", "from", "to", "transform") and value not in (None, False, 0, "", {}, []):
            lines.append(f"  {key}: {_short(value)}")
    return lines


def _item_line(item: Any) -> str:
    """``name: key value, key value`` for a named object, else the value on one line."""
    if not isinstance(item, dict) or "name" not in item:
        return _short(item)
    rest = {k: v for k, v in item.items() if k != "name" and v not in (None, "")}
    if list(rest) == ["fields"] and isinstance(rest["fields"], list):  # a type: its fields
        fields = [f"{f.get('name')} {f.get('type', '')}{'' if f.get('required', True) else '?'}".strip()
                  for f in rest["fields"] if isinstance(f, dict)]
        return f"{item['name']}: {', '.join(fields)}"
    if list(rest) == ["mappings"] and isinstance(rest["mappings"], dict):  # a named transform: its rules
        return f"{item['name']}: " + "; ".join(f"{k} = {v}" for k, v in rest["mappings"].items())
    return f"{item['name']}: " + ", ".join(f"{k} {_short(v)}" for k, v in rest.items())


class InspectResult(Result):
    """What ``inspect`` read from the runtime: one line per flow, connector, type or transform."""

    def __init__(self, what: str, data: Any) -> None:
        self.what, self.data = what, data
        if what == "flow" and isinstance(data, dict):
            lines = _flow_detail(data)
        elif isinstance(data, list):
            lines = [_flow_line(i) if what == "flows" and isinstance(i, dict) else _item_line(i) for i in data]
        else:
            lines = [_short(data)]
        super().__init__("\n".join(lines) or f"no {what}")


class SourcesResult(Result):
    """The runtime's event sources after ``ready``: which ones take ``consume``."""

    def __init__(self, sources: list[dict[str, Any]]) -> None:
        self.sources = sources
        lines = [f"{s.get('connector', '?')}  {s.get('type', '')}  {s.get('source', '')}  "
                 + ("manual consume: `%debug_session consume " + str(s.get("connector")) + "`"
                    if s.get("manualConsume") else "pushed as it arrives") for s in sources]
        super().__init__("ready; " + ("event sources:\n" + "\n".join(lines) if lines else "no event sources"))

    def _repr_html_(self) -> str:
        rows = [(s.get("connector"), s.get("type"), s.get("source"), "yes" if s.get("manualConsume") else "no")
                for s in self.sources]
        return _table(("connector", "type", "source", "manual consume"), rows)


class ConsumeResult(Result):
    """Where a pulled message got to: through its flow, stopped in it, or still waiting for a message."""

    def __init__(self, consumed: dict[str, Any], stop: Result | None = None) -> None:
        self.consumed = consumed
        self.connector, self.done, self.thread_id = consumed["connector"], consumed["done"], consumed["thread_id"]
        self.stop = getattr(stop, "stop", None)
        if self.done:
            text = f"consumed one message from {self.connector}: its flow ran to the end"
        elif stop is not None and self.stop is not None:
            text = f"consumed one message from {self.connector}; {stop.text}"
        elif self.thread_id is None:
            text = f"waiting for a message on {self.connector} (it arrives in the background)"
        else:
            text = f"consumed one message from {self.connector}: thread {self.thread_id} is still running"
        super().__init__(text)


class TimelineResult(Result):
    """A Mycel thread's own events, one line each: ``+12.3 ms stageExit validate_input (40 us)``."""

    def __init__(self, thread_id: int, events: list[dict[str, Any]]) -> None:
        self.thread_id, self.events = thread_id, events
        first = events[0]["ts"] if events else 0.0
        lines = [f"+{(e['ts'] - first) * 1000:7.1f} ms  {_event_line(e['event'], e.get('body') or {})}"
                 for e in events]
        super().__init__("\n".join(lines) or f"thread {thread_id}: no events yet")


def _event_line(event: str, body: dict[str, Any]) -> str:
    name = event.removeprefix("event.")
    stage = " ".join(str(body[k]) for k in ("stage", "name") if body.get(k))
    parts = [name, stage] if stage else [name]
    if name == "ruleEval":
        parts.append(f"rule {body.get('ruleIndex')}: {body.get('target')} = {body.get('expression')} -> "
                     f"{_short(body.get('result'))}")
    elif name == "stopped":
        parts.append(f"({body.get('reason') or 'no reason'})")
    elif name in ("stageExit", "flowEnd") and "output" in body:
        parts.append(f"-> {_short(body.get('output'))}")
    elif name == "flowStart":
        parts.append(f"input {_short(body.get('input'))}")
    if body.get("error"):
        parts.append(f"error: {body['error']}")
    if "durationUs" in body:
        parts.append(f"({body['durationUs']} us)")
    return " ".join(p for p in parts if p)
