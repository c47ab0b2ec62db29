"""Closing a tree of widgets, so that nothing of a closed panel stays alive in the kernel or the page."""

from __future__ import annotations

import ipywidgets as widgets


def close_all(widget: widgets.Widget) -> None:
    """Close ``widget`` and every widget below it."""
    close_children(widget)
    widget.close()


def close_children(widget: widgets.Widget) -> None:
    for child in getattr(widget, "children", ()):
        close_all(child)
