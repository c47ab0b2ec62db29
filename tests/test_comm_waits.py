"""A comm request that waits holds no thread: fifty long waits never delay another request."""

from __future__ import annotations

from tests.test_kernel_comm import open_frontend, pump

LOOP = """
import time
while True:
    time.sleep(0.05)
"""


def test_fifty_waiting_requests_do_not_hold_up_a_new_comm(kernel, write):
    app = write("loop.py", LOOP)
    front = open_frontend(kernel)
    for _ in range(5):
        assert front.request("launch", program=app, stopOnEntry=True)["ok"]
    pump(kernel, [front], lambda: len({e["session"] for e in front.events if e["event"] == "stopped"}) == 5, 60)
    sessions = [f"s{n}" for n in range(1, 6)]
    waits = list(range(1000, 1050))
    for request_id in waits:
        session = sessions[request_id % 5]
        if request_id < 1005:  # five runs, then 45 more waits on them
            command, args = "continue", {"wait": True, "timeout": 1e9}
        else:
            command, args = "wait", {"timeout": 1e9}
        kernel.comm_send(front.comm_id, {"type": "request", "v": 1, "id": request_id, "command": command,
                                         "session": session, "args": args})
    pump(kernel, [front], lambda: sum(e["event"] == "continued" for e in front.events) >= 5, 20)

    other = open_frontend(kernel)
    answer = other.request("sessions")  # answered while the 50 waits are pending
    assert [s["state"] for s in answer["body"]["sessions"]] == ["running"] * 5
    assert kernel.magic("%dbg status --session s3").text.startswith("s3 (debugpy, loop.py): running")
    assert not [front.responses[i] for i in waits if i in front.responses]  # still waiting, as asked

    for number, session in enumerate(sessions, 1):  # both comms pumped: the waits are answered meanwhile
        kernel.comm_send(other.comm_id, {"type": "request", "v": 1, "id": number, "command": "terminate",
                                         "session": session})
    pump(kernel, [front, other], lambda: len(other.responses) == 5 and all(i in front.responses for i in waits), 30)
    assert all(answer["ok"] for answer in other.responses.values())
    codes = {front.responses[request_id]["error"]["code"] for request_id in waits}
    assert codes == {"target_exited"}  # every wait answered by the end it was waiting for
