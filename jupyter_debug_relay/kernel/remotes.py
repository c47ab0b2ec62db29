"""``%debug_session remote add NAME URL --token-file F [--fingerprint SHA256] | remote list | remote remove NAME``."""

from __future__ import annotations

from typing import Any

from ..errors import RelayError
from .context import Words
from .grammar import Command, usage
from .results import Result


def _line(remote: dict[str, Any]) -> str:
    sessions = ", ".join(remote["sessions"]) or "no sessions"
    pinned = f", certificate {remote['fingerprint'][:23]}…" if remote.get("fingerprint") else ""
    return f"{remote['name']}: {remote['url']} ({remote['state']}{pinned}): {sessions}"


class RemotesResult(Result):
    """Remote relays, one per line: name, URL, state and the sessions of each here."""

    def __init__(self, text: str, remotes: list[dict[str, Any]]) -> None:
        super().__init__(text)
        self.remotes = remotes


class RemoteWords(Words):
    """The ``remote`` word of ``%debug_session``."""

    def do_remote(self, command: Command) -> RemotesResult:
        action = command.extras.get("action", "list")
        call = self.relay.operations.call
        if action == "add":
            remote = call("remote_add", command.args)["remote"]
            return RemotesResult(f"added remote {_line(remote)}", [remote])
        if action == "remove" and set(command.args) <= {"name"}:
            remote = call("remote_remove", command.args)["remote"]
            kept = ", ".join(remote["sessions"])
            return RemotesResult(f"removed remote {remote['name']}" + (f"; its sessions go on there ({kept})"
                                                                       if kept else ""), [remote])
        if action == "list" and not command.args:
            remotes = call("remote_list")["remotes"]
            return RemotesResult("\n".join(_line(r) for r in remotes) or
                                 "no remote relays (add one with `%debug_session remote add NAME URL --token-file F`)",
                                 remotes)
        raise RelayError("invalid_request", f"remote takes add, list or remove, not {action!r} with these arguments.",
                         f"Usage: {usage(command.magic)}")
