"""The line recorder's protocol (``record``): what the relay asks a target's recorder, how much, and how its answers
are read (a JSON object; ``record``, ``since`` and ``off`` answer a ``RecordingBatch``), with the errors they make.

A backend sends the requests and reads the answers' text (``backends/debugpy/recording.py``); the engine keeps what
they hold (``engine/history.py``).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import RelayError
from ..model import RecordingBatch

CAP = 4_000_000  # bytes of recorded text the target keeps (the ring's cap); the relay keeps as much
MAX_CHARS = 200  # characters of one recorded value's repr
BATCH = 1_000_000  # bytes of events asked for in one answer
_BATCH = TypeAdapter(RecordingBatch)


def batch(data: dict[str, Any], what: str) -> RecordingBatch:
    """An answer read as a ``RecordingBatch``."""
    try:
        return _BATCH.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise unfit(what, f"{'.'.join(str(part) for part in first['loc']) or 'the answer'}: {first['msg']}") from None


def unfit(what: str, why: str) -> RelayError:
    return RelayError("protocol_error", f"The target's answer to {what} is not what the relay asked for: {why}.",
                      "The session is unchanged; the program may have replaced json or sys.monitoring. Record again "
                      "with record, or turn it off with record off.")


def failed(what: str, said: str) -> RelayError:
    """``evaluation_failed`` saying what the recorder raised in the target."""
    said = said[:300]
    return RelayError("evaluation_failed", f"{what[:1].upper()}{what[1:]} failed in the target: {said}",
                      "The program may have replaced part of sys.monitoring; record off, then record again.",
                      {"adapter_message": said})
