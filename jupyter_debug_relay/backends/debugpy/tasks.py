"""``tasks`` on a Python target: ``_tasks_probe.py`` run in the stopped frame, its JSON answer read as data only.

The expression sent runs the probe's text in a namespace of its own and calls its ``gather``; ``evaluate`` in
clipboard context gives the repr of the JSON text whole (or, typed with its class, of the exception the probe
raised). That repr is read with ``ast.literal_eval`` (a string literal, nothing else), the text with ``json.loads``,
and the data checked against the model: whatever the target answers, the relay runs nothing of it, and an answer
that does not fit is one clear ``protocol_error``.
"""

from __future__ import annotations

import functools
import os

from pydantic import TypeAdapter, ValidationError

from ...errors import RelayError
from ...model import AsyncTasks
from . import probe_answers

PROBE = os.path.join(os.path.dirname(__file__), "_tasks_probe.py")
NAME = "<jupyter_debug_relay tasks>"  # the probe's file name in the target's frames
MAX_TASKS = 500  # tasks described, at most
MAX_CHARS = 120  # characters of a name, a coroutine, a future or an exception
MAX_ANSWER = 4_000_000  # characters of the answer's text the relay reads
STATES = ("pending", "done", "cancelled")
_ANSWER = TypeAdapter(AsyncTasks)


@functools.cache
def expression() -> str:
    """What to evaluate in the stopped frame: the probe's text run in a namespace of its own, then its ``gather``."""
    with open(PROBE, encoding="utf-8") as f:
        source = f.read()
    builtins = "__import__('builtins')"
    return (f"(lambda n: ({builtins}.exec({builtins}.compile({source!r}, {NAME!r}, 'exec'), n), "
            f"n['gather']({MAX_TASKS}, {MAX_CHARS}))[1])({{'__name__': '_jupyter_debug_relay_tasks'}})")


def parse(value: str) -> AsyncTasks:
    """The probe's answer, as ``evaluate`` gives it (the repr of its JSON text), read as the model."""
    try:
        found = _ANSWER.validate_python(probe_answers.json_answer(value, MAX_ANSWER))
    except ValueError as exc:  # pydantic's ValidationError is one
        raise _unfit(probe_answers.misfit(exc) if isinstance(exc, ValidationError) else str(exc)) from None
    if len(found.tasks) > MAX_TASKS:
        raise _unfit(f"it lists {len(found.tasks):,} tasks, over the {MAX_TASKS} asked for")
    ids = {task.id for task in found.tasks}
    for task in found.tasks:
        if task.state not in STATES:
            raise _unfit(f"task {task.id} has the state {task.state[:40]!r}, none of {', '.join(STATES)}")
        if not ids.issuperset(task.awaits) or not 0 <= task.loop < max(1, len(found.loops)):
            raise _unfit(f"task {task.id} names a task or a loop the answer does not list")
    return found


def failed(said: str) -> RelayError:
    """``evaluation_failed`` saying what the probe raised in the target (``said``), without the probe's text."""
    said = said[:300]
    return RelayError("evaluation_failed", f"Gathering the asyncio tasks failed in the target: {said}",
                      "The program may have replaced part of asyncio; look at its tasks with evaluate, e.g. "
                      "asyncio.all_tasks(asyncio.get_running_loop()).", {"adapter_message": said})


def _unfit(why: str) -> RelayError:
    return RelayError("protocol_error", f"The target's answer to tasks is not the list the relay asked for: {why}.",
                      "The session is unchanged; the program may have replaced json or asyncio. Look at its tasks "
                      "with evaluate, e.g. asyncio.all_tasks(asyncio.get_running_loop()).")
