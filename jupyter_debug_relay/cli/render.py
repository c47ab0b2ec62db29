"""How the CLI shows things: colours and tables on a terminal (rich), plain text when piped, JSON on request."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from ..model import Breakpoint, from_json, stop_from_json
from ..text import called, short_path, status_text, stop_reason

_WRITING = threading.Lock()  # attach prints from two threads: one whole line at a time
STYLES = {"stopped": "bold magenta", "continued": "magenta", "session": "cyan", "output": "green",
          "error": "bold red", "command_response": "yellow", "terminated": "bold cyan", "exited": "bold cyan",
          "dropped": "red", "snapshot": "dim", "breakpoint": "blue"}


def place(frame: dict[str, Any] | None) -> str:
    """``compute() at app.py:6`` (a frame in its JSON form)."""
    if not frame:
        return "?"
    return f"{called(str(frame.get('name', '?')))} at {short_path(frame.get('path') or '')}:{frame.get('line')}"


def summary(event: dict[str, Any]) -> str:
    """One line saying what an event of a recording was."""
    kind, data = event.get("type"), event.get("data") or {}
    if kind == "stopped":
        return f"{stop_reason(stop_from_json(data))} in {place(data.get('frame'))}"
    if kind == "output":
        return repr(data.get("text", ""))[1:-1][:200]
    if kind == "session":
        return str(data.get("state"))
    if kind == "continued":
        return str(data.get("action") or "running")
    if kind in ("exited", "terminated"):
        return "detached" if data.get("detached") else f"exit code {data.get('exit_code')}"
    if kind == "error":
        return f"{data.get('code')}: {data.get('message')}"
    if kind == "command_response":
        head = f"#{data.get('command_id')} "
        return head + ("ok" if data.get("ok") else f"{data['error'].get('code')}: {data['error'].get('message')}")
    if kind == "breakpoint":
        bp = data.get("breakpoint") or {}
        where = f"{short_path(bp.get('path') or '')}:{bp.get('line')}" if bp.get("path") else bp.get("name")
        return f"{bp.get('id')} {where} {status_text(from_json(Breakpoint, bp))}"
    if kind == "snapshot":
        return f"{len(data.get('frames') or [])} frames, {len(data.get('variables') or [])} variables"
    if kind == "dropped":
        return f"{data.get('events')} events ({data.get('bytes', '?')} bytes) not recorded"
    head = ""
    if kind == "raw":  # a peer's own event: its protocol and name, then its body
        head, data = f"{data.get('protocol')} {data.get('name')} ", data.get("body") or {}
    text = head + json.dumps(data, separators=(",", ":"))
    return text if len(text) <= 120 else text[:117] + "..."


class Printer:
    """Prints events and results to stdout: rich on a terminal, plain when piped, JSON lines with ``json``."""

    def __init__(self, as_json: bool = False, color: bool | None = None) -> None:
        self.as_json = as_json
        self.color = sys.stdout.isatty() if color is None else color
        self._console = None
        if self.color and not as_json:
            from rich.console import Console

            self._console = Console(highlight=False)

    def text(self, line: str, style: str | None = None) -> None:
        with _WRITING:
            if self._console is not None:
                self._console.print(line, style=style, markup=False)
            else:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()

    def event(self, event: dict[str, Any]) -> None:
        if self.as_json:
            self.data(event)
            return
        ts = event.get("ts", 0)
        stamp = time.strftime("%H:%M:%S", time.localtime(ts)) + f".{int(ts * 1000) % 1000:03d}"
        self.text(f"{stamp} {event.get('type', '?'):<16} {summary(event)}", STYLES.get(event.get("type", "")))

    def data(self, value: Any) -> None:
        with _WRITING:
            sys.stdout.write(json.dumps(value, default=str) + "\n")
            sys.stdout.flush()

    def table(self, headers: tuple[str, ...], rows: list[tuple[Any, ...]], empty: str) -> None:
        if not rows:
            self.text(empty)
            return
        if self._console is not None:
            from rich.table import Table

            table = Table(box=None, header_style="bold")
            for header in headers:
                table.add_column(header, overflow="fold")  # a long path wraps: its line number stays in sight
            for row in rows:
                table.add_row(*(str(cell) for cell in row))
            self._console.print(table)
            return
        widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)]
        for row in (headers, *rows):
            self.text("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip())
