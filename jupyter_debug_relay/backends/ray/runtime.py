"""The runtime environment a Ray job is started with so that its tasks can be debugged from the relay."""

from __future__ import annotations

from typing import Any


def ray_runtime_env(post_mortem: bool = True, **extra: Any) -> dict[str, Any]:
    """A ``runtime_env`` for ``ray.init`` or ``.options``: ``breakpoint()`` waits for the relay (``RAY_DEBUG=1``) and,
    with ``post_mortem``, a task that raises waits too, so its session stops on the exception.

    ``extra`` is merged in (its ``env_vars`` beside these).
    """
    env_vars = {"RAY_DEBUG": "1", **({"RAY_DEBUG_POST_MORTEM": "1"} if post_mortem else {}),
                **extra.pop("env_vars", {})}
    return {**extra, "env_vars": env_vars}
