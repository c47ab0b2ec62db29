"""Breakpoints and sessions that outlive a kernel: `%bp save|load|profiles`, `%debug_session export|import`."""

from __future__ import annotations

import json

import pytest

from tests.conftest import line_of
from tests.kernels import Kernel

APP = """
import os, sys
def total(items):
    acc = 0
    for item in items:
        acc += item  # add
    return acc

print("result", total([3, 4, 5]), sys.argv[1:], os.environ.get("MODE"))  # call
"""


@pytest.fixture
def home(tmp_path):
    return str(tmp_path / "home")


def kernel_in(tmp_path, home: str) -> Kernel:
    k = Kernel("python3", cwd=str(tmp_path), env={"JUPYTER_DEBUG_RELAY_HOME": home})
    k.magic("%load_ext jupyter_debug_relay")
    return k


def test_export_then_import_in_a_fresh_kernel_stops_at_the_same_breakpoint(tmp_path, home, write):
    app = write("app.py", APP)
    first = kernel_in(tmp_path, home)
    try:
        first.magic(f"%bp app.py:{line_of(app, '# add')} if item == 4")
        stop = first.magic("%debug_session launch --name run --env MODE=fast --env API_TOKEN=t-123 app.py --level 3")
        assert "app.py:" in stop.text, stop.text
        masked = first.magic("%debug_session export").text
        exported = json.loads(masked)
        assert exported["start"] == {"operation": "launch", "args": {
            "program": "app.py", "args": ["--level", "3"], "env": {"MODE": "fast", "API_TOKEN": "<redacted>"}}}
        assert [(b["line"], b["condition"]) for b in exported["breakpoints"]] == [(line_of(app, "# add"), "item == 4")]
        first.magic("%debug_session export masked.json")
        said = first.magic("%debug_session export --no-redact run.json").text
        assert said == "exported run (launch and 1 breakpoints) to run.json"
        first.magic("%debug_session stop")
    finally:
        first.close()

    fresh = kernel_in(tmp_path, home)
    try:
        refused = fresh.magic("%debug_session import masked.json").text
        assert refused.startswith("error invalid_request") and "start.args.env.API_TOKEN" in refused, refused
        stop = fresh.magic("%debug_session import run.json").text
        assert stop.startswith("run: paused at app.py:") and f":{line_of(app, '# add')}" in stop, stop
        assert fresh.magic("%debug_session eval item").text == "4"
        assert "(session s1 only)" in fresh.magic("%bp list").text  # the import's breakpoints are its session's
        fresh.magic("%debug_session continue")
        assert "['--level', '3'] fast" in fresh.magic("%debug_session output").text
        missing = fresh.magic("%debug_session import nowhere.json").text
        assert missing.startswith("error file_not_found"), missing
    finally:
        fresh.close()


def test_profiles_outlive_the_kernel(tmp_path, home, write):
    app = write("app.py", APP)
    first = kernel_in(tmp_path, home)
    try:
        assert first.magic("%bp profiles").text == "no saved profiles (save one with `%bp save NAME`)"
        first.magic(f"%bp app.py:{line_of(app, '# add')} hit >= 3")
        first.magic("%bp func total")
        assert first.magic("%bp save smoke").text == "saved 2 breakpoints as profile smoke"
        assert first.magic("%bp save ../etc").text.startswith("error invalid_request")
    finally:
        first.close()

    again = kernel_in(tmp_path, home)
    try:
        assert again.magic("%bp profiles").text == "smoke"
        loaded = again.magic("%bp load smoke").text.splitlines()
        assert len(loaded) == 2 and "hit >= 3" in loaded[0] and "function total" in loaded[1], loaded
        assert again.magic("%bp load smoke").text.splitlines() == loaded  # loading twice makes nothing new
        again.magic("%bp rm 2")
        assert f":{line_of(app, '# add')}" in again.magic("%debug_session launch app.py").text
        assert again.magic("%debug_session eval item").text == "5"
        assert again.magic("%bp load nope").text.startswith("error not_found")
        again.magic("%debug_session stop")
    finally:
        again.close()
