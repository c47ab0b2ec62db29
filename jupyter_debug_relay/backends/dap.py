"""A backend for any Debug Adapter Protocol adapter, over stdio or TCP."""

from __future__ import annotations

import asyncio
import base64
import os
from functools import partial
from typing import Any

from ..errors import RelayError, Unsupported
from ..model import (
    Breakpoint,
    BreakpointResult,
    ExceptionInfo,
    Frame,
    Scope,
    StopInfo,
    Thread,
    Variable,
    VariablePage,
)
from ..protocols.dap import DapChannel, DapRequestError
from ..transports import process
from ..transports.streams import ByteStream, forward_text, pipe_stream, tcp_stream
from .base import Backend, BackendEvents

EXCEPTION_FILTERS = {"raised": ["raised", "uncaught"], "uncaught": ["uncaught"], "none": []}
STEP_COMMANDS = {"continue": "continue", "next": "next", "stepIn": "stepIn", "stepOut": "stepOut"}
REPLACED_SETS = {  # kind -> (capability, what it is called, the request that replaces the whole set)
    "data": ("supportsDataBreakpoints", "data breakpoints", "setDataBreakpoints"),
    "instruction": ("supportsInstructionBreakpoints", "instruction breakpoints", "setInstructionBreakpoints"),
}
BREAKPOINT_OPTIONS = (  # Breakpoint field, DAP key, the capability it needs, what it is called
    ("condition", "condition", "supportsConditionalBreakpoints", "conditional breakpoints"),
    ("hit_condition", "hitCondition", "supportsHitConditionalBreakpoints", "hit conditions"),
    ("log_message", "logMessage", "supportsLogPoints", "logpoints"),
)
TERMINAL_ONLY = ("FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS")  # set by Jupyter kernels for their own output
OUTPUT_CATEGORIES = {"stdout": "stdout", "stderr": "stderr", "console": "console", "important": "console"}


def _last_line(message: str) -> str:
    """The line that says what went wrong: a compiler-style ``error:`` line (lldb, gdb), else a traceback's last."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return errors[0] if errors else lines[-1] if lines else message


def _present(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


class DapBackend(Backend):
    """Drives one DAP adapter: a command run on pipes, or a host and port to connect to."""

    kind = "dap"

    def __init__(
        self,
        events: BackendEvents,
        *,
        adapter: list[str] | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        request: str = "launch",
        config: dict[str, Any] | None = None,
        cwd: str | None = None,
        request_timeout: float = 30.0,
        adapter_id: str = "dap",
        name: str | None = None,
        target: str | None = None,
    ) -> None:
        super().__init__(events)
        self.adapter_cmd = adapter
        self.host, self.port = host, port
        self.request_kind = request
        self.config = dict(config or {})
        self.cwd = cwd
        self.request_timeout = request_timeout
        self.adapter_id = adapter_id
        self.adapter_name = name or adapter_id  # how messages name the adapter
        self.target = target or (" ".join(adapter) if adapter else f"{host}:{port}")
        self.channel: DapChannel | None = None
        self.adapter_proc: asyncio.subprocess.Process | None = None
        self.terminal_proc: asyncio.subprocess.Process | None = None
        self._initialized: asyncio.Future[None] | None = None
        self._exit_code: int | None = None
        self._stopped_before = False
        self._ended = False
        self._closing = False
        self._known_threads: dict[int, str] = {}
        self._bp_ids: dict[int, int] = {}  # the adapter's breakpoint id -> the relay's
        self._line_bps: dict[str, dict[int, int]] = {}  # path -> line -> the relay's breakpoint id
        self._function_bps: dict[str, int] = {}  # function name -> the relay's breakpoint id
        self._child_counts: dict[int, tuple[int, int]] = {}  # variables ref -> (named, indexed)
        self.ref_origin: dict[int, tuple[int | None, Variable]] = {}  # variables ref -> (frame id, its variable)
        self._instruction_refs: dict[int, str] = {}  # frame id -> its instructionPointerReference
        self._data_bps: dict[str, dict[str, Any]] = {}  # dataId -> the entry sent
        self._instruction_bps: dict[tuple[str, int], dict[str, Any]] = {}  # (reference, offset) -> the entry sent
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- connection -------------------------------------------------------------------------

    async def _open(self) -> None:
        if not self.adapter_cmd and self.port is None:
            raise RelayError("invalid_request", "A DAP session needs an adapter command or a port.")
        if self.adapter_cmd:
            self.adapter_proc = await process.spawn(self.adapter_cmd, cwd=self.cwd, what="debug adapter")
            self._spawn(forward_text(self.adapter_proc.stderr, None))
        if self.port is None:
            assert self.adapter_proc is not None
            stream = pipe_stream(self.adapter_proc, f"the adapter {self.adapter_name}")
        elif self.adapter_proc is None:
            stream = await tcp_stream(self.host, self.port)
        else:
            stream = await self._connect_when_listening()
        self.channel = DapChannel(stream, self._on_event, self._on_reverse, self._on_close, self.request_timeout)
        self.channel.start()

    async def _connect_when_listening(self, within: float = 10.0) -> ByteStream:
        """Connect to the port of an adapter started here, once it listens (while it lives)."""
        assert self.adapter_proc is not None and self.port is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            try:
                return await tcp_stream(self.host, self.port, timeout=max(0.1, deadline - loop.time()))
            except RelayError:
                if self.adapter_proc.returncode is not None:
                    raise RelayError("adapter_failed", f"The adapter {self.adapter_name} exited with code "
                                     f"{self.adapter_proc.returncode} before listening on port {self.port}.",
                                     details={"address": f"{self.host}:{self.port}"}) from None
                if loop.time() >= deadline:
                    raise
            await asyncio.sleep(0.05)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def request(self, command: str, arguments: dict[str, Any] | None = None, timeout: float | None = None):
        if self.channel is None or self.channel.closed:
            raise RelayError("not_running", f"The {self.kind} session is not connected.")
        return await self.channel.request(command, arguments, timeout)

    def initialize_arguments(self) -> dict[str, Any]:
        return {
            "clientID": "jupyter_debug_relay",
            "clientName": "jupyter_debug_relay",
            "adapterID": self.adapter_id,
            "linesStartAt1": True,
            "columnsStartAt1": True,
            "pathFormat": "path",
            "supportsVariableType": True,
            "supportsVariablePaging": True,
            "supportsRunInTerminalRequest": True,
            "supportsStartDebuggingRequest": True,
            "supportsMemoryReferences": True,
            "supportsInvalidatedEvent": False,
            "locale": "en",
        }

    async def start(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        await self._open()
        self._initialized = asyncio.get_running_loop().create_future()
        self.capabilities = await self.request("initialize", self.initialize_arguments())
        assert self.channel is not None
        started = self.channel.send_request(self.request_kind, self.config)
        done, _ = await asyncio.wait(
            {self._initialized, started}, timeout=self.channel.timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            raise RelayError("timeout", f"The adapter did not get ready within {self.channel.timeout:g} s.")
        if started.done() and started.exception() is not None:
            raise self.start_failed(started.exception())
        if not self._initialized.done():
            await self.channel.wait("initialized", self._initialized)
        await self.apply_breakpoints(breakpoints, exceptions)
        if self.capabilities.get("supportsConfigurationDoneRequest", True):
            await self.request("configurationDone")
        try:
            await self.channel.wait(self.request_kind, started)
        except RelayError as exc:
            raise self.start_failed(exc) from exc

    def start_failed(self, exc: BaseException | None) -> RelayError:
        """How a refused launch or attach is reported; subclasses add what they know."""
        if isinstance(exc, RelayError):
            return exc
        return RelayError("adapter_failed", f"The adapter could not {self.request_kind}: {exc}.")

    # -- what the adapter tells us --------------------------------------------------------

    def _on_event(self, message: dict[str, Any]) -> None:
        name = message.get("event", "")
        body = message.get("body") or {}
        handler = getattr(self, f"_event_{name}", None)
        if handler is not None:
            handler(body)
        else:
            self.events.on_raw("dap", name, body)

    def _event_initialized(self, body: dict[str, Any]) -> None:
        if self._initialized is not None and not self._initialized.done():
            self._initialized.set_result(None)

    def _event_stopped(self, body: dict[str, Any]) -> None:
        self._spawn(self._report_stop(body))

    async def _report_stop(self, body: dict[str, Any]) -> None:
        thread_id = int(body.get("threadId") or 0)
        if not thread_id:
            thread_id = await self._any_thread(None)
        reason = body.get("reason", "pause")
        if self.config.get("stopOnEntry") and not self._stopped_before:
            reason = "entry"  # whatever the adapter calls it (lldb-vscode: an exception, SIGSTOP)
        self._stopped_before = True
        stop = StopInfo(
            reason=reason,
            thread_id=thread_id,
            breakpoint_ids=[self._bp_ids.get(i, i) for i in body.get("hitBreakpointIds") or []],
            description=body.get("description") or body.get("text") or "",
        )
        try:
            frames, _total = await self.stack(thread_id, 0, 1)
            stop.frame = frames[0] if frames else None
            if stop.frame is not None and not stop.breakpoint_ids and "breakpoint" in stop.reason:
                stop.breakpoint_ids = self._breakpoints_at(stop.frame)
            if stop.reason == "exception":
                stop.exception = await self._exception_info(thread_id, body)
        except RelayError:
            pass  # the target moved on or ended; the stop is still reported
        if body.get("allThreadsStopped"):
            stop.stopped_threads = sorted(self._known_threads) or [thread_id]
        else:
            stop.stopped_threads = [thread_id]
        self.events.on_stopped(stop)

    async def _exception_info(self, thread_id: int, body: dict[str, Any]) -> ExceptionInfo:
        if not self.capabilities.get("supportsExceptionInfoRequest"):
            return ExceptionInfo(type=body.get("description", "exception"), message=body.get("text", ""))
        info = await self.request("exceptionInfo", {"threadId": thread_id})
        details = info.get("details") or {}
        return ExceptionInfo(
            type=details.get("typeName") or info.get("exceptionId", ""),
            message=details.get("message") or info.get("description", ""),
            traceback=details.get("stackTrace", ""),
        )

    def _event_continued(self, body: dict[str, Any]) -> None:
        all_threads = body.get("allThreadsContinued", True)
        self.events.on_continued(None if all_threads else body.get("threadId"))

    def _event_output(self, body: dict[str, Any]) -> None:
        category = OUTPUT_CATEGORIES.get(body.get("category", "console"))
        if category is not None and body.get("output"):
            self.events.on_output(category, body["output"])

    def _event_thread(self, body: dict[str, Any]) -> None:
        thread_id, reason = int(body.get("threadId", 0)), body.get("reason", "")
        if reason == "started":
            self._known_threads[thread_id] = ""
        elif reason == "exited":
            self._known_threads.pop(thread_id, None)
        self.events.on_thread(thread_id, reason)

    def _event_breakpoint(self, body: dict[str, Any]) -> None:
        bp = body.get("breakpoint") or {}
        relay_id = self._bp_ids.get(bp.get("id", -1))
        if relay_id is not None:
            self.events.on_breakpoint(relay_id, self._result(bp))

    def _event_process(self, body: dict[str, Any]) -> None:
        pid = body.get("systemProcessId")
        if isinstance(pid, int) and self.request_kind == "launch":
            self.pid = pid
            process.track_group(pid)
        self.events.on_raw("dap", "process", body)

    def _event_exited(self, body: dict[str, Any]) -> None:
        self._exit_code = body.get("exitCode")

    def _event_terminated(self, body: dict[str, Any]) -> None:
        self._spawn(self._finish())

    async def _finish(self) -> None:
        if self.terminal_proc is not None and self._exit_code is None:
            try:
                self._exit_code = await asyncio.wait_for(self.terminal_proc.wait(), 2.0)
            except asyncio.TimeoutError:
                pass
        self._end()

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self.events.on_exited(self._exit_code)

    def _on_close(self, error: Exception | None) -> None:
        if self._closing or self._ended:
            return
        self._spawn(self._lost(error))

    async def _lost(self, error: Exception | None) -> None:
        code = None
        if self.adapter_proc is not None:
            try:
                code = await asyncio.wait_for(self.adapter_proc.wait(), 0.5)
            except asyncio.TimeoutError:
                pass
        if self._ended or self._closing:
            return
        if error is None:
            what = f"exited with code {code}" if code is not None else "closed the connection"
            error = RelayError("adapter_failed", f"The debug adapter {what}.")
        self._ended = True
        self.events.on_lost(error)

    # -- reverse requests -----------------------------------------------------------------

    async def _on_reverse(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if command == "runInTerminal":
            return await self._run_in_terminal(arguments)
        if command == "startDebugging":
            return await self.start_child(arguments)
        raise RelayError("unsupported", f"The relay does not answer the reverse request {command!r}.")

    async def _run_in_terminal(self, arguments: dict[str, Any]) -> dict[str, Any]:
        proc = await self._spawn_target(arguments["args"], arguments.get("cwd") or self.cwd, arguments.get("env"))
        return {"processId": proc.pid, "shellProcessId": proc.pid}

    async def _spawn_target(self, argv: list[str], cwd: str | None,
                            env: dict[str, str | None] | None) -> asyncio.subprocess.Process:
        """Start the debuggee on our pipes (its output read as it comes); ``None`` in ``env`` unsets a variable."""
        # The target writes to pipes, not to a terminal: colours forced on for the kernel do not apply.
        full_env = {key: value for key, value in os.environ.items() if key not in TERMINAL_ONLY}
        for key, value in (env or {}).items():
            if value is None:
                full_env.pop(key, None)
            else:
                full_env[key] = value
        self.terminal_proc = proc = await process.spawn(argv, cwd=cwd, env=full_env, what="target")
        self._spawn(forward_text(proc.stdout, partial(self.events.on_output, "stdout")))
        self._spawn(forward_text(proc.stderr, partial(self.events.on_output, "stderr")))
        return proc

    async def start_child(self, arguments: dict[str, Any]) -> dict[str, Any]:
        raise RelayError("unsupported", f"{self.kind} does not debug child processes.")

    # -- breakpoints ------------------------------------------------------------------------

    def _result(self, bp: dict[str, Any]) -> BreakpointResult:
        return BreakpointResult(
            verified=bool(bp.get("verified")), line=bp.get("line"), message=bp.get("message") or ""
        )

    def _results(self, bps: list[Breakpoint], answer: dict[str, Any]) -> list[BreakpointResult]:
        results = []
        for bp, theirs in zip(bps, answer.get("breakpoints") or [], strict=False):
            if "id" in theirs:
                self._bp_ids[theirs["id"]] = bp.id
            results.append(self._result(theirs))
        return results

    def _breakpoints_at(self, frame: Frame) -> list[int]:
        """The relay's breakpoints at a frame, for adapters whose ``stopped`` event names none."""
        at = self._line_bps.get(frame.path or "", {}).get(frame.line) or self._function_bps.get(frame.name)
        return [at] if at else []

    def unsupported(self, feature: str) -> Unsupported:
        return Unsupported(self.adapter_name, feature)

    def _need(self, capability: str, feature: str) -> None:
        """Raise ``unsupported`` unless the adapter's ``initialize`` answer set ``capability``."""
        if not self.capabilities.get(capability):
            raise self.unsupported(f"{feature} (its capabilities lack {capability})")

    def _entries(self, bps: list[Breakpoint], kind: str) -> tuple[list[dict[str, Any]], dict[int, RelayError]]:
        """The DAP entries of the breakpoints the adapter can take, and why it cannot take the others."""
        entries, refused = [], {}
        for index, bp in enumerate(bps):
            entry: dict[str, Any] = {"line": bp.line} if kind == "line" else {"name": bp.name}
            try:
                self.check_condition(bp)
                for field, key, capability, feature in BREAKPOINT_OPTIONS:
                    if getattr(bp, field):
                        self._need(capability, feature)
                        entry[key] = getattr(bp, field)
            except RelayError as exc:  # unsupported, or invalid_condition
                refused[index] = exc
                continue
            entries.append(entry)
        return entries, refused

    def check_condition(self, bp: Breakpoint) -> None:
        """Refuse a condition the target's language rejects; a generic adapter judges its own (it says so)."""

    def _merge(self, bps: list[Breakpoint], answer: dict[str, Any], refused: dict[int, RelayError]
               ) -> list[BreakpointResult]:
        """One result per breakpoint: the adapter's for those sent, unverified with the reason for the others."""
        sent = [bp for index, bp in enumerate(bps) if index not in refused]
        theirs = iter(self._results(sent, answer))
        return [BreakpointResult(verified=False, message=refused[index].message, refused=True) if index in refused
                else next(theirs, BreakpointResult(verified=False)) for index in range(len(bps))]

    async def set_breakpoints(self, path: str, bps: list[Breakpoint]) -> list[BreakpointResult]:
        entries, refused = self._entries(bps, "line")
        answer = await self.request(
            "setBreakpoints", {"source": {"path": path}, "breakpoints": entries, "sourceModified": False}
        )
        results = self._merge(bps, answer, refused)
        self._line_bps[path] = {r.line or bp.line or 0: bp.id for bp, r in zip(bps, results, strict=True) if r.verified}
        return results

    async def set_function_breakpoints(self, bps: list[Breakpoint]) -> list[BreakpointResult]:
        self._need("supportsFunctionBreakpoints", "function breakpoints")
        entries, refused = self._entries(bps, "function")
        answer = await self.request("setFunctionBreakpoints", {"breakpoints": entries})
        results = self._merge(bps, answer, refused)
        self._function_bps = {bp.name or "": bp.id for bp, r in zip(bps, results, strict=True) if r.verified}
        return results

    async def set_exception_breakpoints(self, mode: str) -> None:
        offered = {f.get("filter") for f in self.capabilities.get("exceptionBreakpointFilters") or []}
        if not offered:
            raise self.unsupported("exception breakpoints")
        filters = [f for f in EXCEPTION_FILTERS[mode] if f in offered]
        await self.request("setExceptionBreakpoints", {"filters": filters})

    # -- execution --------------------------------------------------------------------------

    async def _any_thread(self, thread_id: int | None) -> int:
        if thread_id is not None:
            return thread_id
        threads = self._known_threads or {t.id: t.name for t in await self.threads()}
        if not threads:
            raise RelayError("not_running", "The target has no threads (yet).")
        return min(threads)

    async def resume(self, action: str, thread_id: int | None) -> None:
        await self.request(STEP_COMMANDS[action], {"threadId": await self._any_thread(thread_id)})

    async def pause(self, thread_id: int | None) -> None:
        await self.request("pause", {"threadId": await self._any_thread(thread_id)})

    # -- inspection -------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        answer = await self.request("threads")
        threads = [Thread(id=t["id"], name=t.get("name", "")) for t in answer.get("threads") or []]
        self._known_threads = {t.id: t.name for t in threads}
        return threads

    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        args: dict[str, Any] = {"threadId": thread_id, "startFrame": start}
        if levels:
            args["levels"] = levels
        answer = await self.request("stackTrace", args)
        frames = [self._frame(f) for f in answer.get("stackFrames") or []]
        return frames, int(answer.get("totalFrames") or start + len(frames))

    def _frame(self, f: dict[str, Any]) -> Frame:
        source = f.get("source") or {}
        if f.get("instructionPointerReference"):
            self._instruction_refs[f["id"]] = f["instructionPointerReference"]
        return Frame(
            id=f["id"],
            name=f.get("name", ""),
            path=source.get("path"),
            line=f.get("line", 0),
            column=f.get("column", 1),
            source_ref=source.get("sourceReference") or 0,
        )

    async def scopes(self, frame_id: int) -> list[Scope]:
        answer = await self.request("scopes", {"frameId": frame_id})
        scopes = []
        for s in answer.get("scopes") or []:
            self.ref_origin[s["variablesReference"]] = (frame_id, Variable(name=s["name"], value=""))
            scopes.append(Scope(name=s["name"], ref=s["variablesReference"], expensive=s.get("expensive", False)))
            self._child_counts[s["variablesReference"]] = (s.get("namedVariables", 0), s.get("indexedVariables", 0))
        return scopes

    def _variable(self, v: dict[str, Any], value_key: str = "value", frame_id: int | None = None) -> Variable:
        var = Variable(
            name=v.get("name", ""),
            value=v.get(value_key, ""),
            type=v.get("type") or "",
            ref=v.get("variablesReference", 0),
            named=v.get("namedVariables") or 0,
            indexed=v.get("indexedVariables") or 0,
            evaluate_name=v.get("evaluateName") or "",
        )
        if var.ref:
            self._child_counts[var.ref] = (var.named, var.indexed)
            self.ref_origin[var.ref] = (frame_id, var)
        return var

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        frame_id = self.ref_origin.get(ref, (None, None))[0]
        named, indexed = self._child_counts.get(ref, (0, 0))
        if indexed > count and self.capabilities.get("supportsVariablePaging", True):
            # Large containers: page the indexed children on the adapter side.
            answer = await self.request(
                "variables", {"variablesReference": ref, "filter": "indexed", "start": start, "count": count}
            )
            items = [self._variable(v, frame_id=frame_id) for v in answer.get("variables") or []]
            return VariablePage(items=items, start=start, total=indexed)
        answer = await self.request("variables", {"variablesReference": ref})
        every = [self._variable(v, frame_id=frame_id) for v in answer.get("variables") or []]
        return VariablePage(items=every[start : start + count], start=start, total=len(every))

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        args: dict[str, Any] = {"expression": expression, "context": context}
        if frame_id is not None:
            args["frameId"] = frame_id
        try:
            answer = await self.request("evaluate", args)
        except DapRequestError as exc:
            raise RelayError("invalid_request", f"{expression!r} failed in the target: {_last_line(exc.message)}",
                             "Fix the expression; it runs in the selected frame of the target.",
                             {"command": "evaluate", "adapter_message": exc.message}) from None
        return self._variable({"name": expression, "evaluateName": expression, **answer}, value_key="result",
                              frame_id=frame_id)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        self._need("supportsSetVariable", "setting variables")
        answer = await self.request("setVariable", {"variablesReference": ref, "name": name, "value": value})
        return self._variable({"name": name, **answer})

    async def completions(self, text: str, frame_id: int | None) -> list[str]:
        self._need("supportsCompletionsRequest", "completions")
        args: dict[str, Any] = {"text": text, "column": len(text) + 1}
        if frame_id is not None:
            args["frameId"] = frame_id
        answer = await self.request("completions", args)
        return [t.get("text") or t["label"] for t in answer.get("targets") or []]

    async def source(self, frame: Frame) -> str:
        if frame.path and os.path.isfile(frame.path):
            with open(frame.path, encoding="utf-8", errors="replace") as f:
                return f.read()
        if not frame.source_ref:
            raise RelayError("file_not_found", f"Frame {frame.name!r} has no source to show.")
        answer = await self.request(
            "source", {"source": {"sourceReference": frame.source_ref}, "sourceReference": frame.source_ref}
        )
        return answer.get("content", "")

    async def send_input(self, text: str) -> None:
        proc = self.terminal_proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise RelayError("unsupported", "The target has no stdin to write to: it was not started by this relay.",
                             "Only targets launched here take input; give an attached process its input yourself.")
        proc.stdin.write(text.encode())
        await proc.stdin.drain()

    async def custom_request(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request(command, arguments)

    # -- what only some adapters can do (each checked against the adapter's capabilities) ---

    async def _gated(self, capability: str, feature: str, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self._need(capability, feature)
        return await self.request(command, arguments)

    async def data_breakpoint_info(self, name: str, ref: int | None, frame_id: int | None) -> dict[str, Any]:
        """Whether ``name`` (in container ``ref``, or in frame ``frame_id``) can be watched: dataId, accessTypes."""
        args: dict[str, Any] = {"name": name}
        if ref:
            args["variablesReference"] = ref
        if frame_id is not None:
            args["frameId"] = frame_id
        return await self._gated("supportsDataBreakpoints", "data breakpoints", "dataBreakpointInfo", args)

    async def _replace_set(self, kind: str, table: dict[Any, dict[str, Any]], key: Any,
                           entry: dict[str, Any] | None) -> dict[str, Any]:
        """Add (or with ``entry=None`` remove) one entry of a set the adapter replaces whole; its answer for it."""
        capability, feature, command = REPLACED_SETS[kind]
        self._need(capability, feature)
        before = dict(table)
        if entry is None:
            table.pop(key, None)
        else:
            table[key] = entry
        try:
            answer = await self.request(command, {"breakpoints": list(table.values())})
        except RelayError:
            table.clear()
            table.update(before)
            raise
        results = answer.get("breakpoints") or []
        index = list(table).index(key) if key in table else -1
        return results[index] if 0 <= index < len(results) else {}

    async def set_data_breakpoint(self, data_id: str, access_type: str | None, condition: str | None,
                                  hit_condition: str | None) -> dict[str, Any]:
        entry = {"dataId": data_id, "accessType": access_type, "condition": condition, "hitCondition": hit_condition}
        return await self._replace_set("data", self._data_bps, data_id, _present(entry))

    async def remove_data_breakpoint(self, data_id: str) -> None:
        await self._replace_set("data", self._data_bps, data_id, None)

    async def set_instruction_breakpoint(self, reference: str, offset: int, condition: str | None,
                                         hit_condition: str | None) -> dict[str, Any]:
        entry = {"instructionReference": reference, "offset": offset, "condition": condition,
                 "hitCondition": hit_condition}
        return await self._replace_set("instruction", self._instruction_bps, (reference, offset), _present(entry))

    async def remove_instruction_breakpoint(self, reference: str, offset: int) -> None:
        await self._replace_set("instruction", self._instruction_bps, (reference, offset), None)

    async def disassemble(self, reference: str | None, frame_id: int | None, offset: int, instruction_offset: int,
                          count: int) -> list[dict[str, Any]]:
        """``count`` instructions at ``reference``, else at the instruction pointer of frame ``frame_id``."""
        self._need("supportsDisassembleRequest", "disassembly")
        reference = reference or (self._instruction_refs.get(frame_id) if frame_id is not None else None)
        if not reference:
            raise RelayError("invalid_request", f"{self.adapter_name} gave no instruction pointer for this frame.",
                             "Pass a memory reference (an address such as 0x401136).")
        answer = await self.request("disassemble", {
            "memoryReference": reference, "offset": offset, "instructionOffset": instruction_offset,
            "instructionCount": count, "resolveSymbols": True})
        return answer.get("instructions") or []

    async def read_memory(self, reference: str, offset: int, count: int) -> dict[str, Any]:
        answer = await self._gated("supportsReadMemoryRequest", "reading memory", "readMemory",
                                   {"memoryReference": reference, "offset": offset, "count": count})
        return {"address": answer.get("address", reference), "data": base64.b64decode(answer.get("data") or ""),
                "unreadable": answer.get("unreadableBytes", 0)}

    async def write_memory(self, reference: str, offset: int, data: bytes, allow_partial: bool) -> int:
        answer = await self._gated("supportsWriteMemoryRequest", "writing memory", "writeMemory", {
            "memoryReference": reference, "offset": offset, "data": base64.b64encode(data).decode(),
            "allowPartial": allow_partial})
        return int(answer.get("bytesWritten", len(data)))

    async def modules(self, start: int, count: int | None) -> list[dict[str, Any]]:
        args = {"startModule": start, **({"moduleCount": count} if count else {})}
        answer = await self._gated("supportsModulesRequest", "modules", "modules", args)
        return answer.get("modules") or []

    async def loaded_sources(self) -> list[dict[str, Any]]:
        answer = await self._gated("supportsLoadedSourcesRequest", "loaded sources", "loadedSources", {})
        return answer.get("sources") or []

    async def restart(self) -> None:
        """The adapter's own ``restart`` with the same configuration; the target runs again."""
        await self._gated("supportsRestartRequest", "restart", "restart", {"arguments": self.config})
        self._exit_code = None
        self.events.on_continued(None)

    # -- ending -----------------------------------------------------------------------------

    async def detach(self) -> None:
        if self.request_kind == "launch":
            raise RelayError("unsupported", "A launched target belongs to its session and cannot be left running.",
                             "End it with terminate (`%debug_session stop`); to detach later, start it with "
                             "`python -m debugpy --listen PORT` and attach by port.")
        self._closing = True  # the adapter may answer a disconnect by closing the connection: that is a success
        try:
            await self.request("disconnect", {"terminateDebuggee": False}, timeout=5)
        except RelayError as exc:
            if exc.code != "adapter_failed":
                self._closing = False
                raise
        if self.terminal_proc is not None:
            process.untrack_group(self.terminal_proc.pid)
        if self.pid:
            process.untrack_group(self.pid)
        self.terminal_proc, self.pid = None, None
        await self.close()

    async def terminate(self) -> None:
        if self.channel is not None and not self.channel.closed and not self._ended:
            try:
                if self.capabilities.get("supportsTerminateRequest") and self.request_kind == "launch":
                    await self.request("terminate", timeout=2)
                else:
                    await self.request("disconnect", {"terminateDebuggee": True}, timeout=2)
            except RelayError:
                pass
            await self._await_end(2.0)
        await self.close()

    async def _await_end(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not self._ended and loop.time() < deadline:
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        self._closing = True
        if self.channel is not None:
            await self.channel.close()
        for proc in (self.terminal_proc, self.adapter_proc):
            if proc is not None:
                await process.reap(proc)
        if self.pid:
            process.kill_group(self.pid)
            process.untrack_group(self.pid)
        for task in list(self._tasks):
            task.cancel()
