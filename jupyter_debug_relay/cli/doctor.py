"""``jupyter-debug-relay doctor``: the doctor operation's report (``operations/doctor.py``) as terminal text or JSON."""

from __future__ import annotations

import json

from ..facade.relay import Relay
from ..text import doctor_lines


def run(pythons: list[str], debugpy_folder: str | None, as_json: bool) -> int:
    """Examine, print (text or one JSON object) and return the exit code: 0 all on, 1 a feature off, 2 an error."""
    try:
        with Relay() as relay:
            report = relay.operations.call("doctor", {"pythons": pythons, "debugpy": debugpy_folder})["doctor"]
    except KeyboardInterrupt:
        return 130
    print(json.dumps(report) if as_json else "\n".join(doctor_lines(report)))
    return report["exit_code"]
