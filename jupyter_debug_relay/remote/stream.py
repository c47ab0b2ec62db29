"""A remote session's Server-Sent Events, read from its relay and resumed with ``Last-Event-ID``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import RelayError
from .client import Remote

QUIET = 40.0  # seconds without a byte (the remote sends a keepalive every 15 s) before the link counts as lost


@dataclass
class RemoteEvent:
    """One event of the remote session: its relay-wide ``seq`` (None for ``dropped``), type and event dict."""

    seq: int | None
    event: str
    data: dict[str, Any]


async def follow(remote: Remote, session: str, after: int | None, opened: Callable[[], Any]
                 ) -> AsyncIterator[RemoteEvent]:
    """The events of ``session`` strictly after ``after`` (None: from now); ``opened()`` once the stream is open.

    Ends by raising ``connection_failed`` (the link broke) or the remote's error (e.g. ``session_not_found``).
    """
    headers = {"Last-Event-ID": str(after)} if after is not None else {}
    try:
        async with remote.client.stream("GET", f"/sessions/{session}/events", headers=headers,
                                        timeout=httpx.Timeout(remote.timeout, read=QUIET)) as response:
            if not response.is_success:
                await response.aread()
                remote.answer(response)
            opened()
            fields: dict[str, str] = {}
            async for line in response.aiter_lines():
                if line:
                    if not line.startswith(":"):
                        key, _, value = line.partition(":")
                        fields[key] = value[1:] if value.startswith(" ") else value
                    continue
                if "data" in fields:
                    yield _event(fields)
                elif fields.get("id", "").isdigit():  # where a live stream starts: the id to resume from
                    yield RemoteEvent(int(fields["id"]), "", {})
                fields = {}
    except httpx.HTTPError as exc:
        raise remote.unreachable(exc) from None
    raise RelayError("connection_failed", f"The remote relay {remote.name} closed the event stream.")


def _event(fields: dict[str, str]) -> RemoteEvent:
    try:
        data = json.loads(fields["data"])
        seq = int(fields["id"]) if "id" in fields else None
    except ValueError:
        raise RelayError("protocol_error", "The remote relay sent an event that is not JSON.") from None
    if not isinstance(data, dict):
        raise RelayError("protocol_error", "The remote relay sent an event that is not an object.")
    return RemoteEvent(seq, fields.get("event", data.get("event", "")), data)
