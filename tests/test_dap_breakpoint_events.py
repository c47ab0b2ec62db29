"""A DAP adapter's ``breakpoint`` events reach the relay's breakpoints, even one sent before its request's answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_debug_relay import Relay
from tests.peers.dap_peer import PeerThread

UNVERIFIED = {"breakpoints": [{"id": 1, "verified": False, "line": 3, "message": "module not loaded yet"}]}
VERIFIED = {"reason": "changed", "breakpoint": {"id": 1, "verified": True, "line": 3}}
ELSEWHERE = {"reason": "changed", "breakpoint": {"id": 99, "verified": False, "line": 9}}  # no breakpoint of ours


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text("x = 1\ny = 2\nz = x + y\n")
    return path


def test_a_breakpoint_verified_before_its_answer_arrives_is_verified(relay: Relay, app: Path) -> None:
    bp = relay.breakpoints.add(str(app), 3)
    peer = PeerThread(bad={"setBreakpoints": UNVERIFIED, "breakpoint": ELSEWHERE},
                      early={"setBreakpoints": [("breakpoint", VERIFIED)]})
    try:
        session = relay.connect_dap(port=peer.port, attach={})
        stop = session.wait_for_stop(timeout=10)
        assert stop.breakpoint_ids == [bp.id]
        assert relay.breakpoints.get(bp.id).verified
    finally:
        peer.stop()


def test_an_answer_without_an_early_event_keeps_its_own_word(relay: Relay, app: Path) -> None:
    bp = relay.breakpoints.add(str(app), 3)
    peer = PeerThread(bad={"setBreakpoints": UNVERIFIED, "breakpoint": ELSEWHERE})
    try:
        session = relay.connect_dap(port=peer.port, attach={})
        session.wait_for_stop(timeout=10)
        got = relay.breakpoints.get(bp.id)
        assert not got.verified and got.message == "module not loaded yet"
    finally:
        peer.stop()


def test_an_event_sent_while_the_start_is_under_way_outlives_the_answers_of_the_start(relay: Relay, app: Path) -> None:
    """The target runs from configurationDone on: what it says of a breakpoint then is newer than the start's answers
    (debugpy's word that a breakpoint's condition failed can come before the launch's answer)."""
    bp = relay.breakpoints.add(str(app), 3)
    gone = {"reason": "changed", "breakpoint": {"id": 1, "verified": False, "line": 3, "message": "module unloaded"}}
    peer = PeerThread(early={"configurationDone": [("breakpoint", gone)]})
    try:
        relay.connect_dap(port=peer.port, attach={})
        got = relay.breakpoints.get(bp.id)
        assert (got.verified, got.message) == (False, "module unloaded")
    finally:
        peer.stop()
