"""Running an operation for an agent (HTTP or MCP): no thread held while it waits, answers as JSON, secrets masked."""

from __future__ import annotations

from typing import Any

from ..errors import RelayError
from ..model import as_dict
from ..operations import OPERATIONS
from ..redact import mask


async def run(relay: Any, name: str, args: dict[str, Any], redact: bool = True) -> Any:
    """The JSON result of operation ``name``; a ``RelayError`` as it came."""
    result = await relay.operations.run(name, args)
    out = as_dict(result)
    if name == "output":
        after = {"session": args.get("session"), "since": out["cursor"], "limit": 1}
        out["has_more"] = bool((await relay.operations.run(name, after)).chunks)
    return mask(out) if redact else out


async def run_waiting(relay: Any, name: str, args: dict[str, Any], redact: bool = True) -> dict[str, Any]:
    """A step, continue, pause or wait: its stop, or its end, or "still running" when the wait ran out."""
    try:
        out = await run(relay, name, args, redact)
    except RelayError as exc:
        if exc.code == "timeout" and args.get("wait", True):
            out = {"state": "running", "stop": None, **({"note": exc.details["note"]} if "note" in exc.details else {})}
        elif exc.code == "target_exited":
            out = {"state": "terminated", "stop": None, "exit_code": exc.details.get("exit_code"),
                   **({"note": exc.details["note"]} if "note" in exc.details else {})}
        else:
            raise
        for key in OPERATIONS[name].returns:  # every declared key, also when the wait ran out
            out.setdefault(key, None)
    return with_line(out)


async def run_start(relay: Any, name: str, args: dict[str, Any], wait: bool, timeout: float,
                    redact: bool = True) -> dict[str, Any]:
    """launch, attach or connect, then (``wait``) the first stop or the end, as a step answers."""
    started = await run(relay, name, args, redact)
    session = started["session"]
    told = {"unverified": started.get("unverified", []), "warnings": started.get("warnings", [])}
    if not wait:
        return {"session": session, "state": session["state"], "stop": None, **told}
    waited = await run_waiting(relay, "wait", {"session": session["id"], "timeout": timeout}, redact)
    session = (await run(relay, "status", {"session": session["id"]}, redact))["session"]  # as it is now: one truth
    if waited["state"] == "terminated" and waited.get("exit_code") is None:
        waited["exit_code"] = session["exit_code"]
    return {"session": session, **waited, **told}


def with_line(out: dict[str, Any]) -> dict[str, Any]:
    """Add ``line_text``: the source line the stop is on (the stop's ``source_line``), when it has one."""
    stop = out.get("stop")
    if isinstance(stop, dict) and stop.get("source_line"):
        out["line_text"] = stop["source_line"]
    return out
