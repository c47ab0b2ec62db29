"""``%debug_session ray [ADDRESS]`` and ``ray attach ID|--all``: a Ray cluster's paused tasks, and sessions on them."""

from __future__ import annotations

from typing import Any

from ..errors import RelayError
from ..model import SessionInfo
from ..text import short_path
from .context import Words
from .grammar import Command
from .results import Result, SessionsResult, _columns, _word

RAY_COLUMNS = ("ID", "KIND", "NAME", "JOB", "NODE", "PID", "SESSION", "WHERE", "EXCEPTION")


class RayTasksResult(Result):
    """A cluster's paused tasks, one per row: what runs, where, its session and the line it waits on."""

    def __init__(self, tasks: list[dict[str, Any]], address: str) -> None:
        self.tasks, self.address = tasks, address
        rows = [[_word(str(v) if v not in (None, "") else "-") for v in (
            t["id"], t["kind"], t["name"], t["job"], t["node"], t["pid"], t["session"],
            short_path(t["where"]) if t["where"] else None, t["exception"])] for t in tasks]
        super().__init__(_columns([list(RAY_COLUMNS), *rows]) if tasks
                         else f"no paused Ray tasks at {address} (a task pauses on breakpoint())")


class RayAttachResult(SessionsResult):
    """The sessions made by ``ray attach``, and a line per task that could not be attached."""

    def __init__(self, infos: list[SessionInfo], failed: list[str], current: str | None) -> None:
        super().__init__(infos, current)
        self.failed = failed
        self.text = "\n".join([self.text, *(f"not attached: {f}" for f in failed)])


class RayWords(Words):
    """The ``ray`` word of ``%debug_session``."""

    def do_ray(self, command: Command) -> Result:
        what = command.extras.get("what")
        if what != "attach":
            if command.args.get("id") or command.args.get("all"):
                raise RelayError("invalid_request", "An id or --all goes with attach.",
                                 "e.g. %debug_session ray attach --all")
            address = what or command.args.get("address", "auto")
            found = self.context.relay.operations.call("ray_tasks", {"address": address,
                                                                      "join": bool(command.args.get("join"))})
            return RayTasksResult(found["tasks"], address)
        out = self.context.run(command)
        infos = out["sessions"]
        if infos:
            self.context.adopt(self.context.relay.get(infos[-1].id))
        return RayAttachResult(infos, out["failed"], self.context.current)
