"""Text shared by the panel's widgets: locations, the status sentence, escaped HTML."""

from __future__ import annotations

import html
import os

import ipywidgets as widgets

from ..model import Frame, SessionInfo, StopInfo
from ..text import called, state_text, where_text

MONO = "font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 12px);"


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def value_box() -> widgets.HTML:
    """An HTML widget that takes the room left in its row, and never more (what does not fit is cut)."""
    box = widgets.HTML(layout=widgets.Layout(flex="1", min_width="0", overflow="hidden", margin="0 0 0 6px"))
    box.add_class("jdr-value")
    return box


def one_line(inner: str, title: str) -> str:
    """``inner`` on one line, cut with an ellipsis at the edge of its box, whole in its tooltip.

    ``width:0;min-width:100%`` lets the line shrink with its box instead of widening the row to its text.
    """
    return (f'<div style="white-space:nowrap;overflow:hidden;text-overflow:ellipsis;width:0;min-width:100%" '
            f'title="{esc(title)}">{inner}</div>')


def file_name(path: str | None) -> str:
    """The file name alone: the panel is narrow."""
    return os.path.basename(path) if path else "?"


def frame_label(frame: Frame) -> str:
    """``compute() — app.py:12``, or ``clone() — native code`` for a frame with no source."""
    return f"{called(frame.name)} — " + ("native code" if frame.native else f"{file_name(frame.path)}:{frame.line}")


def stop_sentence(stop: StopInfo) -> str:
    """``paused at app.py:12 in compute() — breakpoint`` (with the exception when there is one)."""
    where = f" {where_text(stop.frame, file_name)}" if stop.frame else ""
    why = stop.reason
    if stop.exception is not None:
        why += f" {stop.exception.type}: {stop.exception.message}"
    return f"paused{where} — {why}"


def status_sentence(info: SessionInfo) -> str:
    """Session name, backend and ``state_text`` in one line: an end says ``terminated``, a failure its message."""
    text = state_text(info, stop_sentence)
    if info.state == "terminated":
        text = f"terminated — {text}"
    elif info.state == "failed" and info.error:
        text += f" — {info.error.get('message')}"
    return f"{info.name} ({info.backend}) · {text}"
