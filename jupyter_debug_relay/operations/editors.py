"""``expose``: a session served over DAP, so editors (VS Code, nvim-dap, dap-mode) join it beside its owner;
``sidebar``: JupyterLab's own debugger (its sidebar and gutters) drives a session of the kernel.

The DAP server is a front end above the operations; it registers itself here as the ``Opener`` when it is imported
(with the package's ``Relay``, the kernel's relay and ``jupyter-debug-relay serve``'s), so the verb is declared once
and reaches it from every front end. Likewise a kernel registers its ``Sidebar`` for its relay's session manager.
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol

from pydantic import Field, StrictBool, StrictInt

from ..errors import RelayError
from . import params as P
from .base import SESSION_ERRORS, Context, Operation, S, session_of


class ExposeParams(P.SessionParams):
    """Serve a session over DAP on a loopback port, for editors to attach to with a token."""

    port: StrictInt = Field(0, ge=0, le=65535, description="The port to listen on (127.0.0.1); 0 picks a free one.")
    read_only: StrictBool = Field(
        False, description="Clients may look (threads, stack, variables) but not step, continue, evaluate or set.")


class Opener(Protocol):
    """Opens a DAP server for a session on the relay loop; answers its url, port, token and connection file."""

    async def __call__(self, ctx: Context, session: str, port: int, read_only: bool) -> dict[str, Any]: ...


OPENERS: list[Opener] = []  # the DAP front end, once jupyter_debug_relay.dapserver is imported


async def _expose(ctx: Context, p: ExposeParams) -> dict[str, Any]:
    session = session_of(ctx, p.session)
    if not OPENERS:
        raise RelayError("unsupported", "No DAP server is loaded in this process.",
                         "Take Relay from the package (`from jupyter_debug_relay import Relay`) or import "
                         "jupyter_debug_relay.dapserver before calling expose.")
    return await OPENERS[-1](ctx, session.id, p.port, p.read_only)


OPERATIONS = (
    Operation("expose", ExposeParams, _expose,
              "Serve a session over DAP so editors join it; answers dap://127.0.0.1:PORT and a token.",
              ("url", "port", "token", "read_only", "connection_file"),
              (*SESSION_ERRORS, "unsupported", "connection_failed"),
              when="Use it to let VS Code (debugServer), nvim-dap or dap-mode watch or drive the same session; "
                   "the client attaches with {\"token\": TOKEN}.",
              http=(f"POST {S}/expose",),
              example={"read_only": True}),
)

class SidebarParams(P.SessionParams):
    """Let JupyterLab's debugger (its sidebar, gutter breakpoints, step buttons) drive a session, or stop it."""

    off: StrictBool = Field(False, description="Give JupyterLab's debugger back to the kernel's own cells.")


class Sidebar(Protocol):
    """A kernel's hook into JupyterLab's debug requests: on for a session (None: the newest, following new ones)
    or off; answers whether it is on, the session it follows and the hash settings it tells JupyterLab."""

    async def switch(self, ctx: Context, session: str | None, off: bool) -> dict[str, Any]: ...


SIDEBARS: weakref.WeakKeyDictionary[Any, Sidebar] = weakref.WeakKeyDictionary()  # session manager -> its kernel's


async def _sidebar(ctx: Context, p: SidebarParams) -> dict[str, Any]:
    hook = SIDEBARS.get(ctx.manager)
    if hook is None:
        raise RelayError("unsupported", "This relay is not a Jupyter kernel's: there is no JupyterLab debugger to "
                         "give it to.", "Run `%debug_session sidebar` in a notebook on the debug-relay kernel (or "
                         "call sidebar through that kernel's `%debug_session serve`).")
    if p.session is not None and not p.off:
        session_of(ctx, p.session)  # session_not_found now, not at JupyterLab's first request
    return await hook.switch(ctx, p.session, p.off)


OPERATIONS += (
    Operation("sidebar", SidebarParams, _sidebar,
              "Let JupyterLab's own debugger (sidebar, gutter breakpoints, step buttons) drive a session; off gives "
              "it back to the kernel's cells.",
              ("sidebar", "follows", "hash_seed", "tmp_prefix", "restart_debugger"),
              (*SESSION_ERRORS, "unsupported"),
              when="Use it in JupyterLab so its Call Stack, Variables and Breakpoints panels and the file editor's "
                   "gutter debug the target; without session it follows the newest session.",
              http=(f"POST {S}/sidebar", "POST /sidebar"),
              example={"off": False}),
)

RESULT_TYPES: dict[str, Any] = {"url": str, "port": int, "token": str, "read_only": bool,
                                "connection_file": str | None, "sidebar": bool, "follows": str | None,
                                "hash_seed": int, "tmp_prefix": str, "restart_debugger": bool}
