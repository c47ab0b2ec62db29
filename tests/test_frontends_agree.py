"""Every operation is reachable from the Python API, the magics and the comm, with the same result.

One kernel, three sessions of the same program — ``py`` driven by the Python API in a cell, ``mg`` by the magics,
``cm`` by a comm frontend — each operation applied to each through its own front end, and the answers compared.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import pytest

from jupyter_debug_relay.operations import OPERATIONS
from tests.conftest import line_of
from tests.kernels import Kernel
from tests.peers.mycel_peer import start_peer
from tests.test_kernel_comm import Frontend, open_frontend

PROGRAM = """
import time

def compute(items):
    total = 0
    for i, x in enumerate(items):
        total += x * i  # accumulate
    return total

print("start")
result = compute([3, 4, 5])
n = 0
while True:
    n += 1  # spin
    time.sleep(0.01)
"""

VOLATILE = {"id", "ref", "ts", "seq", "created_at", "last_activity", "pid", "processId", "source_ref", "uid",
            "startup"}  # a start's phases in ms: never twice the same


def norm(value: Any) -> Any:
    """A result without what differs between three processes of one program: ids, refs, times, session names."""
    if isinstance(value, dict):
        drop = VOLATILE | ({"name"} if "backend" in value else set())
        return {k: norm(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [norm(v) for v in value]
    return value


class Three:
    """The three front ends of one kernel, each with its own session of PROGRAM."""

    def __init__(self, kernel: Kernel, front: Frontend) -> None:
        self.kernel, self.front = kernel, front

    def py(self, expression: str) -> Any:
        """An expression of the Python API (``relay``, ``s`` the py session) as data; an error as its code."""
        cell = self.kernel.magic(
            "try:\n"
            f"    _v = {{'ok': as_dict({expression})}}\n"
            "except RelayError as _e:\n"
            "    _v = {'error': _e.code, 'message': _e.message, 'field': (_e.details or {}).get('field')}\n"
            "print(json.dumps(_v, default=str))")
        return json.loads(cell.streams)

    def magic(self, line: str, attribute: str | None) -> Any:
        """A magic line's result: one of its attributes as data, or its error."""
        cell = self.kernel.magic(
            f"_r = {line}\n"
            "if _r.ok:\n"
            f"    _v = {{'ok': as_dict({'_r.' + attribute if attribute else 'None'})}}\n"
            "else:\n"
            "    _v = {'error': _r.error.code, 'message': _r.error.message,"
            " 'field': (_r.error.details or {}).get('field')}\n"
            "print(json.dumps(_v, default=str))")
        return json.loads(cell.streams)

    def comm(self, command: str, key: str | None, session: str | None = "cm", **args: Any) -> Any:
        """A comm request (checked against the Request schema first) and its answer's body or one key of it."""
        return self._answer(self.front.request(command, session, **args), key)

    def bad_comm(self, command: str, session: str, args: dict[str, Any]) -> Any:
        """A request the schema refuses, sent anyway: the kernel must refuse it too."""
        self.bad_ids = getattr(self, "bad_ids", 10**6) + 1
        data = {"type": "request", "v": 1, "id": self.bad_ids, "command": command, "session": session, "args": args}
        return self._answer(self.front.send(data, self.bad_ids), None)

    @staticmethod
    def _answer(answer: dict[str, Any], key: str | None) -> Any:
        if not answer["ok"]:
            return {"error": answer["error"]["code"], "message": answer["error"]["message"]}
        return {"ok": answer["body"].get(key) if key else answer["body"]}


SETUP = ("import json\nfrom jupyter_debug_relay import RelayError\nfrom jupyter_debug_relay.model import as_dict\n"
         "from jupyter_debug_relay.kernel.extension import load\nrelay = load(get_ipython()).relay")


@pytest.fixture
def three(kernel: Kernel, write, tmp_path) -> Three:
    app = write("prog.py", PROGRAM)
    kernel.magic(SETUP)
    kernel.magic(f"%bp prog.py:{line_of(app, '# accumulate')}")
    front = open_frontend(kernel)
    t = Three(kernel, front)
    t.app = app
    t.home = tmp_path / "home"  # where profiles go
    return t


def same(results: list[Any], what: str) -> Any:
    first = norm(results[0])
    assert "error" not in results[0], (what, results)
    for other in results[1:]:
        assert norm(other) == first, f"{what}: the front ends disagree:\n{json.dumps(results, indent=1)}"
    return results[0]["ok"]


def same_error(results: list[Any], what: str, code: str) -> None:
    assert [r.get("error") for r in results] == [code] * 3, (what, results)


REACHED: set[str] = set()
# Operations that need a peer of their own (a Mycel service, ...): each is driven through the three front ends by
# the test named beside it.
MYCEL_TEST = "test_mycel_verbs_answer_the_same_on_every_front_end"
DRIVEN_ELSEWHERE: dict[str, str] = {
    **dict.fromkeys(("inspect", "ready", "consume", "timeline"), MYCEL_TEST),
    # starts a session of its own from an export: through the magics, HTTP and the Python API there
    "import": "tests/test_kernel_keeping.py, tests/test_server_persistence.py",
    # need a Ray cluster: run inside a network namespace with only loopback
    **dict.fromkeys(("ray_tasks", "ray_attach"), "tests/test_ray_cluster.py"),
    # moving through recorded states: the magics, the Python API and a DAP editor there ("record" and "history" here)
    **dict.fromkeys(("back", "forward"), "tests/test_record.py"),
}


def test_every_operation_answers_the_same_on_every_front_end(three: Three):
    t, app = three, three.app
    # -- sessions
    launched = [t.py(f"relay.launch({app!r}, name='py').info()"),
                t.magic("%dbg launch --name mg --no-wait prog.py", "stop"),
                t.comm("launch", "session", session=None, program=app, name="cm")]
    assert launched[1] == {"ok": None}
    at_launch = [launched[0], t.comm("status", "session", "cm")]  # each taken as it came: stopped yet or not
    same([{"ok": {k: v for k, v in r["ok"].items() if k not in ("state", "stop")}} for r in at_launch], "launch")
    t.kernel.magic("s = relay.get('py')")
    stops = [t.py("s.wait_for_stop()"), t.magic("%dbg wait --session mg", "stop"), t.comm("wait", "stop", timeout=10)]
    assert same(stops, "wait")["reason"] == "breakpoint"
    REACHED.update({"launch", "wait"})
    same([t.py("[h.info() for h in relay.sessions]"), t.magic("%dbg list", "sessions"),
          t.comm("sessions", "sessions", None)], "sessions")
    same([t.py("s.info()"), t.magic("%dbg status --session mg", "info"), t.comm("status", "session")], "status")
    same([t.py("s.threads()"), t.magic("%dbg threads --session mg", "threads"), t.comm("threads", "threads")],
         "threads")
    same([t.py("s.stack()"), t.magic("%dbg where --session mg", "frames"), t.comm("stack", "frames")], "stack")
    tasks = [t.py("s.tasks().tasks"), t.magic("%dbg tasks --session mg", "tasks"), t.comm("tasks", "async_tasks")]
    assert same(tasks[:2] + [{"ok": tasks[2]["ok"]["tasks"]}], "tasks") == []  # the program runs no asyncio
    REACHED.add("tasks")  # with tasks: tests/test_tasks.py
    recorded = [t.py("s.record('compute')"), t.magic("%dbg record --session mg compute", "recording"),
                t.comm("record", "recording", target="compute")]
    assert same(recorded, "record")["functions"] == [f"compute ({app}:{line_of(app, 'def compute')})"]
    history = [t.py("s.history()"), t.magic("%dbg history --session mg", "steps"), t.comm("history", None)]
    assert same([{"ok": history[0]["ok"]["steps"]}, history[1], {"ok": history[2]["ok"]["steps"]}],
                "history") == []  # the call under way is not recorded: compute is not called again
    same_error([t.py("s.back()"), t.magic("%dbg back --session mg", "recorded"), t.comm("back", "recorded")],
               "back", "invalid_request")
    off = [t.py("s.record(off=True)"), t.magic("%dbg record --session mg off", "recording"),
           t.comm("record", "recording", off=True)]
    assert same(off, "record off")["recording"] is False
    REACHED.update({"record", "history"})
    scopes = [t.py("s.scopes()"), t.magic("%dbg scopes --session mg", "scopes"), t.comm("scopes", "scopes")]
    same(scopes, "scopes")
    refs = [r["ok"][0]["ref"] for r in scopes]
    same([{"ok": t.py(f"s.variables({refs[0]})")["ok"]["items"]}, t.magic(f"%dbg vars --session mg {refs[1]}",
          "variables"), t.comm("variables", "items", ref=refs[2])], "variables")
    same([t.py("s.evaluate('x * 100')"), t.magic("%dbg eval --session mg x * 100", "variable"),
          t.comm("evaluate", "variable", expression="x * 100")], "evaluate")
    same([t.py("s.hover('items * 100')"), t.magic("%dbg hover --session mg items * 100", "variable"),
          t.comm("hover", "variable", expression="items * 100")], "hover")
    assert same([t.py("s.watch('x + 1')"), t.magic("%dbg watch --session mg x + 1", "watches"),
                 t.comm("add_watch", "watches", expression="x + 1")], "add_watch") == [
        {"index": 1, "expression": "x + 1", "value": "4", "type": "int", "error": None}]
    same([t.py("s.watches()"), t.magic("%dbg watch --session mg list", "watches"),
          t.comm("watches", "watches")], "watches")
    same([t.py("s.unwatch(1)"), t.magic("%dbg watch --session mg rm 1", "watches"),
          t.comm("remove_watch", "watches", index=1)], "remove_watch")
    same([t.py("s.completions('ite')"), t.magic("%dbg complete --session mg ite", "targets"),
          t.comm("completions", "targets", text="ite")], "completions")
    same([t.py("s.source()"), t.magic("%dbg source --session mg", "source"),
          t.comm("source", "source")], "source")
    pages = [t.py("s.output()"), t.magic("%dbg output --session mg", "page"), t.comm("output", None)]
    texts = [{"ok": "".join(c["text"] for c in p["ok"]["chunks"])} for p in pages]  # a print may come in two chunks
    assert same(texts, "output") == "start\n"
    same([t.py(f"s.set_variable({refs[0]}, 'total', '7')"),
          t.magic("%dbg set --session mg total = 7", "variable"),
          t.comm("setVariable", "variable", ref=refs[2], name="total", value="7")], "set_variable")
    same([t.py("s.set_expression('items[1]', '9')"), t.magic("%dbg set --session mg items[1] = 9", "variable"),
          t.comm("set_expression", "variable", expression="items[1]", value="9")], "set_expression")
    cleared = [t.py("s.clear_output()"), t.magic("%dbg output --session mg --clear", "cursor"),
               t.comm("clear_output", "cursor")]
    assert all(isinstance(c.get("ok"), int) for c in cleared), cleared
    sent = [t.py("s.send_input('hi\\n')"), t.magic("%dbg input --session mg hi", None),
            t.comm("input", None, text="hi\n")]
    assert sent == [{"ok": None}, {"ok": None}, {"ok": {}}], sent
    updated = [t.py("s.update(timeout_minutes=30)"), t.magic("%dbg update --session mg --timeout-minutes 30", "info"),
               t.comm("update_session", "session", timeoutMinutes=30)]
    same(updated, "update_session")
    REACHED.update({"hover", "add_watch", "watches", "remove_watch", "update_session"})
    exports = [t.py("s.export()"), t.magic("%dbg export --session mg", "export"), t.comm("export", "export")]
    assert [e["ok"]["start"]["operation"] for e in exports] == ["launch"] * 3, exports
    same([{"ok": e["ok"]["breakpoints"]} for e in exports], "export")
    REACHED.add("export")
    REACHED.update({"sessions", "status", "threads", "stack", "scopes", "variables", "evaluate", "completions",
                    "source", "output", "set_variable", "input", "set_expression", "clear_output"})
    # -- running: each step the same on each session
    for op, py, word in (("next", "s.next()", "next"), ("step_in", "s.step_in()", "step"),
                         ("continue", "s.continue_()", "continue"), ("step_out", "s.step_out()", "out")):
        stop = same([t.py(py), t.magic(f"%dbg {word} --session mg", "stop"), t.comm(op, "stop", wait=True)], op)
        assert stop["frame"] is not None
        REACHED.add(op)
    resumed = [t.py("s.continue_(wait=False)"), t.magic("%dbg continue --session mg --no-wait", "stop"),
               t.comm("continue", "stop", wait=False)]
    same(resumed, "continue without waiting")
    paused = [t.py("s.pause()"), t.magic("%dbg pause --session mg", "stop"), t.comm("pause", "stop", wait=True)]
    assert [p["ok"]["reason"] for p in paused] == ["pause"] * 3, paused
    REACHED.add("pause")
    # -- breakpoints (the relay's: each front end adds, disables and removes its own)
    start = line_of(app, 'print("start")')
    cycles = [  # the same line on each front end in turn: add, disable, list, remove
        lambda: t.py(f"relay.breakpoints.add({app!r}, {start})"),
        lambda: t.magic(f"%bp prog.py:{start}", "breakpoint"),
        lambda: t.comm("setBreakpoint", "breakpoint", None, kind="line", path=app, line=start),
    ], [
        lambda i: t.py(f"relay.breakpoints.enable({i}, False)"),
        lambda i: t.magic(f"%bp disable {i}", "breakpoint"),
        lambda i: t.comm("enableBreakpoint", "breakpoint", None, id=i, enabled=False),
    ], [
        lambda: t.py("relay.breakpoints.list()"),
        lambda: t.magic("%bp list", "breakpoints"),
        lambda: t.comm("breakpoints", "breakpoints", None),
    ], [
        lambda i: t.py(f"relay.breakpoints.remove({i})"),
        lambda i: t.magic(f"%bp rm {i}", "breakpoints[0]"),
        lambda i: t.comm("removeBreakpoint", "breakpoint", None, id=i),
    ]
    results: dict[str, list[Any]] = {"add_breakpoint": [], "update_breakpoint": [], "breakpoints": [],
                                     "remove_breakpoint": []}
    for add, disable, listing, remove in zip(*cycles, strict=True):
        results["add_breakpoint"].append(added := add())
        results["update_breakpoint"].append(disable(added["ok"]["id"]))
        results["breakpoints"].append(listing())
        results["remove_breakpoint"].append(remove(added["ok"]["id"]))
    for op, found in results.items():
        same(found, op)
    same([t.py("relay.breakpoints.exceptions('uncaught')"), t.magic("%bp exceptions uncaught", "exceptions"),
          t.comm("set_exceptions", "exceptions", None, mode="uncaught")], "set_exceptions")
    same([t.py("relay.breakpoints.condition_errors(False)"), t.magic("%bp condition-errors run", "stop_on_error"),
          t.comm("condition_errors", "stop_on_error", None, stop=False)], "condition_errors")
    REACHED.update({"add_breakpoint", "update_breakpoint", "breakpoints", "remove_breakpoint", "set_exceptions",
                    "condition_errors"})
    t.kernel.run(f"import os\nos.environ['JUPYTER_DEBUG_RELAY_HOME'] = {str(three.home)!r}")
    saved = [t.py("relay.breakpoints.save('p1')"), t.magic("%bp save p2", "profile"),
             t.comm("save_profile", "profile", None, name="p3")]
    assert [s["ok"]["name"] for s in saved] == ["p1", "p2", "p3"], saved
    same([{"ok": s["ok"]["breakpoints"]} for s in saved], "save_profile")
    same([t.py("relay.breakpoints.profiles()"), t.magic("%bp profiles", "profiles"),
          t.comm("profiles", "profiles", None)], "profiles")
    same([t.py("relay.breakpoints.load('p1')"), t.magic("%bp load p2", "breakpoints"),
          t.comm("load_profile", "breakpoints", None, name="p3")], "load_profile")
    REACHED.update({"save_profile", "profiles", "load_profile"})
    created = [t.py("relay.create(name='e1').info()"), t.magic("%dbg create --name e2", "info"),
               t.comm("create", "session", None, name="e3")]
    assert [c["ok"]["state"] for c in created] == ["created"] * 3, created
    same(created, "create")
    REACHED.add("create")
    listed = [t.py("relay.processes()"), t.magic("%dbg attach --list", "processes"),
              t.comm("processes", "processes", None)]
    mine = same([{"ok": [p["command"] for p in r["ok"] if p["pid"] == os.getpid()]} for r in listed], "processes")
    assert len(mine) == 1, listed  # this test's own process, a Python process of the same user
    REACHED.add("processes")
    python = sys.executable
    doctors = [t.py(f"relay.doctor([{python!r}])"), t.magic(f"%dbg doctor --pythons {python}", "report"),
               t.comm("doctor", "doctor", None, pythons=[python])]
    report = same(doctors, "doctor")
    assert [s["python"] for s in report["pythons"]] == [python] and report["exit_code"] == 0, report
    REACHED.add("doctor")  # the CLI's and what it says of a debugpy lacking names: tests/test_cli_doctor.py
    exposed = [t.py("relay.operations.call('expose', {'session': 'py', 'read_only': True})['url']"),
               t.magic("%dbg expose mg --read-only", "url"), t.comm("expose", "url", readOnly=True)]
    assert all(re.fullmatch(r"dap://127\.0\.0\.1:\d+", e["ok"]) for e in exposed), exposed
    REACHED.add("expose")  # what a DAP client does there: tests/test_dapserver.py
    sidebars = [t.py("relay.operations.call('sidebar', {'session': 'py'})['sidebar']"),
                t.magic("%dbg sidebar mg", "sidebar"), t.comm("sidebar", "sidebar")]
    assert [s.get("ok") for s in sidebars] == [True] * 3, sidebars
    assert t.magic("%dbg sidebar off", "sidebar") == {"ok": False}
    REACHED.add("sidebar")  # what JupyterLab sends and gets: tests/test_sidebar.py
    snaps = [t.py("s.snapshot(frames=2, locals=0, output=0)"),
             t.magic("%dbg snapshot --session mg --frames 2 --locals 0 --output 0", "snapshot"),
             t.comm("snapshot", "snapshot", frames=2, locals=0, output=0)]
    assert all("ok" in r for r in snaps), snaps
    same([{"ok": [(f["name"], f["text"]) for f in r["ok"]["frames"]]} for r in snaps], "snapshot")
    REACHED.add("snapshot")  # its bounds and every part of it: tests/test_agents_surface.py
    # -- what a launched debugpy session refuses, refused alike
    same_error([t.py("s.detach()"), t.magic("%dbg detach --session mg", None), t.comm("detach", None)],
               "detach", "unsupported")
    same_error([t.py("relay.operations.call('reconnect', {'session': 'py'})"),  # a DAP handle has no reconnect
                t.magic("%dbg reconnect --session mg", None), t.comm("reconnect", None)], "reconnect", "unsupported")
    same_error([t.py("relay.attach(port=1)"), t.magic("%dbg attach --port 1", None),
                t.comm("attach", None, None, port=1)], "attach", "connection_failed")
    same_error([t.py("relay.connect_ez('missing.ez')"), t.magic("%dbg connect ez missing.ez", None),
                t.comm("connect", None, None, kind="ez", program="missing.ez")], "connect", "file_not_found")
    REACHED.update({"detach", "reconnect", "attach", "connect"})
    # -- remote relays: none yet; a plain-HTTP URL beyond loopback and an unknown name refused alike
    assert [t.py("relay.remote_list()"), t.magic("%dbg remote list", "remotes"),
            t.comm("remote_list", "remotes", None)] == [{"ok": []}] * 3
    same_error([t.py("relay.remote_add('lab', 'http://192.0.2.1:8765', token_file='prog.py')"),
                t.magic("%dbg remote add lab http://192.0.2.1:8765 --token-file prog.py", None),
                t.comm("remote_add", None, None, name="lab", url="http://192.0.2.1:8765", tokenFile="prog.py")],
               "remote_add", "unauthorized")
    same_error([t.py("relay.remote_remove('lab')"), t.magic("%dbg remote remove lab", None),
                t.comm("remote_remove", None, None, name="lab")], "remote_remove", "invalid_request")
    REACHED.update({"remote_add", "remote_list", "remote_remove"})  # with a remote: tests/test_remote.py
    # -- restart and the end
    restarted = [t.py("s.restart()"), t.magic("%dbg restart --session mg", None), t.comm("restart", None)]
    assert all("ok" in r for r in restarted), restarted
    same([t.py("s.wait_for_stop()"), t.magic("%dbg wait --session mg", "stop"), t.comm("wait", "stop")],
         "after restart")
    ended = [t.py("s.terminate()"), t.magic("%dbg stop --session mg", None), t.comm("terminate", "state")]
    assert ended[:2] == [{"ok": None}, {"ok": None}] and ended[2]["ok"] == "terminated", ended
    states = {i["name"]: i["state"] for i in t.py("[h.info() for h in relay.sessions]")["ok"]}
    assert [states[name] for name in ("py", "mg", "cm")] == ["terminated"] * 3, states
    REACHED.update({"restart", "terminate"})
    deleted = [t.py("s.delete()"), t.magic("%dbg delete --session mg", None), t.comm("delete", "deleted")]
    assert deleted == [{"ok": None}, {"ok": None}, {"ok": True}], deleted
    same_error([t.py("s.info()"), t.magic("%dbg status --session mg", None), t.comm("status", None)],
               "a deleted session", "session_not_found")
    listed = t.py("[h.name for h in relay.sessions]")["ok"]
    assert not {"py", "mg", "cm"} & set(listed), listed
    REACHED.add("delete")
    missing = set(OPERATIONS) - REACHED - set(DRIVEN_ELSEWHERE)
    assert not missing, f"not driven through the three front ends: {missing}"


BAD = [  # (field, Python API, magic line, comm command and args)
    ("timeout", "s.next(timeout=-1)", "%dbg next --session s1 --timeout -1", ("next", {"timeout": -1})),
    ("thread_id", "s.next(thread_id='x')", "%dbg next --session s1 --thread x", ("next", {"threadId": "x"})),
    ("levels", "s.stack(levels=0)", "%dbg where --session s1 --levels 0", ("stack", {"levels": 0})),
    ("count", "s.variables(1, count=0)", "%dbg vars --session s1 1 --count 0", ("variables", {"ref": 1, "count": 0})),
    ("context", "s.evaluate('x', context='shell')", "%dbg eval --session s1 --context shell x",
     ("evaluate", {"expression": "x", "context": "shell"})),
    ("port", "relay.attach(port=70000)", "%dbg attach --port 70000", ("attach", {"port": 70000})),
    ("kind", "relay.operations.call('connect', {'kind': 'gdb'})", "%dbg connect gdb x",
     ("connect", {"kind": "gdb"})),
    ("line", "relay.breakpoints.add('prog.py', 0)", "%bp prog.py:0",
     ("setBreakpoint", {"kind": "line", "path": "p", "line": 0})),
]


def test_a_bad_argument_is_invalid_request_naming_the_field_on_every_front_end(three: Three):
    t = three
    t.kernel.magic(f"s = relay.launch({t.app!r}, name='py')\ns.wait_for_stop()")
    for field, py, line, (command, args) in BAD:
        results = [t.py(py), t.magic(line, None), t.bad_comm(command, "s1", args)]
        for result in results:
            assert result.get("error") == "invalid_request" and f"'{field}'" in result["message"], (field, results)
        for result in results[:2]:
            assert result["field"] == field, (field, results)
    t.kernel.magic("s.terminate()")


def _events(answer: Any) -> Any:
    """A timeline answer as its event names (the bodies hold random thread ids and durations)."""
    return {"ok": [e["event"] for e in answer["ok"]]} if "ok" in answer else answer


def _without_duration(answer: Any) -> Any:
    return {"ok": {k: v for k, v in answer["ok"].items() if k != "duration_us"}} if answer.get("ok") else answer


def test_mycel_verbs_answer_the_same_on_every_front_end(kernel: Kernel):
    peers = [start_peer() for _ in range(3)]
    try:
        kernel.magic(SETUP)
        t = Three(kernel, open_frontend(kernel))
        kernel.magic(f"s = relay.connect_mycel({peers[0].url!r}, name='py')")
        kernel.magic(f"%dbg connect mycel {peers[1].url} --name mg")
        t.comm("connect", "session", None, kind="mycel", url=peers[2].url, name="cm")
        flows = same([t.py("s.inspect('flows')"), t.magic("%dbg inspect --session mg", "data"),
                      t.comm("inspect", "inspection")], "inspect")
        assert [f["name"] for f in flows][:2] == ["create_user", "get_users"]
        same([t.py("s.inspect('flow', 'create_user')"), t.magic("%dbg inspect flow create_user --session mg", "data"),
              t.comm("inspect", "inspection", what="flow", name="create_user")], "inspect flow")
        same_error([t.py("s.inspect('flow')"), t.magic("%dbg inspect flow --session mg", None),
                    t.comm("inspect", None, what="flow")], "inspect flow without a name", "invalid_request")
        sources = same([t.py("s.ready()"), t.magic("%dbg ready --session mg", "sources"), t.comm("ready", "sources")],
                       "ready")
        assert [s["connector"] for s in sources if s["manualConsume"]] == ["orders_queue"]
        kernel.magic("%bp stage process_order transform")
        consumed = same([t.py("s.consume('orders_queue')"), t.magic("%dbg consume orders_queue --session mg",
                                                                     "consumed"),
                         t.comm("consume", None, connector="orders_queue")], "consume")
        assert consumed == {"connector": "orders_queue", "done": False, "thread_id": 1}
        timeline = same([_events(t.py("s.timeline()")), _events(t.magic("%dbg timeline --session mg", "events")),
                         _events(t.comm("timeline", "events"))], "timeline")
        assert timeline[0] == "event.flowStart" and timeline[-1] == "event.stopped"
        ended = same([_without_duration(t.py("relay.operations.call('continue', {'session': 'py'})['thread_end']")),
                      _without_duration(t.magic("%dbg continue --session mg", "thread_end")),
                      _without_duration(t.comm("continue", "thread_end", wait=True))], "continue to the flow's end")
        assert ended["flow"] == "process_order" and ended["error"] is None and ended["output"]["orderId"] == "ORD-1"
        for name in ("py", "mg", "cm"):
            kernel.magic(f"%dbg stop --session {name}")
    finally:
        for peer in peers:
            peer.stop()
