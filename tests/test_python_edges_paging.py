"""Paging a container's children, for every container kind of the standard library, NumPy and pandas (issue 16)."""

from __future__ import annotations

import pytest
from conftest import line_of

PROGRAM = """
import collections
import numpy as np
import pandas as pd

arr = np.arange(1000)
grid = np.arange(600).reshape(200, 3)
r = range(1000)
series = pd.Series(range(200), index=[f"r{i}" for i in range(200)])
frame = pd.DataFrame({"a": range(150), "b": range(150, 300)})
dq = collections.deque(range(300))
st = set(range(3000))
fs = frozenset(range(3000))
dd = collections.defaultdict(int, {i: -i for i in range(3000)})
od = collections.OrderedDict((i, 2 * i) for i in range(3000))
print("done")  # stop
"""


@pytest.fixture(scope="module")
def containers(tmp_path_factory):
    from jupyter_debug_relay import Relay

    path = tmp_path_factory.mktemp("paging") / "containers.py"
    path.write_text(PROGRAM.lstrip("\n"))
    with Relay() as relay:
        relay.breakpoints.add(str(path), line_of(str(path), "# stop"))
        session = relay.launch(str(path))
        session.wait_for_stop(20)
        found = {v.name: v for v in session.variables(session.scopes()[0].ref, count=1000).items}
        yield session, found
        session.terminate()


def page(containers, name, start, count):
    session, found = containers
    got = session.variables(found[name].ref, start=start, count=count)
    return got.total, [(v.name, v.value, v.evaluate_name) for v in got.items]


def test_an_array_pages_by_index(containers):
    total, items = page(containers, "arr", 0, 3)
    assert total == 1000
    assert [(n, v) for n, v, _ in items] == [("0", "np.int64(0)"), ("1", "np.int64(1)"), ("2", "np.int64(2)")]
    total, items = page(containers, "grid", 150, 2)
    assert total == 200 and [n for n, _, _ in items] == ["150", "151"] and "450" in items[0][1]


def test_a_range_pages_from_its_start(containers):
    total, items = page(containers, "r", 10, 3)
    assert total == 1000 and [(n, v, e) for n, v, e in items][0] == ("10", "10", "r[10]")
    assert [v for _, v, _ in items] == ["10", "11", "12"]


def test_pandas_rows_are_labelled_by_their_index(containers):
    total, items = page(containers, "series", 120, 3)
    assert total == 200
    assert [(n, e) for n, _, e in items] == [("r120", "series.iloc[120]"), ("r121", "series.iloc[121]"),
                                              ("r122", "series.iloc[122]")]
    assert items[0][1] == "np.int64(120)"
    total, items = page(containers, "frame", 0, 150)
    assert total == 150 and len(items) == 150 and items[149][0] == "149" and "299" in items[149][1]


def test_a_deque_pages_by_index(containers):
    total, items = page(containers, "dq", 250, 3)
    assert total == 300 and [(n, v, e) for n, v, e in items][0] == ("250", "250", "dq[250]")


@pytest.mark.parametrize("name", ["st", "fs"])
def test_a_big_set_pages_in_iteration_order_to_its_end(containers, name):
    session, found = containers
    total, items = page(containers, name, 2990, 20)
    assert total == 3000 and len(items) == 10
    assert items[0][0] == "#2990"
    assert session.evaluate(items[0][2]).value == items[0][1]  # the label's expression finds that element
    whole = session.variables(found[name].ref, start=0, count=3000).items
    assert sorted(int(v.value) for v in whole) == list(range(3000))


@pytest.mark.parametrize(("name", "factor"), [("dd", -1), ("od", 2)])
def test_a_big_dict_subclass_pages_by_key_to_its_end(containers, name, factor):
    session, _ = containers
    total, items = page(containers, name, 2500, 600)
    assert total == 3000 and len(items) == 500
    assert (items[0][0], items[0][1], items[0][2]) == ("2500", str(2500 * factor), f"{name}[2500]")
    assert session.evaluate(items[-1][2]).value == str(2999 * factor)
