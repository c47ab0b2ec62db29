"""``expose``: a session served over DAP, so editors (VS Code, nvim-dap, dap-mode) join it beside its owner.

The DAP server is a front end above the operations; it registers itself here as the ``Opener`` when it is imported
(with the package's ``Relay``, the kernel's relay and ``jupyter-debug-relay serve``'s), so the verb is declared once
and reaches it from every front end.
"""

from __future__ import annotations

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

RESULT_TYPES: dict[str, Any] = {"url": str, "port": int, "token": str, "read_only": bool,
                                "connection_file": str | None}
