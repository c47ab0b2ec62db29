"""A Mycel-like pipeline runtime that speaks the Mycel Studio debug protocol, to debug without a real service."""

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
