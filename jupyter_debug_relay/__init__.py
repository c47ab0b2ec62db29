"""A debugging toolkit inside a Jupyter kernel: debug other programs from a notebook."""

from .errors import RelayError, Unsupported
from .relay import Relay, SessionHandle

__version__ = "0.1.0"
__all__ = ["Relay", "RelayError", "SessionHandle", "Unsupported", "__version__"]
