"""nbval over the tutorial notebooks: cells tagged ``needs-ez`` are skipped, with the reason, where `ez` is missing,
and cells tagged ``needs-ray`` where Ray is missing or the network has more than loopback (Ray then uses the
machine's address); the sessions they start are recorded in a
temporary session store.

Their stored outputs come from a run against the real EZ (SchoolyB/EZ), so they are checked where it
is installed and skipped (not failed) where it is not.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import socket
import tempfile

import pytest

# The notebooks' sessions are recorded in a folder of this run, not the user's store (kernels inherit it).
os.environ["JUPYTER_DEBUG_RELAY_HOME"] = tempfile.mkdtemp(prefix="jdr-notebooks-")
atexit.register(shutil.rmtree, os.environ["JUPYTER_DEBUG_RELAY_HOME"], True)

NEEDS_EZ = "needs-ez"
NO_EZ = "there is no `ez` command on the PATH: the EZ cells need the real EZ (github.com/SchoolyB/EZ)"


NEEDS_RAY = "needs-ray"
NO_RAY = "Ray is not installed: pip install -e \".[ray]\" in the clone (make setup does)"
NOT_LOOPBACK = ("the Ray cells run inside a network namespace with only loopback (Ray uses the machine's address "
                "otherwise): unshare --net, then ip link set lo up")


def _ray_missing() -> str | None:
    """Why the ``needs-ray`` cells cannot run here, or None."""
    if importlib.util.find_spec("ray") is None:
        return NO_RAY
    if [name for _, name in socket.if_nameindex()] != ["lo"]:
        return NOT_LOOPBACK
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the ``needs-ez`` cells skipped when `ez` is not on the PATH, the ``needs-ray`` ones when Ray cannot run."""
    reasons = {NEEDS_EZ: None if shutil.which("ez") is not None else NO_EZ, NEEDS_RAY: _ray_missing()}
    for item in items:
        cell = getattr(item, "cell", None)
        tags = cell.get("metadata", {}).get("tags", []) if cell is not None else []
        for tag, reason in reasons.items():
            if reason and tag in tags:
                item.add_marker(pytest.mark.skip(reason=reason))
