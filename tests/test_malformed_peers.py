"""A peer that sends a malformed message fails its session with one clear protocol_error, never a traceback."""

from __future__ import annotations

import gc
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_debug_relay import Relay
from jupyter_debug_relay.errors import RelayError
from tests.peers.dap_peer import ANSWERS, PeerThread

ROOT = Path(__file__).parent.parent
NEVER_RETRIEVED = "never retrieved"


@pytest.fixture
def quiet_loop(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> Iterator[None]:
    """Fail the test if any task exception reaches the relay loop's handler, or asyncio's stderr message."""
    caplog.set_level(logging.WARNING)
    yield
    gc.collect()  # a task dropped with its exception unretrieved is reported when it is collected
    loop_errors = [r for r in caplog.records if r.name == "jupyter_debug_relay.protocols.tasks" or
                   r.name == "asyncio" or NEVER_RETRIEVED in r.getMessage()]
    assert not loop_errors, [r.getMessage() for r in loop_errors]
    assert NEVER_RETRIEVED not in capfd.readouterr().err


def connect(relay: Relay, bad: dict[str, Any]) -> tuple[Any, PeerThread, list[Any]]:
    peer = PeerThread(bad)
    errors: list[Any] = []
    relay.subscribe(lambda event: errors.append(event.body) if event.event == "error" else None)
    return relay.connect_dap(port=peer.port, attach={}), peer, errors


def assert_failed(session: Any, error: RelayError, errors: list[Any], *words: str) -> None:
    assert error.code == "protocol_error"
    for word in words:
        assert word in error.message, error.message
    assert session.state == "failed"
    assert session.info().error["code"] == "protocol_error"
    assert [e["code"] for e in errors] == ["protocol_error"]


def test_a_stopped_event_whose_thread_id_is_text_fails_the_session(relay: Relay, quiet_loop: None) -> None:
    session, peer, errors = connect(relay, {"stopped": {"reason": "breakpoint", "threadId": "abc"}})
    try:
        with pytest.raises(RelayError) as caught:
            session.wait_for_stop(timeout=10)
        assert_failed(session, caught.value, errors, "sent a stopped event whose threadId is 'abc', not an integer")
        assert caught.value.message.startswith(f"Session {session.name} failed: the adapter at 127.0.0.1:")
        assert caught.value.details["field"] == "threadId"
    finally:
        peer.stop()


def test_a_stack_trace_whose_total_frames_is_text_fails_the_session(relay: Relay, quiet_loop: None) -> None:
    session, peer, errors = connect(relay, {"stackTrace": {**ANSWERS["stackTrace"], "totalFrames": "many"}})
    try:
        with pytest.raises(RelayError) as caught:
            session.wait_for_stop(timeout=10)
        assert_failed(session, caught.value, errors, "stackTrace response whose totalFrames is 'many'",
                      "not an integer")
    finally:
        peer.stop()


def test_a_pushed_stack_whose_frames_are_not_a_list_fails_the_session(relay: Relay, quiet_loop: None) -> None:
    session, peer, errors = connect(relay, {"relayStack": {"threadId": 1, "stackFrames": "top"}})
    try:
        with pytest.raises(RelayError) as caught:
            session.wait_for_stop(timeout=10)
        assert_failed(session, caught.value, errors, "relayStack event whose stackFrames is 'top'")
    finally:
        peer.stop()


def test_a_malformed_threads_answer_is_a_protocol_error_not_a_type_error(relay: Relay, quiet_loop: None) -> None:
    session, peer, errors = connect(relay, {"threads": {"threads": [1, 2]}})
    try:
        assert session.wait_for_stop(timeout=10).frame.line == 3
        with pytest.raises(RelayError) as caught:
            session.threads()
        assert_failed(session, caught.value, errors, "sent a threads response whose threads[0] is 1, not an object")
        with pytest.raises(RelayError, match="protocol_error"):
            session.stack()  # the session stays failed, with the same reason
    finally:
        peer.stop()


def test_a_missing_field_and_a_bad_reverse_request_are_named(relay: Relay, quiet_loop: None) -> None:
    session, peer, errors = connect(relay, {"evaluate": {"type": "int"}})
    try:
        session.wait_for_stop(timeout=10)
        with pytest.raises(RelayError) as caught:
            session.evaluate("x + 1")
        assert_failed(session, caught.value, errors, "sent an evaluate response without result (a string)")
    finally:
        peer.stop()
    session, peer, errors = connect(relay, {"runInTerminal": {"kind": "integrated", "args": "rm -rf /"}})
    try:
        with pytest.raises(RelayError) as caught:
            session.wait_for_stop(timeout=10)
        assert_failed(session, caught.value, errors, "sent a runInTerminal request whose args is 'rm -rf /', "
                      "not an array")
    finally:
        peer.stop()


def test_a_broken_envelope_fails_the_session_and_the_reader_survives_it(relay: Relay, quiet_loop: None) -> None:
    session, peer, errors = connect(relay, {"continue": {}})
    try:
        session.wait_for_stop(timeout=10)
        peer.peer.bad["continued"] = [1]  # a body that is no object
        with pytest.raises(RelayError) as caught:
            session.continue_(timeout=10)
        assert_failed(session, caught.value, errors, "sent an event whose body is [1], not an object")
    finally:
        peer.stop()


def test_in_a_kernel_the_user_sees_one_error_line_and_no_task_exception(kernel) -> None:
    bad = {"stopped": {"reason": "breakpoint", "threadId": "abc"}}
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    peer = subprocess.Popen([sys.executable, "-m", "tests.peers.dap_peer", json.dumps(bad)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(peer.stdout.readline())
        cells = [kernel.magic(f"%debug_session connect dap --port {port} --attach {{}}"),
                 kernel.magic("%debug_session wait --timeout 10")]
        cells.append(kernel.magic("import gc; gc.collect(); import time; time.sleep(0.5)"))
        cells.append(kernel.magic("%debug_session status"))
    finally:
        peer.kill()
        peer.wait(10)
    waited = cells[1].text.strip()
    assert waited.startswith("error protocol_error: Session "), waited
    assert "sent a stopped event whose threadId is 'abc', not an integer." in waited
    assert len(waited.splitlines()) == 1
    assert "failed" in cells[3].text
    for cell in cells:
        assert NEVER_RETRIEVED not in cell.streams + cell.text and "Traceback" not in cell.streams, cell.streams
