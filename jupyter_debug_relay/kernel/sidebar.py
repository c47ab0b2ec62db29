"""``sidebar``: JupyterLab's own debugger (its sidebar, gutter breakpoints, step buttons) drives a relay session.

JupyterLab sends ``debug_request``s on the control channel; ipykernel answers them through
``kernel.do_debug_request``. While the sidebar is on, that name is shadowed on the kernel object by ``Sidebar.handle``,
which answers from the relay loop: the DAP requests through the DAP front end's ``Requests`` (each an operation on the
session), JupyterLab's own (debugInfo, dumpCell, inspectVariables, ...) here. The session's events go out as
``debug_event``s on IOPub. Off, the shadow is removed and ipykernel's debugger answers as before.

A control request never waits on the target: it is answered within ``CONTROL_WAIT`` seconds or refused with
``timeout``, so interrupt and shutdown requests, queued behind it, keep working. JupyterLab names a file editor's text
by its hash (``source/editor_paths.py``); a breakpoint there binds to the file with that text, and a stop in that file
is told under the editor's name so its line lights up. Nothing JupyterLab sends is run in the kernel.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from typing import Any

from ..dapserver import requests as dap
from ..errors import RelayError
from ..facade.events import Event
from ..facade.relay import Relay
from ..operations import OPERATIONS
from ..operations.editors import SIDEBARS
from ..source.editor_paths import SEED, EditorPaths
from . import ipykernel_names

log = logging.getLogger(__name__)

CONTROL_WAIT = 4.0  # the longest a debug_request holds the control channel
GLOBAL = frozenset({"add_breakpoint", "remove_breakpoint"})  # a gutter's breakpoints are the relay's, as %bp
EXCEPTION_PATHS = ["Python Exceptions"]
HIDDEN = frozenset({"__name__", "__doc__", "__package__", "__loader__", "__spec__", "__annotations__",
                    "__builtins__", "__builtin__", "__cached__"})  # not listed by inspectVariables, as ipykernel
MAX_INSPECTED = 1000  # variables inspectVariables answers at most
MAX_BESIDE = 200  # files of a starting program's folder hashed for the gutter's unbound breakpoints


class _EditorNames:
    """``Requests``' view of the editor names: the real file of a name already bound (``Sidebar.bind``)."""

    def __init__(self, paths: EditorPaths) -> None:
        self.paths = paths

    def inward(self, path: str) -> str | None:
        return self.paths.real.get(path) if self.paths.is_hashed(path) else path

    def outward(self, path: str | None) -> str | None:
        return self.paths.outward(path)


class Sidebar:
    """One kernel's answer to JupyterLab's debugger: off (ipykernel's own) or on for a session of its relay."""

    def __init__(self, kernel: Any, relay: Relay) -> None:
        self.kernel, self.relay = kernel, relay
        self.on = False
        self.follows: str | None = None  # a session id; None: the newest
        self.started = False  # JupyterLab sent initialize (and no disconnect since)
        self.paths = EditorPaths(self._prefix(), ".py", SEED)
        self.names = _EditorNames(self.paths)
        self.requests = dap.Requests(self._run, self.names)
        self._subscription: Any = None
        self._stopped: dict[str, int] = {}  # session id -> its stopped thread, until it continues or ends
        self.unbound: dict[str, dict[str, Any]] = {}  # an editor's name no file had yet -> its setBreakpoints
        self._seq = itertools.count(1)
        SIDEBARS[relay.manager] = self

    @staticmethod
    def _prefix() -> str:
        try:
            from ipykernel.compiler import get_tmp_directory

            return get_tmp_directory() + os.sep
        except ImportError:  # the check of the names says so when the sidebar is turned on
            return os.path.join(os.path.realpath("/tmp"), f"ipykernel_{os.getpid()}") + os.sep

    # -- on and off (the operation, on the relay loop) ---------------------------------------------------------

    async def switch(self, ctx: Any, session: str | None, off: bool) -> dict[str, Any]:
        """Turn the sidebar on for ``session`` (None: the newest, following new ones), or off."""
        if off:
            left_on = self.on and self.started
            self._off()
            return self.answer(restart_debugger=left_on)
        else:
            found = ipykernel_names.problems()
            if found:
                raise RelayError("unsupported", f"This ipykernel ({ipykernel_names.version()}) differs from the one "
                                 f"the sidebar is built on ({ipykernel_names.PROVEN}): " + "; ".join(found) + ".",
                                 "Install an ipykernel the sidebar supports; JupyterLab's debugger keeps debugging "
                                 "the notebook's own cells meanwhile.", {"problems": found})
            self.follows = ctx.manager.get(session).id if session is not None else None
            if not self.on:
                self._subscription = ctx.manager.bus.subscribe(self._tell)
                ctx.manager.bus.taps.append(self._launching)
                self.kernel.do_debug_request = self.handle  # shadows ipykernel's method on this kernel only
                self.on = True
        return self.answer()

    def answer(self, restart_debugger: bool = False) -> dict[str, Any]:
        """What ``sidebar`` answers: on or off, the session followed, the hash settings told to JupyterLab, and
        whether JupyterLab's debugger, left on by the sidebar going off, must be turned off and on (its bug button)
        before it debugs the cells: JupyterLab keeps it started, and ipykernel's own never was."""
        return {"sidebar": self.on, "follows": self.follows, "hash_seed": self.paths.seed,
                "tmp_prefix": self.paths.prefix, "restart_debugger": restart_debugger}

    def _off(self) -> None:
        if "do_debug_request" in vars(self.kernel):
            del self.kernel.do_debug_request  # ipykernel's own again
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        taps = self.relay.manager.bus.taps
        if self._launching in taps:
            taps.remove(self._launching)
        self.unbound.clear()
        self.on = self.started = False
        self.follows = None

    def close(self) -> None:
        """The kernel's relay closes: ipykernel's debugger answers again."""
        self._off()

    # -- requests (the control thread's loop, answered on the relay loop) -------------------------------------

    async def handle(self, message: Any) -> dict[str, Any]:
        """The ``debug_reply`` to one ``debug_request`` (shadows ``kernel.do_debug_request``)."""
        request = message if isinstance(message, dict) else {}
        try:
            future = self.relay.submit(self.reply(message))
        except RelayError as exc:
            return dap.refusal(request, exc)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), CONTROL_WAIT)
        except asyncio.TimeoutError:
            return dap.refusal(request, RelayError(
                "timeout", f"The debugger did not answer {request.get('command')} within {CONTROL_WAIT:g} s.",
                "The target may be busy or hung; the kernel's interrupt and shutdown keep working."))

    async def reply(self, message: Any) -> dict[str, Any]:
        """The answer to one request, on the relay loop: a DAP response, or a refusal with a code, never a raise."""
        if not isinstance(message, dict) or not isinstance(message.get("command"), str):
            return dap.refusal(message if isinstance(message, dict) else {}, RelayError(
                "invalid_request", "A debug_request must be a DAP request: an object with a command.",
                'e.g. {"type": "request", "seq": 1, "command": "debugInfo", "arguments": {}}'))
        args = message.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return dap.refusal(message, RelayError("invalid_request", f"{message['command']}: arguments must be an "
                                                   "object.", 'e.g. "arguments": {}'))
        try:
            own = getattr(self, f"_{message['command']}", None)
            body = await own(args) if own is not None else await self.requests.answer(message["command"], args)
        except RelayError as exc:
            return dap.refusal(message, exc)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:  # arguments of the wrong shape
            return dap.refusal(message, RelayError(
                "invalid_request", f"{message['command']}: its arguments do not read as DAP's ({exc}).",
                "See the Debug Adapter Protocol for the request's arguments."))
        return dap.response(message, body or {})

    async def _run(self, name: str, args: dict[str, Any]) -> Any:
        """Run an operation for ``Requests``: on the followed session, except the breakpoints (the relay's)."""
        given = {k: v for k, v in args.items() if v is not None}
        if name not in GLOBAL and OPERATIONS[name].takes_session and self.follows is not None:
            given["session"] = self.follows
        return await self.relay.operations.run(name, given)

    async def _status(self) -> Any:
        """The followed session's info, or None when there is none yet."""
        try:
            return (await self._run("status", {}))["session"]
        except RelayError as exc:
            if exc.code == "session_not_found":
                return None
            raise

    # JupyterLab's requests beyond DAP's, and DAP's that mean something else here

    async def _debugInfo(self, args: dict[str, Any]) -> dict[str, Any]:
        info = await self._status()
        stopped = [info.stop.thread_id] if info is not None and info.state == "paused" and info.stop else []
        by_file: dict[str, list[dict[str, Any]]] = {}
        for bp in (await self._run("breakpoints", {}))["breakpoints"]:
            if bp.kind == "line" and bp.path and bp.line and bp.enabled:
                by_file.setdefault(self.paths.outward(bp.path) or bp.path, []).append({"line": bp.line})
        return {"isStarted": self.started, "hashMethod": "Murmur2", "hashSeed": self.paths.seed,
                "tmpFilePrefix": self.paths.prefix, "tmpFileSuffix": self.paths.suffix,
                "breakpoints": [{"source": path, "breakpoints": lines} for path, lines in by_file.items()],
                "stoppedThreads": stopped, "richRendering": False, "exceptionPaths": EXCEPTION_PATHS,
                "copyToGlobals": False}

    async def _initialize(self, args: dict[str, Any]) -> dict[str, Any]:
        self.requests.initialize(args)
        self.started = True
        return dict(dap.CAPABILITIES)

    async def _attach(self, args: dict[str, Any]) -> dict[str, Any]:
        self._send("initialized", {})
        return {}

    async def _disconnect(self, args: dict[str, Any]) -> dict[str, Any]:
        self.started = False  # the target runs on; its breakpoints stay the relay's
        return {}

    async def _dumpCell(self, args: dict[str, Any]) -> dict[str, Any]:
        code = args.get("code")
        if not isinstance(code, str):
            raise RelayError("invalid_request", "dumpCell needs code (a string).", 'e.g. {"code": "x = 1\\n"}')
        name = self.paths.dumped(code)
        await self.bind(name)
        return {"sourcePath": name}

    async def _setBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        path = (args.get("source") or {}).get("path")
        if isinstance(path, str):
            self.unbound.pop(path, None)
            specs = args.get("breakpoints")
            if await self.bind(path) is None and isinstance(specs, list) and specs and \
                    all(isinstance(spec, dict) for spec in specs):
                self.unbound[path] = args  # tried again when a session starts (``_launching``)
        return await self.requests.answer("setBreakpoints", args)

    async def _source(self, args: dict[str, Any]) -> dict[str, Any]:
        path = (args.get("source") or {}).get("path")
        if isinstance(path, str) and path in self.paths.texts and self.paths.real.get(path) is None:
            return {"content": self.paths.texts[path]}  # a cell's or an unsaved editor's own text
        return await self.requests.answer("source", args)

    async def _inspectVariables(self, args: dict[str, Any]) -> dict[str, Any]:
        """The stopped frame's locals then globals, as ipykernel lists the kernel's (none while the target runs)."""
        info = await self._status()
        if info is None or info.state != "paused" or info.stop is None:
            return {"variables": []}
        found: dict[str, dict[str, Any]] = {}
        try:
            scopes = (await self._run("scopes", {}))["scopes"]  # the top frame of the stop
            wanted = [s for s in scopes if s.name.lower() in ("locals", "globals")] or \
                [s for s in scopes if not s.expensive]
            for scope in wanted:
                start, total = 0, 1
                while start < total and len(found) < MAX_INSPECTED:
                    page = await self._run("variables", {"ref": scope.ref, "start": start,
                                                         "count": MAX_INSPECTED})
                    for v in page.items:
                        if v.name not in HIDDEN:
                            found.setdefault(v.name, dap.variable(v))  # a local hides a global of its name
                    start, total = start + max(len(page.items), 1), page.total
        except RelayError as exc:
            if exc.code not in ("not_paused", "target_exited"):  # it ran on meanwhile: nothing to list
                raise
            return {"variables": []}
        return {"variables": list(found.values())[:MAX_INSPECTED]}

    async def _richInspectVariables(self, args: dict[str, Any]) -> dict[str, Any]:
        """A stopped frame's variable as plain text (debugInfo says richRendering false); nothing while running."""
        name = args.get("variableName")
        info = await self._status()
        if not isinstance(name, str) or not name.isidentifier() or info is None or info.state != "paused":
            return {"data": {}, "metadata": {}}
        frame = args.get("frameId") if isinstance(args.get("frameId"), int) else None
        try:  # a bare name: looked up in the frame, nothing called
            value = (await self._run("evaluate", {"expression": name, "frame_id": frame, "context": "hover"}))
        except RelayError:
            return {"data": {}, "metadata": {}}
        return {"data": {"text/plain": value["variable"].value}, "metadata": {}}

    async def _modules(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"modules": [], "totalModules": 0}

    async def _copyToGlobals(self, args: dict[str, Any]) -> dict[str, Any]:
        raise RelayError("unsupported", "copyToGlobals would run the target's value in the kernel.",
                         "Copy a value into the notebook with `%debug_session pull NAME` (data formats only).")

    async def bind(self, name: str) -> str | None:
        """The real file of an editor's name, looked for (off the loop) among the files the user named, the
        sessions' programs' folders and the kernel's folder."""
        if not self.paths.is_hashed(name):
            return name
        files = [bp.path for bp in (await self._run("breakpoints", {}))["breakpoints"] if bp.path]
        folders = [os.getcwd()]
        for info in (await self.relay.operations.run("sessions", {}))["sessions"]:
            program = (info.target or "").split(" ")[0]
            if os.path.isabs(program) and os.path.isfile(program):
                files.insert(0, program)
                folders.insert(0, os.path.dirname(program))
        return await asyncio.to_thread(self.paths.inward, name, folders, files)

    def _launching(self, event: Event) -> None:
        """A bus tap: when a session starts, bind the editors' names no file had, before its breakpoints are sent.

        Called in ``publish`` itself, so the breakpoint is in the relay's store when the starting session takes the
        store's breakpoints; JupyterLab is then answered as for a new ``setBreakpoints`` (``_rebind``)."""
        if not self.unbound or event.event != "session" or event.body.get("state") != "launching":
            return
        try:
            self._bind_unbound(event)
        except Exception:  # a tap must not fail the publish: the gutter's breakpoints stay unverified
            log.warning("the gutter's unbound breakpoints were not tried again", exc_info=True)

    def _bind_unbound(self, event: Event) -> None:
        """Bind the names no file had to the starting session's program or a file of its folder."""
        target = str((event.body.get("info") or {}).get("target") or "")
        program = target if os.path.isfile(target) else target.split(" ")[0]  # a path with spaces, or "prog args"
        if not os.path.isabs(program) or not os.path.isfile(program):
            return
        files = [program, *_beside(program)]  # in publish itself: the program's folder only, not below it
        for name, args in list(self.unbound.items()):
            real = self.paths.inward(name, (), files)  # the kernel's folder was looked in already
            if real is None:
                continue
            del self.unbound[name]
            for spec in args.get("breakpoints") or []:
                try:
                    self.relay.manager.breakpoints.add_line(
                        real, spec.get("line") - self.requests.shift, spec.get("condition"),
                        spec.get("hitCondition"), spec.get("logMessage"))
                except (RelayError, TypeError):  # told when JupyterLab's request is answered again below
                    continue
            self.relay.manager.spawn(self._rebind(args))

    async def _rebind(self, args: dict[str, Any]) -> None:
        """JupyterLab's breakpoints of a name just bound, set as it asked: kept as the gutter's, told as events."""
        try:
            await self.requests.answer("setBreakpoints", args)
        except RelayError as exc:
            log.warning("the gutter's breakpoints of %s were not set: %s", (args.get("source") or {}).get("path"), exc)

    # -- events (on the relay loop) ---------------------------------------------------------------------------

    def _tell(self, event: Event) -> None:
        newest = next(reversed(self.relay.manager.sessions), None)  # followed when none is named
        if event.session not in ("", self.follows or newest):
            return
        if event.event == "stopped":
            self._stopped[event.session] = event.body.get("thread_id") or 1
        elif event.event == "continued":
            self._stopped.pop(event.session, None)
        elif event.event == "terminated":  # JupyterLab clears its call stack on continued, not on terminated
            thread = self._stopped.pop(event.session, None)
            self._send("continued", {"threadId": thread or 1, "allThreadsContinued": True})
        for message in dap.events(event, self.requests.shift, self.names):
            self._send(message["event"], message["body"])

    def _send(self, name: str, body: dict[str, Any]) -> None:
        try:
            self.kernel._publish_debug_event({"type": "event", "seq": next(self._seq), "event": name, "body": body})
        except Exception:  # a closing kernel: nothing to tell
            log.debug("debug_event %s not sent", name, exc_info=True)


def _beside(program: str) -> list[str]:
    """The ``.py`` files of ``program``'s folder (at most ``MAX_BESIDE``), by name."""
    try:
        names = sorted(os.listdir(os.path.dirname(program)))
    except OSError:
        return []
    found = [os.path.join(os.path.dirname(program), n) for n in names if n.endswith(".py")]
    return found[:MAX_BESIDE]


def install(kernel: Any, relay: Relay) -> Sidebar | None:
    """The sidebar of ``kernel`` over its relay (None outside an ipykernel kernel)."""
    if kernel is None or not hasattr(kernel, "do_debug_request"):
        return None
    sidebar = Sidebar(kernel, relay)
    relay.on_close(_closer(sidebar))
    return sidebar


def _closer(sidebar: Sidebar) -> Any:
    async def close() -> None:
        sidebar.close()

    return close
