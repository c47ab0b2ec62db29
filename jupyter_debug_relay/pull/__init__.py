"""Copy a value out of a paused target into this process, in data formats only (see ``pull.codec``).

For Python targets (debugpy) the codec's encoder is sent into the target once and turns the value into
JSON, ``.npy`` and Arrow buffers there; the payload is fetched in base64 chunks through ``evaluate``
(clipboard context, so nothing is cut) and decoded here from data alone: nothing the target sends is
evaluated, executed or unpickled in the kernel. Other backends answer JSON text, parsed as JSON.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from ..errors import RelayError
from ..facade.handles import SessionHandle
from .codec import TARGET_SOURCE, decode_payload, json_or_text, kernel_pyarrow

DEFAULT_MAX_BYTES = 64 * 2**20
CHUNK = 4 * 2**20  # bytes of payload per evaluate round trip

_STASH = "__import__('sys').__dict__"
_CODEC = f"_jdr_pull_codec_{hashlib.sha256(TARGET_SOURCE.encode()).hexdigest()[:12]}"  # a new encoder, a new key
_ENCODER = (f"(lambda ns: ns.get('encode_payload') or exec({TARGET_SOURCE!r}, ns) or ns['encode_payload'])"
            f"({_STASH}.setdefault({_CODEC!r}, {{}}))")


def pull(session: SessionHandle, expression: str, frame_id: int | None = None,
         max_bytes: int = DEFAULT_MAX_BYTES, *, arrow: bool = True) -> Any:
    """The value of ``expression`` in the paused target, as a Python object of this process.

    ``arrow=False`` sends DataFrames in the column layout even where pyarrow (>= 14.0.1) is installed.
    """
    if not expression.strip():
        raise RelayError("invalid_request", "Name the value to pull, e.g. `pull df`.")
    if session.backend == "debugpy":
        return _pull_encoded(session, expression, frame_id, max_bytes, arrow and kernel_pyarrow() is not None)
    return json_or_text(session.evaluate(expression, frame_id, context="clipboard").value)


def _evaluate(session: SessionHandle, expression: str, frame_id: int | None) -> str:
    value = session.evaluate(expression, frame_id, context="clipboard").value
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def _pull_encoded(session: SessionHandle, expression: str, frame_id: int | None, max_bytes: int,
                  arrow: bool) -> Any:
    try:  # only compiled, never run here: it must stay one expression inside the encoder's call
        compile(expression, "<pull>", "eval")
    except SyntaxError as exc:
        raise RelayError("invalid_request", f"{expression!r} is not a Python expression: {exc.msg}.",
                         "Pull a name or an expression, e.g. `pull df` or `pull vars(obj)`.") from None
    try:
        answer = _evaluate(
            session,
            f"{_STASH}.__setitem__('_jdr_pull', {_ENCODER}(({expression}), {arrow}))"
            f" or len({_STASH}['_jdr_pull'])",
            frame_id,
        )
        if not answer.isdigit():  # debugpy answers a failed clipboard evaluation with the exception's repr
            raise RelayError("evaluation_failed", answer)
        size = int(answer)
    except RelayError as exc:
        if exc.code != "evaluation_failed":
            raise
        raise RelayError("evaluation_failed", f"Cannot pull {expression!r} from the target: {exc.message}") from None
    try:
        if size > max_bytes:
            raise RelayError(
                "invalid_request", f"{expression!r} encodes to {size:,} bytes, over the {max_bytes:,}-byte cap.",
                "Pull a part of it (e.g. `df.head(1000)`), or raise the cap with --max-bytes.",
                {"size": size, "max_bytes": max_bytes},
            )
        payload = bytearray()
        for start in range(0, size, CHUNK):
            chunk = _evaluate(
                session, f"__import__('base64').b64encode({_STASH}['_jdr_pull'][{start}:{start + CHUNK}]).decode()",
                frame_id,
            )
            try:
                payload += base64.b64decode(chunk, validate=True)
            except (binascii.Error, ValueError):
                raise RelayError("protocol_error", f"The target sent a chunk of {expression!r} that is not base64.",
                                 "Pull again; if it persists, the target is not running this version's encoder."
                                 ) from None
        if len(payload) != size:
            raise RelayError("protocol_error",
                             f"The target sent {len(payload):,} bytes of {expression!r} where it announced {size:,}.",
                             "Pull again once the target is paused; nothing may change the value during a pull.")
    finally:
        session.evaluate(f"{_STASH}.pop('_jdr_pull', None) and None", frame_id)
    return decode_payload(bytes(payload), arrow=arrow, name=expression)
