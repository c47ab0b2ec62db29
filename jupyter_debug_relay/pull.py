"""Copy a value out of a paused target into this process: pickle for Python targets, JSON otherwise.

The value is pickled in the target, fetched in base64 chunks through ``evaluate``
(clipboard context, so nothing is cut), and rebuilt here by an unpickler that only
admits plain data, numpy and pandas: a peer's bytes never run code in the kernel.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
from typing import Any

from .errors import RelayError
from .relay import SessionHandle

DEFAULT_MAX_BYTES = 64 * 2**20
CHUNK = 4 * 2**20  # bytes of pickle per evaluate round trip

_STASH = "__import__('sys').__dict__"
_SAFE_BUILTINS = frozenset({
    "bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list", "object", "range",
    "set", "slice", "str", "tuple", "NoneType", "Ellipsis", "NotImplemented",
})
_UNSAFE_WORDS = ("read", "load", "eval", "exec", "open", "save", "system", "to_")  # file and code entry points
_SAFE_MODULES = ("collections", "datetime", "decimal", "fractions", "uuid", "zoneinfo", "numpy", "pandas")


class _DataUnpickler(pickle.Unpickler):
    """Rebuilds plain data, numpy and pandas values; refuses every other global."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        if module == "copyreg" and name == "_reconstructor":
            return super().find_class(module, name)
        if module.split(".")[0] in _SAFE_MODULES and not any(word in name.lower() for word in _UNSAFE_WORDS):
            return super().find_class(module, name)
        raise RelayError(
            "unsupported",
            f"The value holds a {module}.{name} object, which is not plain data.",
            "Convert it in the target first, e.g. `pull vars(obj)`, `pull obj.to_dict()` or `pull list(items)`.",
        )


def pull(session: SessionHandle, expression: str, frame_id: int | None = None,
         max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The value of ``expression`` in the paused target, as a Python object of this process."""
    if not expression.strip():
        raise RelayError("invalid_request", "Name the value to pull, e.g. `pull df`.")
    if session.backend == "debugpy":
        return _pull_pickle(session, expression, frame_id, max_bytes)
    return _pull_json(session, expression, frame_id)


def _evaluate(session: SessionHandle, expression: str, frame_id: int | None) -> str:
    value = session.evaluate(expression, frame_id, context="clipboard").value
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def _pull_pickle(session: SessionHandle, expression: str, frame_id: int | None, max_bytes: int) -> Any:
    try:
        answer = _evaluate(
            session,
            f"{_STASH}.__setitem__('_jdr_pull', __import__('pickle').dumps(({expression}), 4))"
            f" or len({_STASH}['_jdr_pull'])",
            frame_id,
        )
        if not answer.isdigit():  # debugpy answers a failed clipboard evaluation with the exception's repr
            raise RelayError("invalid_request", answer)
        size = int(answer)
    except RelayError as exc:
        reason = exc.message
        raise RelayError(
            "invalid_request", f"Cannot pickle {expression!r} in the target: {reason}",
            "Pull plain data (lists, dicts, numbers, strings, numpy arrays, DataFrames), or convert it first.",
        ) from None
    try:
        if size > max_bytes:
            raise RelayError(
                "invalid_request", f"{expression!r} pickles to {size:,} bytes, over the {max_bytes:,}-byte cap.",
                "Pull a part of it (e.g. `df.head(1000)`), or raise the cap with --max-bytes.",
                {"size": size, "max_bytes": max_bytes},
            )
        blob = b"".join(
            base64.b64decode(_evaluate(
                session, f"__import__('base64').b64encode({_STASH}['_jdr_pull'][{start}:{start + CHUNK}]).decode()",
                frame_id,
            ))
            for start in range(0, size, CHUNK)
        )
    finally:
        session.evaluate(f"{_STASH}.pop('_jdr_pull', None) and None", frame_id)
    try:
        return _DataUnpickler(io.BytesIO(blob)).load()
    except RelayError:
        raise
    except Exception as exc:
        raise RelayError(
            "invalid_request", f"Cannot rebuild {expression!r} here: {exc}",
            "The kernel may lack a package the value needs (e.g. pandas); install it or convert the value first.",
        ) from None


def _pull_json(session: SessionHandle, expression: str, frame_id: int | None) -> Any:
    value = session.evaluate(expression, frame_id, context="clipboard").value
    try:
        return json.loads(value)
    except ValueError:
        return value
