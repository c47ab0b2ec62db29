"""``%debug_session serve [--port P] [--token T] | serve stop``: this kernel's relay over HTTP and MCP; ``expose
[SESSION] [--read-only]``: a session over DAP for editors; ``sidebar [NAME] | sidebar off``: JupyterLab's debugger."""

from __future__ import annotations

import atexit
from typing import Any

from ..errors import RelayError
from .context import Context, Words
from .grammar import Command, usage
from .results import Result


class ServeWords(Words):
    """The ``serve``, ``expose`` and ``sidebar`` words of ``%debug_session``; holds the server of ``serve`` while it
    runs."""

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.server: Any = None  # the RelayServer of `serve`, while it runs

    def do_serve(self, command: Command) -> Result:
        action = command.extras.get("action")
        if action not in (None, "stop"):
            raise RelayError("invalid_request", f"serve takes `stop` or nothing, not {action!r}.",
                             f"Usage: {usage(command.magic)}")
        if action == "stop":
            url = self.stop_serving()
            result = Result(f"stopped serving at {url}" if url else "not serving")
            result.url = url
            return result
        if self.server is not None:
            result = Result(f"already serving at {self.server.url}; stop it with `%debug_session serve stop` first "
                            "to serve on another port or token")
        else:
            from ..server import RelayServer, ServerConfig
            from ..server.runner import TOKEN_ENV

            token = command.extras.get("token")
            config = ServerConfig(port=command.extras.get("port", 0), token=token or "")
            self.server = RelayServer(self.relay, config).start()
            atexit.register(self.stop_serving)  # kernel shutdown: the token file goes with the server
            where = (f"token: {token}" if token else f"token in {self.server.token_file}" if self.server.token_file
                     else f"token from ${TOKEN_ENV}")
            result = Result(f"serving this kernel's sessions at {self.server.url} (MCP at /mcp); {where}")
        result.url, result.token_file = self.server.url, self.server.token_file
        return result

    def stop_serving(self: Any) -> str | None:
        """Stop `serve` (the relay and its sessions stay); the URL it served at, or None when it was not serving."""
        server, self.server = self.server, None
        if server is None:
            return None
        atexit.unregister(self.stop_serving)
        server.stop()
        return server.url

    def do_expose(self, command: Command) -> Result:
        handle = self.context.session(command.args.get("session"))
        served = self.context.run(command, handle)
        result = Result(f"{handle.name} served over DAP at {served['url']} token {served['token']}"
                        + (" (read-only)" if served["read_only"] else ""))
        result.url, result.port, result.token = served["url"], served["port"], served["token"]
        return result

    def do_sidebar(self, command: Command) -> Result:
        args = {k: v for k, v in command.args.items() if k != "session"}
        key = command.session
        if key == "off":  # `sidebar off`
            args["off"] = True
        elif key is not None:
            args["session"] = self.context.session(key).id
        answer = self.relay.operations.call("sidebar", args)
        if not answer["sidebar"]:
            text = "sidebar off: JupyterLab's debugger debugs the notebook's own cells again"
            if answer["restart_debugger"]:
                text += " once it restarts: click the bug button off, then on"
        else:
            follows = (f"session {self.context.session(answer['follows']).name}" if answer["follows"]
                       else "the newest session (and each new one)")
            text = (f"sidebar on: JupyterLab's debugger drives {follows}; turn it on with the bug button, set "
                    "breakpoints in the file editor's gutter")
        result = Result(text)
        result.sidebar, result.follows, result.restart_debugger = (answer["sidebar"], answer["follows"],
                                                                   answer["restart_debugger"])
        return result
