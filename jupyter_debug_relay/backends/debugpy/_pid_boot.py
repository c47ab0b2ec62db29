"""Run inside a process attached by pid: the boot's additions to pydevd, then pydevd connects to the relay.

The relay injects one line with pydevd's own machinery (gdb calls into the process), and that line
holds no secret: it loads this file and calls ``attach(PATH)``. ``PATH`` is a file of the relay's,
mode 0600 in a folder of mode 0700, which holds the settings as JSON (``token``, ``port``, ``debugpy``:
the folder of the debugpy package to run, and the boot's own settings); this file reads it and removes it.
Then, as a launch's boot does, ``_nodelay_boot.py`` (loaded as a module, not run) adds to pydevd as its
modules load (on 3.12+, ``_monitoring_boot.py``: only breakpoint lines call back, a pause reaches a running
step), sets TCP_NODELAY on pydevd's connection to the relay, and pydevd connects there with debugpy's
injected entry point (``attach_pid_injected``), the token answering the relay's ``pydevdAuthorize``.
A process attached before keeps the additions it has (the boot module is already there).
"""

import importlib
import json
import os
import sys
from importlib.util import module_from_spec, spec_from_file_location
from types import ModuleType

BOOT_MODULE = "_jupyter_debug_relay_boot"  # as _nodelay_boot.py names itself in sys.modules


def load_boot() -> tuple:
    """The boot module, and whether it was loaded just now (not by an earlier attach)."""
    if BOOT_MODULE in sys.modules:
        return sys.modules[BOOT_MODULE], False
    spec = spec_from_file_location(BOOT_MODULE, os.path.join(os.path.dirname(__file__), "_nodelay_boot.py"))
    boot = module_from_spec(spec)
    sys.modules[BOOT_MODULE] = boot
    spec.loader.exec_module(boot)
    return boot, True


def imported(name: str, folder: str) -> ModuleType:
    """Module ``name``, imported with ``folder`` first on ``sys.path`` for that import only."""
    sys.path.insert(0, folder)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(folder)


def main_thread_known(debugpy_dir: str) -> None:
    """Before anything imports ``threading`` here, have it know the main thread (what debugpy's injection does)."""
    if "threading" in sys.modules:
        return
    attach_script = imported("attach_script", os.path.join(debugpy_dir, "_vendored", "pydevd",
                                                         "pydevd_attach_to_process"))

    def say(message: str) -> None:
        print(message, file=sys.stderr)

    attach_script.fix_main_thread_id(on_warn=say, on_exception=say, on_critical=say)


def attach(path: str) -> None:
    """Read (and remove) the relay's settings at ``path``; add the boot; connect pydevd to the relay."""
    with open(path, encoding="utf-8") as f:
        settings = json.load(f)
    os.remove(path)
    debugpy_dir = settings["debugpy"]
    main_thread_known(debugpy_dir)
    boot, fresh = load_boot()
    if fresh:
        boot.add_to_debugger(settings, debugpy_dir)
    boot.nodelay_to(settings["port"])
    debugpy = imported("debugpy", os.path.dirname(debugpy_dir))
    debugpy.configure(qt="none", subProcess=False)  # pydevd's children would look for an adapter: there is none
    injected = imported("attach_pid_injected", os.path.join(debugpy_dir, "server"))
    injected.attach({"mode": "connect", "address": ["127.0.0.1", settings["port"]], "log_to": None,
                     "adapter_access_token": settings["token"], "wait_for_client": False})
