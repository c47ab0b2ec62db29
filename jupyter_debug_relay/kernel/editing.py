"""Magic words that change things in place: ``set`` (a name, an attribute, an item) and ``%bp edit``."""

from __future__ import annotations

import re

from ..errors import RelayError
from .context import Words
from .grammar import Command
from .parsing import BpCommand
from .results import BreakpointsResult, ValueResult

_ASSIGNMENT = re.compile(r"^\s*(?P<name>[^=]+?)\s*=(?!=)\s*(?P<value>.+)$", re.S)


class EditingWords(Words):
    """``set`` and ``%bp edit``."""

    def do_set(self, command: Command) -> ValueResult:
        """``NAME = VALUE`` through the frame's scopes; an attribute or an item (``p.x``, ``d['k']``) in place."""
        handle = self.context.session(command.session)
        match = _ASSIGNMENT.match(command.text)
        if match is None:
            raise RelayError("invalid_request", f"Cannot read {command.text!r} as NAME = VALUE.",
                             "e.g. `%debug_session set total = 0`, `set p.x = 0` or `set d['k'] = 1`.")
        name, value = match.group("name").strip(), match.group("value").strip()
        frame_id = self.context.frame_id(handle)
        if not name.isidentifier():
            return ValueResult(self.relay.operations.call("set_expression", {
                "session": handle.id, "expression": name, "value": value, "frame_id": frame_id})["variable"])
        for scope in handle.scopes(frame_id):
            if any(v.name == name for v in handle.variables(scope.ref, 0, 1000).items):
                return ValueResult(self.context.run(command, handle, ref=scope.ref, name=name, value=value)["variable"])
        raise RelayError("invalid_request", f"There is no variable {name!r} in this frame's scopes.",
                         "See the names with `%debug_session vars`; `set p.x = 0` sets an attribute.")

    def bp_edit(self, command: BpCommand) -> BreakpointsResult:
        return BreakpointsResult([self.relay.breakpoints.update(command.ids[0], **command.changes)])
