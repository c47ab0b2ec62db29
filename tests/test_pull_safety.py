"""`pull` moves values in data formats: gadgets held by a real paused target never run here, values round-trip."""

from __future__ import annotations

import builtins
import collections
import copy
import datetime
import io
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jupyter_debug_relay import RelayError
from jupyter_debug_relay import pull as pull_module
from jupyter_debug_relay.pull import pull
from jupyter_debug_relay.pull.codec import (
    MAGIC,
    TARGET_SOURCE,
    PulledRepr,
    decode_payload,
    json_or_text,
    kernel_pyarrow,
)
from tests.conftest import line_of

GADGETS = """
import copyreg, functools, operator, os, subprocess, sys
import numpy as np
import pandas as pd
from numpy.testing._private.utils import runstring

MARKS = sys.argv[1]


def touch(name):
    return f"open({os.path.join(MARKS, name)!r}, 'w').write('ran')"


class RunString:  # numpy's runstring is exec; the old allow-list admitted it
    def __reduce__(self):
        return runstring, (touch("runstring") + "; import builtins; builtins.PWNED = True", {})


class Partial:
    def __reduce__(self):
        return functools.partial(os.system, f"touch {MARKS}/partial"), ()


class MethodCaller:
    def __reduce__(self):
        return operator.methodcaller("__call__", f"touch {MARKS}/methodcaller"), (os.system,)


class Eval:
    def __reduce__(self):
        return eval, (touch("eval"),)


class Exec:
    def __reduce__(self):
        return exec, (touch("exec"),)


class ViaCopyreg:
    pass


copyreg.pickle(ViaCopyreg, lambda obj: (os.system, (f"touch {MARKS}/copyreg",)))


class ReduceEx:
    def __reduce_ex__(self, protocol):
        return subprocess.call, (["touch", f"{MARKS}/reduce_ex"],)


STYLES = {"runstring": RunString, "partial": Partial, "methodcaller": MethodCaller, "eval": Eval, "exec": Exec,
          "copyreg": ViaCopyreg, "reduce_ex": ReduceEx}
held = {name: {"name": name, "nested": [1, {"evil": cls()}]} for name, cls in STYLES.items()}
in_numpy = np.array([Exec(), 1], dtype=object)
in_pandas = pd.DataFrame({"x": [1, 2], "evil": [Partial(), RunString()]})
in_series = pd.Series([Eval(), 2.5], name="s")
x = 1  # stop
"""

STYLES = ("runstring", "partial", "methodcaller", "eval", "exec", "copyreg", "reduce_ex")


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


def paused_at_stop(relay, write, name: str, source: str, args: list[str] | None = None, env=None):
    path = write(name, source)
    relay.breakpoints.add(path, line_of(path, "# stop"))
    session = relay.launch(path, args=args, env=env)
    session.wait_for_stop(30)
    return session


def test_gadgets_held_by_a_paused_target_arrive_as_reprs_and_never_run_here(relay, write, marks):
    session = paused_at_stop(relay, write, "gadgets.py", GADGETS, [str(marks)])
    for style in STYLES:
        value = pull(session, f"held[{style!r}]")
        evil = value["nested"][1]["evil"]
        assert value["name"] == style and value["nested"][0] == 1
        assert isinstance(evil, PulledRepr) and evil.type_name.startswith("__main__."), (style, evil)
        assert repr(evil).startswith(f"<repr of a {evil.type_name} from the target: <__main__.")
    array = pull(session, "in_numpy")
    assert isinstance(array, PulledRepr) and array.type_name == "numpy.ndarray" and "Exec object" in array
    frame = pull(session, "in_pandas")
    assert frame["x"].tolist() == [1, 2] and all(isinstance(v, PulledRepr) for v in frame["evil"])
    series = pull(session, "in_series")
    assert isinstance(series[0], PulledRepr) and series[1] == 2.5 and series.name == "s"
    session.terminate()
    assert sorted(os.listdir(marks)) == [] and not hasattr(builtins, "PWNED")


def test_the_runstring_gadget_pulled_by_the_magic_does_not_run_in_the_kernel(kernel, write, marks):
    holder = 'data = {"name": "bob", "evil": RunString()}\nx = 1  # stop'
    path = write("gadgets.py", GADGETS.replace("x = 1  # stop", holder).replace("sys.argv[1]", repr(str(marks))))
    kernel.magic(f"%bp gadgets.py:{line_of(path, '# stop')}")
    assert "paused at" in kernel.magic("%dbg launch gadgets.py").text
    assert kernel.magic("%dbg pull data").text == "pulled data into data (dict)"
    check = kernel.magic(f"import builtins, os\nprint(hasattr(builtins, 'PWNED'), os.listdir({str(marks)!r}), "
                         "data['name'], type(data['evil']).__name__, repr(data['evil'])[:46])")
    assert check.streams == "False [] bob PulledRepr <repr of a __main__.RunString from the target:\n"
    kernel.magic("%dbg stop")
    assert os.listdir(marks) == []


VALUES = """
def build():
    import collections, datetime, decimal, fractions, uuid
    import numpy as np
    import pandas as pd

    deep = "bottom"
    for level in range(60):
        deep = [level, {"down": deep}] if level % 2 else (level, deep)
    plain = {
        "none": None, "bools": [True, False], "nan": float("nan"),
        "ints": [0, -1, 2**63 - 1, -(2**63), 2**63, -(10**40), 7**5000],
        "floats": [0.1, -0.0, 1e308, 5e-324, float("inf"), float("-inf")],
        "complex": [1 + 2j, complex(float("inf"), -0.5)],
        "text": ["", "naïve ☃ 🎉", "nul\\x00 and \\"quotes\\" '"],
        "bytes": bytes(range(256)), "bytearray": bytearray(b"abc"),
        "tuple": (1, (2, (3,)), ()), "set": {1, "a", (2, 3)}, "frozenset": frozenset({1, 2}),
        "other keys": {1: "one", (2, 3): "tuple", None: "none", 2.5: "float", frozenset({1}): "fs", b"k": "bytes"},
        "dollar": {"$": "not a tag", "b": 1},
        "when": [datetime.datetime(2024, 2, 29, 23, 59, 59, 999999),
                 datetime.datetime(2024, 3, 31, 1, 30, tzinfo=datetime.timezone(-datetime.timedelta(hours=5.5))),
                 datetime.datetime(2021, 11, 7, 1, 30, fold=1), datetime.date(1, 1, 1), datetime.time(12, 0, 1, 5),
                 datetime.timedelta(days=-3, microseconds=7)],
        "decimal": [decimal.Decimal("3.14159265358979323846264338327950288"), decimal.Decimal("-0"),
                    decimal.Decimal("Infinity")],
        "fraction": fractions.Fraction(-22, 7), "uuid": uuid.UUID(int=0x1234567890ABCDEF1234567890ABCDEF),
        "collections": [collections.OrderedDict([("b", 1), ("a", 2)]), collections.Counter("hello"),
                        collections.deque([1, 2, 3], maxlen=4)],
        "deep": deep,
    }
    arrays = {
        "f64": np.linspace(0, 1, 12).reshape(3, 4), "fortran": np.asfortranarray(np.arange(6).reshape(2, 3)),
        "bool": np.array([True, False]), "u8": np.arange(5, dtype=np.uint8), "c128": np.array([1 + 1j, np.nan]),
        "f16": np.array([1.5, -2], dtype=np.float16), "str": np.array([["a", "bé"], ["ccc", ""]]),
        "bytes": np.array([b"x", b"yz"]), "dt64": np.array(["2024-01-01", "NaT"], dtype="datetime64[s]"),
        "td64": np.array([1, -2], dtype="timedelta64[ms]"),
        "structured": np.array([(1, 2.5, "x")], dtype=[("a", "i4"), ("b", "f8"), ("c", "U3")]),
        "empty": np.zeros((0, 3)), "zero-d": np.array(5), "big-endian": np.arange(4, dtype=">i4"),
        "scalars": [np.float32(1.5), np.int8(-3), np.bool_(True), np.datetime64("2024-01-01"), np.str_("s")],
    }
    rows = pd.Index([10, 10, 11, 12], name="k")
    frames = {
        "mixed": pd.DataFrame({
            "i": [1, 2, 3, 4], "f": [0.5, np.nan, 2.0, -1.0], "s": ["a", "b", None, "d"],
            "cat": pd.Categorical(["x", "y", "x", "z"], categories=["z", "y", "x"], ordered=True),
            "when": pd.date_range("2024-01-01", periods=4, freq="h"),
            "zone": pd.date_range("2024-03-31", periods=4, freq="h", tz="Europe/Paris"),
            "flag": [True, False, True, True], "I": pd.array([1, None, 3, 4], dtype="Int64"),
            "B": pd.array([True, None, False, True], dtype="boolean"),
            "F": pd.array([1.5, None, 0.0, 2.0], dtype="Float32"),
            "S": pd.array(["a", None, "c", "d"], dtype="string"), "td": pd.to_timedelta([1, 2, 3, 4], unit="s"),
        }, index=rows),
        "objects": pd.DataFrame({"o": [1, "x", None, [1, {"a": (2, 3)}]], 7: [1.0, 2.0, 3.0, 4.0]}, index=rows),
        "multi": pd.DataFrame({("a", 1): [1, 2], ("a", 2): [3, 4]},
                              index=pd.MultiIndex.from_tuples([("x", 1), ("y", 2)], names=["l", "n"])),
        "no columns": pd.DataFrame(index=pd.RangeIndex(2, 12, 3)),
        "series": pd.Series([1.5, 2.5], index=pd.Index(["p", "q"], name="key"), name="amount"),
        "unnamed": pd.Series([1, 2, 3]),
        "index": pd.date_range("2024-01-01", periods=5, freq="D", name="day"),
        "timestamp": pd.Timestamp("2024-01-01 10:00:00.123456789"), "timedelta": pd.Timedelta("1 day 2 ns"),
    }
    return {"plain": plain, "arrays": arrays, "frames": frames}
"""

LARGE = """
import numpy as np
import pandas as pd

n = 100_000
rng = np.random.default_rng(0)
big = np.arange(20 * 2**20 // 8, dtype=np.float64)
frame = pd.DataFrame({
    "i": rng.integers(-10**9, 10**9, n), "f": rng.random(n), "s": [f"row {i}" for i in range(n)],
    "cat": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
    "when": pd.date_range("2020-01-01", periods=n, freq="min"),
    "zone": pd.date_range("2020-01-01", periods=n, freq="s", tz="Europe/Berlin"),
    "flag": rng.random(n) > 0.5, "maybe": pd.array([None if i % 7 == 0 else i for i in range(n)], dtype="Int64"),
}, index=pd.Index(np.arange(n) * 2, name="id"))
mixed = frame.assign(obj=[i if i % 2 else str(i) for i in range(n)])
x = 1  # stop
"""


def assert_same(got, want, where="value"):
    """Equal values of the same types, NaN included; arrays and frames through numpy and pandas testing."""
    assert type(got) is type(want), f"{where}: {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
    elif isinstance(want, pd.Series):
        pd.testing.assert_series_equal(got, want)
    elif isinstance(want, pd.Index):
        pd.testing.assert_index_equal(got, want, exact=True)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape, where
        np.testing.assert_array_equal(got, want)
    elif isinstance(want, dict):
        assert list(got) == list(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, (list, tuple, collections.deque)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{i}]")
        assert getattr(got, "maxlen", None) == getattr(want, "maxlen", None), where
    elif isinstance(want, float) and math.isnan(want):
        assert math.isnan(got), where
    elif isinstance(want, (float, complex)):
        assert repr(got) == repr(want), where  # -0.0 stays -0.0
    elif isinstance(want, datetime.datetime):
        assert (got, got.utcoffset(), got.fold) == (want, want.utcoffset(), want.fold), where
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def expected_values() -> dict:
    namespace: dict = {}
    exec(VALUES, namespace)  # the test's own builder, the same text the target runs
    return namespace["build"]()


@pytest.mark.parametrize("arrow", [True, False], ids=["arrow", "columns"])
def test_every_supported_type_round_trips_nested(relay, write, arrow):
    session = paused_at_stop(relay, write, "values.py", VALUES + "values = build()\nx = 1  # stop\n")
    want = expected_values()
    for part in ("plain", "arrays", "frames"):
        assert_same(pull(session, f"values[{part!r}]", arrow=arrow), want[part], part)
    assert_same(pull(session, "values", arrow=arrow), want)
    session.terminate()


def test_a_20_mb_array_and_100k_row_frames_round_trip(relay, write):
    session = paused_at_stop(relay, write, "large.py", LARGE)
    namespace: dict = {}
    exec(LARGE, namespace)
    figures = []
    for expression, arrow in (("big", True), ("frame", True), ("frame", False), ("mixed", True)):
        started = time.perf_counter()
        value = pull(session, expression, arrow=arrow)
        figures.append(f"{expression} ({'arrow' if arrow else 'columns'}): {time.perf_counter() - started:.2f} s")
        assert_same(value, namespace[expression], expression)
    print("; ".join(figures))
    session.terminate()


def frame_layouts(payload: bytes) -> list[str]:
    """How each DataFrame and Series of a pull payload is laid out: ``arrow`` or ``columns``."""
    start = len(MAGIC) + 8
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("$") in ("dataframe", "series"):
                found.append("arrow" if "arrow" in node else "columns")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(payload[start:start + int.from_bytes(payload[len(MAGIC):start], "big")]))
    return found


@pytest.mark.parametrize("pyarrow_in_target", [False, True], ids=["without pyarrow", "with pyarrow"])
def test_a_target_without_pyarrow_sends_frames_in_the_column_layout(relay, write, tmp_path, monkeypatch,
                                                                     pyarrow_in_target):
    env = None
    if not pyarrow_in_target:
        shadow = tmp_path / "shadow" / "pyarrow"
        shadow.mkdir(parents=True)
        (shadow / "__init__.py").write_text("raise ImportError('no pyarrow in this target')\n")
        env = {"PYTHONPATH": os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", "")])}
    session = paused_at_stop(relay, write, "values.py", VALUES + "values = build()\nx = 1  # stop\n", env=env)
    assert kernel_pyarrow() is not None  # the kernel asks for Arrow; without pyarrow the target cannot give it
    received: list[bytes] = []

    def decode(payload: bytes, **options):
        received.append(payload)
        return decode_payload(payload, **options)

    monkeypatch.setattr(pull_module, "decode_payload", decode)
    assert_same(pull(session, "values['frames']"), expected_values()["frames"])
    layouts = frame_layouts(received[0])
    assert layouts and ("arrow" in layouts if pyarrow_in_target else set(layouts) == {"columns"}), layouts
    session.terminate()


CYCLES = """
loop = [1]
loop.append({"again": loop})
shared = [1, 2]
twice = [shared, shared]
deep = []
for _ in range(150):
    deep = [deep]
x = 1  # stop
"""


def test_a_cycle_and_too_deep_nesting_are_clear_errors_and_shared_values_are_fine(relay, write):
    session = paused_at_stop(relay, write, "cycles.py", CYCLES)
    with pytest.raises(RelayError) as caught:
        pull(session, "loop")
    assert caught.value.code == "unsupported"
    assert caught.value.message == "Cannot pull 'loop': it holds a reference cycle (this list contains itself) " \
                                   "at loop[1]['again']."
    with pytest.raises(RelayError) as caught:
        pull(session, "deep")
    assert caught.value.code == "unsupported" and "containers nested deeper than 100 levels at deep[0][0]" in \
        caught.value.message
    assert pull(session, "twice") == [[1, 2], [1, 2]]
    value, levels = pull(session, "deep" + "[0]" * 60), 1
    while value:
        value, levels = value[0], levels + 1
    assert levels == 91
    session.terminate()


def test_a_json_backend_pull_is_parsed_as_data_only(relay, marks):
    from tests.peers.mycel_peer import start_peer

    runtime = start_peer()
    try:
        bp = relay.breakpoints.add_stage("create_user", "transform")
        session = relay.connect_mycel(runtime.url, name="pipeline")
        code = f"__import__('os').system('touch {marks}/json')"
        reply = runtime.request("create_user", {"name": code, "email": "cos\u0063('posix')\nsystem\n(S'x'\ntR."})
        session.wait_for_stop(10)
        assert pull(session, "input.name") == code
        assert pull(session, "input")["email"] == "cos\u0063('posix')\nsystem\n(S'x'\ntR."
        relay.breakpoints.remove(bp.id)
        session.continue_(wait=False)
        reply.result(10)
        session.terminate()
    finally:
        runtime.stop()
    assert os.listdir(marks) == []


# -- the decoder on hostile payloads --------------------------------------------------------------


def payload(header: dict | bytes, *buffers: bytes) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return MAGIC + len(text).to_bytes(8, "big") + text + b"".join(buffers)


def npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=allow_pickle)
    return out.getvalue()


class Gadget:
    """Pickles to a call that would create ``MARK`` wherever it is unpickled."""

    MARK = ""

    def __reduce__(self):
        return exec, (f"open({self.MARK!r}, 'w').write('ran')",)


def hostile_payloads(mark: str) -> dict[str, tuple[bytes, str]]:
    Gadget.MARK = mark
    good = npy(np.arange(10.0))
    huge = io.BytesIO()  # a header that claims 80 TB, then 16 bytes
    np.lib.format.write_array_header_1_0(huge, {"descr": "<f8", "fortran_order": False, "shape": (10**13,)})
    huge = huge.getvalue() + bytes(16)
    return {
        "no magic": (b"\x80\x04\x95" + npy(np.array([Gadget()], dtype=object), True), "does not start with"),
        "a pickle as the header": (MAGIC + (20).to_bytes(8, "big") + b"\x80\x04K\x01." + b" " * 15,
                                   "its header is not JSON"),
        "header longer than the payload": (MAGIC + (10**12).to_bytes(8, "big") + b"{}", "declares 1,000,000,000,000"),
        "NaN literal": (payload(b'{"value": NaN, "buffers": []}'), "NaN is not JSON"),
        "nested 100000 deep": (payload(b'{"value": ' + b"[" * 100000 + b"]" * 100000 + b', "buffers": []}'),
                               "its header is not JSON"),
        "too deep for the decoder": (payload({"value": json.loads("[" * 200 + "]" * 200), "buffers": []}),
                                     "nests deeper than 100 levels"),
        "unknown tag": (payload({"value": {"$": "pickle", "data": "gASVCAAAAAAAAACMBHBvc2l4lC4="}, "buffers": []}),
                        "unknown tag 'pickle'"),
        "bad base64": (payload({"value": {"$": "bytes", "b64": "not*base64"}, "buffers": []}), "its 'bytes' value"),
        "missing field": (payload({"value": {"$": "uuid"}, "buffers": []}), "it lacks 'hex'"),
        "wrong field type": (payload({"value": {"$": "timedelta", "d": "1", "s": 0, "us": 0}, "buffers": []}),
                             "'d' is a str, not a int"),
        "buffer sizes do not add up": (payload({"value": None, "buffers": [5]}, b"abc"),
                                       "buffers declare 5 bytes but 3 follow"),
        "no such buffer": (payload({"value": {"$": "ndarray", "buf": 3}, "buffers": []}), "buffer 3 does not exist"),
        "truncated npy": (payload({"value": {"$": "ndarray", "buf": 0}, "buffers": [len(good) - 9]}, good[:-9]),
                          "declares 80 bytes of data but 71 follow"),
        "npy header cut": (payload({"value": {"$": "ndarray", "buf": 0}, "buffers": [12]}, good[:12]),
                           "its 'ndarray' value is bad"),
        "npy holding a pickle": (payload({"value": {"$": "ndarray", "buf": 0}, "buffers": [len(evil := npy(
            np.array([Gadget()], dtype=object), True))]}, evil), "holds object data, which needs pickles"),
        "npy declaring 80 TB": (payload({"value": {"$": "ndarray", "buf": 0}, "buffers": [len(huge)]}, huge),
                                "declares 80,000,000,000,000 bytes of data but 16 follow"),
        "npz instead of npy": (payload({"value": {"$": "ndarray", "buf": 0}, "buffers": [4]}, b"PK\x03\x04"),
                               "its 'ndarray' value is bad"),
        "arrow not asked for": (payload({"value": {"$": "dataframe", "arrow": 0}, "buffers": [3]}, b"abc"),
                                "Arrow, which this kernel did not ask for"),
        "unknown nullable dtype": (payload({"value": {"$": "series", "name": None, "index": {
            "kind": "range", "start": 0, "stop": 1, "step": 1, "name": None}, "data": {
            "kind": "masked", "dtype": "object", "buf": 0, "mask": 0}}, "buffers": [len(good)]}, good),
            "'object' is not a nullable numeric dtype"),
        "error without reason": (payload({"error": {"reason": 3, "where": ""}}), "error is not a reason and a place"),
        "frame with a column too many": (payload({"value": {"$": "dataframe", "index": {
            "kind": "range", "start": 0, "stop": 10, "step": 1, "name": None}, "columns": {
            "kind": "range", "start": 0, "stop": 0, "step": 1, "name": None}, "data": [{"kind": "npy", "buf": 0}]},
            "buffers": [len(good)]}, good), "1 columns of data for 0 column names"),
    }


@pytest.mark.parametrize("case", list(hostile_payloads("")))
def test_a_hostile_payload_is_a_protocol_error_and_runs_nothing(case, tmp_path):
    mark = str(tmp_path / "ran")
    data, says = hostile_payloads(mark)[case]
    with pytest.raises(RelayError) as caught:
        decode_payload(data)
    assert caught.value.code == "protocol_error" and says in caught.value.message, caught.value.message
    assert caught.value.message.startswith("The target's pull payload is malformed: ")
    assert not os.path.exists(mark)


def test_the_encoder_runs_alone_arrow_comes_only_from_a_safe_pyarrow_and_a_repr_copies(monkeypatch):
    namespace: dict = {}
    exec(TARGET_SOURCE, namespace)  # what the target runs: it must not need this module
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    data = namespace["encode_payload"](frame, True)
    assert b'"arrow"' in data[:200]
    pd.testing.assert_frame_equal(decode_payload(data, arrow=True), frame)
    pyarrow = pytest.importorskip("pyarrow")
    monkeypatch.setattr(pyarrow, "__version__", "14.0.0")
    assert kernel_pyarrow() is None
    with pytest.raises(RelayError) as caught:
        decode_payload(data, arrow=True)
    assert "Arrow, which this kernel did not ask for" in caught.value.message
    monkeypatch.setattr(pyarrow, "__version__", "14.0.1")
    assert kernel_pyarrow() is pyarrow
    text = decode_payload(namespace["encode_payload"](pytest))
    assert repr(copy.deepcopy(text)) == repr(text) == f"<repr of a module from the target: {pytest!r}>"


def test_json_of_other_backends_is_parsed_as_data_or_kept_as_text():
    assert json_or_text('{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    assert json_or_text("[" * 100000) == "[" * 100000  # too deep for json: the text, not a traceback
    assert json_or_text("cos\nsystem\n(S'id'\ntR.") == "cos\nsystem\n(S'id'\ntR."
    assert json_or_text("1" * 5000) == "1" * 5000  # over Python's int digits limit
