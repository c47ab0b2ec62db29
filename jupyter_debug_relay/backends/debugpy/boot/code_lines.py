"""Feature ``code_lines_cache``: the code lines of a breakpoint file, as pydevd works them out, kept between launches.

pydevd checks a breakpoint's line (``pydevd_api._get_code_lines``) by compiling the whole file it is in, at
every launch, before the program runs: 100 ms of the target's CPU for a 2,000-line test file on Python 3.13
(the boot asks here only for files of ``KEEP_FROM`` bytes or more: a smaller one compiles faster than this loads).
The answer depends only on the file's text and the Python that compiles it, so it is kept in the user's cache
(``$XDG_CACHE_HOME/jupyter-debug-relay/code-lines``, a folder only its owner reaches), one JSON list of line
numbers per file, its name a hash of the file's path, size, modification time and the Python's version. A kept
answer that is not a list of line numbers is worked out again; nothing read from the cache is ever run.
"""

import json
import os
import stat
import sys

KEPT = 400  # answers kept; past that, the older half goes
KEEP_FROM = 16_000  # bytes of a file whose code lines are kept between launches (about 10 ms to compile)


def apply(change, boot) -> None:  # noqa: ANN001 - changes.Changes, the boot module
    api = change.module("_pydevd_bundle.pydevd_api")
    compute = api._get_code_lines

    def _get_code_lines(code):  # noqa: ANN001, ANN202 - pydevd's signature: a code object or a file's path
        try:
            big = isinstance(code, str) and os.path.getsize(code) >= KEEP_FROM
        except OSError:
            big = False
        return lines_of(code, compute) if big else compute(code)

    change.replace(api, "_get_code_lines", _get_code_lines)


def folder() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jupyter-debug-relay", "code-lines")


def private(path: str) -> bool:
    """Whether ``path`` is a folder of this user's that no one else can write to (made so when missing)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o022


def key(path: str) -> str:
    """The file's name in the cache (raises OSError if ``path`` cannot be read)."""
    import hashlib  # here: a launch setting no breakpoint in a big file never needs it

    found = os.stat(path)
    what = f"{os.path.realpath(path)}\0{found.st_size}\0{found.st_mtime_ns}\0{sys.version}"
    return hashlib.sha256(what.encode("utf-8", "surrogateescape")).hexdigest() + ".json"


def lines_of(path: str, compute) -> list:  # noqa: ANN001 - pydevd's _get_code_lines
    """The code lines of the file ``path``: kept, or ``compute(path)`` (then kept)."""
    where = folder()
    try:
        kept = os.path.join(where, key(path))
    except OSError:
        return list(compute(path))  # pydevd says what is wrong with the file
    if not private(where):
        return list(compute(path))
    try:
        with open(kept, encoding="utf-8") as f:
            lines = json.load(f)
        if isinstance(lines, list) and all(type(line) is int for line in lines):
            return lines
    except (OSError, ValueError):
        pass
    lines = sorted(set(compute(path)))
    keep(where, kept, lines)
    return lines


def keep(where: str, kept: str, lines: list) -> None:
    try:
        scratch = os.path.join(where, f".{os.getpid()}.{os.urandom(6).hex()}.tmp")
        with os.fdopen(os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
            json.dump(lines, f)
        os.replace(scratch, kept)
        names = [os.path.join(where, name) for name in os.listdir(where) if name.endswith(".json")]
        if len(names) > KEPT:
            for old in sorted(names, key=os.path.getmtime)[: len(names) // 2]:
                os.unlink(old)
    except OSError:
        pass  # a full disk or a race with another launch: the answer was worked out all the same
