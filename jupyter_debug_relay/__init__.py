"""A debugging toolkit inside a Jupyter kernel: debug other programs from a notebook."""

from . import dapserver  # noqa: F401  (registers the DAP server as the `expose` operation's opener)
from .backends.ray.runtime import ray_runtime_env
from .errors import BreakpointWarning, RelayError, Unsupported
from .facade.handles import DapSessionHandle, MycelSessionHandle, SessionHandle
from .facade.relay import Relay
from .version import __version__

__all__ = ["BreakpointWarning", "DapSessionHandle", "MycelSessionHandle", "Relay", "RelayError", "SessionHandle",
           "Unsupported", "__version__", "ray_runtime_env"]


def load_ipython_extension(shell) -> None:
    """``%load_ext jupyter_debug_relay``: register the magics and the comm target."""
    from .kernel import extension

    extension.load(shell)


def unload_ipython_extension(shell) -> None:
    """``%unload_ext jupyter_debug_relay``: close every session and unregister everything."""
    from .kernel import extension

    extension.unload(shell)
