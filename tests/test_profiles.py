"""Breakpoint sets on disk: the home, profile names, atomic writes under a lock shared by processes."""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from jupyter_debug_relay.errors import RelayError
from jupyter_debug_relay.model import Breakpoint
from jupyter_debug_relay.store.profiles import ProfileStore, home, spec


def test_the_home_is_the_env_variable_else_debug_relay_in_the_jupyter_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_DEBUG_RELAY_HOME", str(tmp_path / "h"))
    assert home() == tmp_path / "h" and ProfileStore().root == tmp_path / "h"
    monkeypatch.delenv("JUPYTER_DEBUG_RELAY_HOME")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    assert home() == tmp_path / "data" / "debug_relay"


def test_a_profile_is_saved_listed_loaded_and_replaced(tmp_path):
    store = ProfileStore(tmp_path)
    bp = Breakpoint(id=7, kind="line", path="/src/app.py", line=3, condition="i > 2", verified=True, message="x")
    assert spec(bp) == {"kind": "line", "path": "/src/app.py", "line": 3, "condition": "i > 2", "enabled": True}
    store.save("smoke", [spec(bp)], "uncaught")
    store.save("a.b-c_1", [], "none")
    assert store.names() == ["a.b-c_1", "smoke"]
    assert store.load("smoke") == {"name": "smoke", "breakpoints": [spec(bp)], "exceptions": "uncaught"}
    store.save("smoke", [], "none")
    assert store.load("smoke")["breakpoints"] == []
    assert sorted(p.name for p in (tmp_path / "profiles").iterdir()) == ["a.b-c_1.json", "smoke.json"]  # no temp


@pytest.mark.parametrize("name", ["", "../etc/passwd", ".hidden", "a/b", "x" * 65, "sp ace"])
def test_a_name_that_is_not_a_plain_word_is_refused(tmp_path, name):
    with pytest.raises(RelayError) as info:
        ProfileStore(tmp_path).save(name, [], "none")
    assert info.value.code == "invalid_request" and info.value.details == {"field": "name"}
    assert not any(tmp_path.rglob("*.json"))


def test_a_missing_profile_is_not_found_naming_the_saved_ones(tmp_path):
    store = ProfileStore(tmp_path)
    store.save("one", [], "none")
    with pytest.raises(RelayError) as info:
        store.load("two")
    assert info.value.code == "not_found" and "Saved profiles: one" in info.value.hint


def test_a_broken_file_is_an_error_naming_it(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "bad.json").write_text("{not json")
    with pytest.raises(RelayError) as info:
        ProfileStore(tmp_path).load("bad")
    assert info.value.code == "invalid_request" and "bad.json" in info.value.message


def _writer(root: str, n: int) -> None:
    store = ProfileStore(root)
    for i in range(40):
        store.keep([{"kind": "line", "path": f"/w{n}.py", "line": i + 1}] * 50, "none")


def test_concurrent_writers_in_other_processes_never_leave_a_torn_file(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_writer, args=(str(tmp_path), n)) for n in range(3)]
    for w in writers:
        w.start()
    seen = 0
    while any(w.is_alive() for w in writers):
        if (tmp_path / "breakpoints.json").exists():
            saved = json.loads((tmp_path / "breakpoints.json").read_text())  # always whole
            assert len(saved["breakpoints"]) == 50
            seen += 1
    for w in writers:
        w.join(30)
        assert w.exitcode == 0
    assert seen and ProfileStore(tmp_path).saved()["breakpoints"][0]["line"] == 40
    assert sorted(os.listdir(tmp_path)) == [".lock", "breakpoints.json"]
