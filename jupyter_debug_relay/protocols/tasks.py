"""Background tasks whose failure is always retrieved, and the relay loop's handler for anything that slips by.

A task made by ``spawn`` hands its exception to its owner (``on_error``) or to the log; nothing
reaches asyncio's "Task exception was never retrieved", which a kernel would print into a cell.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)
# The package logs; where that goes is the application's choice. Without a handler of its own,
# Python's last-resort handler would print warnings to stderr, i.e. into a notebook cell.
logging.getLogger("jupyter_debug_relay").addHandler(logging.NullHandler())

ErrorHandler = Callable[[BaseException], None]


def spawn(coro: Coroutine[Any, Any, Any], keep: set[asyncio.Task[Any]], on_error: ErrorHandler | None = None,
          name: str | None = None) -> asyncio.Task[Any]:
    """Run ``coro`` as a task held in ``keep`` until it ends; its exception goes to ``on_error``, else to the log."""
    task = asyncio.get_running_loop().create_task(coro, name=name)
    keep.add(task)

    def done(task: asyncio.Task[Any]) -> None:
        keep.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        try:
            if on_error is None:
                log.error("background task %s failed", task.get_name(), exc_info=error)
            else:
                on_error(error)
        except Exception:
            log.exception("handling the failure of task %s failed", task.get_name())

    task.add_done_callback(done)
    return task


def log_loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The relay loop's exception handler: what asyncio would print to stderr goes to the log instead."""
    error = context.get("exception")
    log.error("relay loop: %s", context.get("message") or "unhandled exception",
              exc_info=error if isinstance(error, BaseException) else None)
