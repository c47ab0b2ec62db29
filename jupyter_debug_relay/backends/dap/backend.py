"""A backend for any Debug Adapter Protocol adapter, over stdio or TCP."""

from __future__ import annotations

import asyncio
import os
from functools import partial
from typing import Any

from ...errors import RelayError
from ...model import Breakpoint, ExceptionInfo, Frame, Scope, StopInfo, Thread, Variable, VariablePage
from ...protocols.dap import DapChannel, DapRequestError
from ...transports import process
from ...transports.streams import ByteStream, forward_text, pipe_stream, read_what_is_there, tcp_stream
from ..base import Backend, BackendEvents
from . import messages as wire
from . import stdin as target_stdin
from .features import DapFeatures

STEP_COMMANDS = {"continue": "continue", "next": "next", "stepIn": "stepIn", "stepOut": "stepOut"}
CLIENT_CAPABILITIES = {  # what the relay tells an adapter about itself in ``initialize``
    "clientID": "jupyter_debug_relay", "clientName": "jupyter_debug_relay", "linesStartAt1": True,
    "columnsStartAt1": True, "pathFormat": "path", "supportsVariableType": True, "supportsVariablePaging": True,
    "supportsRunInTerminalRequest": True, "supportsStartDebuggingRequest": True, "supportsMemoryReferences": True,
    "supportsInvalidatedEvent": False, "locale": "en",
}
TERMINAL_ONLY = ("FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS")  # set by Jupyter kernels for their own output
READ_AT_END = 2.0  # seconds the end waits for the target's pipes to close after it exited
INTERNAL_EVENTS = {"module"}  # the adapter's account of what the target loaded (debugpy: each stack's modules): no news


class DapBackend(DapFeatures, Backend):
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
        self._readers: list[asyncio.Task[Any]] = []  # the target's stdout and stderr, read until they close
        self._initialized: asyncio.Future[None] | None = None
        self._exit_code: int | None = None
        self._stopped_before = False
        self._ended = False
        self._closing = False
        self._known_threads: dict[int, str] = {}
        self._bp_ids: dict[int, int] = {}  # the adapter's breakpoint id -> the relay's
        self._bp_requests: set[asyncio.Future[None]] = set()  # sets of breakpoints sent, not answered yet
        self._early_bp_events: dict[int, dict[str, Any]] = {}  # events for ids those answers will name
        self._line_bps: dict[str, dict[int, int]] = {}  # path -> line -> the relay's breakpoint id
        self._stopping: dict[int, str | None] = {}  # the relay's line breakpoints that stop -> their condition
        self._conditions: dict[int, str] = {}  # the relay's breakpoint id -> its condition
        self._pending_hits: list[int] = []  # threads that reached a breakpoint with the stopped one, reported next
        self._pushed_stacks: dict[int, wire.PushedStack] = {}  # thread -> the top frame of its last stop, if pushed
        self._function_bps: dict[str, int] = {}  # function name -> the relay's breakpoint id
        self._child_counts: dict[int, tuple[int, int]] = {}  # variables ref -> (named, indexed)
        self.ref_origin: dict[int, tuple[int | None, Variable]] = {}  # variables ref -> (frame id, its variable)
        self._instruction_refs: dict[int, str] = {}  # frame id -> its instructionPointerReference
        self._data_bps: dict[str, dict[str, Any]] = {}  # dataId -> the entry sent
        self._instruction_bps: dict[tuple[str, int], dict[str, Any]] = {}  # (reference, offset) -> the entry sent

    # -- connection -------------------------------------------------------------------------

    async def _open(self) -> None:
        if not self.adapter_cmd and self.port is None:
            raise RelayError("invalid_request", "A DAP session needs an adapter command or a port.")
        if self.adapter_cmd:
            self.adapter_proc = await process.spawn(self.adapter_cmd, cwd=self.cwd, what="debug adapter")
            self.spawn(forward_text(self.adapter_proc.stderr, None))
        if self.port is None:
            assert self.adapter_proc is not None
            stream = pipe_stream(self.adapter_proc, f"the adapter {self.adapter_name}")
        elif self.adapter_proc is None:
            stream = await tcp_stream(self.host, self.port)
        else:
            stream = await self._connect_when_listening()
        self.channel = DapChannel(stream, self._on_event, self._on_reverse, self._on_close, self.request_timeout)
        self.channel.start()
        self.startup.mark("connect")

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

    async def request(self, command: str, arguments: dict[str, Any] | None = None, timeout: float | None = None):
        """The adapter's answer to ``command``; an answer of the wrong shape fails the session (``protocol_error``)."""
        if self.channel is None or self.channel.closed:
            raise RelayError("not_running", f"The {self.kind} session is not connected.")
        answer = await self.channel.request(command, arguments, timeout)
        shape = wire.RESPONSES.get(command)
        return answer if shape is None else self.checked(shape, answer)

    @property
    def peer_name(self) -> str:
        return self.adapter_name

    def violated(self, error: RelayError) -> None:
        if not (self._ended or self._closing):
            self._ended = True
            self.events.on_lost(error)

    def initialize_arguments(self) -> dict[str, Any]:
        return {**CLIENT_CAPABILITIES, "adapterID": self.adapter_id}

    async def start(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        await self._open()
        self._initialized = asyncio.get_running_loop().create_future()
        self.capabilities = await self.request("initialize", self.initialize_arguments())
        assert self.channel is not None
        started = self.channel.send_request(self.request_kind, self.config)
        started.add_done_callback(lambda f: f.cancelled() or f.exception())  # a start that fails early leaves it
        done, _ = await asyncio.wait(
            {self._initialized, started}, timeout=self.channel.timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            raise RelayError("timeout", f"The adapter did not get ready within {self.channel.timeout:g} s.")
        if started.done() and started.exception() is not None:
            raise self.start_failed(started.exception())
        if not self._initialized.done():
            await self.channel.wait("initialized", self._initialized)
        self.startup.mark("handshake")
        await self.apply_breakpoints(breakpoints, exceptions)
        self.startup.mark("breakpoints")
        try:
            if self.capabilities.get("supportsConfigurationDoneRequest", True):
                await self.request("configurationDone")
            self.startup.mark("configuration done")
            await self.channel.wait(self.request_kind, started)
        except RelayError as exc:
            if not await self.ended_once_released():
                raise self.start_failed(exc) from exc

    async def ended_once_released(self) -> bool:
        """Whether the target, let run by ``configurationDone``, ended before its answers came (then the start
        succeeded, and its end is told); the adapter answers for its target here."""
        return False

    def start_failed(self, exc: BaseException | None) -> RelayError:
        """How a refused launch or attach is reported; subclasses add what they know."""
        if isinstance(exc, RelayError):
            return exc
        return RelayError("adapter_failed", f"The adapter could not {self.request_kind}: {exc}.")

    # -- what the adapter tells us --------------------------------------------------------

    def _on_event(self, message: dict[str, Any]) -> None:
        name = message["event"]
        body = message.get("body") or {}
        shape = wire.EVENTS.get(name)
        if shape is not None:
            try:
                body = self.checked(shape, body)
            except RelayError:
                return
        handler = getattr(self, f"_event_{name}", None)
        if handler is not None:
            handler(body)
        elif name not in INTERNAL_EVENTS:
            self.events.on_raw("dap", name, body)

    def _event_initialized(self, body: dict[str, Any]) -> None:
        if self._initialized is not None and not self._initialized.done():
            self._initialized.set_result(None)

    def _event_stopped(self, body: wire.StoppedEvent) -> None:
        self.startup.mark("run to first stop")
        self.spawn(self._report_stop(body, pushed=self._pushed_stacks.pop(body.get("threadId"), None)))

    def _event_relayStack(self, body: wire.PushedStack) -> None:
        """A thread's top frame, sent by the relay's boot as the thread stops, just before the stop is told."""
        self._pushed_stacks[body["threadId"]] = body

    async def _report_stop(self, body: wire.StoppedEvent, pending: list[int] | None = None,
                           pushed: wire.PushedStack | None = None) -> None:
        """Report a stop; ``pending`` are the threads still to report at a breakpoint (found here when None);
        ``pushed`` is the stopped thread's top frame if the peer sent it with the stop."""
        thread_id = body.get("threadId") or await self._any_thread(None)
        reason = body["reason"]
        if self.config.get("stopOnEntry") and not self._stopped_before:
            reason = "entry"  # whatever the adapter calls it (lldb-vscode: an exception, SIGSTOP)
        self._stopped_before = True
        stop = StopInfo(
            reason=reason,
            thread_id=thread_id,
            breakpoint_ids=await self._hit_ids(body.get("hitBreakpointIds") or []),
            description=wire.stop_description(body),
        )
        try:
            frames, _total = self._frames(pushed, 0) if pushed is not None else await self.stack(thread_id, 0, 1)
            stop.frame = frames[0] if frames else None
            stop.source_note = await self.source_changed(stop.frame) if stop.frame is not None else ""
            stop.source_changed = bool(stop.source_note)
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
        if pending is None:
            pending = await self._threads_at_breakpoints(stop) if "breakpoint" in reason else []
        self._pending_hits = pending
        stop.also_hit = list(pending)
        self.startup.mark("first stack")
        if self.terminal_proc is not None:
            await read_what_is_there()  # what the target printed before it stopped comes before the stop
        self.events.on_stopped(stop)

    async def _threads_at_breakpoints(self, stop: StopInfo) -> list[int]:
        """Other threads the stop at a breakpoint suspended on theirs; an adapter that reports each hit itself has
        none."""
        return []

    async def _exception_info(self, thread_id: int, body: wire.StoppedEvent) -> ExceptionInfo:
        if not self.capabilities.get("supportsExceptionInfoRequest"):
            return ExceptionInfo(type=body.get("description") or "exception", message=body.get("text") or "")
        return wire.exception_info(await self.request("exceptionInfo", {"threadId": thread_id}))

    def _event_continued(self, body: wire.ContinuedEvent) -> None:
        self._pending_hits = []
        all_threads = body.get("allThreadsContinued", True) is not False
        self.events.on_continued(None if all_threads else body.get("threadId"))

    def _event_output(self, body: wire.OutputEvent) -> None:
        category = wire.OUTPUT_CATEGORIES.get(body.get("category") or "console")
        if category is not None and body["output"]:
            self.events.on_output(category, body["output"])

    def _event_thread(self, body: wire.ThreadEvent) -> None:
        thread_id, reason = body["threadId"], body["reason"]
        if reason == "started":
            self._known_threads[thread_id] = ""
        elif reason == "exited":
            self._known_threads.pop(thread_id, None)
            self._pushed_stacks.pop(thread_id, None)
        self.events.on_thread(thread_id, reason)

    def _event_breakpoint(self, body: wire.BreakpointEvent) -> None:
        self._on_breakpoint_event(body["breakpoint"])

    def _event_process(self, body: wire.ProcessEvent) -> None:
        pid = body.get("systemProcessId")
        if pid and self.request_kind == "launch":
            self.pid = pid
            process.track_group(pid)
        self.events.on_raw("dap", "process", body)

    def _event_exited(self, body: wire.ExitedEvent) -> None:
        self._exit_code = body["exitCode"]

    def _event_terminated(self, body: dict[str, Any]) -> None:
        self.spawn(self._finish())

    async def _finish(self) -> None:
        if self.terminal_proc is not None and self._exit_code is None:
            try:
                self._exit_code = await asyncio.wait_for(self.terminal_proc.wait(), 2.0)
            except asyncio.TimeoutError:
                pass
        await self._end_once_read()

    async def _end_once_read(self) -> None:
        """End once the target's pipes are read to their end: what it wrote before it ended (a pipe holds 64 KiB)
        comes before its end. A child holding the pipes open keeps them open: at most ``READ_AT_END``."""
        if self._readers:
            await asyncio.wait(self._readers, timeout=READ_AT_END)
        self._end()

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self.events.on_exited(self._exit_code)

    def _on_close(self, error: Exception | None) -> None:
        if self._closing or self._ended:
            return
        self.spawn(self._lost(error))

    async def _lost(self, error: Exception | None) -> None:
        code = None
        if self.adapter_proc is not None:
            try:
                code = await asyncio.wait_for(self.adapter_proc.wait(), 0.5)
            except asyncio.TimeoutError:
                pass
        if self._ended or self._closing:
            return
        if error is None or (code is not None and getattr(error, "code", None) == "protocol_error"):
            # an adapter that exits was not breaking the protocol: its last message was cut short
            what = f"exited with code {code}" if code is not None else "closed the connection"
            error = RelayError("adapter_failed", f"The debug adapter {what}.")
        self._ended = True
        self.events.on_lost(error)

    # -- reverse requests -----------------------------------------------------------------

    async def _on_reverse(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if command not in wire.REVERSE:
            raise RelayError("unsupported", f"The relay does not answer the reverse request {command!r}.")
        checked = self.checked(wire.REVERSE[command], arguments)
        if command == "runInTerminal":
            return await self._run_in_terminal(checked)
        return await self.start_child(arguments)  # checked; passed on whole, as debugpy gave it

    async def _run_in_terminal(self, arguments: wire.RunInTerminalArguments) -> dict[str, Any]:
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
        self.startup.mark("spawn")
        self._readers = [self.spawn(self._read_stdout(proc.stdout)),
                         self.spawn(forward_text(proc.stderr, partial(self.events.on_output, "stderr")))]
        return proc

    async def _read_stdout(self, stdout: asyncio.StreamReader) -> None:
        """Read the target's stdout to its end (a backend that writes lines of its own into it takes them out)."""
        await forward_text(stdout, partial(self.events.on_output, "stdout"))

    async def start_child(self, arguments: dict[str, Any]) -> dict[str, Any]:
        raise RelayError("unsupported", f"{self.kind} does not debug child processes.")

    # -- execution --------------------------------------------------------------------------

    async def _any_thread(self, thread_id: int | None) -> int:
        if thread_id is not None:
            return thread_id
        threads = self._known_threads or {t.id: t.name for t in await self.threads()}
        if not threads:
            raise RelayError("not_running", "The target has no threads (yet).")
        return min(threads)

    async def resume(self, action: str, thread_id: int | None) -> None:
        """Continue reports the next thread that hit a breakpoint with the last stop's, if any; else resumes."""
        if action == "continue" and self._pending_hits:
            thread, *rest = self._pending_hits
            await self._report_stop({"reason": "breakpoint", "threadId": thread, "allThreadsStopped": True}, rest)
            return
        self._pending_hits = []
        await self._move(STEP_COMMANDS[action], {"threadId": await self._any_thread(thread_id)})

    async def _move(self, command: str, arguments: dict[str, Any]) -> None:
        """Ask the target to continue or step (a subclass may take more than the answer for it)."""
        await self.request(command, arguments)

    async def pause(self, thread_id: int | None) -> None:
        await self.request("pause", {"threadId": await self._any_thread(thread_id)})

    # -- inspection -------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        threads = [wire.thread(t) for t in (await self.request("threads"))["threads"]]
        self._known_threads = {t.id: t.name for t in threads}
        return threads

    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        args: dict[str, Any] = {"threadId": thread_id, "startFrame": start}
        if levels:
            args["levels"] = levels
        return self._frames(await self.request("stackTrace", args), start)

    def _frames(self, answer: wire.StackTraceResponse, start: int) -> tuple[list[Frame], int]:
        """The frames of a ``stackTrace`` answer that begins at ``start``, and how many the stack has."""
        for f in answer["stackFrames"]:
            if f.get("instructionPointerReference"):
                self._instruction_refs[f["id"]] = f["instructionPointerReference"]
        frames = [wire.frame(f) for f in answer["stackFrames"]]
        return frames, answer.get("totalFrames") or start + len(frames)

    async def scopes(self, frame_id: int) -> list[Scope]:
        answer: wire.ScopesResponse = await self.request("scopes", {"frameId": frame_id})
        for s in answer["scopes"]:
            self.ref_origin[s["variablesReference"]] = (frame_id, Variable(name=s["name"], value=""))
            self._child_counts[s["variablesReference"]] = wire.child_counts(s)
        return [wire.scope(s) for s in answer["scopes"]]

    def _known(self, var: Variable, frame_id: int | None) -> Variable:
        """Remember where a value with children came from, to page and evaluate its children later."""
        if var.ref:
            self._child_counts[var.ref] = (var.named, var.indexed)
            self.ref_origin[var.ref] = (frame_id, var)
        return var

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        frame_id = self.ref_origin.get(ref, (None, None))[0]
        named, indexed = self._child_counts.get(ref, (0, 0))
        paged = indexed > count and self.capabilities.get("supportsVariablePaging", True)
        args: dict[str, Any] = {"variablesReference": ref}
        if paged:  # a large container: page its indexed children on the adapter side
            args.update(filter="indexed", start=start, count=count)
        answer: wire.VariablesResponse = await self._on_ref(ref, "variables", args)
        items = [self._known(wire.variable(v["name"], v["value"], v), frame_id) for v in answer["variables"]]
        if paged:
            return VariablePage(items=items, start=start, total=indexed)
        return VariablePage(items=items[start : start + count], start=start, total=len(items))

    async def _on_ref(self, ref: int, command: str, args: dict[str, Any]) -> Any:
        """``command`` on variables reference ``ref``; refused for a reference this target never gave, the error names
        the reference rather than passing on the adapter's words."""
        try:
            return await self.request(command, args)
        except DapRequestError:
            if ref in self.ref_origin:
                raise
            raise RelayError("invalid_request", f"There is no variables reference {ref} at this stop.",
                             "Take ref from the scopes or variables of this stop (a ref of 0 has no children).",
                             {"field": "ref", "ref": ref, "command": command}) from None

    def sent_expression(self, expression: str, context: str) -> str:
        """What an ``evaluate`` sends the adapter for ``expression`` (a subclass may rewrite it)."""
        return expression

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        args: dict[str, Any] = {"expression": self.sent_expression(expression, context), "context": context}
        if frame_id is not None:
            args["frameId"] = frame_id
        try:
            answer: wire.EvaluateResponse = await self.request("evaluate", args)
        except DapRequestError as exc:
            if exc.body.get("oversized"):  # the value is fine; it is too big for one message
                raise RelayError("invalid_request", exc.message, "Ask for a part of the value.") from None
            raise wire.evaluation_failed(expression, exc.message) from None
        return self._known(wire.variable(expression, answer["result"], answer, expression), frame_id)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        self._need("supportsSetVariable", "setting variables")
        answer = await self._on_ref(ref, "setVariable", {"variablesReference": ref, "name": name, "value": value})
        return self._known(wire.variable(name, answer["value"], answer, ""), None)

    async def completions(self, text: str, frame_id: int | None) -> list[str]:
        self._need("supportsCompletionsRequest", "completions")
        args: dict[str, Any] = {"text": text, "column": len(text) + 1}
        if frame_id is not None:
            args["frameId"] = frame_id
        answer = await self.request("completions", args)
        return list(dict.fromkeys(t.get("text") or t["label"] for t in answer["targets"]))  # each once

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

    async def send_input(self, text: str, eof: bool = False) -> None:
        await target_stdin.send(self.terminal_proc, text, eof)

    def waiting_for_input(self) -> bool:
        return target_stdin.waiting(self.terminal_proc, self.pid)

    async def custom_request(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request(command, arguments)

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
