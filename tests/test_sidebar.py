"""JupyterLab's own debugger on a relay session (``%debug_session sidebar``): the debug_requests JupyterLab sends on
the control channel, answered by a real debug-relay kernel for a real debugpy target, and the debug_events it sends
back on IOPub; ipykernel's own cell debugging once the sidebar is off."""

from __future__ import annotations

import queue
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_debug_relay.kernel import ipykernel_names
from jupyter_debug_relay.source.editor_paths import SEED, EditorPaths, murmur2
from tests.conftest import assert_none_left, debug_processes, line_of
from tests.kernels import Kernel

pytestmark = pytest.mark.timeout(240)

ORDERS = textwrap.dedent('''
    from pricing import with_tax


    def total(orders):
        amount = 0
        for price in orders:
            amount += with_tax(price)
        return amount


    if __name__ == "__main__":
        print("total", total([3, 4, 5]))
''').lstrip()
PRICING = textwrap.dedent('''
    RATE = 0.5


    def with_tax(price):
        taxed = price * (1 + RATE)  # taxed
        return taxed
''').lstrip()
SPIN = "import time\nwhile True:\n    time.sleep(0.01)\n"


class DebugKernel(Kernel):
    """A kernel whose debug_events are kept apart, and which sends debug_requests as JupyterLab does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._seq = 0
        self._control = threading.Lock()
        super().__init__(*args, **kwargs)

    def _read(self) -> None:
        client_get = self.client.get_iopub_msg

        def get(timeout: float) -> dict[str, Any]:
            while True:
                msg = client_get(timeout=timeout)
                if msg["msg_type"] != "debug_event":
                    return msg
                self.events.put(msg["content"])

        self.client.get_iopub_msg = get  # type: ignore[method-assign]
        super()._read()

    def send_debug(self, content: Any) -> dict[str, Any]:
        """Send a debug_request's content as it is; its debug_reply's content."""
        with self._control:
            msg = self.client.session.msg("debug_request", content)
            self.client.control_channel.send(msg)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                reply = self.client.control_channel.get_msg(timeout=15)
                if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                    assert reply["msg_type"] == "debug_reply"
                    return reply["content"]
            raise AssertionError(f"no debug_reply to {content!r}")

    def debug(self, command: str, **arguments: Any) -> dict[str, Any]:
        self._seq += 1
        return self.send_debug({"type": "request", "seq": self._seq, "command": command, "arguments": arguments})

    def ok(self, command: str, **arguments: Any) -> dict[str, Any]:
        reply = self.debug(command, **arguments)
        assert reply.get("success") is True, (command, reply)
        return reply.get("body") or {}

    def event(self, name: str, timeout: float = 15.0, seen: list[str] | None = None) -> dict[str, Any]:
        """The next debug_event ``name`` (the others before it go into ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {name} debug_event within {timeout:g} s (saw {seen})")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if event.get("event") == name:
                return event
            if seen is not None:
                seen.append(event.get("event"))

    def drain(self) -> list[str]:
        names = []
        while not self.events.empty():
            names.append(self.events.get_nowait().get("event"))
        return names


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("sidebar")
    (where / "orders.py").write_text(ORDERS)
    (where / "pricing.py").write_text(PRICING)
    (where / "spin.py").write_text(SPIN)
    return where


@pytest.fixture(scope="module")
def lab(folder):
    before = set(debug_processes())
    k = DebugKernel("debug-relay", cwd=str(folder))
    try:
        yield k
    finally:
        k.close()
        assert_none_left(debug_processes, before, 10.0)


def test_murmur2_is_jupyterlabs_and_ipykernels():
    # computed by @jupyterlab/debugger's hash.ts (murmur2) in node with ipykernel's seed
    assert murmur2("i = 0", SEED) == 3033251095
    assert murmur2("def total(orders):\n    return sum(orders)\n", SEED) == 2836235993
    assert murmur2("é€😀", SEED) == 3159310966 and murmur2("", SEED) == 3990065800
    from ipykernel.compiler import murmur2_x86

    assert all(murmur2(t, SEED) == murmur2_x86(t, SEED) for t in (ORDERS, PRICING, "abc", "x" * 1001))


def test_editor_names_map_to_files_by_content(tmp_path):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    real = tmp_path / "deep" / "er" / "orders.py"
    real.write_text(ORDERS)
    (tmp_path / "other.py").write_text(PRICING)
    paths = EditorPaths("/tmp/ipykernel_1/", ".py")
    name = paths.name(ORDERS)
    assert name == f"/tmp/ipykernel_1/{murmur2(ORDERS)}.py" and paths.is_hashed(name)
    assert not paths.is_hashed(str(real)) and paths.inward(str(real), [tmp_path]) == str(real)
    assert paths.outward(str(real)) == str(real)  # no editor showed it yet
    assert paths.inward(name, [str(tmp_path)]) == str(real)
    assert paths.outward(str(real)) == name  # a stop there lights the editor's line
    real.write_text(ORDERS + "# changed\n")  # the editor's text is no longer the file's
    assert paths.outward(str(real)) == str(real)
    assert paths.inward(paths.name("no file has this text"), [str(tmp_path)]) is None


def test_jupyterlabs_requests_drive_a_session(lab, folder):
    orders, pricing = str(folder / "orders.py"), str(folder / "pricing.py")
    on = lab.magic("%debug_session sidebar")
    assert on.text.startswith("sidebar on: JupyterLab's debugger drives the newest session")
    # the debugger's bug button: debugInfo, initialize, attach, the breakpoints it knows, configurationDone
    info = lab.ok("debugInfo")
    prefix = info["tmpFilePrefix"]
    assert (info["hashMethod"], info["hashSeed"], info["tmpFileSuffix"]) == ("Murmur2", SEED, ".py")
    assert info["isStarted"] is False and info["stoppedThreads"] == [] and info["richRendering"] is False
    assert lab.ok("initialize", clientID="jupyterlab", adapterID="debug-relay", pathFormat="path",
                  linesStartAt1=True, columnsStartAt1=True)["supportsConfigurationDoneRequest"] is True
    lab.ok("attach")
    lab.event("initialized")
    assert lab.ok("debugInfo")["isStarted"] is True
    # a gutter click in orders.py open in the file editor: dumpCell, debugInfo, setBreakpoints on the hashed name
    name = lab.ok("dumpCell", code=ORDERS)["sourcePath"]
    assert name == f"{prefix}{murmur2(ORDERS)}.py"
    line = line_of(orders, "amount = 0")
    lab.ok("debugInfo")
    answer = lab.ok("setBreakpoints", source={"path": name}, breakpoints=[{"line": line}], sourceModified=False)
    assert [(b["line"], b["source"]["path"]) for b in answer["breakpoints"]] == [(line, name)]
    assert lab.magic("%bp list").text.startswith(f"breakpoint 1 at orders.py:{line}")  # the relay's, as %bp
    # a %bp line shows in the gutter: debugInfo lists it under the editor's name
    tax = line_of(pricing, "# taxed")
    lab.magic(f"%bp pricing.py:{tax} if price == 4")
    told = lab.event("breakpoint")["body"]["breakpoint"]
    while told["source"]["path"] != pricing:
        told = lab.event("breakpoint")["body"]["breakpoint"]
    assert told["line"] == tax
    listed = {b["source"]: [p["line"] for p in b["breakpoints"]] for b in lab.ok("debugInfo")["breakpoints"]}
    assert listed == {name: [line], pricing: [tax]}
    lab.ok("configurationDone")
    lab.drain()
    # a cell launches the script: the stop is told under the editor's name, so the editor's line lights up
    launched = lab.magic("%debug_session launch orders.py")
    assert f"paused at orders.py:{line}" in launched.text, launched.text
    stopped = lab.event("stopped")
    thread = stopped["body"]["threadId"]
    assert stopped["body"]["reason"] == "breakpoint"
    assert lab.ok("debugInfo")["stoppedThreads"] == [thread]
    frames = lab.ok("stackTrace", threadId=thread)["stackFrames"]
    assert (frames[0]["name"], frames[0]["line"], frames[0]["source"]["path"]) == ("total", line, name)
    assert lab.ok("source", source={"path": name})["content"] == ORDERS
    scopes = lab.ok("scopes", frameId=frames[0]["id"])["scopes"]
    variables = lab.ok("variables", variablesReference=scopes[0]["variablesReference"])["variables"]
    assert {v["name"]: v["value"] for v in variables}["orders"] == "[3, 4, 5]"
    # Next moves one line
    lab.ok("next", threadId=thread)
    lab.event("stopped")
    frames = lab.ok("stackTrace", threadId=thread)["stackFrames"]
    assert (frames[0]["line"], frames[0]["source"]["path"]) == (line + 1, name)
    # Continue to the %bp in pricing.py: a file no editor shows, opened from source (read through the session)
    lab.ok("continue", threadId=thread)
    lab.event("continued")
    lab.event("stopped")
    frames = lab.ok("stackTrace", threadId=thread)["stackFrames"]
    assert [(f["name"], f["line"], f["source"]["path"]) for f in frames[:2]] == [
        ("with_tax", tax, pricing), ("total", line_of(orders, "with_tax(price)"), name)]
    assert lab.ok("source", source={"path": pricing}, sourceReference=0)["content"] == PRICING
    scopes = lab.ok("scopes", frameId=frames[0]["id"])["scopes"]
    variables = lab.ok("variables", variablesReference=scopes[0]["variablesReference"])["variables"]
    assert {v["name"]: v["value"] for v in variables}["price"] == "4"
    assert lab.ok("evaluate", expression="price * 10", frameId=frames[0]["id"], context="repl")["result"] == "40"
    # Continue ends the program: the call stack clears (continued), then terminated
    lab.ok("continue", threadId=thread)
    seen: list[str] = []
    lab.event("terminated", seen=seen)
    assert "continued" in seen and "exited" in seen, seen
    assert lab.ok("debugInfo")["stoppedThreads"] == []
    lab.magic("%bp clear")


def test_bad_requests_get_clear_answers(lab, folder):
    lab.magic("%debug_session sidebar")
    malformed = lab.send_debug({"type": "request", "seq": 1})
    assert malformed["success"] is False and malformed["body"]["error"]["code"] == "invalid_request"
    assert "command" in malformed["message"]
    wrong = lab.send_debug({"type": "request", "seq": 2, "command": "scopes", "arguments": [1, 2]})
    assert wrong["success"] is False and wrong["body"]["error"]["code"] == "invalid_request"
    unknown = lab.debug("goto", threadId=1, targetId=3)
    assert unknown["success"] is False and unknown["body"]["error"]["code"] == "unsupported"
    dumped = lab.debug("dumpCell", code=42)
    assert dumped["success"] is False and "dumpCell needs code" in dumped["message"]
    # a hashed name no file has: an unverified breakpoint with a message, nothing added
    prefix = lab.ok("debugInfo")["tmpFilePrefix"]
    nowhere = f"{prefix}{murmur2('no file has this text')}.py"
    answer = lab.ok("setBreakpoints", source={"path": nowhere}, breakpoints=[{"line": 3}])
    [bp] = answer["breakpoints"]
    assert bp["verified"] is False and "No file of the target's has the text" in bp["message"]
    assert lab.magic("%bp list").text.startswith("no breakpoints")
    # the session has ended: a stack request says so
    stack = lab.debug("stackTrace", threadId=1)
    assert stack["success"] is False and stack["body"]["error"]["code"] == "target_exited", stack
    # an unknown session: the magic's one-line error
    missing = lab.magic("%debug_session sidebar nosuch")
    assert missing.text.startswith("error session_not_found: There is no session 'nosuch'"), missing.text
    assert "Traceback" not in missing.streams


def test_a_control_request_never_waits_on_the_target(lab, folder):
    lab.magic("%debug_session sidebar")
    lab.magic("%debug_session launch --name spin --stop-on-entry spin.py")
    lab.drain()
    thread = lab.ok("threads")["threads"][0]["id"]
    frame = lab.ok("stackTrace", threadId=thread)["stackFrames"][0]["id"]
    started = time.monotonic()
    slow = lab.debug("evaluate", expression="__import__('time').sleep(30)", frameId=frame, context="repl")
    waited = time.monotonic() - started
    assert slow["success"] is False and slow["body"]["error"]["code"] == "timeout" and waited < 7, (waited, slow)
    # the target still runs the evaluation: an interrupt on the control channel is answered at once
    msg = lab.client.session.msg("interrupt_request", {})
    started = time.monotonic()
    lab.client.control_channel.send(msg)
    reply = lab.client.control_channel.get_msg(timeout=10)
    while reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
        reply = lab.client.control_channel.get_msg(timeout=10)
    assert reply["content"]["status"] == "ok" and time.monotonic() - started < 6
    started = time.monotonic()
    lab.debug("threads")  # answered, or refused, within the control channel's wait
    assert time.monotonic() - started < 6
    lab.magic("%debug_session stop --session spin")
    lab.event("terminated")


def test_a_named_session_and_off(lab, folder):
    named = lab.magic("%debug_session sidebar spin")
    assert named.text.startswith("sidebar on: JupyterLab's debugger drives session spin"), named.text
    off = lab.magic("%debug_session sidebar off")  # JupyterLab's debugger was started on the session
    assert off.text == ("sidebar off: JupyterLab's debugger debugs the notebook's own cells again once it restarts: "
                        "click the bug button off, then on")
    field = lab.magic("m = get_ipython().run_line_magic\nm('debug_session', 'sidebar')\n"
                      "m('debug_session', 'sidebar off').restart_debugger")
    assert field.text == "False"  # on again, and off before JupyterLab started its debugger on it
    assert lab.ok("debugInfo")["richRendering"] is True  # ipykernel's own answer


def test_off_gives_jupyterlab_the_kernels_own_cell_debugging(folder):
    before = set(debug_processes())
    k = DebugKernel("debug-relay", cwd=str(folder))
    try:
        k.magic("%debug_session sidebar")
        off = k.magic("%debug_session sidebar off")  # JupyterLab never started its debugger: nothing to restart
        assert off.text == "sidebar off: JupyterLab's debugger debugs the notebook's own cells again"
        k.ok("initialize", clientID="jupyterlab", adapterID="python", pathFormat="path", linesStartAt1=True,
             columnsStartAt1=True)
        k.ok("attach")
        cell = "def double(x):\n    y = x * 2\n    return y\n\ndouble(21)\n"
        path = k.ok("dumpCell", code=cell)["sourcePath"]
        k.ok("setBreakpoints", source={"path": path}, breakpoints=[{"line": 2}], sourceModified=False)
        k.ok("configurationDone")
        k.client.execute(cell)
        thread = k.event("stopped", timeout=30)["body"]["threadId"]
        frames = k.ok("stackTrace", threadId=thread)["stackFrames"]
        assert (frames[0]["name"], frames[0]["line"], frames[0]["source"]["path"]) == ("double", 2, path)
        k.ok("continue", threadId=thread)
        k.ok("disconnect", restart=False, terminateDebuggee=False)
    finally:
        k.close()
    assert_none_left(debug_processes, before, 10.0)


def test_the_ipykernel_names_it_uses_are_declared_and_checked():
    assert ipykernel_names.problems(again=True) == []
    assert {f"{n.module}.{n.attribute}" for n in ipykernel_names.NAMES} >= {
        "ipykernel.kernelbase.Kernel.debug_request", "ipykernel.ipkernel.IPythonKernel.do_debug_request",
        "ipykernel.compiler.get_tmp_hash_seed"}
    changed = (ipykernel_names.Name("ipykernel.kernelbase", "Kernel.debug_request_gone", "a renamed handler"),
               ipykernel_names.Name("ipykernel.compiler", "get_tmp_hash_seed", "the seed", lambda fn: fn() == 1,
                                    "a function answering 1"))
    assert ipykernel_names.check(changed) == [
        "ipykernel.kernelbase.Kernel.debug_request_gone is missing (used for a renamed handler)",
        "ipykernel.compiler.get_tmp_hash_seed is not a function answering 1 (used for the seed)"]


def test_on_an_ipykernel_that_differs_sidebar_says_so_and_the_cells_debugger_stays(lab):
    lab.magic("import ipykernel.compiler as c, jupyter_debug_relay.kernel.ipykernel_names as n\n"
              "seed = c.get_tmp_hash_seed\nc.get_tmp_hash_seed = lambda: 7\nn.problems(again=True)")
    try:
        refused = lab.magic("%debug_session sidebar")
        assert refused.text.startswith("error unsupported: This ipykernel (") and "get_tmp_hash_seed" in \
            refused.text, refused.text
        assert lab.ok("debugInfo")["richRendering"] is True  # still ipykernel's own debugger
    finally:
        lab.magic("c.get_tmp_hash_seed = seed\nn.problems(again=True)")


def test_the_variables_panel_shows_the_stopped_frames_variables(lab, folder):
    lab.magic("%debug_session sidebar")
    lab.magic("%bp clear")
    tax = line_of(str(folder / "pricing.py"), "# taxed")
    lab.magic(f"%bp pricing.py:{tax}")
    lab.drain()
    launched = lab.magic("%debug_session launch --name priced orders.py")
    assert f"paused at pricing.py:{tax}" in launched.text, launched.text
    thread = lab.event("stopped")["body"]["threadId"]
    # JupyterLab's Variables panel asks inspectVariables (when the debugger starts, after a cell runs)
    variables = lab.ok("inspectVariables")["variables"]
    assert all({"name", "value", "type", "variablesReference"} <= set(v) for v in variables), variables
    shown = {v["name"]: v for v in variables}
    assert [name for name in shown if not name.endswith(" variables")] == ["price", "RATE"], shown  # locals first
    assert (shown["price"]["value"], shown["price"]["type"], shown["RATE"]["value"]) == ("3", "int", "0.5")
    # debugpy's groups, as in ipykernel's answer: the panel expands them with variables
    functions = lab.ok("variables", variablesReference=shown["function variables"]["variablesReference"])
    assert [v["name"] for v in functions["variables"]] == ["with_tax"]
    rich = lab.ok("richInspectVariables", variableName="price", frameId=lab.ok("stackTrace", threadId=thread)[
        "stackFrames"][0]["id"])
    assert rich == {"data": {"text/plain": "3"}, "metadata": {}}
    # running: nothing stopped, nothing to list, no error
    lab.magic("%bp clear")
    lab.ok("continue", threadId=thread)
    lab.event("terminated")
    assert lab.ok("inspectVariables") == {"variables": []}
    assert lab.ok("richInspectVariables", variableName="price") == {"data": {}, "metadata": {}}
    lab.magic("%debug_session launch --name spinning spin.py")
    assert lab.ok("inspectVariables") == {"variables": []}
    assert lab.ok("richInspectVariables", variableName="time") == {"data": {}, "metadata": {}}
    lab.magic("%debug_session stop --session spinning")
    lab.event("terminated")


JOB = "def work(n):\n    doubled = n * 2\n    return doubled\n\n\nprint(work(21))\n"


def test_a_gutter_breakpoint_no_file_had_binds_when_a_session_starts(lab, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")  # not under the kernel's folder: found only once launched
    job = elsewhere / "job.py"
    job.write_text(JOB)
    lab.magic("%debug_session sidebar")
    lab.magic("%bp clear")
    prefix = lab.ok("debugInfo")["tmpFilePrefix"]
    name = lab.ok("dumpCell", code=JOB)["sourcePath"]
    assert name == f"{prefix}{murmur2(JOB)}.py"
    [unbound] = lab.ok("setBreakpoints", source={"path": name}, breakpoints=[{"line": 2}])["breakpoints"]
    assert unbound["verified"] is False and "No file of the target's has the text" in unbound["message"]
    assert lab.magic("%bp list").text.startswith("no breakpoints")
    lab.drain()
    # the launch finds the file with the editor's text: the gutter's breakpoint stops the new session
    launched = lab.magic(f"%debug_session launch --name job {job}")
    assert f"paused at {job}:2 in work()" in launched.text, launched.text
    thread = lab.event("stopped")["body"]["threadId"]
    frames = lab.ok("stackTrace", threadId=thread)["stackFrames"]
    assert (frames[0]["name"], frames[0]["line"], frames[0]["source"]["path"]) == ("work", 2, name)
    assert lab.magic("%bp list").text.startswith("breakpoint ") and "job.py:2" in lab.magic("%bp list").text
    listed = {b["source"]: [p["line"] for p in b["breakpoints"]] for b in lab.ok("debugInfo")["breakpoints"]}
    assert listed == {name: [2]}
    # the gutter owns it as if bound at once: removing it there removes the relay's
    assert lab.ok("setBreakpoints", source={"path": name}, breakpoints=[]) == {"breakpoints": []}
    assert lab.magic("%bp list").text.startswith("no breakpoints")
    lab.ok("continue", threadId=thread)
    lab.event("terminated")
