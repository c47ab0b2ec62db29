"""The one error type users see: a stable code, a sentence and a hint."""

from __future__ import annotations

from typing import Any, NamedTuple


class Code(NamedTuple):
    """An error code's default hint (what to do) and the HTTP status of an answer that carries it."""

    hint: str
    status: int


# Every error code the relay raises, and no other.
CODES: dict[str, Code] = {
    "invalid_request": Code("Check the command and its arguments against the documentation.", 400),
    "file_not_found": Code("Check the path; relative paths are resolved against the working directory.", 400),
    "invalid_line": Code("Pick a line that holds code; the message names the nearest one.", 400),
    "syntax_error": Code("Fix the syntax error in the target, then launch again.", 400),
    "invalid_condition": Code("A condition must be a valid expression in the target's language.", 400),
    "evaluation_failed": Code("Fix the expression; it runs in the selected frame of the target.", 400),
    "unauthorized": Code("Give the token the server was started with: the one it printed, or the one in its file "
                         "in the Jupyter runtime dir.", 401),
    "forbidden": Code("Use the address the server printed (e.g. http://127.0.0.1:PORT).", 403),
    "read_only": Code("Ask the session's owner for a connection that is not read-only (expose without "
                      "--read-only).", 403),
    "session_not_found": Code("List sessions with relay.sessions or `%debug_session list`.", 404),
    "not_found": Code("Check the name; list what exists first (`%bp profiles`, GET /openapi.json).", 404),
    "method_not_allowed": Code("See GET /openapi.json for the methods each endpoint takes.", 405),
    "not_paused": Code("Pause the target first (pause, or wait for a breakpoint).", 409),
    "not_running": Code("Launch or attach a session first; this one has ended.", 409),
    "target_exited": Code("The target has ended; launch it again to keep debugging.", 409),
    "too_large": Code("Send less: page through values instead of sending them whole.", 413),
    "unsupported": Code("This backend cannot do that; see docs/backends.md for what each supports.", 400),
    "adapter_failed": Code("The debug adapter stopped; launch a new session.", 502),
    "connection_failed": Code("Check that the target is listening at that address and reachable.", 502),
    "protocol_error": Code("The peer sent something that breaks its protocol; the session cannot trust it.", 502),
    "timeout": Code("The target is still running; wait again or pause it.", 504),
    "internal_error": Code("This is a bug in jupyter_debug_relay; please report it.", 500),
    "demo_failed": Code("The demo's cells show where the debugging went wrong; `jupyter-debug-relay doctor` checks "
                        "the debugpy the example runs.", 500),
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
        self.hint = hint if hint is not None else (CODES[code].hint if code in CODES else "")
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


def answer_data(response: Any, who: str, hint: str) -> Any:
    """A relay server's HTTP answer (an ``httpx.Response``): its JSON data, or the ``RelayError`` its error carries;
    a ``protocol_error`` saying ``who`` answered something else."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.is_success and data is not None:
        return data
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        raise RelayError("protocol_error", f"{who} answered {response.status_code} without a relay's JSON.", hint)
    told = error.get("hint")
    raise RelayError(str(error.get("code") or "protocol_error"), str(error.get("message") or ""),
                     told if isinstance(told, str) else None, error.get("details") or {})
