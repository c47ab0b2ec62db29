"""Secrets masked in what agents see (the masking itself lives in ``jupyter_debug_relay.redact``, below every layer)."""

from ..redact import REDACTED, mask, mask_args, mask_text, secret_name

__all__ = ["REDACTED", "mask", "mask_args", "mask_text", "secret_name"]
