"""The comm's request schemas, generated from the operations' parameter models, and their page in the docs.

``request_schema()`` is the JSON Schema of a v1 request: the command enum (every operation and its v1 aliases) and,
per command, its ``args`` in v1's camelCase spelling. ``python -m jupyter_debug_relay.kernel.comm_schema`` rewrites
the generated blocks of docs/comm-protocol.md (between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``).
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

from .. import generated
from ..errors import CODES
from ..operations import OPERATIONS, Operation
from ..operations.params import ExceptionsParams
from .comm import COMMANDS

REQUEST_ID = "urn:jupyter-debug-relay:comm:request"
ERROR_CODE_ID = "urn:jupyter-debug-relay:comm:error-code"
DOC = Path(__file__).resolve().parents[2] / "docs" / "comm-protocol.md"


def camel(name: str) -> str:
    """``thread_id`` -> ``threadId``: v1's spelling of an operation's field."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _clean(schema: Any) -> Any:
    """A pydantic schema without its titles (the field names say it)."""
    if isinstance(schema, dict):
        return {k: _clean(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema


def args_schema(command: str) -> dict[str, Any]:
    """The schema of one v1 command's ``args``: its operation's fields in camelCase, with v1's own defaults."""
    name, defaults = COMMANDS[command]
    op = OPERATIONS[name]
    model = _clean(op.params.model_json_schema())
    properties = {camel(k): v for k, v in model["properties"].items() if k != "session"}  # top level in v1
    for key, value in defaults.items():
        properties[camel(key)] = {**properties[camel(key)], "default": value}
    if command == "setBreakpoint":  # v1 sets the exception mode here too (see comm._operation_of)
        properties["kind"] = {**properties["kind"], "enum": [*properties["kind"]["enum"], "exception"]}
        properties["mode"] = _clean(ExceptionsParams.model_json_schema())["properties"]["mode"]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    required = [camel(k) for k in model.get("required", [])]
    if required:
        schema["required"] = required
    return schema


@functools.cache
def request_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a request from a frontend, ``args`` checked per command."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": REQUEST_ID,
        "title": "Request",
        "type": "object",
        "required": ["type", "id", "command"],
        "properties": {
            "type": {"const": "request"},
            "v": {"const": 1},
            "id": {"type": ["string", "integer"]},
            "command": {"enum": list(COMMANDS)},
            "session": {"type": "string"},
            "args": {"type": "object"},
        },
        "additionalProperties": False,
        "allOf": [{"if": {"properties": {"command": {"const": c}}},
                   "then": {"properties": {"args": {"$ref": f"#/$defs/{c}"}}}} for c in COMMANDS],
        "$defs": {c: args_schema(c) for c in COMMANDS},
    }


def error_code_schema() -> dict[str, Any]:
    """The JSON Schema of an error's ``code``: every code the relay declares."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": ERROR_CODE_ID, "title": "ErrorCode",
            "enum": list(CODES)}


# -- the page ------------------------------------------------------------------------------------------

def _json_block(schema: dict[str, Any]) -> str:
    """The schema as JSON, one line per command so the page stays readable."""
    head = {k: v for k, v in schema.items() if k not in ("allOf", "$defs")}
    lines = json.dumps(head, indent=2)[:-2].splitlines()
    lines[-1] += ","
    lines.append('  "allOf": [')
    lines += [f"    {json.dumps(rule)}," for rule in schema["allOf"]]
    lines[-1] = lines[-1].rstrip(",")
    lines.append("  ],")
    lines.append('  "$defs": {')
    lines += [f"    {json.dumps(c)}: {json.dumps(s)}," for c, s in schema["$defs"].items()]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  }", "}"]
    return "```json\n" + "\n".join(lines) + "\n```"


def _args_cell(command: str) -> str:
    schema = args_schema(command)
    required = set(schema.get("required", []))
    names = [f"`{name}`" + (" (required)" if name in required else "") for name in schema["properties"]]
    return ", ".join(names) or "–"


def _row(op: Operation) -> str:
    aliases = ", ".join(f"`{a}`" for a in op.aliases if a != op.name) or "–"
    returns = "{" + ", ".join(f'"{key}"' for key in op.returns) + "}"
    return (f"| `{op.name}` | {aliases} | {'yes' if op.takes_session else '–'} | {_args_cell(op.name)} | "
            f"`{returns}` | {op.summary} |")


def requests_table() -> str:
    """One row per operation: its command, its v1 alias, whether it takes a session, its args, its body."""
    head = ["| command | v1 alias | session | args | response body | what it does |", "|---|---|---|---|---|---|"]
    return "\n".join(head + [_row(op) for op in OPERATIONS.values()])


BLOCKS = {"requests": requests_table, "request-schema": lambda: _json_block(request_schema()),
          "error-code-schema": lambda: "```json\n" + json.dumps(error_code_schema(), indent=2) + "\n```"}


def render(text: str) -> str:
    """``text`` with every generated block rewritten from the models; a missing marker is an error."""
    return generated.render(text, BLOCKS)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated blocks of the page (default docs/comm-protocol.md); ``--check`` only compares."""
    return generated.main(sys.argv[1:] if argv is None else argv, DOC, BLOCKS,
                          "python -m jupyter_debug_relay.kernel.comm_schema")


if __name__ == "__main__":
    sys.exit(main())
