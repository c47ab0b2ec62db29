"""The EZ backend against the real `ez debugserver` where installed, and tests/peers/ez, which does as it does."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_debug_relay.backends.ez.backend import NO_LOCALS, EzBackend
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.model import Breakpoint, BreakpointResult, StopInfo, Thread
from jupyter_debug_relay.protocols.linejson import Line, LineReader
from jupyter_debug_relay.transports import procfs
from tests.backend_events import Recorder
from tests.peers.ez_real import BOTH, STAND_IN

HERE = Path(__file__).parent
PROGRAMS = HERE / "peers" / "ez_programs"
WAIT = 10.0


def program(name: str) -> str:
    return str(PROGRAMS / name)


def line_of(name: str, text: str) -> int:
    """The number of the first line of program ``name`` that holds ``text``."""
    for number, line in enumerate((PROGRAMS / name).read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} is not in {name}")




Body = Callable[[EzBackend, Recorder], Awaitable[None]]


def session(name: str, body: Body, *, breakpoints: tuple[Breakpoint, ...] = (), start: bool = True,
            **options: Any) -> None:
    """Run ``body`` against the peer debugging program ``name``; the backend is always closed."""

    async def main() -> None:
        events = Recorder({"child": "an EZ program has no child sessions"})
        backend = EzBackend(events, program(name), **{"ez": STAND_IN, **options})
        try:
            if start:
                await backend.start(list(breakpoints), "none")
                events.started = True
            await body(backend, events)
        finally:
            await backend.close()

    asyncio.run(asyncio.wait_for(main(), 45))


def live_peers() -> list[int]:
    """Children of this process running a debugserver that are still alive (not zombies)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        if (procfs.parent(int(entry)) == os.getpid() and procfs.state(int(entry)) != "Z"
                and b"debugserver" in procfs.read_bytes(f"/proc/{entry}/cmdline")):
            found.append(int(entry))
    return found


@pytest.fixture(autouse=True)
def no_peer_left() -> Any:
    yield
    assert live_peers() == []


def line_bp(bp_id: int, name: str, text: str, **fields: Any) -> Breakpoint:
    return Breakpoint(bp_id, "line", program(name), line_of(name, text), **fields)


async def run_to_stop(backend: EzBackend, events: Recorder, action: str = "continue") -> StopInfo:
    await backend.resume(action, 1)
    return await events.next_stop()


async def run_to_end(backend: EzBackend, events: Recorder) -> list[int | None]:
    """Continue and return the exit codes reported once the program ended."""
    await backend.resume("continue", 1)
    return await events.until(lambda: events.exits)


# -- a session as a user sees it ------------------------------------------------------------------

both = pytest.mark.parametrize("ez", BOTH)


@both
def test_the_first_stop_is_always_the_entry_where_ez_holds_and_no_leftover_stop_follows(ez: str) -> None:
    done = line_bp(1, "calls.ez", 'println("done')
    entries: list[tuple[str, int, str]] = []

    async def body(backend: EzBackend, events: Recorder) -> None:
        entry = await events.next_stop()
        assert entry.frame is not None
        entries.append((entry.reason, entry.frame.line, entry.description))
        assert events.stops == [entry]  # EZ's stops before it held were not reported
        stop = await run_to_stop(backend, events)  # the first continue runs: no leftover step stop
        assert stop.frame is not None and (stop.reason, stop.frame.line) == ("breakpoint", done.line)
        assert "y is 20\n" in events.text("stdout")

    for _ in range(10):
        session("calls.ez", body, breakpoints=(done,), ez=ez)
    first, second = line_of("calls.ez", "temp x"), line_of("calls.ez", "temp name")
    assert set(entries) == {("entry", second, f"entry at calls.ez:{second} (EZ ran line {first} before it "
                                              "could be stopped)")}


@both
def test_the_stack_starts_where_it_stopped_and_each_frame_has_its_own_variables(ez: str) -> None:
    in_add, in_loop = line_bp(7, "calls.ez", "temp total"), line_bp(8, "calls.ez", "i = i + 1")

    async def body(backend: EzBackend, events: Recorder) -> None:
        assert backend.breakpoint_results == {7: BreakpointResult(True, in_add.line),
                                              8: BreakpointResult(True, in_loop.line)}
        await events.next_stop()
        stop = await run_to_stop(backend, events)
        assert stop.frame is not None
        assert (stop.reason, stop.frame.line, stop.breakpoint_ids) == ("breakpoint", in_add.line, [7])
        frames, total = await backend.stack(1, 0, None)
        assert [(f.name, f.line) for f in frames] == [
            ("add", in_add.line),
            ("twice", line_of("calls.ez", "temp once")),
            ("main", line_of("calls.ez", "= twice(")),
        ]
        assert total == 3 and frames[0] == replace(stop.frame, id=1)
        assert (await backend.stack(1, 1, 1)) == (frames[1:2], 3)
        seen = []
        for frame in frames:
            scope, = await backend.scopes(frame.id)
            seen.append([(v.name, v.value, v.type) for v in (await backend.variables(scope.ref, 0, 100)).items])
        assert seen == [
            [("a", "10", "INTEGER"), ("b", "10", "INTEGER")],
            [("n", "10", "INTEGER")],
            [("(note)", NO_LOCALS.value, "")],  # EZ keeps no variables for main: said so, not an empty list
        ]
        stop = await run_to_stop(backend, events)
        assert stop.frame is not None
        assert (stop.reason, stop.frame.line, stop.breakpoint_ids) == ("breakpoint", in_loop.line, [8])

    session("calls.ez", body, breakpoints=(in_add, in_loop), ez=ez)


@both
def test_a_breakpoint_without_a_statement_moves_to_the_next_one_and_fires(ez: str) -> None:
    path = program("calls.ez")
    call = line_of("calls.ez", "= twice(")
    blank, comment = call - 2, call - 1

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        on_blank, on_comment, on_declaration, outside, conditional = await backend.set_breakpoints(path, [
            Breakpoint(1, "line", path, blank),
            Breakpoint(2, "line", path, comment),
            line_bp(3, "calls.ez", "do twice"),
            Breakpoint(4, "line", path, 999),
            line_bp(5, "calls.ez", 'println("i =', condition="i == 2"),
        ])
        assert on_blank == BreakpointResult(True, call, f"Moved from line {blank}, which holds no statement, "
                                                        f"to line {call}, the next one.")
        assert (on_comment.verified, on_comment.line) == (True, call) and f"line {comment}" in on_comment.message
        assert (on_declaration.verified, on_declaration.line) == (True, line_of("calls.ez", "temp once"))
        assert (outside.verified, outside.refused) == (False, True) and "999" in outside.message
        assert (conditional.verified, conditional.refused) == (False, True) and "condition" in conditional.message
        stop = await run_to_stop(backend, events)
        assert stop.frame is not None
        assert (stop.reason, stop.frame.line, stop.breakpoint_ids) == ("breakpoint", call, [1, 2])
        assert await backend.set_breakpoints(path, [line_bp(6, "calls.ez", "i = i + 1")]) == [
            BreakpointResult(True, line_of("calls.ez", "i = i + 1"))
        ]
        stop = await run_to_stop(backend, events)  # the line of breakpoint 3 is cleared: passed over
        assert stop.frame is not None and (stop.frame.line, stop.breakpoint_ids) == (line_of("calls.ez", "i = i"), [6])
        with pytest.raises(RelayError) as info:
            await backend.set_breakpoints("app.py", [Breakpoint(7, "line", "app.py", 1)])
        assert info.value.code == "unsupported"

    session("calls.ez", body, ez=ez)


@both
def test_a_breakpoint_on_a_line_ez_ran_before_it_could_be_stopped_says_so(ez: str) -> None:
    first = line_bp(1, "calls.ez", "temp x")

    async def body(backend: EzBackend, events: Recorder) -> None:
        result = backend.breakpoint_results[1]
        assert (result.verified, result.line) == (True, first.line)
        assert f"EZ ran line {first.line} before it could be stopped" in result.message

    session("calls.ez", body, breakpoints=(first,), ez=ez)


@both
def test_function_breakpoints_are_refused_on_the_breakpoint(ez: str) -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        result = backend.breakpoint_results[3]
        assert (result.verified, result.refused) == (False, True)
        assert "The EZ backend has no function breakpoints" in result.message
        assert await backend.set_function_breakpoints([Breakpoint(4, "function", name="twice")]) == [result]

    session("calls.ez", body, breakpoints=(Breakpoint(3, "function", name="add"),), ez=ez)


@both
def test_step_over_into_and_out_go_to_the_right_lines(ez: str) -> None:
    steps = [("next", "= twice("), ("stepIn", "temp once"), ("stepIn", "temp total"),
             ("next", "return total"), ("stepOut", "return once"), ("stepOut", 'println("y is')]

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        for action, text in steps:
            stop = await run_to_stop(backend, events, action)
            assert stop.frame is not None
            assert (action, stop.reason, stop.frame.line) == (action, "step", line_of("calls.ez", text))
        frames, _ = await backend.stack(1, 0, None)
        assert [(f.name, f.line) for f in frames] == [("main", line_of("calls.ez", 'println("y is'))]
        update = {"name": "a", "value": "10", "type": "INTEGER", "frameIndex": 0}
        assert ("ez", "variableUpdate", update) in events.raw

    session("calls.ez", body, ez=ez)


@both
def test_evaluate_is_unsupported_not_a_bad_request(ez: str) -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        await run_to_stop(backend, events)
        with pytest.raises(RelayError) as info:
            await backend.evaluate("a * 2", None, "repl")
        assert info.value.code == "unsupported" and "not yet implemented" in info.value.message
        assert await backend.threads() == [Thread(1, "main", stopped=True)]  # the session goes on

    session("calls.ez", body, breakpoints=(line_bp(1, "calls.ez", "temp total"),), ez=ez)


@both
def test_prints_arrive_in_order_and_the_exit_code_ends_the_session(ez: str) -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        assert await run_to_end(backend, events) == [3]  # the peer just exits, with no `exited`
        assert events.text("stdout") == "first\nsecond\nthird 3\n"
        assert events.lost == []
        with pytest.raises(RelayError) as info:
            await backend.stack(1, 0, None)
        assert info.value.code == "target_exited"

    session("exit_code.ez", body, ez=ez)


def test_a_server_that_follows_the_spec_to_the_letter_works_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EZ_PEER_STRICT", "1")
    third = line_bp(5, "exit_code.ez", 'println("third')

    async def body(backend: EzBackend, events: Recorder) -> None:
        entry = await events.next_stop()
        assert entry.frame is not None and entry.frame.line == line_of("exit_code.ez", 'println("first')
        frames, _ = await backend.stack(1, 0, None)
        assert entry.reason == "entry" and [(f.name, f.line) for f in frames] == [("main", entry.frame.line)]
        stop = await run_to_stop(backend, events)
        assert (stop.reason, stop.breakpoint_ids) == ("breakpoint", [5])
        scope, = await backend.scopes(1)
        assert [(v.name, v.value) for v in (await backend.variables(scope.ref, 0, 10)).items] == [("n", "3")]
        assert (await backend.evaluate("n * 2", None, "repl")).value == "6"
        assert await run_to_end(backend, events) == [3]
        assert events.text("stdout") == "first\nsecond\nthird 3\n"

    session("exit_code.ez", body, breakpoints=(third,))


@both
def test_a_runtime_error_ends_the_session_with_its_message(ez: str) -> None:
    division = line_bp(1, "average.ez", "return total / count")

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        stop = await run_to_stop(backend, events)
        assert stop.breakpoint_ids == [1]
        frames, _ = await backend.stack(1, 0, None)
        assert [f.name for f in frames] == ["average", "main"]
        scope, = await backend.scopes(frames[0].id)
        assert [(v.name, v.value) for v in (await backend.variables(scope.ref, 0, 10)).items] == [
            ("count", "0"), ("total", "0")]
        assert await run_to_end(backend, events) == [1]
        assert events.text("stdout") == "scores checked up to 90\n"
        assert "Runtime error: division by zero" in events.text("stderr")

    session("average.ez", body, breakpoints=(division,), ez=ez)


@both
def test_a_program_that_does_not_parse_is_a_syntax_error_with_its_line(ez: str) -> None:
    errors: list[RelayError] = []

    async def body(backend: EzBackend, events: Recorder) -> None:
        with pytest.raises(RelayError) as info:
            await backend.start([], "none")
        errors.append(info.value)

    session("broken.ez", body, start=False, ez=ez)
    error, = errors
    line = line_of("broken.ez", 'println("y is')  # EZ names the line where the `)` was due
    assert error.code == "syntax_error", error
    assert error.details["line"] == line and f"(line {line})" in error.message and "expected )" in error.message


@both
@pytest.mark.parametrize("running", [False, True], ids=["paused", "running"])
def test_terminate_ends_the_program_at_once_as_the_users_stop(ez: str, running: bool) -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        if running:
            await backend.resume("continue", 1)
            assert await backend.threads() == [Thread(1, "main", stopped=False)]
        await backend.terminate()  # EZ does not exit by itself: it is ended, and gone when this returns
        assert events.exits == [] and events.lost == []  # no exit code (not -15): the user stopped it
        assert live_peers() == []
        with pytest.raises(RelayError) as info:
            await backend.stack(1, 0, None)
        assert info.value.code == "not_running" and "stopped by the user" in info.value.message
        await backend.close()
        await backend.close()

    session("forever.ez", body, ez=ez)


# -- what goes wrong ------------------------------------------------------------------------------


def start_error(name: str, code: str, **options: Any) -> str:
    """Start program ``name`` expecting ``code``; returns the error's message."""
    messages: list[str] = []

    async def body(backend: EzBackend, events: Recorder) -> None:
        with pytest.raises(RelayError) as info:
            await backend.start([], "none")
        assert info.value.code == code, info.value
        messages.append(info.value.message)

    session(name, body, start=False, **options)
    return messages[0]


def test_a_missing_binary_is_a_connection_failure_that_names_it(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-ez")
    assert missing in start_error("calls.ez", "connection_failed", ez=missing)


def test_a_missing_program_is_file_not_found(tmp_path: Path) -> None:
    assert "nope.ez" in start_error(str(tmp_path / "nope.ez"), "file_not_found")


def test_an_ez_that_refuses_debugserver_says_why(tmp_path: Path) -> None:
    fake = tmp_path / "ez"
    fake.write_text("#!/bin/sh\necho 'ez: unknown command \"debugserver\"' >&2\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    message = start_error("calls.ez", "target_exited", ez=str(fake))
    assert "exit code 2" in message and "unknown command" in message


def test_a_silent_peer_times_out_instead_of_hanging(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EZ_PEER_SILENT", "1")
    began = time.monotonic()
    message = start_error("calls.ez", "timeout", request_timeout=0.01)  # clamped to 1 s
    assert "'initialize'" in message and "within 1 s" in message and time.monotonic() - began >= 1.0


def test_malformed_lines_are_output_and_the_session_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EZ_PEER_GARBAGE", "1")

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        stop = await run_to_stop(backend, events)
        assert stop.breakpoint_ids == [1]
        frames, _ = await backend.stack(1, 0, None)
        assert [f.name for f in frames] == ["add", "twice", "main"]
        scope, = await backend.scopes(1)
        assert [v.name for v in (await backend.variables(scope.ref, 0, 10)).items] == ["a", "b"]
        assert len(events.stops) == 2  # the `stopped` whose data is no object made no stop
        stdout = events.text("stdout")
        assert "this is not json\n" in stdout and "[1, 2, 3]\n" in stdout and "\ufffd" in stdout
        assert events.lost == []

    session("calls.ez", body, breakpoints=(line_bp(1, "calls.ez", "temp total"),))


def test_a_late_answer_is_not_taken_for_the_next_question(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EZ_PEER_DELAY", "1.2")  # the first inspection is answered 1.2 s late

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        await run_to_stop(backend, events)
        with pytest.raises(RelayError) as info:
            await backend.variables(1, 0, 10)
        assert info.value.code == "timeout"
        assert [v.value for v in (await backend.variables(1, 0, 10)).items] == ["10", "10"]
        frames, _ = await backend.stack(1, 0, None)
        assert frames[0].name == "add"

    session("calls.ez", body, breakpoints=(line_bp(1, "calls.ez", "temp total"),), request_timeout=1)


@pytest.mark.parametrize("fault, value, code, says", [
    ("EZ_PEER_HUGE", "1", "protocol_error", "more than 1048576 bytes"),  # not a hang: the line is cut short
    ("EZ_PEER_CRASH_AFTER", "2", "adapter_failed", "signal 9"),  # initialize, then the stack request
])
def test_a_peer_that_breaks_mid_session_is_lost(
    monkeypatch: pytest.MonkeyPatch, fault: str, value: str, code: str, says: str
) -> None:
    monkeypatch.setenv(fault, value)

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        with pytest.raises(RelayError) as info:
            await backend.stack(1, 0, None)
        assert info.value.code == code and says in info.value.message
        assert (await events.until(lambda: events.lost))[0] is info.value and events.exits == []

    session("calls.ez", body)


# -- line-delimited JSON --------------------------------------------------------------------------


def read_lines(chunks: list[bytes], eof: bool, max_line: int = 64) -> list[Line | Exception]:
    """What a LineReader makes of ``chunks``: lines, and the error that ended them if any."""

    async def main() -> list[Line | Exception]:
        stream = asyncio.StreamReader()
        for chunk in chunks:
            stream.feed_data(chunk)
        if eof:
            stream.feed_eof()
        reader, got = LineReader(stream, max_line), []
        try:
            while (line := await asyncio.wait_for(reader.read(), 2)) is not None:
                got.append(line)
        except RelayError as exc:
            got.append(exc)
        return got

    return asyncio.run(main())


def test_line_json_tells_messages_from_output() -> None:
    got = read_lines([b'{"type": "event"}\n[1]\nhel', b"lo\n{broken\n", b"no newline at the end"], eof=True)
    assert got == [Line('{"type": "event"}\n', {"type": "event"}), Line("[1]\n"), Line("hello\n"),
                   Line("{broken\n"), Line("no newline at the end")]


def test_line_json_refuses_an_oversized_line_before_it_ends() -> None:
    error, = read_lines([b"x" * 100], eof=False)  # no newline and no end: it must not wait for more
    assert isinstance(error, RelayError) and error.code == "protocol_error"
