"""Feature ``pending_breakpoints``: the breakpoints pydevd refused for a file that did not exist yet bind as the
file's code is first read (an import, ``-m``), before its first line runs; the relay is told each one is verified
with a ``breakpoint`` event."""

import os


def named_by(received: dict, filename: str, may_be_named) -> bool:  # noqa: ANN001 - the boot's may_be_named
    """Whether a breakpoint pydevd received may be in ``filename``."""
    return may_be_named(filename, {os.path.basename(their_file).lower() for their_file, _ in received.values()})


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    pydevd = change.module("pydevd")
    api_class = change.module("_pydevd_bundle.pydevd_api").PyDevdAPI
    canonical_normalized_path = change.module("pydevd_file_utils").canonical_normalized_path

    def bind_pending(filename: str) -> None:
        """Add the breakpoints pydevd refused for ``filename`` while it did not exist, now that its code runs."""
        debugger = pydevd.get_global_debugger()
        received = getattr(debugger, "api_received_breakpoints", None)
        if not received or not named_by(received, filename, boot.may_be_named):
            return
        canonical = canonical_normalized_path(filename)
        if canonical in debugger.breakpoints:
            return
        api = api_class()
        for (_, bp_id), (their_file, params) in list(received.items()):
            if their_file != canonical:
                continue
            result = api.add_breakpoint(debugger, *params)
            if not result.error_code:
                boot.tell_relay("breakpoint", {"reason": "changed", "breakpoint": {
                    "id": bp_id, "verified": True, "line": result.translated_line, "source": {"path": filename}}})

    boot.FIRST_READ.append(bind_pending)
