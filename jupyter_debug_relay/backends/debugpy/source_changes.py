"""Whether a Python frame's file changed on disk since the target loaded it (the text shown is then not the code run).

A file modified before the target started is what it runs. A later change is checked against the
modification time the boot noted as the module's code was read (``LOADED`` in ``_nodelay_boot.py``);
a file the boot did not see load (the main script, an attached process's files) counts as loaded when
the target started.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable

BOOT_MODULE = "_jupyter_debug_relay_boot"  # _nodelay_boot.py registers itself under this name


def loaded_expression(path: str) -> str:
    """What to evaluate in the target for the mtime the boot noted for ``path`` (None when it did not)."""
    return f"getattr(__import__('sys').modules.get({BOOT_MODULE!r}), 'LOADED', {{}}).get({path!r})"


async def change_note(path: str | None, started_ns: int | None,
                      loaded: Callable[[str], Awaitable[int | None]]) -> str:
    """A sentence when ``path`` changed since the target loaded it ("" when not, or when it cannot be told)."""
    if not path or started_ns is None:
        return ""
    try:
        modified = os.stat(path).st_mtime_ns
    except OSError:
        return ""
    if modified <= started_ns:
        return ""
    noted = await loaded(path)
    if noted is not None and noted == modified:
        return ""
    when = time.strftime("%H:%M:%S", time.localtime(modified / 1e9))
    return (f"{os.path.basename(path)} changed on disk at {when}, after the target loaded it: the source shown "
            "is the new text, the code running is the old")
