"""The OpenAPI document: made from the operations, its examples valid, its page current, and schemathesis-clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_debug_relay.operations import OPERATIONS, parse
from jupyter_debug_relay.server.openapi import document, markdown
from jupyter_debug_relay.server.routes import ROUTES, start_options
from tests.server_fixtures import TOKEN, live_server

DOCS = Path(__file__).parent.parent / "docs" / "http-api.md"


def test_the_committed_page_is_the_generated_one():
    assert DOCS.read_text() == markdown(document()), \
        "docs/http-api.md is stale: run python -m jupyter_debug_relay.server.openapi docs/http-api.md"


def test_every_endpoint_has_its_schemas_and_every_example_is_valid():
    doc = document()
    assert doc["openapi"].startswith("3.1")
    for route in ROUTES:
        spec = doc["paths"][route.path][route.method.lower()]
        assert spec["operationId"] == route.op_name
        assert {"200", "400", "401", "404", "409"} <= set(spec["responses"])
        if not route.in_query:
            example = dict(spec["requestBody"]["content"]["application/json"]["example"])
            example.update({name: "smoke" if name == "name" else 1 for name in route.path_fields
                            if name != "session"})
            if route.starts:
                start_options(route.op_name, example)
            parse(route.op_name, example)  # raises invalid_request if the example is wrong
    with_body = {r.op_name for r in ROUTES if not r.in_query}
    assert {name for name, op in OPERATIONS.items() if op.example is not None} == with_body
    assert set(OPERATIONS) == {r.op_name for r in ROUTES}


def test_the_served_document_is_the_generated_one():
    with live_server() as (_, client):
        assert client.get("/openapi.json").json() == document()


@pytest.mark.timeout(150)
def test_schemathesis_finds_no_server_error_and_no_schema_breaking_answer(tmp_path):
    risky = ["launch", "attach", "connect", "restart", "shutdown", "input", "reconnect", "import"]  # they start targets
    with live_server() as (server, client):
        client.post("/sessions", json={"name": "fuzz"})
        command = [sys.executable, "-m", "schemathesis.cli", "run", f"{server.url}/openapi.json",
                   "-H", f"Authorization: Bearer {TOKEN}", "--max-examples", "4", "--workers", "2",
                   "--phases", "examples,fuzzing",
                   "--checks", "not_a_server_error,response_schema_conformance,status_code_conformance,"
                   "content_type_conformance", "--request-timeout", "20", "--seed", "1",
                   *[arg for name in risky for arg in ("--exclude-operation-id", name)]]
        env = {**os.environ, "SCHEMATHESIS_HOOKS": ""}
        run = subprocess.run(command, capture_output=True, text=True, timeout=140, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
