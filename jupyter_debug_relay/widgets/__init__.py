"""The debugger panel: ipywidgets over the Relay facade, updated live from the relay's event bus."""

from .panel import DebuggerPanel

__all__ = ["DebuggerPanel"]
