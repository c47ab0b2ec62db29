"""The ``jupyter-debug-relay`` command (also ``jupyter debug-relay``): demo, install-kernel, version, doctor, serve,
mcp, launch and attach (into a running serve, started in the background when none runs), and over the session store:
sessions, watch, replay, attach SESSION and the operations (pause, next, eval, bp, ...)."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from ..errors import RelayError
from ..version import __version__
from . import operations, recordings, starting


def build_parser() -> argparse.ArgumentParser:
    """Every verb of the command; a verb of the session store carries the function that runs it."""
    parser = argparse.ArgumentParser(prog="jupyter-debug-relay", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("demo", help="debug the bundled example in a kernel and print the cells with their results")
    install = verbs.add_parser("install-kernel", help='install the "Python 3 (debug relay)" kernel spec')
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for the current user")
    where.add_argument("--sys-prefix", action="store_true", help="in this environment (the default)")
    where.add_argument("--prefix", help="under this prefix, e.g. /usr/local")
    verbs.add_parser("version", help="print the version")
    said = "the debugpy each target Python runs and which of the relay's speed-ups are on there, with what to do " \
        "(exit status 1: one is off; 2: an error)"
    doctor = verbs.add_parser("doctor", help=said, description=said)
    doctor.add_argument("--python", action="append", default=[], metavar="PATH",
                        help="a target interpreter to check (repeatable; default: this one and every Python 3.8+ "
                        "found as python3.X on PATH or in pyenv)")
    doctor.add_argument("--debugpy", metavar="FOLDER", help="check this debugpy package instead of the one lent")
    doctor.add_argument("--json", action="store_true", help="print one JSON object")
    serve = verbs.add_parser("serve", help="serve a relay over HTTP for agents (OpenAPI at /openapi.json, MCP at /mcp)")
    _server_options(serve)
    mcp = verbs.add_parser("mcp", help="serve a relay as MCP tools on stdio (or --http: streamable HTTP at /mcp)")
    mcp.add_argument("--http", action="store_true", help="serve MCP over streamable HTTP instead of stdio")
    _server_options(mcp)
    starting.register(verbs)
    recordings.register(verbs)
    operations.register(verbs)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; a reader that stops early (``sessions | head``) ends it quietly, as other tools do."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at nothing so that flush cannot fail as well.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _main(argv: list[str] | None) -> int:
    options = build_parser().parse_args(argv)
    if hasattr(options, "run"):
        try:
            return options.run(options)
        except RelayError as exc:
            print(f"error: {exc.code}: {exc.message}\nhint: {exc.hint}", file=sys.stderr)
            return 2
    if options.verb in ("serve", "mcp"):
        return _serve(options)
    if options.verb == "version":
        print(__version__)
        return 0
    if options.verb == "doctor":
        from . import doctor

        try:
            return doctor.run(options.python, options.debugpy, options.json)
        except RelayError as exc:
            print(f"error: {exc.code}: {exc.message}\nhint: {exc.hint}", file=sys.stderr)
            return 2
    if options.verb == "install-kernel":
        from ..kernel import kernelspec

        path = kernelspec.install(user=options.user, prefix=options.prefix)
        print(f"installed kernel spec {kernelspec.KERNEL_NAME} in {path}")
        return 0
    from . import demo

    try:
        code = demo.run()
    except RelayError as exc:
        print(f"error: {exc.code}: {exc.message}\nhint: {exc.hint}", file=sys.stderr)
        return 2
    print(demo.finished(code))
    return 0


def _server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="port (0 picks a free one)")
    parser.add_argument("--token", help="bearer token (default: $JUPYTER_DEBUG_RELAY_TOKEN, else a random one "
                        "written with the URL to a 0600 file in the Jupyter runtime dir)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME:PORT",
                        help="another Host header to accept (e.g. behind a proxy)")
    parser.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                        help="a browser origin allowed to call the API (none by default)")
    parser.add_argument("--tools", choices=("lean", "all"), default="lean",
                        help="MCP tools: a task's tools and `operation` for the rest (lean), or every operation (all)")
    parser.add_argument("--tls-cert", default="", metavar="PEM", help="serve https with this certificate (chain)")
    parser.add_argument("--tls-key", default="", metavar="PEM", help="the certificate's private key")
    parser.add_argument("--tls-self-signed", action="store_true",
                        help="serve https with a certificate of its own (kept in the home); prints its fingerprint")
    parser.add_argument("--insecure", action="store_true",
                        help="serve plain HTTP beyond loopback all the same (the token crosses in clear text)")
    parser.add_argument("--no-redact", action="store_true",
                        help="show values of secret-looking variables, env entries and arguments as they are")


def _serve(options: argparse.Namespace) -> int:
    """Run the relay server (or MCP on stdio) until shutdown; the relay's targets are reaped at the end."""
    from .. import dapserver  # noqa: F401  (registers the DAP server as the `expose` operation's opener)
    from ..facade.relay import Relay

    # SIGTERM ends the process through SystemExit, as Ctrl-C does through KeyboardInterrupt, so that the token
    # file is removed and the targets are reaped (uvicorn raises the signal again once it has stopped serving).
    signal.signal(signal.SIGTERM, _exit_on_signal)
    with Relay() as relay:
        if options.verb == "mcp" and not options.http:
            import anyio

            from ..server.mcp import serve_stdio

            anyio.run(serve_stdio, relay, not options.no_redact, options.tools)
            return 0
        from ..remote.tls import shown
        from ..server import RelayServer, ServerConfig
        from ..server.runner import self_signed

        config = ServerConfig(host=options.host, port=options.port, token=options.token or "",
                              redact=not options.no_redact, cors_origins=tuple(options.cors_origin),
                              allowed_hosts=tuple(options.allow_host), persist=True,
                              mcp_tools=options.tools, tls_cert=options.tls_cert,
                              tls_key=options.tls_key, insecure=options.insecure)
        fingerprint = ""
        try:
            if options.tls_self_signed:
                config.tls_cert, config.tls_key, fingerprint = self_signed(options.host)
            server = RelayServer(relay, config)
        except RelayError as exc:
            print(f"error: {exc.code}: {exc.message}\nhint: {exc.hint}", file=sys.stderr)
            return 2
        try:
            print(server.url + ("/mcp" if options.verb == "mcp" else ""), flush=True)
            if fingerprint:
                print(f"TLS certificate SHA-256 fingerprint: {shown(fingerprint)}", flush=True)
            if server.warning:
                print(server.warning, file=sys.stderr, flush=True)
            if server.token_file:
                print(f"token written to {server.token_file}", file=sys.stderr, flush=True)
            server.run()
        except KeyboardInterrupt:
            return 130
        finally:
            server.close()
    return 0


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)

