"""Words that change or keep a session: ``update`` (name, idle timeout) and, later, export and import."""

from __future__ import annotations

from typing import Any

from .grammar import Command
from .results import StatusResult


class KeepingCommands:
    """``%debug_session update`` (mixed into ``Commands``)."""

    def do_update(self: Any, command: Command) -> StatusResult:
        handle = self.session(command.session)
        out = self._run(command, handle)
        result = StatusResult(out["session"])
        result.timeout_minutes = out["timeout_minutes"]
        return result
