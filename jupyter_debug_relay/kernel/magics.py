"""The ``%debug_session`` (alias ``%dbg``) and ``%bp`` line magics, with their tab completion.

Light to import (the extension registers them when it loads): the words behind them (``Commands``), the grammar and
the help are imported at their first use.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.completer import SimpleCompletion, context_matcher
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand

if TYPE_CHECKING:
    from .commands import Commands

MAGIC_NAMES = ("debug_session", "dbg", "bp")


def magic_help() -> str:
    """The magics' whole help page (what ``%debug_session?`` shows): generated from the declarations at first use."""
    from .help import HELP

    return HELP


@magics_class
class DebugMagics(Magics):
    """Line magics over the kernel's one ``Commands`` object, made by ``commands()`` at the first magic."""

    def __init__(self, shell: Any, commands: Callable[[], Commands]) -> None:
        super().__init__(shell)
        self.commands = commands

    @no_var_expand
    @line_magic
    def debug_session(self, line: str) -> Any:
        """Debug another program from the notebook: `%debug_session help` lists the commands."""
        return self.commands().run_session(line)

    @no_var_expand
    @line_magic
    def dbg(self, line: str) -> Any:
        """Debug another program from the notebook (``%debug_session``): `%dbg help` lists the commands."""
        return self.commands().run_session(line)

    @no_var_expand
    @line_magic
    def bp(self, line: str) -> Any:
        """Breakpoints of the kernel's debug sessions: `%debug_session help` lists the commands."""
        return self.commands().run_bp(line)

    # IPython's ``?`` asks an object's ``getdoc()`` first: the whole page, without importing it at load.
    debug_session.getdoc = dbg.getdoc = bp.getdoc = magic_help  # type: ignore[attr-defined]


class Completer:
    """An IPython matcher for our magic lines: subcommands, options, session names, breakpoint ids, paths.

    On a line of ours it suppresses IPython's other matchers (Python names make no sense there).
    """

    def __init__(self, commands: Callable[[], Commands]) -> None:
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
        from .grammar import SESSION_COMMANDS, options

        if not done:
            return list(SESSION_COMMANDS)
        if done[-1] in ("--session", "use"):
            return self._session_names()
        if word.startswith("-"):
            return options(done[0])
        return _paths(word)

    def bp_words(self, done: list[str], word: str) -> list[str]:
        from .parsing import BP_COMMANDS

        if not done:
            return list(BP_COMMANDS) + _paths(word)
        if done[0] in ("rm", "disable", "enable"):
            return [str(bp.id) for bp in self.commands().relay.breakpoints.list()]
        if done[0] == "exceptions":
            return ["raised", "uncaught", "none"]
        return _paths(word)

    def _session_names(self) -> list[str]:
        names = []
        for handle in self.commands().relay.sessions:
            names += [handle.id, handle.name]
        return names


def _paths(prefix: str) -> list[str]:
    return [p + ("/" if os.path.isdir(p) else "") for p in sorted(glob.glob(os.path.expanduser(prefix) + "*"))][:200]
