"""Where the EZ tests find their debugservers: the stand-in always, the real `ez` (SchoolyB/EZ) when installed.

The real one is ``$JUPYTER_DEBUG_RELAY_EZ`` or ``ez`` on the PATH; where it is missing, its tests are
skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

STAND_IN = str(Path(__file__).resolve().parent / "ez")
ENV_VAR = "JUPYTER_DEBUG_RELAY_EZ"


def real_ez() -> str | None:
    """The path of the real `ez`, or None."""
    return shutil.which(os.environ.get(ENV_VAR) or "ez")


MISSING = f"the real EZ (SchoolyB/EZ) is not installed: put `ez` on the PATH or set ${ENV_VAR}"
BOTH = [
    pytest.param(STAND_IN, id="stand-in"),
    pytest.param(real_ez(), id="real-ez", marks=pytest.mark.skipif(real_ez() is None, reason=MISSING)),
]
