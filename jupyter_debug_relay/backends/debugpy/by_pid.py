"""A running Python process attached by pid: the relay's boot injected, its pydevd connected straight to the relay.

debugpy's own attach by pid runs its adapter, which injects plain debugpy with gdb (its token on gdb's
command line). Here the relay injects, with the same pydevd machinery (``add_code_to_python_process``,
run by the kernel's Python in a process group of its own), one line that loads ``_pid_boot.py`` and
names a settings file: mode 0600 in a folder of mode 0700, read and removed by the target. No secret is on
any command line. The target then gets what a launched one gets (``_nodelay_boot.py``'s additions: on
3.12+ only breakpoint lines call back and a pause reaches a running step; TCP_NODELAY) and its pydevd
connects to a listener of the relay's, which acts on the connection only once it answers
``pydevdAuthorize`` with the token (``direct.py``). The debugpy injected is the one ``lending`` chooses
for the process's Python (its own when it has a working one of the relay's version).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
from typing import Any

from ...errors import RelayError
from ...transports import process, procfs
from ..base import BackendEvents
from ..dap.backend import DapBackend
from . import lending
from .backend import DebugpyBackend, boot_rules
from .direct import PydevdDirectBackend

PID_BOOT = os.path.join(os.path.dirname(__file__), "_pid_boot.py")
INJECT_TIMEOUT = 60.0  # gdb reads the symbols of every library the process loaded: seconds on a big one
CONNECTED_AFTER = 5.0  # once gdb is done, pydevd has connected (the injected line ran); the proof follows
NOT_GDB = ("Running:", "PYDEVD_GDB", "Traceback", "subprocess.CalledProcessError")  # the injector's own lines
INJECTOR = ("import sys; sys.path.insert(0, sys.argv[1]); import add_code_to_python_process as a; "
            "a.run_python_code(int(sys.argv[2]), sys.argv[3], connect_debugger_tracing=True)")


def _literal(text: str) -> str:
    """A Python expression for ``text`` without quotes (pydevd's injection refuses quotes and newlines)."""
    return f"bytes({list(text.encode())}).decode()"


def injected_line(settings_path: str) -> str:
    """The line run in the target: load ``_pid_boot.py`` as a module and attach with the settings file."""
    util = f"__import__({_literal('importlib.util')}).util"
    return (f"(lambda u: (lambda s: (lambda m: (s.loader.exec_module(m), m.attach({_literal(settings_path)})))"
            f"(u.module_from_spec(s)))(u.spec_from_file_location({_literal('_jupyter_debug_relay_pid_boot')}, "
            f"{_literal(PID_BOOT)})))({util})")


def runs_python(pid: int) -> bool:
    """Whether process ``pid`` has a Python interpreter loaded (its executable, or a libpython)."""
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            names = {os.path.basename(line.split(None, 5)[-1].strip()) for line in maps if "/" in line}
    except OSError:
        return True  # no /proc to look in: the injection will tell
    return not names or any(name.startswith(("python", "libpython")) for name in names)  # none: still in exec


class PydevdPidBackend(PydevdDirectBackend):
    """debugpy's attach by pid without its adapter: the relay's boot in the target, its pydevd the DAP peer."""

    connect_timeout = INJECT_TIMEOUT + CONNECTED_AFTER

    def __init__(self, events: BackendEvents, *, pid: int, **options: Any) -> None:
        DebugpyBackend.__init__(self, events, pid=pid, **options)
        self.adapter_cmd = None
        self.adapter_name = "pydevd"
        self.debugpy_folder = lending.KERNEL_DEBUGPY
        self.injector: asyncio.subprocess.Process | None = None
        self.config.pop("processId", None)
        self.config["rules"] = boot_rules(PID_BOOT)

    def lend(self, loan: lending.Loan) -> None:
        self.debugpy_folder = loan.folder
        if loan.note:
            self.events.on_output("console", loan.note)

    async def _open(self) -> None:
        pid = self.attach_pid
        assert pid is not None
        if not runs_python(pid):
            raise RelayError("connection_failed", f"Process {pid} is not running Python: there is no interpreter "
                             "to attach to.", "Attach to the pid of a Python process (e.g. `pgrep -af python`).",
                             {"pid": pid})
        if shutil.which("gdb") is None:
            raise RelayError("unsupported", "Attaching by pid needs gdb, which is not installed.",
                             "Install it (apt-get install gdb), or start the program with "
                             "`python -m debugpy --listen PORT` and attach by port.", {"pid": pid})
        await super()._open()

    async def _start_target(self, port: int, token: str) -> asyncio.Future[RelayError]:
        """Write the settings file, inject the line that reads it; what ends the target's chance to connect."""
        folder = tempfile.mkdtemp(prefix="jupyter-debug-relay-attach-")  # mode 0700: the user's own
        path = os.path.join(folder, "settings.json")
        settings = {"token": token, "port": port, "debugpy": self.debugpy_folder, "stack_with_stops": True,
                    "free_children": True}
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as f:
            json.dump(settings, f)
        attach_dir = os.path.join(self.debugpy_folder, "_vendored", "pydevd", "pydevd_attach_to_process")
        argv = [sys.executable, "-c", INJECTOR, attach_dir, str(self.attach_pid), injected_line(path)]
        self.injector = await process.spawn(argv, what="injector")
        injection = asyncio.ensure_future(self._inject(self.injector, folder))  # never cut short: gdb is inside
        return asyncio.ensure_future(self._not_connected(injection))

    async def _inject(self, injector: asyncio.subprocess.Process, folder: str) -> tuple[int | None, str]:
        """gdb's exit code (None: it took too long) and its last words; the settings file is gone after it."""
        try:
            out, err = await asyncio.wait_for(injector.communicate(), INJECT_TIMEOUT)
        except asyncio.TimeoutError:
            return None, f"gdb took over {INJECT_TIMEOUT:g} s"
        finally:
            await process.reap(injector)
            shutil.rmtree(folder, ignore_errors=True)
        said = [line.strip() for line in (out + err).decode(errors="replace").splitlines()  # gdb's, not Python's
                if line.strip() and not line[0].isspace() and not line.startswith(NOT_GDB)]
        telling = [line for line in said if re.search(r"trace|permi|error|cannot|couldn't|unable", line, re.I)]
        return injector.returncode, "; ".join((telling or said[-2:])[:2]) or f"gdb's exit code {injector.returncode}"

    async def _not_connected(self, injection: asyncio.Future[tuple[int | None, str]]) -> RelayError:
        """Once the injection is over and a moment has passed: why the target's pydevd did not connect."""
        code, said = await asyncio.shield(injection)
        if code == 0:
            await asyncio.sleep(CONNECTED_AFTER)
        return RelayError("connection_failed", f"Cannot attach to pid {self.attach_pid}: the debugger injected did "
                          f"not connect to the relay ({said}).", "gdb must be allowed to trace the process (the same "
                          "user; /proc/sys/kernel/yama/ptrace_scope 0 or 1).", {"pid": self.attach_pid})

    async def _lost(self, error: Exception | None) -> None:
        """The connection closed: when the process is gone, that is its end (its exit code is not ours to know)."""
        if procfs.state(self.attach_pid) in (None, "Z"):
            if not self._closing:
                self._end()
            return
        await DapBackend._lost(self, error)

    async def close(self) -> None:
        await super().close()
        if self.injector is not None:
            await process.reap(self.injector)

    terminate = DapBackend.terminate
