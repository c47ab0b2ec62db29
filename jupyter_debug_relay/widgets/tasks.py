"""The asyncio tasks of a paused target as a tree (``tasks``), shown when opened and read again at each stop."""

from __future__ import annotations

from collections.abc import Callable

from .toggled_lines import ToggledLines


class TasksView(ToggledLines):
    """``lines``: ``text.tasks_lines`` of a ``tasks`` answer; ``wanted`` asks for them again."""

    def __init__(self, wanted: Callable[[], None]) -> None:
        super().__init__("Tasks", "sitemap", "asyncio tasks at this stop", wanted)
        self.add_class("jdr-tasks")
        self.note = "no asyncio tasks"
