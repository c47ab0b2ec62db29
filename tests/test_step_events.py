"""A step's events come in the order they happened, even when its stop arrives before the step's answer."""

from __future__ import annotations

from jupyter_debug_relay import Relay
from tests.peers.dap_peer import PeerThread

STEPPED = {"reason": "step", "threadId": 1, "allThreadsStopped": True}


def test_a_step_that_stops_before_its_answer_shows_continued_then_stopped(relay: Relay) -> None:
    peer = PeerThread(early={"next": [("stopped", STEPPED)]})
    try:
        session = relay.connect_dap(port=peer.port, attach={})
        session.wait_for_stop(timeout=10)
        seen: list[str] = []
        unsubscribe = relay.subscribe(lambda e: seen.append(e.event), session=session.id)
        try:
            stop = session.next(timeout=10)
        finally:
            unsubscribe()
        assert stop.reason == "step"
        moves = [name for name in seen if name in ("continued", "stopped")]
        assert moves == ["continued", "stopped"]
        assert session.state == "paused"
    finally:
        peer.stop()
