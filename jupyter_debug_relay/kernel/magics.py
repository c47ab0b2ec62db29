"""The ``%debug_session`` (alias ``%dbg``) and ``%bp`` line magics, with their tab completion."""

from __future__ import annotations

import glob
import os
from typing import Any

from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand

from .commands import Commands
from .parsing import BP_COMMANDS, HELP, SESSION_COMMANDS

SESSION_OPTIONS = ("--session", "--timeout", "--no-wait", "--thread")


@magics_class
class DebugMagics(Magics):
    """Line magics over the kernel's one ``Commands`` object."""

    def __init__(self, shell: Any, commands: Commands) -> None:
        super().__init__(shell)
        self.commands = commands

    @no_var_expand
    @line_magic
    def debug_session(self, line: str) -> Any:
        return self.commands.run_session(line)

    @no_var_expand
    @line_magic
    def dbg(self, line: str) -> Any:
        return self.commands.run_session(line)

    @no_var_expand
    @line_magic
    def bp(self, line: str) -> Any:
        return self.commands.run_bp(line)

    debug_session.__doc__ = dbg.__doc__ = bp.__doc__ = HELP


class Completer:
    """Offers subcommands, session names, breakpoint ids and file paths to IPython's completion."""

    def __init__(self, commands: Commands) -> None:
        self.commands = commands

    def session_words(self, event: Any) -> list[str]:
        words = event.line.split()
        typing_new = event.line.endswith(" ")
        position = len(words) - (0 if typing_new else 1)
        previous = words[position - 1] if position >= 1 else ""
        if position <= 1:
            return list(SESSION_COMMANDS)
        if previous in ("--session", "use"):
            return self._session_names()
        if event.symbol.startswith("-"):
            return list(SESSION_OPTIONS)
        return _paths(event.symbol)

    def bp_words(self, event: Any) -> list[str]:
        words = event.line.split()
        position = len(words) - (0 if event.line.endswith(" ") else 1)
        if position <= 1:
            return list(BP_COMMANDS) + _paths(event.symbol)
        if words[1] in ("rm", "disable", "enable"):
            return [str(bp.id) for bp in self.commands.relay.breakpoints.list()]
        if words[1] == "exceptions":
            return ["raised", "uncaught", "none"]
        return _paths(event.symbol)

    def _session_names(self) -> list[str]:
        names = []
        for handle in self.commands.relay.sessions:
            names += [handle.id, handle.name]
        return names


def _paths(prefix: str) -> list[str]:
    return [p + ("/" if os.path.isdir(p) else "") for p in sorted(glob.glob(os.path.expanduser(prefix) + "*"))][:200]
