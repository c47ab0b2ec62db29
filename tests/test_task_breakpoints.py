"""A breakpoint of one asyncio task: it stops only when the task of that name runs its line (issue "Async programs
seen whole", item 3)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import line_of

from jupyter_debug_relay import RelayError
from jupyter_debug_relay.backends.dap.features import DapFeatures
from jupyter_debug_relay.backends.debugpy.backend import DebugpyBackend, task_condition
from jupyter_debug_relay.model import Breakpoint
from jupyter_debug_relay.text import breakpoint_text

TASKS = """
import asyncio


def step(i):
    return i * 2  # step


async def work(rounds):
    total = 0
    for i in range(rounds):
        total += step(i)
        await asyncio.sleep(0)
    return total


async def main():
    alpha = asyncio.create_task(work(3), name="alpha")
    beta = asyncio.create_task(work(3), name="beta")
    step(-1)  # in main's own task
    print("totals", await alpha, await beta)


step(-2)  # no loop runs yet: the task test is false, never an error
asyncio.run(main())
"""

TASK_NAME = "__import__('asyncio').current_task().get_name()"


@pytest.fixture
def tasks(write) -> str:
    return write("tasks.py", TASKS)


def _stops(session, first_timeout: float = 15) -> list[tuple[str, str]]:
    """Every stop until the end: (its task's name, ``i`` there)."""
    seen = []
    stop = session.wait_for_stop(first_timeout)
    while stop is not None:
        seen.append((session.evaluate(TASK_NAME).value, session.evaluate("i").value))
        stop = session.continue_(timeout=15)
    return seen


@pytest.mark.every_target
def test_a_task_breakpoint_stops_only_in_that_task(relay, tasks):
    bp = relay.breakpoints.add(tasks, line_of(tasks, "# step"), task="beta")
    session = relay.launch(tasks)
    assert _stops(session) == [("'beta'", "0"), ("'beta'", "1"), ("'beta'", "2")]
    assert session.state == "terminated" and "totals 6 6" in session.output().text
    shown = relay.breakpoints.get(bp.id)
    assert (shown.task, shown.condition, shown.verified) == ("beta", None, True)
    assert "failed" not in shown.message  # outside a task (no loop) the test was false, not an error


@pytest.mark.every_target
def test_a_task_breakpoint_keeps_its_own_condition(relay, tasks):
    bp = relay.breakpoints.add(tasks, line_of(tasks, "# step"), condition="i >= 1", task="beta")
    session = relay.launch(tasks)
    assert _stops(session) == [("'beta'", "1"), ("'beta'", "2")]
    shown = relay.breakpoints.get(bp.id)
    assert (shown.condition, shown.task) == ("i >= 1", "beta")  # the task test is not shown as part of it
    assert breakpoint_text(shown).endswith(" if i >= 1 --task beta — verified")


def test_a_task_is_refused_empty_or_on_another_kind(relay, tasks):
    for bad in ("", "  "):
        with pytest.raises(RelayError) as refused:
            relay.breakpoints.add(tasks, 5, task=bad)
        assert refused.value.code == "invalid_request" and "task" in str(refused.value)
    with pytest.raises(RelayError) as refused:
        relay.operations.call("add_breakpoint", {"kind": "function", "name": "step", "task": "beta"})
    assert refused.value.code == "invalid_request" and "task" in refused.value.message
    assert relay.breakpoints.list() == []


def test_the_task_test_is_false_outside_a_task_and_names_are_quoted():
    odd = "it's \"odd\"\\"
    test = compile(task_condition(odd), "<task>", "eval")
    assert eval(test) is False  # no loop runs in this thread: false, not RuntimeError

    async def named() -> bool:
        return eval(test)

    async def both() -> list[bool]:
        return list(await asyncio.gather(asyncio.create_task(named(), name=odd),
                                         asyncio.create_task(named(), name="beta")))

    assert asyncio.run(both()) == [True, False]


def test_the_magic_takes_a_task(kernel, write):
    app = write("tasks.py", TASKS)
    line = line_of(app, "# step")
    assert kernel.magic(f"%bp tasks.py:{line} if i == 2 --task beta").text.startswith(
        f"breakpoint 1 at tasks.py:{line} if i == 2 --task beta")
    assert kernel.magic("%bp list").text.startswith(f"breakpoint 1 at tasks.py:{line} if i == 2 --task beta — ")
    assert "paused at" in kernel.magic("%dbg launch tasks.py").text
    assert kernel.magic(f"%dbg eval {TASK_NAME}").text == "'beta'"
    assert kernel.magic("%dbg eval i").text == "2"
    bad = kernel.magic(f"%bp tasks.py:{line} --task").text
    assert "--task needs the name of one asyncio task" in bad


def test_a_failing_condition_of_a_task_breakpoint_is_reported_as_the_users_own(relay, tasks):
    bp = relay.breakpoints.add(tasks, line_of(tasks, "# step"), condition="missing > 0", task="beta")
    session = relay.launch(tasks)
    assert session.wait_for_stop(15) is not None
    assert session.evaluate(TASK_NAME).value == "'beta'"  # only beta's passes evaluated the condition
    shown = relay.breakpoints.get(bp.id)
    assert shown.message.startswith("the condition 'missing > 0' failed: NameError")


def test_debugpy_sends_the_task_test_then_the_users_condition_and_other_adapters_refuse_a_task():
    bp = Breakpoint(id=1, kind="line", path="/app.py", line=3, condition="i > 1", task="beta")
    assert DebugpyBackend.sent_condition(None, bp) == f"({task_condition('beta')}) and (i > 1)"  # type: ignore[arg-type]

    class Generic(DapFeatures):
        adapter_name = "lldb-vscode"
        capabilities = {"supportsConditionalBreakpoints": True}

    entries, refused = Generic()._entries([bp], "line")
    assert entries == [] and refused[0].code == "unsupported"
    assert refused[0].message == "lldb-vscode does not support breakpoints of one asyncio task (task)."
