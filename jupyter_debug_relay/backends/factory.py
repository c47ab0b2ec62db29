"""Which backend each way of starting a session builds: the only place that names the concrete backends."""

from __future__ import annotations

from typing import Any

from .base import Backend, BackendEvents
from .dap import registry
from .dap.backend import DapBackend
from .debugpy.backend import DebugpyBackend
from .debugpy.by_pid import PydevdPidBackend
from .debugpy.direct import PydevdDirectBackend


def launch(request_timeout: float, *, subprocess: bool, **options: Any):
    """A launched Python target: straight to its pydevd, or through debugpy's adapter to gather children."""
    backend = DebugpyBackend if subprocess else PydevdDirectBackend
    return lambda events: backend(events, subprocess=subprocess, request_timeout=request_timeout, **options)


def attach(request_timeout: float, **options: Any):
    """A running Python process: by port through debugpy's adapter, by pid straight to the pydevd injected."""
    backend = DebugpyBackend if options.get("pid") is None else PydevdPidBackend
    return lambda events: backend(events, request_timeout=request_timeout, **options)


def ez(request_timeout: float, program: str, ez: str, cwd: str | None):
    """An EZ program under ``ez debugserver``."""
    from .ez.backend import EzBackend  # here, not at the top: a kernel that starts none never loads it

    return lambda events: EzBackend(events, program, ez=ez, cwd=cwd, request_timeout=request_timeout)


def mycel(request_timeout: float, url: str):
    """A Mycel service's debug socket."""
    from .mycel.backend import MycelBackend  # here, not at the top: it brings a WebSocket client

    return lambda events: MycelBackend(events, url, request_timeout=request_timeout)


def dap(request_timeout: float, adapter: Any, host: str | None, port: int | None, launch: dict | None,
        attach: dict | None, program: str | None, args: list[str] | None, cwd: str | None,
        env: dict[str, str] | None, stop_on_entry: bool):
    """Any DAP adapter, chosen through the adapter registry when not named."""
    options = registry.plan(adapter, host, port, launch, attach, program, args, cwd, env, stop_on_entry)
    return lambda events: DapBackend(events, request_timeout=request_timeout, **options)


def is_dap(backend: Backend) -> bool:
    """Whether the backend speaks DAP (memory, disassembly, data breakpoints, restart request)."""
    return isinstance(backend, DapBackend)


def is_mycel(backend: Backend) -> bool:
    """Whether the backend is a Mycel runtime (inspect, ready, consume, timeline)."""
    return backend.kind == "mycel"


__all__ = ["BackendEvents", "launch", "attach", "ez", "mycel", "dap", "is_dap", "is_mycel"]
