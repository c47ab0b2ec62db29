"""JupyterLab's names for editor text (prefix + murmur2(text) + suffix), mapped to real files by content.

JupyterLab's debugger names the code of a cell or of a file open in its editor by a hash of the text: the
``tmpFilePrefix``, the text's murmur2 hash with the ``hashSeed`` that ``debugInfo`` answered, and the
``tmpFileSuffix``. A target runs real files, so a breakpoint on such a name is bound to the file whose text has that
hash, and a stop in a file whose hash JupyterLab knows is told under that name, which lights the editor's line.
Files are only read and hashed here, never run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

M = 0x5BD1E995
SEED = 0xC70F6907  # ipykernel's seed (ipykernel.compiler.get_tmp_hash_seed), told to JupyterLab by debugInfo
MAX_BYTES = 4 << 20  # a larger file is not hashed
MAX_FILES = 4000  # files looked at in one search of the folders
MAX_DEPTH = 4
SKIPPED = frozenset({"node_modules", "__pycache__", "site-packages", "dist-packages", ".git", ".venv", "venv",
                     ".tox", ".ipynb_checkpoints"})


def murmur2(text: str, seed: int = SEED) -> int:
    """The 32-bit MurmurHash2 of ``text``'s UTF-8 bytes, as JupyterLab's debugger (hash.ts) and ipykernel compute it."""
    data = text.encode("utf-8")
    length = len(data)
    h = (seed ^ length) & 0xFFFFFFFF
    end = length & ~3
    for i in range(0, end, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * M) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * M) & 0xFFFFFFFF
        h = ((h * M) & 0xFFFFFFFF) ^ k
    tail = length & 3
    if tail:
        h ^= int.from_bytes(data[end:], "little")
        h = (h * M) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * M) & 0xFFFFFFFF
    h ^= h >> 15
    return h


class EditorPaths:
    """The hashed names one kernel answers JupyterLab with, and which real file each stands for."""

    def __init__(self, prefix: str, suffix: str = ".py", seed: int = SEED) -> None:
        self.prefix, self.suffix, self.seed = prefix, suffix, seed
        self.texts: dict[str, str] = {}  # hashed name -> the text an editor sent (dumpCell)
        self.real: dict[str, str] = {}  # hashed name -> the real file of that text
        self.shown: dict[str, str] = {}  # real file -> the hashed name a stop in it is told under
        self._hashes: dict[str, tuple[int, int, set[int]]] = {}  # file -> (mtime_ns, size, its text's hashes)

    def name(self, text: str) -> str:
        """The name JupyterLab gives ``text``."""
        return f"{self.prefix}{murmur2(text, self.seed)}{self.suffix}"

    def is_hashed(self, path: str) -> bool:
        """Whether ``path`` is a name of editor text rather than a file."""
        middle = path[len(self.prefix):len(path) - len(self.suffix)] if self.suffix else path[len(self.prefix):]
        return path.startswith(self.prefix) and path.endswith(self.suffix) and middle.isdigit()

    def dumped(self, text: str) -> str:
        """Keep an editor's text (dumpCell); its name."""
        name = self.name(text)
        self.texts[name] = text
        return name

    def inward(self, path: str, folders: Iterable[str], files: Iterable[str] = ()) -> str | None:
        """The real file a name stands for: a file among ``files`` or under ``folders`` whose text has its hash
        (None when none has); a path that is not a hashed name is itself."""
        if not self.is_hashed(path):
            return path
        known = self.real.get(path)
        wanted = int(path[len(self.prefix):len(path) - len(self.suffix)])
        if known is not None and wanted in self._hash_of(known):
            return known
        for candidate in self._candidates(folders, files):
            if wanted in self._hash_of(candidate):
                self.real[path] = candidate
                self.shown[candidate] = path
                return candidate
        return None

    def outward(self, path: str | None) -> str | None:
        """The name a stop in ``path`` is told under: the hashed name of an editor showing it, else the path."""
        if path is None:
            return None
        name = self.shown.get(path)
        if name is not None and int(name[len(self.prefix):len(name) - len(self.suffix)]) in self._hash_of(path):
            return name
        return path

    def _hash_of(self, path: str) -> set[int]:
        """The hashes of a file's text as an editor holds it (as read, and with its line ends made ``\\n``)."""
        try:
            st = os.stat(path)
        except OSError:
            return set()
        cached = self._hashes.get(path)
        if cached is not None and cached[:2] == (st.st_mtime_ns, st.st_size):
            return cached[2]
        found: set[int] = set()
        if st.st_size <= MAX_BYTES:
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                text = None
            if text is not None:
                found = {murmur2(text, self.seed), murmur2(text.replace("\r\n", "\n"), self.seed)}
        self._hashes[path] = (st.st_mtime_ns, st.st_size, found)
        return found

    def _candidates(self, folders: Iterable[str], files: Iterable[str]) -> Iterable[str]:
        """``files``, then the files with the suffix under ``folders`` (bounded in depth and count)."""
        seen: set[str] = set()
        for path in files:
            path = os.path.abspath(path)
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                yield path
        count = 0
        for folder in dict.fromkeys(os.path.abspath(f) for f in folders):
            base = folder.count(os.sep)
            for root, dirs, names in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith("."))
                if root.count(os.sep) - base >= MAX_DEPTH:
                    dirs[:] = []
                for name in sorted(names):
                    path = os.path.join(root, name)
                    if not name.endswith(self.suffix) or path in seen:
                        continue
                    seen.add(path)
                    count += 1
                    if count > MAX_FILES:
                        return
                    yield path
