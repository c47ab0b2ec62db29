"""The interpreter a launch names (``python=``): checked, lent a debugpy (``lending.py``), its virtualenv activated.

The target runs a debugpy from a folder that never joins its ``sys.path`` (``_nodelay_boot.py``
runs it), so the interpreter needs no debugpy of its own: it needs a Python from 3.8 on. The probe
also notes the debugpy the interpreter has itself, if any, which the target runs when it is the
relay's own version.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass

from ...errors import RelayError

OLDEST = (3, 8)  # the oldest Python the relay's debugpy runs on
_probed: dict = {}  # (path, its file's identity) -> what the probe learnt: a launch on it does not wait for another
PROBE = """import json, os, sys
own = None
try:
    from importlib.util import find_spec
    spec = find_spec('debugpy')
    if spec is not None and spec.origin:
        folder = os.path.dirname(spec.origin)
        found = [n[8:-10] for n in os.listdir(os.path.dirname(folder)) if n.startswith('debugpy-')
                 and n.endswith('.dist-info')]
        own = [folder, found[0] if len(found) == 1 else '']
except Exception:
    pass
print(json.dumps({'version': list(sys.version_info[:2]), 'prefix': sys.prefix, 'venv': sys.prefix != sys.base_prefix,
                  'debugpy': own}))
"""


@dataclass
class Interpreter:
    """What the probe learnt of an interpreter."""

    path: str
    version: tuple[int, int]
    prefix: str
    venv: bool
    debugpy: tuple[str, str] | None = None  # its own debugpy: folder and version

    @property
    def same_version(self) -> bool:
        return self.version == sys.version_info[:2]

    def activation(self, env: dict[str, str] | None) -> dict[str, str]:
        """The variables that activate its virtualenv for the target (none outside one, or when ``env`` sets them)."""
        env = env or {}
        if not self.venv or "VIRTUAL_ENV" in env:
            return {}
        path = env.get("PATH", os.environ.get("PATH", ""))
        scripts = os.path.join(self.prefix, "bin")
        return {"VIRTUAL_ENV": self.prefix, "PATH": os.pathsep.join(p for p in (scripts, path) if p)}


def _identity(python: str) -> tuple[str, int] | None:
    """The file ``python`` runs and its modification time: what the probe's answer is kept under."""
    try:
        real = os.path.realpath(python)
        return real, os.stat(real).st_mtime_ns
    except OSError:
        return None


async def probe(python: str) -> Interpreter:
    """Learn ``python``'s version and prefix (running it the first time); say clearly when it is not a usable one."""
    identity = _identity(python)
    known = _probed.get((python, identity)) if identity else None
    if known is not None:
        return known
    interpreter = await _run_probe(python)
    if identity:
        _probed[(python, identity)] = interpreter
    return interpreter


async def run_python(python: str, args: list[str], timeout: float) -> tuple[int | None, bytes, bytes]:
    """Run ``python ARGS`` in a session of its own: its exit code, stdout and stderr; a clear error when it cannot be
    run or does not end within ``timeout`` s (then it is killed)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            python, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )
    except OSError as exc:
        raise RelayError(
            "file_not_found", f"The interpreter {python!r} cannot be run: {exc.strerror or exc}.",
            "Give the full path of a Python interpreter.", {"path": python},
        ) from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise RelayError("timeout", f"The interpreter {python!r} did not answer within {timeout:g} s.") from None
    return proc.returncode, out, err


async def _run_probe(python: str) -> Interpreter:
    returncode, out, err = await run_python(python, ["-c", PROBE], 30)
    details = {"path": python, "stderr": err.decode(errors="replace")[-500:]}
    try:
        found = json.loads(out.decode().strip().splitlines()[-1]) if returncode == 0 else None
        interpreter = Interpreter(python, tuple(found["version"]), found["prefix"], bool(found["venv"]))
        own = found.get("debugpy")
        if isinstance(own, list) and len(own) == 2:
            interpreter.debugpy = (str(own[0]), str(own[1]))
    except (ValueError, IndexError, KeyError, TypeError):
        raise RelayError("adapter_failed", f"{python!r} did not run as a Python interpreter (exit code "
                         f"{returncode}).", "Give the path of a Python interpreter, e.g. .venv/bin/python.",
                         details) from None
    if interpreter.version < OLDEST:
        version = ".".join(map(str, interpreter.version))
        raise RelayError("unsupported", f"{python!r} is Python {version}; the relay debugs Python "
                         f"{'.'.join(map(str, OLDEST))} and newer (debugpy runs on nothing older).",
                         "Launch with Python 3.8 or newer.", {**details, "version": version})
    return interpreter
