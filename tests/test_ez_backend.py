"""The EZ backend against tests/peers/ez, a stand-in for `ez debugserver` that is as loose as the real one."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from jupyter_debug_relay.backends.ez import EzBackend
from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.model import Breakpoint, BreakpointResult, StopInfo, Thread
from jupyter_debug_relay.protocols.linejson import Line, LineReader

HERE = Path(__file__).parent
PEER = str(HERE / "peers" / "ez")
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


class Recorder:
    """A BackendEvents that records what the backend reports and lets a test await it."""

    def __init__(self) -> None:
        self.stops: list[StopInfo] = []
        self.output: list[tuple[str, str]] = []
        self.exits: list[int | None] = []
        self.lost: list[Exception] = []
        self.raw: list[tuple[str, str, dict[str, Any]]] = []
        self.started = False  # set once start() returned
        self.early_stops = 0  # stops reported before start() returned
        self._taken = 0
        self._changed = asyncio.Event()

    def _record(self, into: list[Any], item: Any) -> None:
        into.append(item)
        self._changed.set()

    def on_stopped(self, stop: StopInfo) -> None:
        self.early_stops += not self.started
        self._record(self.stops, stop)

    def on_continued(self, thread_id: int | None) -> None:
        pass

    def on_output(self, category: str, text: str) -> None:
        self._record(self.output, (category, text))

    def on_thread(self, thread_id: int, reason: str) -> None:
        pass

    def on_breakpoint(self, bp_id: int, result: BreakpointResult) -> None:
        pass

    def on_exited(self, exit_code: int | None) -> None:
        self._record(self.exits, exit_code)

    def on_raw(self, protocol: str, name: str, body: dict[str, Any]) -> None:
        self._record(self.raw, (protocol, name, body))

    def on_child(self, factory: Any, name: str) -> None:
        raise AssertionError("an EZ program has no child sessions")

    def on_lost(self, error: Exception) -> None:
        self._record(self.lost, error)

    async def until(self, what: Callable[[], Any], timeout: float = WAIT) -> Any:
        """Wait until ``what()`` is true and return it; fail after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (result := what()):
            if loop.time() >= deadline:
                raise AssertionError(f"still waiting after {timeout} s; output {self.output}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), deadline - loop.time())
            except asyncio.TimeoutError:
                pass
        return result

    async def next_stop(self, timeout: float = WAIT) -> StopInfo:
        await self.until(lambda: len(self.stops) > self._taken, timeout)
        self._taken += 1
        return self.stops[self._taken - 1]

    def text(self, category: str) -> str:
        return "".join(text for cat, text in self.output if cat == category)


Body = Callable[[EzBackend, Recorder], Awaitable[None]]


def session(name: str, body: Body, *, breakpoints: tuple[Breakpoint, ...] = (), start: bool = True,
            **options: Any) -> None:
    """Run ``body`` against the peer debugging program ``name``; the backend is always closed."""

    async def main() -> None:
        events = Recorder()
        backend = EzBackend(events, program(name), **{"ez": PEER, **options})
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
    for entry in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, NotADirectoryError):
            continue
        state, ppid = status.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and state != "Z" and b"debugserver" in cmdline:
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


def test_it_stops_on_entry_even_before_initialize_is_answered() -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        stop = await events.next_stop()
        assert (stop.reason, stop.thread_id) == ("entry", 1)
        assert stop.frame is not None
        assert (stop.frame.path, stop.frame.line) == (program("calls.ez"), line_of("calls.ez", "temp x = 10"))
        assert events.early_stops == 1  # the peer said `stopped` before `initialized`; start() went on
        assert await backend.threads() == [Thread(1, "main", stopped=True)]
        frames, total = await backend.stack(1, 0, None)  # the peer lists no frame at top level
        assert [(f.name, f.line) for f in frames] == [("main", stop.frame.line)] and total == 1

    session("calls.ez", body)


def test_breakpoints_stop_at_their_lines_with_the_relays_ids() -> None:
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
            ("main", line_of("calls.ez", "temp y = twice")),
        ]
        assert total == 3
        assert (await backend.stack(1, 1, 1)) == (frames[1:2], 3)
        add_scope, = await backend.scopes(frames[0].id)
        page = await backend.variables(add_scope.ref, 0, 100)
        assert [(v.name, v.value, v.type) for v in page.items] == [("a", "10", "int"), ("b", "10", "int")]
        main_scope, = await backend.scopes(frames[2].id)
        page = await backend.variables(main_scope.ref, 1, 10)
        assert [(v.name, v.value, v.type) for v in page.items] == [("name", '"Ada"', "string")]
        assert page.total == 2
        stop = await run_to_stop(backend, events)
        assert stop.frame is not None
        assert (stop.reason, stop.frame.line, stop.breakpoint_ids) == ("breakpoint", in_loop.line, [8])

    session("calls.ez", body, breakpoints=(in_add, in_loop))


def test_breakpoints_move_to_code_are_replaced_and_some_are_refused() -> None:
    path = program("calls.ez")
    once, in_loop = line_of("calls.ez", "temp once"), line_of("calls.ez", "i = i + 1")

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        moved, outside, conditional = await backend.set_breakpoints(path, [
            line_bp(1, "calls.ez", "do twice"),
            Breakpoint(2, "line", path, 999),
            line_bp(3, "calls.ez", 'println("i ="', condition="i == 2"),
        ])
        assert moved == BreakpointResult(True, once)
        assert not outside.verified and "999" in outside.message
        assert not conditional.verified and "condition" in conditional.message
        assert await backend.set_breakpoints(path, [line_bp(4, "calls.ez", "i = i + 1")]) == [
            BreakpointResult(True, in_loop)
        ]
        stop = await run_to_stop(backend, events)  # the line of breakpoint 1 is cleared: passed over
        assert stop.frame is not None
        assert (stop.frame.line, stop.breakpoint_ids) == (in_loop, [4])
        with pytest.raises(RelayError) as info:
            await backend.set_breakpoints("app.py", [Breakpoint(5, "line", "app.py", 1)])
        assert info.value.code == "unsupported"

    session("calls.ez", body)


def test_step_over_into_and_out_go_to_the_right_lines() -> None:
    steps = [("next", "temp name"), ("next", "temp y = twice"), ("stepIn", "temp once"),
             ("stepIn", "temp total"), ("next", "return total"), ("stepOut", "return once"),
             ("stepOut", 'println("y is"')]

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        for action, text in steps:
            stop = await run_to_stop(backend, events, action)
            assert stop.frame is not None
            assert (action, stop.reason, stop.frame.line) == (action, "step", line_of("calls.ez", text))
        frames, _ = await backend.stack(1, 0, None)
        assert [f.name for f in frames] == ["main"]
        update = {"name": "x", "value": "10", "type": "int", "frameIndex": 0}
        assert ("ez", "variableUpdate", update) in events.raw

    session("calls.ez", body)


def test_evaluate_gives_values_and_an_error_event_becomes_an_error() -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        await run_to_stop(backend, events)
        value = await backend.evaluate("a * 2 + 1", None, "repl")
        assert (value.name, value.value, value.type) == ("a * 2 + 1", "21", "int")
        assert (await backend.evaluate("n", 2, "repl")).value == "10"  # in the caller's frame
        for expression, frame_id, says in (("nope + 1", None, "undefined: nope"), ("n", 1, "undefined: n")):
            with pytest.raises(RelayError) as info:
                await backend.evaluate(expression, frame_id, "repl")
            assert info.value.code == "invalid_request" and says in info.value.message
        assert (await backend.evaluate("b", None, "repl")).value == "10"

    session("calls.ez", body, breakpoints=(line_bp(1, "calls.ez", "temp total"),))


def test_prints_arrive_in_order_and_the_exit_code_ends_the_session() -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        assert await run_to_end(backend, events) == [3]  # the peer just exits, with no `exited`
        assert events.text("stdout") == "first\nsecond\nthird 3\n"
        assert events.lost == []
        with pytest.raises(RelayError) as info:
            await backend.stack(1, 0, None)
        assert info.value.code == "target_exited"

    session("exit_code.ez", body)


def test_a_server_that_follows_the_spec_to_the_letter_works_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EZ_PEER_STRICT", "1")
    third = line_bp(5, "exit_code.ez", 'println("third"')

    async def body(backend: EzBackend, events: Recorder) -> None:
        entry = await events.next_stop()
        frames, _ = await backend.stack(1, 0, None)
        assert entry.reason == "entry" and [(f.name, f.line) for f in frames] == [("main", entry.frame.line)]
        stop = await run_to_stop(backend, events)
        assert (stop.reason, stop.breakpoint_ids) == ("breakpoint", [5])
        with pytest.raises(RelayError):
            await backend.evaluate("missing", None, "repl")
        assert await run_to_end(backend, events) == [3]
        assert events.text("stdout") == "first\nsecond\nthird 3\n"

    session("exit_code.ez", body, breakpoints=(third,))


def test_the_bug_is_found_and_its_runtime_error_reported_where_it_happened() -> None:
    division = line_bp(1, "average.ez", "return total / count")

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        stop = await run_to_stop(backend, events)
        assert stop.breakpoint_ids == [1]
        assert (await backend.evaluate("count", None, "repl")).value == "0"
        assert await run_to_end(backend, events) == [1]
        assert events.text("stdout") == "scores checked up to 90\n"
        assert events.text("stderr") == f"EZ error: division by zero (average.ez:{division.line})\n"
        (_, _, error), = [r for r in events.raw if r[1] == "error"]
        assert error["location"]["line"] == division.line

    session("average.ez", body, breakpoints=(division,))


def test_terminate_ends_a_running_program() -> None:
    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        await backend.resume("continue", 1)
        assert await backend.threads() == [Thread(1, "main", stopped=False)]
        await backend.terminate()
        assert events.exits == [0] and events.lost == []
        assert live_peers() == []
        await backend.close()
        await backend.close()

    session("forever.ez", body)


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
    assert "'initialize'" in message and 1.0 <= time.monotonic() - began < 10


def test_malformed_lines_are_output_and_the_session_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EZ_PEER_GARBAGE", "1")

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        stop = await run_to_stop(backend, events)
        assert stop.breakpoint_ids == [1]
        frames, _ = await backend.stack(1, 0, None)
        assert [f.name for f in frames] == ["add", "twice", "main"]
        assert (await backend.evaluate("a + b", None, "repl")).value == "20"
        assert len(events.stops) == 2  # the `stopped` whose data is no object made no stop
        stdout = events.text("stdout")
        assert "this is not json\n" in stdout and "[1, 2, 3]\n" in stdout and "\ufffd" in stdout
        assert events.lost == []

    session("calls.ez", body, breakpoints=(line_bp(1, "calls.ez", "temp total"),))


def test_a_late_answer_is_not_taken_for_the_next_question(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EZ_PEER_DELAY", "1.2")  # the first inspection is answered 1.2 s late

    async def body(backend: EzBackend, events: Recorder) -> None:
        await events.next_stop()
        await run_to_stop(backend, events, "next")
        await run_to_stop(backend, events, "next")
        with pytest.raises(RelayError) as info:
            await backend.evaluate("x", None, "repl")
        assert info.value.code == "timeout"
        assert (await backend.evaluate("name", None, "repl")).value == '"Ada"'

    session("calls.ez", body, request_timeout=1)


@pytest.mark.parametrize("fault, value, code, says", [
    ("EZ_PEER_HUGE", "1", "protocol_error", "more than 1048576 bytes"),  # not a hang: the line is cut short
    ("EZ_PEER_CRASH_AFTER", "3", "adapter_failed", "signal 9"),  # initialize, start, then the stack request
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
