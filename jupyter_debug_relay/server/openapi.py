"""The OpenAPI 3.1 document of the HTTP API, made from the routes, the parameter models and the result types."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter, create_model

from ..errors import CODES
from ..model import SessionInfo, Watch
from ..operations.keeping import NamedProfile
from ..operations.table import RESULT_TYPES
from ..version import __version__
from .persist import ProfilePut
from .routes import ROUTES, Route, _camel

REF = "#/components/schemas/{model}"

# One request example per operation that takes a body (checked against its model by the tests).
ERROR_STATUSES = (400, 401, 403, 404, 409, 413, 502, 504)


class ErrorBody(BaseModel):
    """What went wrong: a stable code, a sentence, what to do, and details (the field, the exit code ...)."""

    code: str
    message: str
    hint: str
    details: dict[str, Any] = Field(default_factory=dict)


class Error(BaseModel):
    """Every error answer."""

    error: ErrorBody


def result_model(route: Route) -> type[BaseModel]:
    """The 200 answer of ``route``: the operation's result keys, plus the stop's line and end for waiting ones."""
    fields: dict[str, Any] = {key: (RESULT_TYPES[key], ...) for key in route.op.returns}
    if route.waits:
        fields["exit_code"] = (int | None, None)
        fields["line_text"] = (str | None, Field(None, description="The source line the stop is on."))
        fields["note"] = (str | None, Field(None, description="What the answer should add: why a running target "
                                            "has not stopped, or that a launch's program got one of its options."))
        fields["watches"] = (list[Watch] | None, Field(None, description="The session's watch expressions and "
                                                         "their values at the stop (when it has any)."))
    if route.starts:
        fields["session"] = (SessionInfo, ...)
    if route.op_name == "output":
        fields["has_more"] = (bool, Field(description="Whether more output waits past cursor."))
    return create_model(f"{_camel(route.op_name)}Result", **fields)


def _schema(components: dict[str, Any], model: Any, name: str) -> dict[str, Any]:
    adapter = model if isinstance(model, TypeAdapter) else TypeAdapter(model)
    schema = adapter.json_schema(ref_template=REF, mode="serialization")
    components.update(schema.pop("$defs", {}))
    components[name] = schema
    return {"$ref": REF.format(model=name)}


def _errors(components: dict[str, Any]) -> dict[str, Any]:
    ref = _schema(components, Error, "Error")
    out = {}
    for status in ERROR_STATUSES:
        code = next(c for c, d in CODES.items() if d.status == status)
        example = {"error": {"code": code, "message": f"An example {code} error.", "hint": CODES[code].hint,
                             "details": {}}}
        out[str(status)] = {"description": code, "content": {"application/json": {"schema": ref,
                                                                                   "example": example}}}
    return out


def _operation(route: Route, components: dict[str, Any], errors: dict[str, Any]) -> dict[str, Any]:
    op = route.op
    props = op.params.model_json_schema(ref_template=REF)
    components.update(props.pop("$defs", {}))
    fields = props.get("properties", {})
    parameters = [{"name": name, "in": "path", "required": True,
                   "schema": fields.get(name, {"type": "string"}) if name != "session" else {"type": "string"}}
                  for name in route.path_fields]
    body = route.body_model
    spec: dict[str, Any] = {"operationId": op.name, "summary": op.summary, "description": op.params.__doc__ or "",
                            "parameters": parameters}
    if route.in_query:
        required = set(body.model_json_schema().get("required", []))
        spec["parameters"] += [{"name": name, "in": "query", "required": name in required,
                                "schema": fields[name]} for name in body.model_fields]
    else:
        ref = _schema(components, body, body.__name__)
        spec["requestBody"] = {"required": False, "content": {"application/json": {
            "schema": ref, "example": op.example or {}}}}
    result = result_model(route)
    spec["responses"] = {"200": {"description": "OK", "content": {"application/json": {
        "schema": _schema(components, result, result.__name__)}}}, **errors}
    return spec


def _persistence(components: dict[str, Any], errors: dict[str, Any]) -> dict[str, Any]:
    """Breakpoint profiles shown and given whole (seed 004 §5.7); listing, saving, loading, export and import are
    operations."""
    def answer(model: type[BaseModel]) -> dict[str, Any]:
        return {"200": {"description": "OK", "content": {"application/json": {
            "schema": _schema(components, model, model.__name__)}}}, **errors}

    def body(model: type[BaseModel], example: dict[str, Any]) -> dict[str, Any]:
        return {"required": False, "content": {"application/json": {
            "schema": _schema(components, model, model.__name__), "example": example}}}

    name = [{"name": "name", "in": "path", "required": True,
             "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"}}]
    spec = {"kind": "line", "path": "main.py", "line": 3, "condition": "i > 100", "enabled": True}
    return {
        "/breakpoint-profiles/{name}": {
            "get": {"operationId": "breakpoint_profile", "summary": "A profile: its breakpoints and exception mode.",
                    "parameters": name, "responses": answer(NamedProfile)},
            "put": {"operationId": "put_breakpoint_profile", "summary": "Keep a breakpoint set under a name (an "
                    "empty body: the relay's breakpoints now), replacing one of that name.", "parameters": name,
                    "requestBody": body(ProfilePut, {"breakpoints": [spec], "exceptions": "uncaught"}),
                    "responses": answer(NamedProfile)}},
    }


def document() -> dict[str, Any]:
    """The whole OpenAPI 3.1 document."""
    components: dict[str, Any] = {}
    errors = _errors(components)
    paths: dict[str, Any] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, components, errors)
    plain = {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}
    paths["/health"] = {"get": {"operationId": "health", "summary": "Whether the server is up (no token needed).",
                                "security": [], "responses": {"200": plain}}}
    paths["/info"] = {"get": {"operationId": "info", "summary": "Version, backends, operations and capabilities.",
                              "responses": {"200": plain, **errors}}}
    paths["/config"] = {"get": {"operationId": "config", "summary": "The server's configuration (not its token).",
                                "responses": {"200": plain, **errors}}}
    paths["/shutdown"] = {"post": {"operationId": "shutdown", "summary": "End every session, reap every target, "
                                   "and stop the server.", "responses": {"200": plain, **errors}}}
    paths.update(_persistence(components, errors))
    paths["/sessions/{session}/events"] = {"get": {
        "operationId": "events", "summary": "Server-Sent Events of a session: `id:` is the event's seq, `event:` its "
        "type, `data:` its JSON; send Last-Event-ID to resume strictly after it.",
        "parameters": [{"name": "session", "in": "path", "required": True, "schema": {"type": "string"}},
                       {"name": "Last-Event-ID", "in": "header", "required": False,
                        "schema": {"type": "string", "pattern": "^[0-9]+$"}}],
        "responses": {"200": {"description": "An event stream",
                              "content": {"text/event-stream": {"schema": {
                                  "type": "object", "description": "One event of the stream.",
                                  "properties": {"id": {"type": "string", "description": "The event's seq."},
                                                 "event": {"type": "string", "description": "Its type."},
                                                 "data": {"type": "string", "description": "Its JSON."}}}}}},
                    **errors}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "jupyter_debug_relay", "version": __version__,
                 "description": "A stateful debugger behind a stateless API: sessions, breakpoints, steps, "
                                "variables, output and events. Every route is an operation of the relay."},
        "servers": [{"url": "http://127.0.0.1:8765"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {"schemas": components,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    return str(schema.get("type", "any"))


def markdown(doc: dict[str, Any]) -> str:
    """``docs/http-api.md``: every endpoint with its parameters, an example request and its answers."""
    lines = ["# HTTP API", "", "<!-- Generated from the OpenAPI document by `python -m "
             "jupyter_debug_relay.server.openapi docs/http-api.md`; do not edit by hand. -->", "",
             doc["info"]["description"], "",
             "Start it with `jupyter-debug-relay serve [--host 127.0.0.1] [--port 8765] [--token T]`; its first line "
             "of output is the base URL. Every request but `GET /health` sends `Authorization: Bearer TOKEN`. "
             "The live document is at `GET /openapi.json` (OpenAPI " + doc["openapi"] + ").", "",
             "Errors are `{\"error\": {\"code\", \"message\", \"hint\", \"details\"}}`: " + ", ".join(
                 f"{d.status} `{code}`" for code, d in CODES.items()) + ".", ""]
    schemas = doc["components"]["schemas"]
    for path, item in doc["paths"].items():
        for method, spec in item.items():
            lines += [f"## `{method.upper()} {path}`", "", f"`{spec['operationId']}`: {spec['summary']}", ""]
            params = list(spec.get("parameters", []))
            body = spec.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                model = schemas[body["schema"]["$ref"].rsplit("/", 1)[1]]
                required = set(model.get("required", []))
                params += [{"name": name, "in": "body", "required": name in required, "schema": schema}
                           for name, schema in model.get("properties", {}).items()]
            if params:
                lines += ["| name | in | type | required | description |", "|---|---|---|---|---|"]
                lines += [f"| `{p['name']}` | {p['in']} | {_type(p['schema'])} | {'yes' if p.get('required') else ''}"
                          f" | {p['schema'].get('description', '')} |" for p in params]
                lines.append("")
            if body:
                lines += ["```json", json.dumps(body["example"]), "```", ""]
            ok = spec["responses"]["200"]["content"]
            media, content = next(iter(ok.items()))
            lines += [f"200: {_type(content['schema']) if media == 'application/json' else media}; errors: "
                      + ", ".join(s for s in spec["responses"] if s != "200"), ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    """Write docs/http-api.md (or the path given) from the document; ``--check`` only compares."""
    check = "--check" in argv
    path = Path(next((a for a in argv if a != "--check"), "docs/http-api.md"))
    new = markdown(document())
    if check:
        if not path.exists() or path.read_text() != new:
            print(f"{path} is out of date: run python -m jupyter_debug_relay.server.openapi", file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
