"""Words that change or keep sessions and breakpoints: update, export, import, `%bp save|load|profiles`."""

from __future__ import annotations

import json
import os

from ..errors import RelayError
from .context import Words
from .grammar import Command, usage
from .parsing import BpCommand
from .results import BreakpointsResult, Result, StatusResult, StopResult


class KeepingWords(Words):
    """``%debug_session update|export|import`` and ``%bp save|load|profiles``."""

    def do_update(self, command: Command) -> StatusResult:
        handle = self.context.session(command.session)
        out = self.context.run(command, handle)
        result = StatusResult(out["session"])
        result.timeout_minutes = out["timeout_minutes"]
        return result

    def do_export(self, command: Command) -> Result:
        handle = self.context.session(command.session)
        exported = self.context.run(command, handle)["export"]
        text = json.dumps(exported, indent=1)
        path = command.extras.get("file")
        if path:
            with open(os.path.expanduser(path), "w", encoding="utf-8") as f:
                f.write(text + "\n")
            text = f"exported {handle.name} ({exported['start']['operation']} and "\
                   f"{len(exported['breakpoints'])} breakpoints) to {path}"
        result = Result(text)
        result.export, result.path = exported, path
        return result

    def do_import(self, command: Command) -> StopResult:
        path = command.extras.get("file")
        if not path:
            raise RelayError("invalid_request", "`import` needs the file an export wrote.",
                             f"Usage: {usage(command.magic)}")
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as f:
                exported = json.load(f)
        except OSError as exc:
            raise RelayError("file_not_found", f"Cannot read {path}: {exc.strerror}.",
                             "Write one with `%debug_session export FILE`.") from None
        except ValueError as exc:
            raise RelayError("invalid_request", f"{path} is not JSON: {exc}.") from None
        if not isinstance(exported, dict):
            raise RelayError("invalid_request", f"{path} does not hold an export (a JSON object).")
        out = self.relay.operations.call("import", {**exported, **command.args})
        handle = self.context.adopt(self.relay.get(out["session"].id))
        return self.context.stop_result(handle, out["stop"], prefix=f"{handle.name}: ")

    def bp_save(self, command: BpCommand) -> Result:
        profile = self.relay.operations.call("save_profile", {"name": command.spec.name})["profile"]
        count = len(profile["breakpoints"])
        result = Result(f"saved {count} breakpoint{'s' if count != 1 else ''} as profile {profile['name']}")
        result.profile = profile
        return result

    def bp_load(self, command: BpCommand) -> BreakpointsResult:
        out = self.relay.operations.call("load_profile", {"name": command.spec.name})
        return BreakpointsResult(out["breakpoints"], f"profile {command.spec.name} has no breakpoints")

    def bp_profiles(self, command: BpCommand) -> Result:
        names = self.relay.operations.call("profiles", {})["profiles"]
        result = Result("\n".join(names) or "no saved profiles (save one with `%bp save NAME`)")
        result.profiles = names
        return result
