"""The ``%debug_session`` (alias ``%dbg``) and ``%bp`` line magics, with their tab completion."""

from __future__ import annotations

import glob
import os
from typing import Any

from IPython.core.completer import SimpleCompletion, context_matcher
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand

from .commands import Commands
from .grammar import SESSION_COMMANDS, options
from .help import HELP
from .parsing import BP_COMMANDS

MAGIC_NAMES = ("debug_session", "dbg", "bp")


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
    """An IPython matcher for our magic lines: subcommands, options, session names, breakpoint ids, paths.

    On a line of ours it suppresses IPython's other matchers (Python names make no sense there).
    """

    def __init__(self, commands: Commands) -> None:
        self.commands = commands

    @context_matcher()
    def match(self, context: Any) -> dict[str, Any]:
        line = context.text_until_cursor
        words = line.split()
        if not words or words[0].lstrip("%") not in MAGIC_NAMES or line.lstrip().startswith("%%"):
            return {"completions": []}
        word = "" if line.endswith((" ", "\t")) else words[-1]
        done = words[1:] if not word else words[1:-1]  # the complete words after the magic's name
        offer = self.bp_words(done, word) if words[0].lstrip("%") == "bp" else self.session_words(done, word)
        return {"completions": [SimpleCompletion(text) for text in offer if text.startswith(word)],
                "matched_fragment": word, "suppress": True}

    def session_words(self, done: list[str], word: str) -> list[str]:
        if not done:
            return list(SESSION_COMMANDS)
        if done[-1] in ("--session", "use"):
            return self._session_names()
        if word.startswith("-"):
            return options(done[0])
        return _paths(word)

    def bp_words(self, done: list[str], word: str) -> list[str]:
        if not done:
            return list(BP_COMMANDS) + _paths(word)
        if done[0] in ("rm", "disable", "enable"):
            return [str(bp.id) for bp in self.commands.relay.breakpoints.list()]
        if done[0] == "exceptions":
            return ["raised", "uncaught", "none"]
        return _paths(word)

    def _session_names(self) -> list[str]:
        names = []
        for handle in self.commands.relay.sessions:
            names += [handle.id, handle.name]
        return names


def _paths(prefix: str) -> list[str]:
    return [p + ("/" if os.path.isdir(p) else "") for p in sorted(glob.glob(os.path.expanduser(prefix) + "*"))][:200]
