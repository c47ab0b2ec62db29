"""nbval over the tutorial notebooks: cells tagged ``needs-ez`` are skipped, with the reason, where `ez` is missing;
the sessions they start are recorded in a temporary session store.

Their stored outputs come from a run against the real EZ (SchoolyB/EZ), so they are checked where it
is installed and skipped (not failed) where it is not.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

# The notebooks' sessions are recorded in a folder of this run, not the user's store (kernels inherit it).
os.environ["JUPYTER_DEBUG_RELAY_HOME"] = tempfile.mkdtemp(prefix="jdr-notebooks-")
atexit.register(shutil.rmtree, os.environ["JUPYTER_DEBUG_RELAY_HOME"], True)

NEEDS_EZ = "needs-ez"
NO_EZ = "there is no `ez` command on the PATH: the EZ cells need the real EZ (github.com/SchoolyB/EZ)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the ``needs-ez`` cells skipped when `ez` is not on the PATH."""
    if shutil.which("ez") is not None:
        return
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is not None and NEEDS_EZ in cell.get("metadata", {}).get("tags", []):
            item.add_marker(pytest.mark.skip(reason=NO_EZ))
