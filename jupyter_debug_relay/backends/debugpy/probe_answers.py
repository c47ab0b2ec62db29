"""What a probe run in a Python target answers, read as data: the repr ``evaluate`` gives of a JSON text.

The repr is read with ``ast.literal_eval`` (a string literal, nothing else), the text with ``json.loads``; nothing
the target answers is run in the kernel. ``tasks.py``, ``recording.py`` and the backend's looks at the boot use it.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from pydantic import ValidationError


def json_answer(value: str, limit: int) -> Any:
    """The JSON document whose text's repr is ``value``; ``ValueError`` saying why where it is none (or longer than
    ``limit`` characters)."""
    if len(value) > limit:
        raise ValueError(f"it is {len(value):,} characters long, over the {limit:,} the relay reads")
    try:
        text = ast.literal_eval(value) if value[:1] in ("'", '"') else None
        if not isinstance(text, str):
            raise ValueError("it is not the text of a JSON document")
        return json.loads(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(f"{type(exc).__name__}: {str(exc)[:200]}") from None


def misfit(error: ValidationError) -> str:
    """Where an answer does not fit its declared shape, and how: the first of pydantic's errors."""
    first = error.errors()[0]
    return f"{'.'.join(str(part) for part in first['loc']) or 'the answer'}: {first['msg']}"
