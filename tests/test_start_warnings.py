"""A start whose target runs with one of the relay's speed-ups off says so, in one line, where each user looks: the
magic's answer, the panel's status, the HTTP and MCP answers, ``session.warnings``; every breakpoint still stops."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_debug_relay.backends.debugpy import lending
from jupyter_debug_relay.backends.debugpy.boot import table
from jupyter_debug_relay.errors import TargetWarning
from jupyter_debug_relay.widgets import DebuggerPanel
from tests.conftest import wait_until
from tests.kernels import Kernel
from tests.server_fixtures import live_server, ok
from tests.test_feature_checks import renamed_copy

APP = "total = 0\nfor i in range(3):\n    total += i  # here\nprint('total', total)\n"
WHY = "code_lines_cache is off: _pydevd_bundle.pydevd_api has no _get_code_lines"
LINE = f"warning: {WHY}; so {table.BY_NAME['code_lines_cache'].off} (`jupyter-debug-relay doctor` says what to do)"


@pytest.fixture(scope="module")
def lacking(tmp_path_factory) -> str:
    """A debugpy whose pydevd lacks the name ``code_lines_cache`` replaces, lent to every target of the module."""
    return str(renamed_copy(tmp_path_factory.mktemp("debugpy"), "_get_code_lines"))


@pytest.fixture
def app(tmp_path: Path) -> str:
    path = tmp_path / "app.py"
    path.write_text(APP)
    return str(path)


def test_the_python_api_and_the_panel(relay, app, lacking, monkeypatch) -> None:
    monkeypatch.setenv(lending.CHOSEN_ENV, lacking)
    relay.breakpoints.add(app, 3)
    with pytest.warns(TargetWarning, match="code_lines_cache is off"):
        session = relay.launch(app)
    assert session.wait_for_stop(30).frame.line == 3
    assert [w.split(";")[0] for w in session.warnings] == [WHY]
    panel = DebuggerPanel(session)
    try:
        wait_until(lambda: panel.status.warning == LINE, what="the warning in the panel's status")
    finally:
        panel.close()
    session.terminate()


def test_the_magic_says_it_in_one_line_under_the_stop(app, lacking, monkeypatch) -> None:
    monkeypatch.setenv(lending.CHOSEN_ENV, lacking)
    kernel = Kernel("python3", cwd=os.path.dirname(app))
    try:
        kernel.magic("%load_ext jupyter_debug_relay")
        kernel.magic("%bp app.py:3")
        text = kernel.magic("%debug_session launch app.py").results[0]["text/plain"]
        lines = text.splitlines()
        assert lines[0].startswith("s1: paused at app.py:3") and LINE in lines, text
        kernel.magic("%debug_session stop")
    finally:
        kernel.close()


def test_http_and_mcp_answers_carry_them(app, lacking, monkeypatch) -> None:
    monkeypatch.setenv(lending.CHOSEN_ENV, lacking)
    with live_server() as (_, api):
        sid = ok(api.post("/sessions", json={}))["session"]["id"]
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"path": app, "line": 3}))
        started = ok(api.post(f"/sessions/{sid}/launch", json={"program": app}))
        assert started["state"] == "paused" and started["stop"]["frame"]["line"] == 3
        assert [w.split(";")[0] for w in started["warnings"]] == [WHY] == \
            [w.split(";")[0] for w in started["session"]["warnings"]]
        ok(api.post(f"/sessions/{sid}/terminate", json={}))

    params = StdioServerParameters(command=sys.executable, args=["-m", "jupyter_debug_relay.cli", "mcp"],
                                   env=dict(os.environ), cwd=os.path.dirname(app))

    async def mcp() -> None:
        async with Client(params) as client:
            await client.call_tool("add_breakpoint", {"path": app, "line": 3})
            result = await client.call_tool("launch", {"program": app})
            assert not result.is_error, result.content[0].text
            assert [w.split(";")[0] for w in result.structured_content["warnings"]] == [WHY]
            assert result.content[0].text.splitlines()[-1] == LINE
            await client.call_tool("terminate", {})

    asyncio.run(asyncio.wait_for(mcp(), 90))
