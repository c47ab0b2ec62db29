"""Runs in each Ray worker of a job started with ``ray_runtime_env()``: the worker listens with debugpy at start.

Ray's own ``set_trace`` opens the same port (on the node's address, recorded in the cluster's worker table) only
when a ``breakpoint()`` is reached; opening it when the worker starts, without waiting for a client, lets a relay
that watches the cluster attach to the worker beforehand and send it the notebook's breakpoints.
"""

from __future__ import annotations

import os
import time

HOOK = f"{__name__}.join"
WAIT = "JUPYTER_DEBUG_RELAY_RAY_JOIN_WAIT"  # seconds a starting worker waits for the relay; 0, the default: none


def join() -> None:
    """The job's ``worker_process_setup_hook``: listen on the node's address, port 0, and record the port; with
    ``JUPYTER_DEBUG_RELAY_RAY_JOIN_WAIT`` set, wait that long at most for the relay to attach."""
    import debugpy
    from ray.util import debugpy as ray_debugpy  # Ray's helper: its lock, its address, set_debugger_port

    ray_debugpy._ensure_debugger_port_open_thread_safe()
    ray_debugpy._override_breakpoint_hooks()  # listening made breakpoint() debugpy's, which waits for nobody
    deadline = time.monotonic() + float(os.environ.get(WAIT) or 0)
    while not debugpy.is_client_connected() and time.monotonic() < deadline:
        time.sleep(0.05)
