"""The Mycel demo as a program: ``python -m jupyter_debug_relay.examples.mycel_demo --port 0``."""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Callable

from ...errors import RelayError
from .server import MycelRuntime


def build_parser(prog: str) -> argparse.ArgumentParser:
    """The command line of the demo runtime."""
    parser = argparse.ArgumentParser(
        prog=prog, description="A Mycel-like runtime to debug over ws://.../debug."
    )
    parser.add_argument("--port", type=int, default=9090, help="port on 127.0.0.1 (0 picks a free one)")
    return parser


async def serve_forever(runtime: MycelRuntime, port: int) -> None:
    """Serve until SIGINT or SIGTERM; the URL is the first line on stdout."""
    print(await runtime.serve(port), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runtime.close()


def run_program(make_runtime: Callable[[], MycelRuntime], prog: str, argv: list[str] | None = None) -> None:
    """Parse the command line and serve ``make_runtime()``; a runtime that cannot start exits with its hint."""
    args = build_parser(prog).parse_args(argv)
    try:
        runtime = make_runtime()
    except RelayError as exc:
        raise SystemExit(f"error: {exc.code}: {exc.message}\nhint: {exc.hint}") from None
    asyncio.run(serve_forever(runtime, args.port))


def main(argv: list[str] | None = None) -> None:
    """``python -m jupyter_debug_relay.examples.mycel_demo --port 0``."""
    run_program(MycelRuntime, "python -m jupyter_debug_relay.examples.mycel_demo", argv)
