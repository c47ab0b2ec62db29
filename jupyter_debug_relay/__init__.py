"""A debugging toolkit inside a Jupyter kernel: debug other programs from a notebook.

Importing the package loads only its errors and version: a kernel that preloads the extension pays for the relay
(engine, operations, backends, servers) when it is first used. The other public names are imported when first
asked for (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import BreakpointWarning, RelayError, Unsupported
from .version import __version__

__all__ = ["BreakpointWarning", "DapSessionHandle", "MycelSessionHandle", "Relay", "RelayError", "SessionHandle",
           "Unsupported", "__version__", "ray_runtime_env"]

_LAZY = {  # public name -> the module it is imported from at first use
    "DapSessionHandle": ".facade.handles",
    "MycelSessionHandle": ".facade.handles",
    "SessionHandle": ".facade.handles",
    "Relay": ".facade.relay",
    "ray_runtime_env": ".backends.ray.runtime",
}


def __getattr__(name: str) -> Any:
    """A public name imported at first use; the facade's bring the DAP server, the ``expose`` operation's opener."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module.startswith(".facade."):
        from . import dapserver  # noqa: F401  (registers the DAP server as the `expose` operation's opener)
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazily imported ones included."""
    return sorted({*globals(), *__all__})


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext jupyter_debug_relay``: register the magics and the comm target."""
    from .kernel import extension

    extension.load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """``%unload_ext jupyter_debug_relay``: close every session and unregister everything."""
    from .kernel import extension

    extension.unload(shell)
