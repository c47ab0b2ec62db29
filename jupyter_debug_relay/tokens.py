"""Files that hand a server's address and token to the same user: mode 0600 in the Jupyter runtime dir."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any


def write_token_file(name: str, data: dict[str, Any]) -> str:
    """Write ``data`` as JSON to ``name`` in the Jupyter runtime dir, readable by this user only; its path."""
    from jupyter_core.paths import jupyter_runtime_dir

    folder = jupyter_runtime_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    return path


def remove_token_file(path: str | None) -> None:
    if path:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
