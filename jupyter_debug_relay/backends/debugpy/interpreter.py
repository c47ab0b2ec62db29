"""The interpreter a launch names (``python=``): checked, lent the relay's debugpy, its virtualenv activated.

The target always runs the relay's own debugpy (``_nodelay_boot.py`` runs it from its folder,
which never joins the target's ``sys.path``), so the interpreter needs no debugpy of its own:
it needs a Python that debugpy supports. Same major.minor as the kernel runs pydevd's compiled
speedups; another supported version runs its pure-Python parts.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass

from ...errors import RelayError

OLDEST = (3, 8)  # the oldest Python the relay's debugpy runs on
PROBE = ("import json, sys; print(json.dumps({'version': list(sys.version_info[:2]), 'prefix': sys.prefix, "
         "'venv': sys.prefix != sys.base_prefix}))")


@dataclass
class Interpreter:
    """What the probe learnt of an interpreter."""

    path: str
    version: tuple[int, int]
    prefix: str
    venv: bool

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


async def probe(python: str) -> Interpreter:
    """Run ``python`` once to learn its version and prefix; say clearly when it is not a usable Python."""
    try:
        proc = await asyncio.create_subprocess_exec(
            python, "-c", PROBE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise RelayError(
            "file_not_found", f"The interpreter {python!r} cannot be run: {exc.strerror or exc}.",
            "Give the full path of a Python interpreter.", {"path": python},
        ) from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise RelayError("timeout", f"The interpreter {python!r} did not answer within 30 s.") from None
    details = {"path": python, "stderr": err.decode(errors="replace")[-500:]}
    try:
        found = json.loads(out.decode().strip().splitlines()[-1]) if proc.returncode == 0 else None
        interpreter = Interpreter(python, tuple(found["version"]), found["prefix"], bool(found["venv"]))
    except (ValueError, IndexError, KeyError, TypeError):
        raise RelayError("adapter_failed", f"{python!r} did not run as a Python interpreter (exit code "
                         f"{proc.returncode}).", "Give the path of a Python interpreter, e.g. .venv/bin/python.",
                         details) from None
    if interpreter.version < OLDEST:
        version = ".".join(map(str, interpreter.version))
        raise RelayError("adapter_failed", f"{python!r} is Python {version}; the relay's debugpy runs on Python "
                         f"{'.'.join(map(str, OLDEST))} or newer.",
                         "Launch with a newer interpreter.", {**details, "version": version})
    return interpreter
