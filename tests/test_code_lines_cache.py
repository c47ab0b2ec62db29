"""A breakpoint's file is compiled by pydevd once, not at every launch: its code lines are kept in the user's cache."""

from __future__ import annotations

import importlib.util
import json
import os
import stat

import pytest
from conftest import line_of

from jupyter_debug_relay.backends.debugpy import backend

CODE_LINES = next(path for path in backend.BESIDE_BOOT if path.endswith("code_lines.py"))
APP = """\
def work(n):
    total = 0
    for i in range(n):
        total += i  # here
    return total

print("total", work(3))
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The boot's cache module, with the user's cache folder in the test's folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("code_lines_under_test", CODE_LINES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def counting(calls: list):
    def compute(path: str):
        calls.append(path)
        return iter([4, 1, 2, 4])  # pydevd yields each code object's lines: repeats, out of order

    return compute


def test_the_lines_are_worked_out_once_per_text_of_the_file(cache, tmp_path):
    app, calls = tmp_path / "app.py", []
    app.write_text(APP)
    assert cache.lines_of(str(app), counting(calls)) == [1, 2, 4]
    assert cache.lines_of(str(app), counting(calls)) == [1, 2, 4] and len(calls) == 1  # kept
    app.write_text(APP + "print('more')\n")  # another text: worked out again
    cache.lines_of(str(app), counting(calls))
    assert len(calls) == 2
    folder = cache.folder()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert all(stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600 for name in os.listdir(folder))


@pytest.mark.parametrize("kept", ['{"__reduce__": "os.system"}', '["1", 2]', "not json", "[1.5]"])
def test_a_kept_answer_that_is_not_a_list_of_line_numbers_is_worked_out_again(cache, tmp_path, kept):
    app, calls = tmp_path / "app.py", []
    app.write_text(APP)
    cache.lines_of(str(app), counting(calls))
    (entry,) = os.listdir(cache.folder())
    with open(os.path.join(cache.folder(), entry), "w") as f:
        f.write(kept)
    assert cache.lines_of(str(app), counting(calls)) == [1, 2, 4] and len(calls) == 2


def test_a_cache_folder_others_can_write_to_is_not_used(cache, tmp_path):
    app, calls = tmp_path / "app.py", []
    app.write_text(APP)
    os.makedirs(cache.folder())
    os.chmod(cache.folder(), 0o777)
    cache.lines_of(str(app), counting(calls))
    cache.lines_of(str(app), counting(calls))
    assert len(calls) == 2 and os.listdir(cache.folder()) == []


def test_the_oldest_half_goes_past_the_limit(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "KEPT", 4)
    for n in range(5):
        app = tmp_path / f"app{n}.py"
        app.write_text(APP)
        cache.lines_of(str(app), counting([]))
    assert len(os.listdir(cache.folder())) == 3


@pytest.mark.every_target
def test_a_launch_keeps_the_lines_and_the_next_launch_stops_as_the_first(relay, write, tmp_path):
    filler = "".join(f"value_{n} = {n} * 2\n" for n in range(1000))  # big enough to be kept (KEEP_FROM)
    app = write("app.py", APP + filler)
    bp = relay.breakpoints.add(app, line_of(app, "# here"))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in range(2):
        session = relay.launch(app, env=env)
        stop = session.wait_for_stop(30)
        assert stop.frame.line == bp.line and stop.breakpoint_ids == [bp.id]
        session.terminate()
    folder = tmp_path / "cache" / "jupyter-debug-relay" / "code-lines"
    (entry,) = folder.iterdir()
    lines = {1, 2, 3, 4, 5, 7, *range(8, 1008)}  # app.py's code lines
    assert set(json.loads(entry.read_text())) - {0} == lines  # (0: where the module's code starts)
