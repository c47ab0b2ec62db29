"""``tasks``: a paused asyncio program's tasks on every loop, where each waits and which awaits which, read as data."""

from __future__ import annotations

import asyncio
import os

import pytest
from conftest import line_of

from jupyter_debug_relay.backends.dap.backend import DapBackend
from jupyter_debug_relay.backends.debugpy import tasks as probe
from jupyter_debug_relay.cli import operations as cli
from jupyter_debug_relay.cli.render import Printer
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.model import Variable, as_dict
from jupyter_debug_relay.server import mcp
from tests.remote_fixtures import new_remote
from tests.server_fixtures import live_server, ok

PROGRAM = """
import asyncio


async def produce(queue, count):
    for item in range(count):
        await queue.put(item)
    await asyncio.sleep(0)  # the consumer takes them
    return count  # stop: in the producer


async def consume(queue):
    while True:
        await queue.get()  # waits on the queue
        queue.task_done()


async def report(producer, queue, done):
    made = await producer  # awaits the producer
    await queue.join()
    print("made", made, flush=True)
    done.set()


async def main():
    asyncio.current_task().set_name("main")
    queue, done = asyncio.Queue(), asyncio.Event()
    async with asyncio.TaskGroup() as group:
        producer = group.create_task(produce(queue, 3), name="producer")
        consumer = group.create_task(consume(queue), name="consumer")
        group.create_task(report(producer, queue, done), name="reporter")
        await done.wait()  # main waits for the report
        consumer.cancel()


asyncio.run(main())
"""

TREE = """\
event loop 0 (on thread MainThread): 4 tasks
└── main (pending) at app.py:{main} in main() — awaits Future pending in Event.wait()
    ├── consumer (pending) at app.py:{consumer} in consume() — awaits Future pending in Queue.get()
    ├── producer (pending) at app.py:{producer} in produce() — stopped here
    └── reporter (pending) at app.py:{reporter} in report()
        └── producer (shown above)"""


def _lines(app: str) -> dict[str, int]:
    return {"main": line_of(app, "# main waits"), "consumer": line_of(app, "# waits on the queue"),
            "producer": line_of(app, "# stop"), "reporter": line_of(app, "# awaits the producer")}


@pytest.mark.every_target
def test_every_task_its_state_line_and_what_it_awaits_at_a_breakpoint_in_one_task(relay, write, capsys):
    app = write("app.py", PROGRAM)
    lines = _lines(app)
    relay.breakpoints.add(app, lines["producer"])
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.name == "produce"
    found = session.tasks()
    by_name = {task.name: task for task in found.tasks}
    assert sorted(by_name) == ["consumer", "main", "producer", "reporter"] and found.total == 4 and not found.note
    assert {task.state for task in found.tasks} == {"pending"}
    assert {name: (task.path, task.line) for name, task in by_name.items()} == {
        name: (app, line) for name, line in lines.items()}
    main, producer, consumer, reporter = (by_name[n] for n in ("main", "producer", "consumer", "reporter"))
    assert reporter.awaits == [producer.id]  # await task
    assert main.awaits == [consumer.id, producer.id, reporter.id]  # its TaskGroup's tasks
    assert producer.awaits == consumer.awaits == []
    assert [t.name for t in found.tasks if t.stopped] == ["producer"] and producer.running
    assert [(f.name, f.line) for f in producer.stack] == [("produce", lines["producer"])]
    assert consumer.future == "Future pending" and consumer.stack[-1].name == "Queue.get"
    assert consumer.stack[0].path == app and os.path.basename(consumer.stack[-1].path) == "queues.py"
    assert [(loop.thread, loop.running, loop.tasks) for loop in found.loops] == [("MainThread", True, 4)]

    answer = asyncio.run(mcp.call(relay, "operation", {"name": "tasks"}))  # MCP (through `operation`)
    assert answer == {"async_tasks": as_dict(found)}
    assert mcp.summary(answer) == TREE.format(**lines).replace("app.py", app)
    cli.show(Printer(color=False), "tasks", answer)  # the CLI's `tasks`, as it prints the answer it gets
    assert capsys.readouterr().out == TREE.format(**lines).replace("app.py", app) + "\n"
    session.continue_()  # the session goes on: the program ends as it would
    assert session.exit_code == 0 and "made 3" in session.output().text


@pytest.mark.every_target
def test_next_over_an_await_stops_at_the_coroutines_next_line_while_the_other_tasks_run(relay, write):
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# awaits the producer"))
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.name == "report"
    landed = []
    for _ in range(2):  # the producer's 3 puts and the consumer's gets run in between, then the queue's join
        stop = session.next(timeout=15)
        landed.append((stop.reason, stop.frame.name, stop.frame.line))
    assert landed == [("step", "report", line_of(app, "await queue.join()")),
                      ("step", "report", line_of(app, 'print("made"'))]
    assert session.evaluate("made").value == "3"
    session.continue_()
    assert session.exit_code == 0 and "made 3" in session.output().text


@pytest.mark.every_target
def test_a_step_out_of_a_tasks_own_coroutine_stops_in_the_task_that_awaits_it(relay, write):
    """pydevd would step out into the event loop and stop at whatever line ran next; the producer's task is awaited
    by the reporter's (``made = await producer``), which goes on at its next line once the producer is done."""
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app)
    assert session.wait_for_stop(30).frame.name == "produce"
    stop = session.step_out(timeout=15)
    assert (stop.reason, stop.frame.name, stop.frame.line) == ("step", "report", line_of(app, "await queue.join()"))
    assert session.evaluate("made").value == "3"
    session.continue_()
    assert session.exit_code == 0 and "made 3" in session.output().text


@pytest.mark.every_target
def test_the_magic_draws_the_tree_and_marks_the_stopped_task(kernel, write, target_python):
    app = write("app.py", PROGRAM)
    lines = _lines(app)
    kernel.magic(f"%bp app.py:{lines['producer']}")
    python = f"--python {target_python} " if target_python else ""
    assert "paused at app.py" in kernel.magic(f"%dbg launch {python}app.py").text
    shown = kernel.magic("%dbg tasks")
    assert shown.text == TREE.format(**lines)
    assert "<table>" in shown.html and "stopped here" in shown.html and "background:#fff3c4" in shown.html
    kernel.magic("%dbg continue")
    assert kernel.magic("%dbg tasks").text.startswith("error target_exited:")


def test_no_asyncio_is_an_empty_list_with_a_note_and_a_running_target_is_not_paused(write, capsys):
    app = write("plain.py", "import time\nprint('ready', flush=True)  # stop\ntime.sleep(30)\n")
    with live_server() as (_, client):  # the HTTP route, and the CLI's rendering of its answer
        ok(client.post("/breakpoints", json={"path": app, "line": line_of(app, "# stop")}))
        sid = ok(client.post("/sessions", json={}))["session"]["id"]
        ok(client.post(f"/sessions/{sid}/launch", json={"program": app, "timeout": 30}))
        found = ok(client.get(f"/sessions/{sid}/tasks"))
        assert found == {"async_tasks": {"tasks": [], "loops": [], "total": 0,
                                         "note": "the target has not imported asyncio"}}
        cli.show(Printer(color=False), "tasks", found)
        assert capsys.readouterr().out == "the target has not imported asyncio\n"
        ok(client.post(f"/sessions/{sid}/continue", json={"wait": False}))
        refused = client.get(f"/sessions/{sid}/tasks")
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_paused"


MANY = """
import asyncio


async def main():
    asyncio.current_task().set_name("main")
    waiting = [asyncio.create_task(asyncio.sleep(60), name=f"sleeper {n:03} " + "x" * 300) for n in range(600)]
    await asyncio.sleep(0)
    print("started", len(waiting))  # stop
    for task in waiting:
        task.cancel()


asyncio.run(main())
"""


def test_at_most_500_tasks_with_short_names_and_a_note_of_how_many_there_are(relay, write):
    app = write("many.py", MANY)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app)
    session.wait_for_stop(30)
    found = session.tasks()
    assert (len(found.tasks), found.total, found.note) == (500, 601, "the first 500 of 601 tasks")
    assert found.tasks[0].name == "main" and found.tasks[0].stopped
    assert {len(t.name) for t in found.tasks[1:]} == {probe.MAX_CHARS} and found.tasks[1].name.endswith("x…")
    assert found.tasks[1].stack[-1].name == "sleep" and found.tasks[1].future == "Future pending"
    session.terminate()


def test_a_session_on_a_remote_relay_shows_the_remote_targets_tasks(relay):
    server = new_remote()
    try:
        app = server.write("app.py", PROGRAM.lstrip())
        relay.operations.call("remote_add", {"name": "lab", "url": server.url, "token_file": str(server.token_file)})
        relay.breakpoints.add(app, line_of(app, "# stop"))
        name = relay.operations.call("launch", {"program": app, "on": "lab"})["session"].name
        assert relay.operations.call("wait", {"session": name})["stop"].frame.name == "produce"
        found = relay.get(name).tasks()
        assert sorted(t.name for t in found.tasks) == ["consumer", "main", "producer", "reporter"]
        assert [t.name for t in found.tasks if t.stopped] == ["producer"]
        relay.operations.call("terminate", {"session": name})
    finally:
        server.stop()


HOSTILE = {  # what a target answers -> what the error says
    repr("[" * 100_000): "RecursionError",
    repr("x" * (probe.MAX_ANSWER + 10)): "characters long, over the 4,000,000",
    "__import__('os').system('touch pwned')": "it is not the text of a JSON document",
    repr('{"tasks": [{"id": 1}]}'): "tasks.0.id: Input should be a valid string",
    repr('{"tasks": [], "loops": [], "total": "many", "note": ""}'): "total: Input should be a valid integer",
    repr('{"tasks": [{"id": "a", "name": "n", "state": "pending", "coroutine": "c", "awaits": ["zz"]}]}'):
        "task a names a task or a loop the answer does not list",
    repr('{"tasks": [{"id": "a", "name": "n", "state": "asleep", "coroutine": "c"}]}'): "the state 'asleep'",
    repr(repr("{}")): "JSONDecodeError: Expecting value",
}


def test_a_hostile_answer_is_one_clear_error_and_the_session_goes_on(relay, write, monkeypatch, tmp_path):
    app = write("app.py", PROGRAM)
    relay.breakpoints.add(app, line_of(app, "# stop"))
    session = relay.launch(app, cwd=str(tmp_path))
    session.wait_for_stop(30)
    told: list[str] = []
    evaluate = DapBackend.evaluate

    async def hostile(self, expression: str, frame_id: int | None, context: str) -> Variable:
        if probe.NAME not in expression:
            return await evaluate(self, expression, frame_id, context)
        return Variable("tasks", told[-1], "str")

    monkeypatch.setattr(DapBackend, "evaluate", hostile)
    for answer, said in HOSTILE.items():
        told.append(answer)
        with pytest.raises(RelayError) as caught:
            session.tasks()
        assert caught.value.code == "protocol_error", caught.value
        assert caught.value.message.startswith("The target's answer to tasks is not the list the relay asked for: ")
        assert said in caught.value.message and len(caught.value.message) < 400 and caught.value.hint
    assert not (tmp_path / "pwned").exists()
    monkeypatch.setattr(DapBackend, "evaluate", evaluate)
    session.evaluate("__import__('sys').modules.__setitem__('asyncio', object())")  # the probe raises there
    with pytest.raises(RelayError) as caught:
        session.tasks()
    assert caught.value.code == "evaluation_failed" and caught.value.message == (
        "Gathering the asyncio tasks failed in the target: AttributeError(\"'object' object has no attribute "
        "'AbstractEventLoop'\")")
    assert session.state == "paused" and session.evaluate("1 + 1").value == "2"
    session.terminate()
