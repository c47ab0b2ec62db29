"""A Mycel-like pipeline runtime that speaks the Mycel Studio debug protocol, to debug without a real service.

Run it with ``python -m jupyter_debug_relay.examples.mycel_demo --port 0`` (its URL is the first line
on stdout) or in-process::

    demo = RuntimeThread()
    url = demo.start()                      # ws://127.0.0.1:PORT/debug
    ...                                     # connect a debugger to url, set stage breakpoints
    demo.request("create_user", {"email": "Ann@Example.com", "name": "Ann"})
    demo.stop()

It listens on 127.0.0.1 only. Its flows: create_user (sanitize, validate_input, enrich, transform,
write), get_users (read), process_order (from the manual-consume queue orders_queue) and
record_reading (from the push connector sensors). Besides the Mycel methods it answers
``demo.request`` and ``demo.publish``, standing in for a REST client and a message broker.
Transform rules, breakpoint conditions and ``debug.evaluate`` go through cel-python's CEL interpreter
(the ``[demo]`` extra) with Mycel's extension functions: nothing a client sends is ever executed as Python.
"""

from .cel import CelCompileError, CelError, cel_type, compile_cel, evaluate_cel
from .cli import build_parser, main, run_program, serve_forever
from .model import DEMO_CONNECTORS, DEMO_FLOWS, DEMO_TYPES, Connector, Flow, Lookup, Rule
from .runtime import ClientSession, DebugThread, PipelineRuntime, RpcError, StageFailed
from .server import Connection, MycelRuntime, RuntimeThread

__all__ = [
    "DEMO_CONNECTORS",
    "DEMO_FLOWS",
    "DEMO_TYPES",
    "CelCompileError",
    "CelError",
    "ClientSession",
    "Connection",
    "Connector",
    "DebugThread",
    "Flow",
    "Lookup",
    "MycelRuntime",
    "PipelineRuntime",
    "RpcError",
    "Rule",
    "RuntimeThread",
    "StageFailed",
    "build_parser",
    "cel_type",
    "compile_cel",
    "evaluate_cel",
    "main",
    "run_program",
    "serve_forever",
]
