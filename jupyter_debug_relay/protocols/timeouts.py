"""Request timeouts shared by every protocol: 30 s by default, kept within 1 to 300 s."""

from __future__ import annotations

DEFAULT_TIMEOUT = 30.0
MIN_TIMEOUT = 1.0
MAX_TIMEOUT = 300.0


def clamp_timeout(seconds: float | None) -> float:
    """A request timeout within bounds (the default when not given)."""
    return DEFAULT_TIMEOUT if seconds is None else min(MAX_TIMEOUT, max(MIN_TIMEOUT, float(seconds)))
