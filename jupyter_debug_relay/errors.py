"""The one error type users see: a stable code, a sentence and a hint."""

from __future__ import annotations

from typing import Any

HINTS: dict[str, str] = {
    "session_not_found": "List sessions with relay.sessions or `%debug_session list`.",
    "file_not_found": "Check the path; relative paths are resolved against the working directory.",
    "invalid_line": "Pick a line that holds code; the message names the nearest one.",
    "syntax_error": "Fix the syntax error in the target, then launch again.",
    "invalid_condition": "A condition must be a valid expression in the target's language.",
    "not_paused": "Pause the target first (pause, or wait for a breakpoint).",
    "not_running": "Launch or attach a session first; this one has ended.",
    "timeout": "The target is still running; wait again or pause it.",
    "target_exited": "The target has ended; launch it again to keep debugging.",
    "adapter_failed": "The debug adapter stopped; launch a new session.",
    "connection_failed": "Check that the target is listening at that address and reachable.",
    "unsupported": "This backend cannot do that; see docs/backends.md for what each supports.",
    "invalid_request": "Check the command and its arguments against the documentation.",
    "protocol_error": "The peer sent something that breaks its protocol; the session cannot trust it.",
    "evaluation_failed": "Fix the expression; it runs in the selected frame of the target.",
}


class RelayError(Exception):
    """An error with a stable ``code``, a ``message``, a ``hint`` and optional ``details``."""

    def __init__(
        self,
        code: str,
        message: str,
        hint: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint if hint is not None else HINTS.get(code, "")
        self.details = details or {}

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" + (f" (hint: {self.hint})" if self.hint else "")

    def to_dict(self) -> dict[str, Any]:
        """The error as the JSON object used by the comm protocol."""
        out: dict[str, Any] = {"code": self.code, "message": self.message, "hint": self.hint}
        if self.details:
            out["details"] = self.details
        return out


class Unsupported(RelayError):
    """A backend lacks a feature; the message names the peer and the feature."""

    def __init__(self, peer: str, feature: str) -> None:
        super().__init__("unsupported", f"{peer} does not support {feature}.")


class TargetWarning(UserWarning):
    """A session started, but its target runs less well than it could (a speed-up off, each named, with why)."""


class BreakpointWarning(UserWarning):
    """A session started, but some of the relay's breakpoints will not stop it (each named, with why)."""
