"""The runtime environment a Ray job is started with so that its tasks can be debugged from the relay."""

from __future__ import annotations

from typing import Any

from .worker import HOOK, WAIT


def ray_runtime_env(post_mortem: bool = True, join: bool = True, join_wait: float = 0.0, **extra: Any
                    ) -> dict[str, Any]:
    """A ``runtime_env`` for ``ray.init`` or ``.options``: ``breakpoint()`` waits for the relay (``RAY_DEBUG=1``);
    with ``post_mortem``, a task that raises waits too, so its session stops on the exception; with ``join``, each
    worker listens with debugpy when it starts, so a relay watching the cluster with ``join`` attaches to it and a
    notebook breakpoint stops its tasks. A worker starts its first task at once; ``join_wait`` makes it wait that many
    seconds at most for the relay to attach first, so that task stops at a breakpoint too.

    ``extra`` is merged in (its ``env_vars`` beside these; a ``worker_process_setup_hook`` of its own replaces the
    joining one).
    """
    env_vars = {"RAY_DEBUG": "1", **({"RAY_DEBUG_POST_MORTEM": "1"} if post_mortem else {}),
                **({WAIT: f"{join_wait:g}"} if join and join_wait else {}), **extra.pop("env_vars", {})}
    return {**({"worker_process_setup_hook": HOOK} if join else {}), **extra, "env_vars": env_vars}
