"""Every verb declared once (parameters, result, errors, capability) and the dispatcher that runs them."""

from .dispatch import Dispatcher, operation, parse
from .table import OPERATIONS, Operation

__all__ = ["OPERATIONS", "Dispatcher", "Operation", "operation", "parse"]
