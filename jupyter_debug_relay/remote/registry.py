"""The remote relays one relay knows, by name."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import RelayError

if TYPE_CHECKING:
    from .client import Remote

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")


class Remotes:
    """Remote relays by name; each is checked (token, certificate) before it is kept."""

    def __init__(self) -> None:
        self.items: dict[str, Remote] = {}

    def get(self, name: str) -> Remote:
        remote = self.items.get(name)
        if remote is None:
            known = ", ".join(self.items) or "none yet"
            raise RelayError("invalid_request", f"There is no remote relay {name!r}.",
                             f"Known remotes: {known}. Add one with remote add NAME URL --token-file F.",
                             {"field": "on"})
        return remote

    async def add(self, name: str, url: str, token: str, fingerprint: str | None, timeout: float) -> Remote:
        if not _NAME.fullmatch(name):
            raise RelayError("invalid_request", f"{name!r} cannot name a remote: use letters, digits, '.', '_' or "
                             "'-', starting with a letter.", "e.g. remote add lab https://10.0.0.5:8765 ...",
                             {"field": "name"})
        if name in self.items:
            raise RelayError("invalid_request", f"A remote relay is already named {name!r}.",
                             f"Remove it first (remote remove {name}) or pick another name.", {"field": "name"})
        from .client import Remote  # here, not at the top: a relay with no remote never loads an HTTP client

        remote = Remote(name, url, token, fingerprint, timeout)
        try:
            await remote.check()
        except BaseException:
            await remote.close()
            raise
        self.items[name] = remote
        return remote

    async def remove(self, name: str) -> Remote:
        remote = self.get(name)
        del self.items[name]
        await remote.close()
        return remote

    async def close(self) -> None:
        for name in list(self.items):
            await self.remove(name)
