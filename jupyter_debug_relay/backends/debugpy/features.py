"""What the relay makes of the boot's features in a target: the warnings of a start (``relayFeatures``), and the
checks a doctor runs on a debugpy folder and a Python without starting a program (``check_folder``)."""

from __future__ import annotations

import json
import os
from typing import Any

from ...errors import RelayError
from . import interpreter
from .boot import table

CHECK = os.path.join(os.path.dirname(__file__), "boot", "check.py")  # run by a target's Python: its features' checks
NO_REPORT = ("the target's debugpy sent no report of the relay's speed-ups (relay_messages could not be switched "
             "on): it runs as stock debugpy, correct but slower between stops")


def warnings_of(report: dict[str, Any]) -> list[str]:
    """One sentence per thing the user should know of a target's features: its debugpy outside the proven range,
    each feature that is off and why."""
    said = []
    version = report.get("debugpy")
    if isinstance(version, str) and not table.in_range(version):
        said.append(f"debugpy {version} is outside the range the relay is proven on ({table.OLDEST} to "
                    f"{table.NEWEST}): each speed-up below is checked, not proven")
    for name, why in sorted(report.get("features", {}).items()):
        if why is not None:
            feature = table.BY_NAME.get(name)
            said.append(f"{name} is off: {why}" + (f"; so {feature.off}" if feature else ""))
    return said


async def check_folder(python: str, debugpy_folder: str) -> dict[str, Any]:
    """Run the features' checks of ``debugpy_folder`` (a ``debugpy`` package) on ``python``, nothing started:
    ``{"debugpy": version, "python": version, "features": {name: None or why it is off}}``."""
    _, out, err = await interpreter.run_python(python, ["-X", "frozen_modules=off", CHECK, debugpy_folder], 60)
    try:
        return json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RelayError("adapter_failed", f"{python} could not check the debugpy in {debugpy_folder}.",
                         "Its error: " + (err.decode(errors="replace").strip().splitlines() or ["none"])[-1],
                         {"python": python, "debugpy": debugpy_folder}) from None
