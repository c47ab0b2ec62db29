"""``%load_ext jupyter_debug_relay``: one Relay per kernel, the magics, the completion and the comm target.

Loading registers the magics, the completion and the comm target and imports nothing else: the Relay (and with it
the engine, the operations and the backends), the magics' words and the comm channel are made at first use (a
magic, a completion of a magic line, a comm opened), so every kernel of the ``debug-relay`` spec starts fast.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from .magics import MAGIC_NAMES, Completer, DebugMagics

if TYPE_CHECKING:
    from ..facade.relay import Relay
    from .comm import CommChannel
    from .commands import Commands

COMM_TARGET = "jupyter_debug_relay"  # the comm channel's target name (protocol v1, docs/comm-protocol.md)


def notebook_breakpoint(*args: Any, **kwargs: Any) -> Any:
    """``breakpoint()`` in the notebook's own code: the kernel's debugger, even after ``ray.init`` pointed
    ``PYTHONBREAKPOINT`` at Ray's, which would make the kernel listen with debugpy and wait for a client forever."""
    if os.environ.get("PYTHONBREAKPOINT", "").startswith("ray.util."):
        import pdb

        return pdb.Pdb().set_trace(sys._getframe(1))
    return sys.__breakpointhook__(*args, **kwargs)


class KernelDebugger:
    """What the extension installs in one IPython shell; ``unload`` removes it and ends every session.

    ``relay``, ``commands`` and ``channel`` are made when first asked for (under a lock: a kernel's subshells may
    ask from other threads).
    """

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._relay: Relay | None = None
        self._commands: Commands | None = None
        self._channel: CommChannel | None = None
        self._lock = threading.RLock()
        self.sidebar: Any = None  # JupyterLab's debugger on a session (kernel/sidebar.py), made with the relay
        self._comm_manager: Any = None
        shell.register_magics(DebugMagics(shell, lambda: self.commands))
        self.completer = Completer(lambda: self.commands)
        shell.Completer.custom_matchers.append(self.completer.match)
        if getattr(shell, "kernel", None) is not None:
            from comm import get_comm_manager

            self._comm_manager = get_comm_manager()
            self._comm_manager.register_target(COMM_TARGET, self._open_comm)
            self.breakpointhook, sys.breakpointhook = sys.breakpointhook, notebook_breakpoint

    @property
    def relay(self) -> Relay:
        """The kernel's Relay, made at first use (with the DAP server as the ``expose`` operation's opener)."""
        with self._lock:
            if self._relay is None:
                from .. import dapserver  # noqa: F401  (registers the DAP server as the `expose` operation's opener)
                from ..facade.relay import Relay

                self._relay = Relay()
                from .sidebar import install

                self.sidebar = install(getattr(self.shell, "kernel", None), self._relay)  # `sidebar`, while on
            return self._relay

    @property
    def commands(self) -> Commands:
        """The magics' words over the kernel's Relay, made at first use."""
        with self._lock:
            if self._commands is None:
                from .commands import Commands

                self._commands = Commands(self.relay, self.shell.user_ns)
            return self._commands

    @property
    def channel(self) -> CommChannel:
        """The comm channel over the kernel's Relay, made when the first comm opens."""
        with self._lock:
            if self._channel is None:
                from .comm import CommChannel

                self._channel = CommChannel(self.relay)
            return self._channel

    def _open_comm(self, comm: Any, open_msg: dict[str, Any]) -> None:
        self.channel.open(comm, open_msg)

    def unload(self) -> None:
        """End what first use made (serving, comms, the Relay and its sessions), then unregister everything."""
        if self._commands is not None:
            self._commands.serving.stop_serving()
        if self._channel is not None:
            self._channel.close()
        if self._comm_manager is not None:
            self._comm_manager.unregister_target(COMM_TARGET, self._open_comm)
        if sys.breakpointhook is notebook_breakpoint:
            sys.breakpointhook = getattr(self, "breakpointhook", sys.__breakpointhook__)
        if self._relay is not None:
            self._relay.close()
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
    """Remove the debugger from ``shell``, ending its sessions; nothing when it was not loaded."""
    debugger = _installed.pop(id(shell), None)
    if debugger is not None:
        debugger.unload()
