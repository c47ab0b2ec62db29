"""Breakpoint sets on disk: the home folder, named profiles and a server's saved set, written atomically."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import RelayError
from ..model import Breakpoint

HOME_ENV = "JUPYTER_DEBUG_RELAY_HOME"
SAVED = "breakpoints.json"  # a standalone server's own breakpoints, saved on every change
SPEC_FIELDS = ("kind", "path", "line", "name", "flow", "stage", "rule_index", "condition", "hit_condition",
               "log_message", "task", "enabled", "content")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_THREAD_LOCK = threading.Lock()


def home() -> Path:
    """``$JUPYTER_DEBUG_RELAY_HOME``, else ``debug_relay/`` in the Jupyter data dir."""
    given = os.environ.get(HOME_ENV)
    if given:
        return Path(given).expanduser()
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "debug_relay"


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the folder's lock: one writer at a time, across threads and processes."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with _THREAD_LOCK, open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_json(path: Path, data: Any, indent: int | None = 1) -> None:
    """Write ``data`` to ``path`` whole or not at all: a temporary file in the same folder, then a rename.
    ``indent=None`` writes it on one line, four times as fast (json's C encoder only takes that)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=indent)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def read_json(path: Path) -> Any:
    """The JSON in ``path``; ``invalid_request`` naming the file when it is not JSON."""
    try:
        return json.loads(path.read_text())
    except ValueError as exc:
        raise RelayError("invalid_request", f"{path} is not valid JSON: {exc}.",
                         "Fix or delete the file; it is written again on the next save.") from None


def spec(bp: Breakpoint | dict[str, Any]) -> dict[str, Any]:
    """What it takes to make ``bp`` again: its kind, place, conditions and whether it is on (no id, no status)."""
    fields = {key: bp.get(key) if isinstance(bp, dict) else getattr(bp, key) for key in SPEC_FIELDS}
    return {key: value for key, value in fields.items() if value is not None}


class ProfileStore:
    """Named breakpoint sets (``profiles/NAME.json``) and a server's saved set (``breakpoints.json``) in a home."""

    def __init__(self, root: Path | str | None = None) -> None:
        self._root = Path(root) if root else None

    @property
    def root(self) -> Path:
        """The home given, else the home as the environment says now."""
        return self._root or home()

    @property
    def folder(self) -> Path:
        return self.root / "profiles"

    def _path(self, name: str) -> Path:
        if not isinstance(name, str) or not _NAME.match(name):
            raise RelayError("invalid_request", f"{name!r} is not a profile name.",
                             "Use letters, digits, '.', '_' and '-' (up to 64), starting with a letter or digit.",
                             {"field": "name"})
        return self.folder / f"{name}.json"

    def names(self) -> list[str]:
        """The saved profiles' names, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json") if _NAME.match(p.stem))

    def load(self, name: str) -> dict[str, Any]:
        """A profile: ``{"name", "breakpoints": [spec...], "exceptions"}``; ``not_found`` when there is none."""
        path = self._path(name)
        if not path.is_file():
            known = ", ".join(self.names()) or "none yet"
            raise RelayError("not_found", f"There is no breakpoint profile {name!r}.",
                             f"Saved profiles: {known}. Save one with PUT /breakpoint-profiles/{name}.")
        return {"name": name, **read_json(path)}

    def save(self, name: str, breakpoints: list[dict[str, Any]], exceptions: str) -> dict[str, Any]:
        """Keep ``breakpoints`` (specs) and the exception mode under ``name``, replacing what was there."""
        path = self._path(name)
        with locked(self.root):
            write_json(path, {"breakpoints": breakpoints, "exceptions": exceptions})
        return {"name": name, "breakpoints": breakpoints, "exceptions": exceptions}

    def saved(self) -> dict[str, Any] | None:
        """The server's saved set, or None before the first save."""
        path = self.root / SAVED
        return read_json(path) if path.is_file() else None

    def keep(self, breakpoints: list[dict[str, Any]], exceptions: str) -> None:
        """Write the server's set (on every change)."""
        with locked(self.root):
            write_json(self.root / SAVED, {"breakpoints": breakpoints, "exceptions": exceptions})
