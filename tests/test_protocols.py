"""The protocol layer alone: DAP framing, JSON-RPC matching, line-JSON lines and answers, on in-memory streams."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.protocols import dap, linejson
from jupyter_debug_relay.protocols.jsonrpc import ErrorCode, JsonRpcChannel


def feed(*chunks: bytes, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=1 << 16)
    for chunk in chunks:
        reader.feed_data(chunk)
    if eof:
        reader.feed_eof()
    return reader


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 5))


async def read_one(*chunks: bytes) -> dict[str, Any] | None:
    return await dap.read_message(feed(*chunks))


# -- DAP framing ------------------------------------------------------------------------------------------

def test_a_frame_split_anywhere_reads_whole():
    frame = dap.encode({"type": "event", "seq": 1, "event": "output", "body": {"output": "héllo\n"}})

    async def read_split() -> list[dict[str, Any]]:
        reader = asyncio.StreamReader()
        for cut in (1, 7, 20, len(frame) - 1):
            reader.feed_data(frame[:cut])
            reader.feed_data(frame[cut:])
        reader.feed_eof()
        return [await dap.read_message(reader) for _ in range(4)] + [await dap.read_message(reader)]

    messages = run(read_split())
    assert messages[:4] == [json.loads(frame.split(b"\r\n\r\n", 1)[1])] * 4 and messages[4] is None


@pytest.mark.parametrize(("data", "why"), [
    (b"Content-Length: 5\r\n\r\n{\"a\"", "the stream ended inside a body"),
    (b"Content-Length: five\r\n\r\n{}", "bad Content-Length"),
    (b"Content-Type: json\r\n\r\n{}", "no Content-Length header"),
    (b"garbage without colon\r\n\r\n", "bad header line"),
    (b"Content-Length: 2\r\n\r\n[]", "not a DAP message object"),
    (b"Content-Length: 3\r\n\r\n{x}", "the body is not JSON"),
    (b"Content-Length: 3\r\n" + b"X-A: 1\r\n" * 20 + b"\r\n{}", "too many header lines"),
    (b"Content-Len", "the stream ended inside a header"),
])
def test_a_broken_frame_is_a_protocol_error_naming_what_broke(data, why):
    with pytest.raises(RelayError) as caught:
        run(read_one(data))
    assert caught.value.code == "protocol_error" and why in caught.value.message


def test_a_big_answer_is_read_past_and_fails_its_request_only(monkeypatch):
    monkeypatch.setattr(dap, "MAX_BODY", 1000)
    big = dap.encode({"seq": 9, "type": "response", "request_seq": 4, "success": True, "command": "evaluate",
                      "body": {"result": "x" * 5000}})
    after = dap.encode({"seq": 10, "type": "event", "event": "stopped", "body": {"threadId": 1}})

    async def read_both() -> list[dict[str, Any]]:
        reader = feed(big, after)
        return [await dap.read_message(reader), await dap.read_message(reader)]

    answer, event = run(read_both())
    assert (answer["request_seq"], answer["success"], answer["command"]) == (4, False, "evaluate")
    assert "over the 1,000-byte cap" in answer["message"] and event["event"] == "stopped"
    big_event = dap.encode({"seq": 3, "type": "event", "event": "output", "body": {"output": "y" * 5000}})
    with pytest.raises(RelayError, match="over the 1,000-byte cap"):
        run(read_one(big_event))


# -- JSON-RPC ---------------------------------------------------------------------------------------------

class Wire:
    """A text transport whose peer is the test: what the channel sends is kept, what it reads is queued."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.inbox: asyncio.Queue[str] = asyncio.Queue()

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))

    async def recv(self) -> str:
        return await self.inbox.get()

    async def close(self) -> None:
        pass


def test_answers_are_matched_by_id_in_any_order_and_errors_mapped():
    async def scenario() -> tuple[Any, Any, RelayError]:
        wire = Wire()
        channel = JsonRpcChannel(wire, peer="peer", errors={ErrorCode.FLOW_NOT_FOUND: ("invalid_request", "hint")})
        channel.start()
        first = asyncio.ensure_future(channel.request("a"))
        second = asyncio.ensure_future(channel.request("b", {"x": 1}))
        third = asyncio.ensure_future(channel.request("c"))
        await asyncio.sleep(0)
        ids = {m["method"]: m["id"] for m in wire.sent}
        for text in ({"jsonrpc": "2.0", "id": ids["b"], "result": "B"},
                     {"jsonrpc": "2.0", "id": ids["c"], "error": {"code": -32002, "message": "flow not found"}},
                     {"jsonrpc": "2.0", "id": ids["a"], "result": [1]}):
            wire.inbox.put_nowait(json.dumps(text))
        with pytest.raises(RelayError) as caught:
            await third
        await channel.close()
        return await first, await second, caught.value

    a, b, error = run(scenario())
    assert (a, b) == ([1], "B")
    assert error.code == "invalid_request" and error.details["rpc_code"] == -32002 and error.hint == "hint"


@pytest.mark.parametrize(("text", "why"), [
    ("not json", "not JSON"),
    ('{"jsonrpc": "1.0", "id": 1, "result": 1}', "not JSON-RPC 2.0"),
    ('{"jsonrpc": "2.0", "id": 99, "result": 1}', "never sent"),
    ('{"jsonrpc": "2.0", "id": 1}', "exactly one of result and error"),
])
def test_a_broken_answer_fails_every_waiting_request(text, why):
    async def scenario() -> RelayError:
        wire = Wire()
        closed: list[RelayError] = []
        channel = JsonRpcChannel(wire, peer="peer", on_closed=closed.append)
        channel.start()
        waiting = asyncio.ensure_future(channel.request("a"))
        await asyncio.sleep(0)
        wire.inbox.put_nowait(text)
        with pytest.raises(RelayError) as caught:
            await waiting
        assert closed and closed[0].code == caught.value.code
        return caught.value

    error = run(scenario())
    assert error.code == "protocol_error" and why in error.message


# -- line JSON --------------------------------------------------------------------------------------------

def test_lines_split_into_messages_and_output():
    async def read_all() -> list[linejson.Line]:
        reader = linejson.LineReader(feed(b'{"type":"event"}\nplain print\n{broken\nlast', eof=True))
        lines = []
        while (line := await reader.read()) is not None:
            lines.append(line)
        return lines

    lines = run(read_all())
    assert [line.message for line in lines] == [{"type": "event"}, None, None, None]
    assert [line.text for line in lines] == ['{"type":"event"}\n', "plain print\n", "{broken\n", "last"]


def test_a_line_over_the_cap_is_a_protocol_error_before_it_ends():
    async def read_long() -> None:
        reader = linejson.LineReader(feed(b"x" * 5000, eof=False), max_line=1000)
        await reader.read()

    with pytest.raises(RelayError, match="more than 1000 bytes"):
        run(read_long())


def test_answers_go_to_the_oldest_command_they_answer():
    async def scenario() -> list[Any]:
        answers = linejson.PendingAnswers()
        step = answers.expect("stepOver", "stopped")
        variables = answers.expect("getVariables", "variables")
        assert not answers.offer("output", {"text": "hi"}, unnamed_error_answers=False)  # not an answer
        assert not answers.offer("variables", {}, unnamed_error_answers=False)  # out of order: not the oldest's
        assert answers.offer("stopped", {"line": 3}, unnamed_error_answers=False)
        assert not answers.offer("error", {"message": "boom", "location": 9}, unnamed_error_answers=False)
        assert answers.offer("error", {"command": "getVariables", "message": "no"}, unnamed_error_answers=False)
        late = answers.expect("continue", "continued")
        answers.fail_all(RelayError("connection_failed", "gone"))
        with pytest.raises(RelayError):
            await late.future
        return [await step.future, await variables.future]

    assert run(scenario()) == [("stopped", {"line": 3}), ("error", {"command": "getVariables", "message": "no"})]
