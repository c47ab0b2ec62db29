"""The debugpy backend: Python scripts, modules and running processes, at the speed floor."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import glob
import json
import logging
import os
import secrets
import sys
import time
from typing import Any

import debugpy.launcher

from ...errors import RelayError
from ...model import (
    AsyncTasks,
    Breakpoint,
    BreakpointResult,
    ExceptionInfo,
    Frame,
    StopInfo,
    Variable,
    VariablePage,
)
from ...protocols import recorder
from ...source import python as python_source
from ...transports import procfs
from ...transports.streams import forward_text
from ..base import BackendEvents
from ..dap import messages as wire
from ..dap.backend import DapBackend
from . import features, interpreter, lending, native_wait, probe_answers, recording, source_changes, tasks
from .crash_traceback import python_order
from .log_lines import LogLines, marks
from .slow_inspection import SlowInspection
from .values import BYTES_TYPES, PythonValues

log = logging.getLogger(__name__)

NODELAY_BOOT = os.path.join(os.path.dirname(__file__), "_nodelay_boot.py")
BOOT_SCRIPT = os.path.join(os.path.dirname(__file__), "_boot_script.py")  # what a launched target runs: the boot
FEATURES = os.path.join(os.path.dirname(__file__), "boot")  # the boot's changes inside pydevd, one file each
BESIDE_BOOT = [os.path.join(os.path.dirname(__file__), "_boot_script.py"),  # the boot's files beside it
               *sorted(glob.glob(os.path.join(FEATURES, "*.py")))]


def boot_rules(*more: str) -> list[dict[str, Any]]:
    """debugpy's rules keeping the boot's files (and ``more``) out of the program's stacks and steps."""
    return [{"path": path, "include": False} for path in (NODELAY_BOOT, *BESIDE_BOOT, *more)]


LAUNCHER_BOOT = os.path.join(os.path.dirname(__file__), "_launcher_boot.py")
LAUNCHER_DIR = os.path.realpath(os.path.dirname(debugpy.launcher.__file__))  # what our adapter's runInTerminal runs
BOOT_VARIABLE = "JUPYTER_DEBUG_RELAY_BOOT"  # the boots' settings; they remove it before the program runs
ADAPTER = [sys.executable, "-m", "debugpy.adapter"]
LOOKS = 20  # continues the boot may answer without resuming (each: a thread suspended after the look) before giving up
ANSWER_AFTER_STOP = 0.5  # seconds a continue's answer may follow a stop told before it (the boot kept the threads)
FEATURES_AFTER_ANSWER = 2.0  # seconds debugpy's adapter may take to pass on the events it held until the start's answer
VISITS_MODULE = "_jupyter_debug_relay_boot_thread_visits"  # boot/thread_visits.py in a target
AWAITERS_MODULE = "_jupyter_debug_relay_boot_awaiter_steps"  # boot/awaiter_steps.py in a target
BOOT_ANSWER = 1_000_000  # characters of the boot's answer to a look (suspended threads, an awaiter) the relay reads
NATIVE_CHILDREN = 99  # from 100 children on, debugpy lists the first 100 and a "more" node; it cannot page
CONTAINERS = {  # type -> how its children are addressed: index, row (pandas), key, or position in iteration order
    **dict.fromkeys(("list", "tuple", "range", "deque", "ndarray", "memmap", "UserList"), "index"),
    **dict.fromkeys(("Series", "DataFrame"), "rows"),
    **dict.fromkeys(("dict", "defaultdict", "OrderedDict", "Counter", "UserDict", "ChainMap", "mappingproxy"),
                    "mapping"),
    **dict.fromkeys(("set", "frozenset", "KeysView", "dict_keys", "dict_values"), "order"),
}
NATIVE_LISTING = {"list", "tuple", "range", "deque", "dict", "defaultdict", "OrderedDict", "Counter"}  # debugpy's own
CONDITION_FAILED = "pydevd: Error while evaluating expression in conditional breakpoint: "
ALL_FRAMES = 1 << 30  # ``levels`` that reach the bottom of any stack
GROUPS = ("special variables", "function variables", "class variables", "protected variables", "len()")


def qualified_condition(name: str) -> str:
    """A Python expression, true in the call of the function ``name`` names: ``Point.norm``, ``module.func``, ...

    pydevd evaluates it in the called function's frame; the frames above its own, walked from the expression's,
    reach that frame first among those of its plain name. Its ``co_qualname`` (``outer.<locals>.inner``), alone
    or after its module's ``__name__``, must be ``name``; before Python 3.11 (no ``co_qualname``) the object
    ``name`` reaches from the module's globals must have that frame's code.
    """
    plain = name.rsplit(".", 1)[1]
    first, *rest = name.split(".")
    frames = ("__import__('itertools').accumulate(range(64), lambda f, _: f and f.f_back, "
              "initial=__import__('sys')._getframe())")
    reached = (f"__import__('functools').reduce(lambda o, a: getattr(o, a, None), {rest!r}, "
               f"f.f_globals.get({first!r}))")
    return (f"any({name!r} in (q, f.f_globals.get('__name__', '') + '.' + q) "
            f"or getattr(getattr(o, '__func__', o), '__code__', None) is f.f_code "
            f"for f in [next((f for f in {frames} if f is not None and f.f_code.co_name == {plain!r}), None)] "
            f"if f is not None for q in [getattr(f.f_code, 'co_qualname', f.f_code.co_name)] for o in [{reached}])")


def task_condition(name: str) -> str:
    """A Python expression, true when the asyncio task named ``name`` runs it; false (never an error) elsewhere.

    ``asyncio.current_task()`` raises with no running loop: the loop is looked up first, and asyncio only if the
    target imported it.
    """
    return (f"(lambda a: a is not None and a._get_running_loop() is not None and a.current_task() is not None "
            f"and a.current_task().get_name() == {name!r})(__import__('sys').modules.get('asyncio'))")


def check_pid(pid: int) -> None:
    """Fail at once, with the reason, when there is no process ``pid`` to attach to."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        raise RelayError("connection_failed", f"There is no process with pid {pid}.",
                         "Check the pid (e.g. with `ps`); the process may have ended.", {"pid": pid}) from None
    except PermissionError:
        raise RelayError("connection_failed", f"Process {pid} belongs to another user.",
                         "Attach to your own processes, or run the kernel as that user.", {"pid": pid}) from None


def syntax_error(path: str, line: int | None, offset: int | None, text: str | None, message: str) -> RelayError:
    """``syntax_error`` naming the file, line, offset and text of the code that did not compile."""
    return RelayError("syntax_error", f"{os.path.basename(path)}:{line or 0}: {message}",
                      "Fix the syntax error in the target, then launch again.",
                      {"file": path, "line": line or 0, "offset": offset, "text": (text or "").rstrip("\n")})


def check_syntax(path: str) -> None:
    """Raise ``syntax_error`` (file, line, offset, text) when the script does not compile."""
    with open(path, "rb") as f:
        source = f.read()
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise syntax_error(path, exc.lineno, exc.offset, exc.text, exc.msg) from None


def remote_paths(path_mappings: dict[str, str] | None) -> dict[str, Any]:
    """debugpy's ``pathMappings`` for ``{remote folder: local folder}``; each local folder must exist here."""
    mappings = []
    for remote, local in (path_mappings or {}).items():
        local_root = os.path.abspath(os.path.expanduser(local))
        if not remote or not os.path.isdir(local_root):
            raise RelayError("file_not_found", f"The path mapping {remote}={local} needs a remote folder and a "
                             f"local folder; {local_root} is not a folder here.",
                             "Map the target's folder to the folder of your copy: --map /srv/app=./app "
                             "(path_mappings={'/srv/app': './app'}).", {"path": local_root, "remote": remote})
        mappings.append({"remoteRoot": remote, "localRoot": local_root})
    return {"pathMappings": mappings} if mappings else {}


class DebugpyBackend(SlowInspection, PythonValues, DapBackend):
    """debugpy's adapter on stdio; the debuggee spawned here through ``runInTerminal``."""

    launch_adapter: list[str] | None = ADAPTER  # what a launch runs to reach the target
    EXCEPTION_ROOT = "Python Exceptions"

    kind = "debugpy"

    def __init__(
        self,
        events: BackendEvents,
        *,
        program: str | None = None,
        module: str | None = None,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        python: str | None = None,
        stop_on_entry: bool = False,
        just_my_code: bool = True,
        subprocess: bool = False,
        port: int | None = None,
        host: str = "127.0.0.1",
        pid: int | None = None,
        attach_config: dict[str, Any] | None = None,
        path_mappings: dict[str, str] | None = None,
        request_timeout: float = 30.0,
    ) -> None:
        self.program = os.path.abspath(os.path.join(cwd or os.getcwd(), program)) if program else None
        self.module = module
        self.python = python
        self.attach_pid: int | None = None
        self.launch_env: dict[str, str] = {}  # a launched target's environment (what it adds to the kernel's)
        self._log_token = secrets.token_hex(8)  # in the marks of a launched target's log lines (log_lines.py)
        self.started_ns: int | None = None  # when the target started: files changed later may not be what it runs
        self._failed_conditions: set[int] = set()  # breakpoints whose condition failure was reported
        self._sent_conditions: dict[int, str] = {}  # a task's breakpoint -> the condition pydevd has (task test too)
        self.features_report: wire.FeaturesReport | None = None  # what the boot switched on in the target
        self._features_heard = asyncio.Event()
        self._moved: asyncio.Future[None] | None = None  # set by the next stop or end while a resume waits
        self._reported_visits: dict[int, int] = {}  # thread -> the suspension whose hit a stop reported (boot's number)
        self._pending_visits: dict[int, int] = {}  # thread -> the suspension of a hit still to report
        self._unnumbered: set[int] = set()  # threads whose hit was reported before the boot numbered its suspension
        self._stop_frame: int | None = None  # a frame of the present stop at a breakpoint, to ask the boot in
        self._late_hits: list[int] = []  # threads whose stop pydevd told while another stop was shown
        self._held: list[wire.StoppedEvent] | None = None  # stops told while a resume is on its way, reported after
        self._kept = False  # the boot answered the present continue without resuming a thread
        self._parents = {}
        self.options = dict(args=args, cwd=cwd, env=env, python=python, stop_on_entry=stop_on_entry,
                            just_my_code=just_my_code, subprocess=subprocess)
        common = {"justMyCode": just_my_code, "subProcess": subprocess, "showReturnValue": True,
                  "redirectOutput": False, "breakOnSystemExit": []}  # sys.exit(n) is an end, not a crash
        attached = {**common, "redirectOutput": True,  # an attached process's output reaches us only this way
                    **remote_paths(path_mappings)}
        if port is not None:
            super().__init__(events, host=host, port=port, request="attach",
                             config={**attached, **(attach_config or {})}, request_timeout=request_timeout,
                             adapter_id="debugpy")
            self.target = f"{host}:{port}"
        elif pid is not None:
            super().__init__(events, adapter=ADAPTER, request="attach",
                             config={**attached, "processId": pid}, request_timeout=request_timeout,
                             adapter_id="debugpy")
            self.target = f"pid {pid}"
            self.attach_pid = pid
        else:
            # Output as it is printed, as in a terminal; the boot unsets what we add once the interpreter has it.
            ours = {} if "PYTHONUNBUFFERED" in os.environ else {"PYTHONUNBUFFERED": "1"}
            boot = {"unset": [name for name in ours if name not in (env or {})], "log_marks": marks(self._log_token)}
            self.launch_env = {**ours, **(env or {}), BOOT_VARIABLE: json.dumps(boot)}
            config: dict[str, Any] = {
                **common,
                "console": "integratedTerminal",
                "python": [python or sys.executable, "-X", "frozen_modules=off", BOOT_SCRIPT],
                "args": list(args or []),
                "cwd": os.path.abspath(cwd or os.getcwd()),
                "env": self.launch_env,
                "stopOnEntry": stop_on_entry,
                "rules": boot_rules(),
            }
            if module:
                config["module"] = module
            elif self.program:
                config["program"] = self.program
            else:
                raise RelayError("invalid_request", "Give a script path or a module to launch.")
            super().__init__(events, adapter=self.launch_adapter, request="launch", config=config, cwd=cwd,
                             request_timeout=request_timeout, adapter_id="debugpy")
            self.binds_pending = True  # the boot binds them as their file's code first runs
            self.target = f"-m {module}" if module else self.program or ""
            if args:
                self.target += " " + " ".join(args)

    async def start(self, breakpoints, exceptions) -> None:  # type: ignore[override]
        cwd = self.options["cwd"]
        if cwd and self.request_kind == "launch" and not os.path.isdir(cwd):
            raise RelayError("file_not_found", f"The working directory {cwd!r} does not exist (cwd).",
                             "Give an existing directory as cwd, or leave it out to run in the kernel's.",
                             {"path": cwd, "parameter": "cwd"})
        if self.program is not None:
            if not os.path.isfile(self.program):
                raise RelayError("file_not_found", f"No such script: {self.program}", details={"path": self.program})
            check_syntax(self.program)
        if self.python:  # it runs a debugpy lent for its version, in its virtualenv
            found = await interpreter.probe(self.python)
            self.launch_env.update(found.activation(self.options["env"]))
            self.lend(lending.choose(found))
        elif self.request_kind == "launch" and lending.lends_to_the_kernels_python():
            self.lend(lending.choose(await interpreter.probe(sys.executable)))
        if self.attach_pid is not None:
            check_pid(self.attach_pid)
            self.lend(await lending.for_process(self.attach_pid))
        if self.request_kind == "launch":
            self.started_ns = time.time_ns()
        try:
            await super().start(breakpoints, exceptions)
        except RelayError as exc:
            raise self.start_failed(exc) from None
        if self.request_kind == "launch" or self.attach_pid is not None:  # the boot runs there
            await self._features_told()

    async def _features_told(self) -> None:
        """Warn when the boot did not say what it switched on. pydevd's straight connection brings its word before
        the start's answers; debugpy's adapter holds the target's events until it has answered the start."""
        if self.features_report is None and self.adapter_cmd is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._features_heard.wait(), FEATURES_AFTER_ANSWER)
        if self.features_report is None:
            self._warn(features.NO_REPORT)

    def lend(self, loan: lending.Loan) -> None:
        """Have the boot run ``loan``'s debugpy when it is not the kernel's; say on the console why it is slow."""
        if loan.folder != lending.KERNEL_DEBUGPY:
            settings = json.loads(self.launch_env[BOOT_VARIABLE])
            self.launch_env[BOOT_VARIABLE] = json.dumps({**settings, "debugpy": loan.folder})
        if loan.note:
            self.events.on_output("console", loan.note)
            self.warnings.append(loan.note.strip())

    def start_failed(self, exc: BaseException | None) -> RelayError:
        if (isinstance(exc, RelayError) and exc.code in ("invalid_request", "adapter_failed")
                and self.request_kind == "attach"):
            return RelayError("connection_failed", f"Cannot attach to {self.target}: {exc.message}",
                              details={"address": self.target})
        return super().start_failed(exc)

    async def _threads_at_breakpoints(self, stop: StopInfo) -> list[int]:
        """The stopped threads (but the stop's) at a breakpoint whose hit no stop reported yet.

        pydevd stops every thread at the first hit and reports that hit only; the others sit on their breakpoint's
        line (suspended by their own hit, or by the first one just before their line) and would run past it when
        resumed. The boot (``thread_visits``) says which threads are suspended, which by their own breakpoint, and
        numbers each suspension: one already reported (a thread of the previous stop that has not left it yet) is
        not again, and a thread blocked in a call of C is not asked for its stack. Without it, every thread's stack
        is looked at.
        """
        many = len(stop.stopped_threads) > 1  # a program of one thread has no other hit to report
        self._stop_frame = stop.frame.id if stop.frame and many else None
        suspended = await self._suspended(self._stop_frame)
        if suspended is None:
            self._reported(stop.thread_id, None)
            return await self._threads_at_breakpoint_lines(stop.stopped_threads, stop.thread_id) if many else []
        self._reported(stop.thread_id, suspended[stop.thread_id][0] if stop.thread_id in suspended else None)
        self._number_reported(suspended)
        return await self._unreported(suspended, stop.thread_id)

    def _reported(self, thread: int, visit: int | None) -> None:
        """A stop reported ``thread``'s present suspension: its number, or None where the boot has not said it."""
        if visit is None:
            self._unnumbered.add(thread)
            self._reported_visits.pop(thread, None)
        else:
            self._unnumbered.discard(thread)
            self._reported_visits[thread] = visit

    def _number_reported(self, suspended: dict[int, tuple[int, bool | None]]) -> None:
        """No thread moved since a hit was reported without its number: its suspension is the one the boot says now
        (else a later look would take it for a hit no stop reported, and report it again)."""
        for thread in self._unnumbered & suspended.keys():
            self._reported_visits[thread] = suspended[thread][0]
        self._unnumbered.clear()

    async def _unreported(self, suspended: dict[int, tuple[int, bool | None]], but: int | None) -> list[int]:
        """The threads of ``suspended`` at a breakpoint whose suspension no stop reported; their suspensions'
        numbers are kept for when each is reported."""
        fresh = {thread: (visit, hit) for thread, (visit, hit) in suspended.items()
                 if thread != but and self._reported_visits.get(thread) != visit}
        on_lines = await self._threads_at_breakpoint_lines([t for t, (_, hit) in fresh.items() if hit is False], but)
        found = sorted(t for t, (_, hit) in fresh.items() if hit or t in on_lines)
        self._pending_visits = {thread: fresh[thread][0] for thread in found}
        return found

    async def _suspended(self, frame_id: int | None) -> dict[int, tuple[int, bool | None]] | None:
        """{thread: (the number of its suspension, whether its own breakpoint suspended it, None where a test written
        into the code holds its line: it meets it when it goes on)} from the boot, or None where it cannot say
        (``thread_visits`` off, no frame to ask in)."""
        if frame_id is None or (self.features_report or {}).get("features", {}).get("thread_visits", "off"):
            return None
        try:
            told = await self.evaluate(f"__import__('json').dumps(__import__('sys').modules[{VISITS_MODULE!r}]"
                                       ".suspended())", frame_id, "watch")
            found = probe_answers.json_answer(told.value, BOOT_ANSWER)
            return {int(thread): (int(visit), None if hit is None else bool(hit))
                    for thread, (visit, hit) in found.items()}
        except (RelayError, ValueError, SyntaxError, TypeError) as exc:
            log.info("session target %s: the boot did not say which threads are suspended (%s)", self.pid, exc)
            return None

    async def _threads_at_breakpoint_lines(self, threads: list[int], but: int | None) -> list[int]:
        """The threads (but one) whose top frame is on a breakpoint's line, its condition true there."""
        async def at_breakpoint(thread_id: int) -> bool:
            try:
                frames, _ = await self.stack(thread_id, 0, 1)
                bp_ids = self._breakpoints_at(frames[0]) if frames else []
                if not bp_ids or bp_ids[0] not in self._stopping:
                    return False
                condition = self._stopping[bp_ids[0]]
                return not condition or (await self.evaluate(f"bool({condition})", frames[0].id, "watch")
                                         ).value == "True"
            except RelayError:
                return False

        others = [t for t in threads if t != but]
        found = await asyncio.gather(*(at_breakpoint(t) for t in others))
        return [t for t, hit in zip(others, found, strict=True) if hit]

    async def resume(self, action: str, thread_id: int | None) -> None:
        """A continue first reports a hit that no stop has yet: a thread that reached its breakpoint after the last
        stop was told (the boot numbers its suspension). A continue the boot answers without resuming (a thread was
        suspended after the relay last looked) is followed by another look. A step out of a task's own coroutine is
        a step over in the coroutine that awaits the task, where the boot finds one."""
        if action == "stepOut" and await self._awaiter_kept(thread_id):
            action = "next"
        for _ in range(LOOKS):
            if not await self._look_and_resume(action, thread_id):
                return
        raise RelayError("protocol_error", f"The target kept every thread suspended through {LOOKS} continues: "
                         "threads kept being suspended after each look.", "Pause, then continue again.")

    async def _awaiter_kept(self, thread_id: int | None) -> bool:
        """Whether the boot (``awaiter_steps``) kept, for the stepping thread, the coroutine awaiting the task whose
        own coroutine is its top frame (its answer read as data: JSON text, nothing run)."""
        if (self.features_report or {}).get("features", {}).get("awaiter_steps", "off"):
            return False
        try:
            frames, _ = await self.stack(await self._any_thread(thread_id), 0, 1)
            if not frames:
                return False
            told = await self.evaluate(f"__import__('sys').modules[{AWAITERS_MODULE!r}].step_out_to("
                                       f"{frames[0].name!r}, {int(frames[0].line)})", frames[0].id, "watch")
            answer = probe_answers.json_answer(told.value, BOOT_ANSWER)
            return isinstance(answer, dict) and isinstance(answer.get("awaiter"), str)
        except (RelayError, ValueError, SyntaxError, TypeError):
            return False

    async def _look_and_resume(self, action: str, thread_id: int | None) -> bool:
        """Look for hits no stop has reported, then report the first or resume; True if the boot kept every
        thread suspended. Stops told meanwhile are held until the target has the request, then taken in order: a
        stop of its own when no stop is shown, else a late hit of the stop shown."""
        suspended = None
        if action == "continue" and (self._late_hits or not self._pending_hits) and self._stop_frame is not None:
            suspended = await self._suspended(self._stop_frame)
            if suspended:
                self._number_reported(suspended)
            if suspended and not self._pending_hits:  # the thread shown has not moved: its hit is the one shown
                self._pending_hits = await self._unreported(suspended, self._stopped_thread)
        late, self._late_hits = self._late_hits, []  # after the last wait: a stop told from here on is held
        if action == "continue":
            for thread in late:  # each a hit pydevd told, unless its suspension was reported already
                visit = suspended[thread][0] if suspended and thread in suspended else None
                if thread not in self._pending_hits and (visit is None or self._reported_visits.get(thread) != visit):
                    self._pending_hits.append(thread)
                    if visit is not None:
                        self._pending_visits[thread] = visit
        reported = self._pending_hits[0] if action == "continue" and self._pending_hits else None
        if reported is not None:
            self._reported(reported, self._pending_visits.get(reported))
        self.forget_values()
        self._held, self._kept = [], False
        try:
            await super().resume(action, thread_id)
        finally:
            held, self._held = self._held, None
        shown = reported is not None or self._kept
        if shown:  # no thread moved: what was told meanwhile is late for the stop shown
            self._paused = True
            self._stopped_thread = reported if reported is not None else self._stopped_thread
        else:  # the target runs: no frame of this stop to ask in any more, and each suspension from here is new
            self._stop_frame = None
            self._unnumbered.clear()
        for body in held:  # the first a stop of its own (if no thread is shown stopped), the others its late hits
            self._event_stopped(body)
        return self._kept

    def _event_relayNotResumed(self, body: dict[str, Any]) -> None:
        """The boot's word that the continue it answers resumed nothing: threads suspended after the last look."""
        log.info("session target %s: continue kept, threads %s suspended since the last look", self.pid,
                 body.get("threads"))
        self._kept = True

    async def _exception_info(self, thread_id: int, body: wire.StoppedEvent) -> ExceptionInfo:
        info = await super()._exception_info(thread_id, body)
        info.traceback = python_order(info.traceback)
        return info

    def function_entry(self, bp: Breakpoint, entry: dict[str, Any]) -> dict[str, Any]:
        """pydevd matches a function breakpoint by the code's plain name: a qualified one adds a condition on it."""
        name = bp.name or ""
        if "." not in name:
            return entry
        self._need("supportsConditionalBreakpoints", "qualified function breakpoints")
        check = qualified_condition(name)
        condition = entry.get("condition")
        return {**entry, "name": name.rsplit(".", 1)[1], "condition": f"({check}) and ({condition})" if condition
                else check}

    async def source_changed(self, frame: Frame) -> str:
        if self.started_ns is None and self.pid:  # attached: when the process started
            self.started_ns = procfs.start_ns(self.pid)

        async def loaded(path: str) -> int | None:
            try:
                noted = await DapBackend.evaluate(self, source_changes.loaded_expression(path), frame.id, "watch")
            except RelayError:
                return None
            return int(noted.value) if noted.value.isdigit() else None

        return await source_changes.change_note(frame.path, self.started_ns, loaded)

    def why_not_paused(self) -> str:
        """pydevd stops a thread when it next runs Python code: a late pause means native code (what, from /proc)."""
        return f"{native_wait.describe(self.pid)}; pydevd stops it when it returns to Python code"

    def check_condition(self, bp: Breakpoint) -> None:
        """Python targets: a condition must compile as a Python expression (``invalid_condition``)."""
        if bp.condition:
            python_source.check_condition(bp.condition)

    def sent_condition(self, bp: Breakpoint) -> str | None:
        """A breakpoint of one asyncio task: the task test, and then its own condition."""
        if not bp.task:
            return bp.condition
        check = task_condition(bp.task)
        return f"({check}) and ({bp.condition})" if bp.condition else check

    def _remember_conditions(self, bps: list[Breakpoint]) -> None:
        super()._remember_conditions(bps)
        for bp in bps:
            self._sent_conditions.pop(bp.id, None)
            if bp.task and bp.condition:
                self._sent_conditions[bp.id] = self.sent_condition(bp) or ""

    async def variables(self, ref: int, start: int, count: int) -> VariablePage:
        parent = self.ref_origin.get(ref, (None, None))[1]
        what = f"the values in {parent.evaluate_name or parent.name!r}" if parent is not None else "the values"
        return await self._inspect(what, {"ref": ref}, self._shown(ref, start, count))

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        """A name of a frame's Locals or Globals set by running ``NAME = (VALUE)`` there: a value that fails says why
        (pydevd's setVariable keeps the old value then and answers as if it had worked); other children as debugpy
        sets them."""
        frame_id, parent = self.ref_origin.get(ref, (None, None))
        scope = parent.name if parent is not None and not parent.value and not parent.ref else ""
        if frame_id is None or scope not in ("Locals", "Globals") or not name.isidentifier():
            return await super().set_variable(ref, name, value)
        target = name if scope == "Locals" else f"globals()[{name!r}]"
        now = await self._assign(target, value, frame_id, value)
        now.name = name
        return now

    async def set_expression(self, expression: str, value: str, frame_id: int | None) -> Variable:
        """``EXPRESSION = (VALUE)`` run in the frame: a failure names its exception (pydevd's setExpression says only
        that the assignment failed)."""
        try:
            ast.parse(f"{expression} = 0")
        except SyntaxError as exc:
            raise wire.evaluation_failed(f"{expression} = {value}", f"SyntaxError: {exc.msg}") from None
        return await self._assign(expression, value, frame_id, f"{expression} = {value}")

    async def _assign(self, target: str, value: str, frame_id: int | None, said: str) -> Variable:
        """Run ``TARGET = (VALUE)`` in the frame as a statement, then answer TARGET's value; a failure is
        ``evaluation_failed`` on ``said``."""
        try:
            ast.parse(value.strip(), mode="eval")
        except SyntaxError as exc:
            raise wire.evaluation_failed(said, f"SyntaxError: {exc.msg}") from None
        try:
            await self.evaluate(f"{target} = (\n{value.strip()}\n)", frame_id, "repl")
        except RelayError as exc:
            if exc.code != "evaluation_failed":
                raise
            raise wire.evaluation_failed(said, exc.details.get("adapter_message") or exc.message) from None
        return await self.evaluate(target, frame_id, "watch")

    def sent_expression(self, expression: str, context: str) -> str:
        """A statement typed at the prompt adds no name to the frame (pydevd writes back every name it added)."""
        return (python_source.adding_no_names(expression) if context == "repl" else None) or expression

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        return await self._inspect(f"{expression!r}", {"expression": expression},
                                   super().evaluate(expression, frame_id, context))

    async def tasks(self, frame_id: int) -> AsyncTasks:
        """The asyncio tasks of the target: ``_tasks_probe.py`` run in the frame, its JSON answer read as data."""
        try:
            told = await self._inspect("the asyncio tasks", {"operation": "tasks"},
                                       DapBackend.evaluate(self, tasks.expression(), frame_id, "clipboard"))
        except RelayError as exc:
            if exc.code != "evaluation_failed":
                raise
            raise tasks.failed(exc.details.get("adapter_message") or exc.message[-300:]) from None
        if told.type != "str":  # in clipboard context pydevd answers with the exception the probe raised
            raise tasks.failed(told.value)
        return tasks.parse(told.value)

    async def recorder(self, action: str, args: dict[str, Any], frame_id: int) -> dict[str, Any]:
        """The line recorder: installed by ``record``, asked by the rest; its JSON answer read as data only."""
        what = {"record": "record", "since": "reading the recorded lines", "value": "evaluating on recorded values",
                "off": "record off"}[action]
        try:
            told = await self._inspect(what, {"operation": action}, DapBackend.evaluate(
                self, recording.expression(action, args, install=action == "record"), frame_id, "clipboard"))
        except RelayError as exc:
            if exc.code != "evaluation_failed":
                raise
            raise recorder.failed(what, exc.details.get("adapter_message") or exc.message[-300:]) from None
        if told.type != "str":  # in clipboard context pydevd answers with the exception the expression raised
            raise recorder.failed(what, told.value)
        return recording.answer(told.value, what)

    async def _shown(self, ref: int, start: int, count: int) -> VariablePage:
        """Children of a value; bytes as base64 chunks; references back to an ancestor marked as cycles."""
        frame_id, parent = self.ref_origin.get(ref, (None, None))
        if parent is not None and parent.type in BYTES_TYPES and parent.evaluate_name:
            return await self.bytes_page(parent.evaluate_name, frame_id, start, count)
        page = await self._children(ref, start, count)
        self.mark_cycles(ref, page.items)
        await self.show_bytes(page.items, frame_id)
        return page


    async def stack(self, thread_id: int, start: int, levels: int | None) -> tuple[list[Frame], int]:
        """pydevd honours ``startFrame`` only with ``levels``: from ``start`` without them means to the end."""
        return await super().stack(thread_id, start, levels or (ALL_FRAMES if start else None))

    async def _children(self, ref: int, start: int, count: int) -> VariablePage:
        """Children of a container, paged on the target side: by index, by row, by key or by iteration position."""
        frame_id, parent = self.ref_origin.get(ref, (None, None))
        expr = parent.evaluate_name if parent is not None else ""
        kind = CONTAINERS.get(parent.type) if parent is not None else None
        if not expr or kind is None:
            return await super().variables(ref, start, count)
        total = int((await self.evaluate(f"len({expr})", frame_id, "watch")).value)
        whole = start == 0 and count >= total + len(GROUPS)
        if whole and total <= NATIVE_CHILDREN and parent.type in NATIVE_LISTING:
            return await super().variables(ref, start, count)  # all of it, with debugpy's groups
        items: list[Variable] = []
        for first in range(start, min(start + count, total), NATIVE_CHILDREN):
            size = min(NATIVE_CHILDREN, start + count - first, total - first)
            items += await self._window(expr, kind, frame_id, first, size)
        return VariablePage(items=items, start=start, total=total)

    async def _window(self, expr: str, kind: str, frame_id: int | None, start: int, count: int) -> list[Variable]:
        """Children ``start`` to ``start + count`` of ``expr``, gathered in a list or dict small enough for debugpy."""
        stop = start + count
        positions = f"range({start}, {stop})"
        window = {
            "mapping": f"dict(__import__('itertools').islice(({expr}).items(), {start}, {stop}))",
            "index": f"list(map(({expr}).__getitem__, {positions}))",
            "rows": f"list(map(({expr}).iloc.__getitem__, {positions}))",
            "order": f"list(__import__('itertools').islice({expr}, {start}, {stop}))",
        }[kind]
        holder = await self.evaluate(window, frame_id, "watch")
        page = await super().variables(holder.ref, 0, count + len(GROUPS))
        items = [v for v in page.items if v.name not in GROUPS][:count]
        if kind == "mapping":
            for var in items:
                var.evaluate_name = var.evaluate_name.replace(f"({window})", expr, 1).replace(window, expr, 1)
            return items
        labels = [str(n) for n in range(start, stop)]
        if kind == "rows":
            shown = await self.evaluate(f"list(map(str, ({expr}).index[{start}:{stop}]))", frame_id, "clipboard")
            labels = ast.literal_eval(shown.value)
        for offset, (var, label) in enumerate(zip(items, labels, strict=False)):
            at = start + offset
            var.name, var.evaluate_name = {
                "index": (label, f"{expr}[{at}]"),
                "rows": (label, f"{expr}.iloc[{at}]"),
                "order": (f"#{at}", f"next(__import__('itertools').islice({expr}, {at}, None))"),
            }[kind]
        return items

    async def apply_breakpoints(self, breakpoints: list[Breakpoint], exceptions: str) -> None:
        await self.apply_condition_errors()
        await super().apply_breakpoints(breakpoints, exceptions)

    async def apply_condition_errors(self) -> None:
        """pydevd prints every failure of a condition (we report the first) and stops on it or not, as asked."""
        await self.request("setDebuggerProperty", {
            "skipSuspendOnBreakpointException": [] if self.stop_on_condition_error else ["BaseException"],
            "skipPrintBreakpointException": []})

    def _condition_failed(self, text: str) -> None:
        """Report a condition's first failure on its breakpoints (message and event); later ones say nothing."""
        condition, _, trace = text[len(CONDITION_FAILED):].partition("\n")
        error = [line for line in trace.splitlines() if line.strip()][-1:] or ["it raised an exception"]
        then = "the breakpoint stops there" if self.stop_on_condition_error else "the target runs on"
        for bp_id, theirs in self._conditions.items():
            sent = self._sent_conditions.get(bp_id, theirs)  # a task's test before it
            if sent.strip() == condition.strip() and bp_id not in self._failed_conditions:
                self._failed_conditions.add(bp_id)
                message = f"the condition {theirs.strip()!r} failed: {error[0].strip()}; {then}"
                self.breakpoint_changed(bp_id, BreakpointResult(verified=True, message=message))
                self.events.on_output("console", f"Breakpoint {bp_id}: {message}.\n")

    def _event_relayBootWarning(self, body: wire.BootWarning) -> None:
        """The boot's word that it could not do something (add a hook, bind a pending breakpoint): said in the log
        and in the session's output, since a feature works less well without it."""
        log.warning("session target %s: the relay's boot could not %s (%s)", self.pid, body["what"], body["error"])
        self.events.on_output("console", f"The debugger in the target could not {body['what']} ({body['error']}); "
                                         "it goes on without it.\n")

    async def _move(self, command: str, arguments: dict[str, Any]) -> None:
        """Continue or step; a stop or the end that follows the request answers it too.

        pydevd answers a ``continue`` only with its notice that the threads resumed, which it sends once per pause:
        a thread of the previous pause that leaves it late (it looks every 0.1 s) can use that notice up, and the
        answer never comes although the target runs and stops again (seen on 3.13 with four threads hitting one
        breakpoint; debugpy issue #2048 is this pattern). The session then goes on at that stop."""
        assert self.channel is not None
        answered = self.channel.send_request(command, arguments)
        moved = self._moved = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait({answered, moved}, timeout=self.channel.timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._moved = None
        if moved.done() and not answered.done():  # a held stop told before the answer: give the answer a moment
            await asyncio.wait({answered}, timeout=ANSWER_AFTER_STOP)
        if answered.done():
            answered.result()  # a refusal raises here
        elif moved.done():
            answered.cancel()
            log.info("session target %s: %s went unanswered, but the target moved on", self.pid, command)
        else:
            answered.cancel()
            raise RelayError("timeout", f"No answer to {command!r} from {self.adapter_name} within "
                             f"{self.channel.timeout:g} s.", "The target is busy or stuck; try again, or stop the "
                             "session.")

    def _has_moved(self) -> None:
        if self._moved is not None and not self._moved.done():
            self._moved.set_result(None)

    def _event_stopped(self, body: Any) -> None:
        """A stop; a hit told while a stop is shown is another's, reported by the next continue, or the shown one."""
        self._has_moved()
        if self._held is not None:
            self._held.append(body)
            return
        thread = body.get("threadId")
        shown = thread == self._stopped_thread  # pydevd tells a hit as its thread gets to it: a look can be first
        if (self._paused and thread is not None and "breakpoint" in body.get("reason", "")
                and not (shown and self._unblocked)):  # pydevd suspending the others again after a slow value
            self._pushed_stacks.pop(thread, None)
            if not shown and thread not in self._late_hits:
                self._late_hits.append(thread)
            return
        super()._event_stopped(body)

    def _end(self) -> None:
        self._has_moved()
        super()._end()

    def _event_relayFeatures(self, body: wire.FeaturesReport) -> None:
        """The boot's word of which of its features it switched on in the target, and why the others are off."""
        self.features_report = body
        self._features_heard.set()
        for warning in features.warnings_of(body):
            self._warn(warning)

    def _warn(self, warning: str) -> None:
        """A start's warning: in the session's ``warnings``, its output and the log."""
        if warning not in self.warnings:
            self.warnings.append(warning)
            log.warning("session target %s: %s", self.pid, warning)
            self.events.on_output("console", f"{warning}.\n")

    def _event_relaySyntaxError(self, body: dict[str, Any]) -> None:
        """The boot's word that the program ended on a SyntaxError (a module or imported file that does not compile)."""
        def field(name: str, kind: type) -> Any:
            value = body.get(name)
            return value if isinstance(value, kind) and not isinstance(value, bool) else None

        self.end_error = syntax_error(field("file", str) or "<unknown>", field("line", int), field("offset", int),
                                      field("text", str), field("message", str) or "invalid syntax")

    async def _read_stdout(self, stdout: asyncio.StreamReader) -> None:
        """The launched program's stdout, its log lines (which the boot writes there, marked) taken out."""
        lines = LogLines(self._log_token, self.events.on_output)
        await forward_text(stdout, lines.feed, lines.flush)

    def _event_output(self, body: dict[str, Any]) -> None:
        if body.get("output", "").startswith(CONDITION_FAILED):
            self._condition_failed(body["output"])
            return
        if self.request_kind == "launch" and body.get("category") in ("stdout", "stderr"):
            body = {**body, "category": "console"}  # the program writes to our pipes: this is a logpoint's text
        super()._event_output(body)

    async def _on_reverse(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run a command only for the adapter a launch started on our own pipes, never for an attach's peer."""
        if command == "runInTerminal" and self.request_kind != "launch":
            raise RelayError("unsupported", f"The relay refuses runInTerminal from {self.target}: only debugpy's "
                             "adapter started for a launch may ask it to run a command.")
        return await super()._on_reverse(command, arguments)

    async def _run_in_terminal(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Start debugpy's launcher through ``_launcher_boot.py``, which keeps its token off the debuggee's argv."""
        argv = list(arguments.get("args") or [])
        if len(argv) > 1 and os.path.realpath(argv[1]) == LAUNCHER_DIR:
            argv.insert(1, LAUNCHER_BOOT)
        return await super()._run_in_terminal({**arguments, "args": argv})

    async def start_child(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """debugpy's ``startDebugging``: attach a child backend to the subprocess it announced."""
        config = dict(arguments.get("configuration") or {})
        connect = config.pop("connect", {}) or {}
        pid = config.get("subProcessId")
        name = config.get("name") or f"subprocess {pid}"

        def factory(events: BackendEvents) -> DebugpyBackend:
            child = DebugpyBackend(events, port=int(connect.get("port", 0)), host=connect.get("host", "127.0.0.1"),
                                   attach_config=config, request_timeout=self.request_timeout)
            child.pid, child.target = pid, name
            return child

        self.events.on_child(factory, name)
        return {}
