"""``%load_ext jupyter_debug_relay``: one Relay per kernel, the magics, the completion and the comm target."""

from __future__ import annotations

import os
import sys
from typing import Any

from ..facade.relay import Relay
from .comm import CommChannel
from .commands import Commands
from .magics import MAGIC_NAMES, Completer, DebugMagics


def notebook_breakpoint(*args: Any, **kwargs: Any) -> Any:
    """``breakpoint()`` in the notebook's own code: the kernel's debugger, even after ``ray.init`` pointed
    ``PYTHONBREAKPOINT`` at Ray's, which would make the kernel listen with debugpy and wait for a client forever."""
    if os.environ.get("PYTHONBREAKPOINT", "").startswith("ray.util."):
        import pdb

        return pdb.Pdb().set_trace(sys._getframe(1))
    return sys.__breakpointhook__(*args, **kwargs)


class KernelDebugger:
    """What the extension installs in one IPython shell; ``unload`` removes it and ends every session."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.relay = Relay()
        self.commands = Commands(self.relay, shell.user_ns)
        self.channel = CommChannel(self.relay)
        shell.register_magics(DebugMagics(shell, self.commands))
        self.completer = Completer(self.commands)
        shell.Completer.custom_matchers.append(self.completer.match)
        if getattr(shell, "kernel", None) is not None:
            self.channel.register()
            self.breakpointhook, sys.breakpointhook = sys.breakpointhook, notebook_breakpoint

    def unload(self) -> None:
        self.commands.serving.stop_serving()
        self.channel.close()
        if sys.breakpointhook is notebook_breakpoint:
            sys.breakpointhook = getattr(self, "breakpointhook", sys.__breakpointhook__)
        self.relay.close()
        if self.completer.match in self.shell.Completer.custom_matchers:
            self.shell.Completer.custom_matchers.remove(self.completer.match)
        line_magics = self.shell.magics_manager.magics["line"]
        for name in MAGIC_NAMES:
            line_magics.pop(name, None)


_installed: dict[int, KernelDebugger] = {}


def load(shell: Any) -> KernelDebugger:
    """Install the debugger in ``shell`` once; loading again returns the installed one."""
    if id(shell) not in _installed:
        _installed[id(shell)] = KernelDebugger(shell)
    return _installed[id(shell)]


def unload(shell: Any) -> None:
    debugger = _installed.pop(id(shell), None)
    if debugger is not None:
        debugger.unload()
