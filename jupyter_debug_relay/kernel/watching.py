"""``%debug_session watch EXPR | watch list | watch rm N``: a session's watch expressions, shown under every stop."""

from __future__ import annotations

from ..errors import RelayError
from ..model import Watch
from .context import Words
from .grammar import Command, usage
from .results import Result


class WatchesResult(Result):
    """A session's watch expressions, one per line, with their values at the stop."""

    def __init__(self, watches: list[Watch], session: str) -> None:
        self.watches = watches
        lines = [f"watch {w.index}: {w.expression}" + (
            f" = {w.value}" if w.value is not None else f" <{w.error}>" if w.error else "") for w in watches]
        super().__init__("\n".join(lines) or f"no watch expressions in {session} (add one with "
                         "`%debug_session watch EXPR`)")


class WatchWords(Words):
    """The ``watch`` word of ``%debug_session``."""

    def do_watch(self, command: Command) -> WatchesResult:
        handle = self.context.session(command.session)
        words = command.text.split()
        if words == ["list"]:
            out = self.relay.operations.call("watches", {"session": handle.id})
        elif words[:1] == ["rm"]:
            if len(words) != 2 or not words[1].isdigit():
                raise RelayError("invalid_request", "`watch rm` takes one watch number.", f"Usage: "
                                 f"{usage(command.magic)}; see the numbers with `%debug_session watch list`.")
            out = self.relay.operations.call("remove_watch", {"session": handle.id, "index": int(words[1])})
        else:
            out = self.context.run(command, handle)
        return WatchesResult(out["watches"], handle.name)
