"""The data format of ``pull``: an encoder that runs in the target, and a decoder that only parses data here.

A pulled value travels as one payload: ``MAGIC``, the length of a JSON header (8 bytes, big-endian), the
header, then binary buffers. The header is ``{"value": TREE, "buffers": [LENGTH, ...]}``, or
``{"error": {"reason": ..., "where": ...}}`` when the value cannot be pulled (a reference cycle, nesting
deeper than ``MAX_DEPTH``). TREE is JSON; an object with a ``"$"`` key is a tagged value:

==========================  ===================================================================
tag                         fields → value
==========================  ===================================================================
int                         hex → an int outside 64 bits
float                       v ("nan", "inf", "-inf") → that float
complex                     re, im → complex
bytes, bytearray            b64 → the bytes (base64)
tuple, set, frozenset       items → the container
deque                       items, maxlen → collections.deque
dict, odict, counter        items ([[key, value], ...]) → dict (any keys), OrderedDict, Counter
datetime, date, time        iso (+ fold) → the value; aware ones keep their UTC offset, not the zone name
timedelta                   d, s, us → datetime.timedelta
decimal, fraction, uuid     v / n, d / hex → Decimal, Fraction, UUID
ndarray, npscalar           buf (a ``.npy`` buffer, never with pickles) → numpy array / scalar
dataframe, series, index    arrow (an Arrow IPC stream) or a column layout (see ``_TargetEncoder``)
timestamp, pdtimedelta      iso / ns → pandas.Timestamp (UTC offset kept), pandas.Timedelta
repr                        type, text → ``PulledRepr``: everything that is not data arrives as its repr
==========================  ===================================================================

Target side: ``pull.encoder`` (its source is sent to the debuggee and run there).

Kernel side: ``decode_payload`` parses data and nothing else: ``json.loads``, base64,
``numpy.lib.format`` with ``allow_pickle=False`` and ``pyarrow.ipc`` (pyarrow >= 14.0.1 only: older
versions unpickle ``arrow.py_extension_type``, CVE-2023-47248). Nothing from the target is evaluated,
executed or unpickled; a payload that breaks the format is a ``protocol_error`` that says what is wrong.
"""

from __future__ import annotations

import base64
import collections
import datetime
import decimal
import fractions
import io
import json
import math
import re
import uuid
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..errors import RelayError
from .encoder import MAGIC, MAX_DEPTH, TARGET_SOURCE

MIN_PYARROW = (14, 0, 1)  # older pyarrow unpickles arrow.py_extension_type (CVE-2023-47248)

__all__ = ["MAGIC", "TARGET_SOURCE", "PulledRepr", "decode_payload", "json_or_text", "kernel_pyarrow"]


# -- kernel side: a pure data decode ------------------------------------------------------------


class PulledRepr(str):
    """The text of a target value that is not data (a program's own object, a function, ...): never the object.

    It is a ``str`` holding the target's ``repr`` of the value; ``type_name`` names the value's class there.
    """

    type_name: str

    def __new__(cls, text: str, type_name: str) -> PulledRepr:
        pulled = super().__new__(cls, text)
        pulled.type_name = type_name
        return pulled

    def __getnewargs__(self) -> tuple[str, str]:  # copy and pickle of the kernel's own PulledRepr keep type_name
        return str(self), self.type_name

    def __repr__(self) -> str:
        return f"<repr of a {self.type_name} from the target: {str(self)}>"


def kernel_pyarrow() -> ModuleType | None:
    """pyarrow when it is importable here at version >= 14.0.1 (older ones are unsafe to read with), else None."""
    try:
        import pyarrow
        import pyarrow.ipc  # noqa: F401  (pyarrow.ipc is used through the package)
    except ImportError:
        return None
    version = tuple(int(part) for part in re.findall(r"\d+", pyarrow.__version__)[:3])
    return pyarrow if version >= MIN_PYARROW else None


def json_or_text(text: str) -> Any:
    """``text`` parsed as JSON when it is JSON (a pure data parse), else the text itself."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def decode_payload(payload: bytes, *, arrow: bool = False, name: str = "the value") -> Any:
    """The value a target's ``encode_payload`` sent, rebuilt from data alone; ``arrow``: Arrow IPC was asked for.

    A payload that breaks the format is a ``protocol_error``; a value the target could not encode (a cycle,
    too deep) is ``unsupported``, naming ``name`` and where inside it the trouble is.
    """
    header, buffers = _split(payload)
    if "error" in header:
        error = header["error"]
        if not isinstance(error, dict) or not all(isinstance(error.get(k), str) for k in ("reason", "where")):
            raise _malformed("its error is not a reason and a place")
        place = f" at {name}{error['where']}" if error["where"] else ""
        raise RelayError("unsupported", f"Cannot pull {name!r}: it holds {error['reason']}{place}.",
                         "Pull a part of it, or convert it in the target first (e.g. `pull str(value)`).")
    if "value" not in header:
        raise _malformed("its header has neither a value nor an error")
    return _Decoder(buffers, arrow).decode(header["value"], 0)


def _malformed(what: str) -> RelayError:
    return RelayError("protocol_error", f"The target's pull payload is malformed: {what}.",
                      "Pull again; if it persists, the target is not running this version's pull encoder.")


def _reject_constant(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _split(payload: bytes) -> tuple[dict, list[bytes]]:
    if payload[:len(MAGIC)] != MAGIC or len(payload) < len(MAGIC) + 8:
        raise _malformed("it does not start with the pull format's magic")
    start = len(MAGIC) + 8
    length = int.from_bytes(payload[len(MAGIC):start], "big")
    if length > len(payload) - start:
        raise _malformed(f"its header declares {length:,} bytes but {len(payload) - start:,} follow")
    try:
        header = json.loads(payload[start:start + length].decode(), parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise _malformed(f"its header is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise _malformed("its header is not a JSON object")
    if "error" in header:
        return header, []
    lengths = header.get("buffers")
    if not isinstance(lengths, list) or not all(type(n) is int and n >= 0 for n in lengths):
        raise _malformed("its buffer list is not a list of sizes")
    rest = len(payload) - start - length
    if sum(lengths) != rest:
        raise _malformed(f"its buffers declare {sum(lengths):,} bytes but {rest:,} follow")
    buffers, offset = [], start + length
    for size in lengths:
        buffers.append(payload[offset:offset + size])
        offset += size
    return header, buffers


def _get(node: dict, key: str, *kinds: type) -> Any:
    if key not in node:
        raise ValueError(f"it lacks {key!r}")
    value = node[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ValueError(f"{key!r} is a {type(value).__name__}, not a {' or '.join(k.__name__ for k in kinds)}")
    return value


def _needs(module: str, what: str) -> ModuleType:
    try:
        return __import__(module)
    except ImportError:
        raise RelayError("unsupported", f"The value holds {what}, and {module} is not installed in the kernel.",
                         f"Install {module} in the kernel, or pull a plain form of the value "
                         "(e.g. `pull df.to_dict()` or `pull arr.tolist()`).") from None


_Handler = Callable[["_Decoder", dict, int], Any]


class _Decoder:
    """Rebuilds a TREE and its buffers into values of this process."""

    TAGS: dict[str, _Handler] = {}

    def __init__(self, buffers: list[bytes], arrow: bool) -> None:
        self.buffers = buffers
        self.arrow = arrow

    def decode(self, node: Any, depth: int) -> Any:
        if depth > MAX_DEPTH + 2:
            raise _malformed(f"it nests deeper than {MAX_DEPTH} levels")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(item, depth + 1) for item in node]
        if "$" not in node:
            return {key: self.decode(item, depth + 1) for key, item in node.items()}
        tag = node["$"]
        handler = self.TAGS.get(tag) if isinstance(tag, str) else None
        if handler is None:
            raise _malformed(f"it holds an unknown tag {tag!r}")
        try:
            return handler(self, node, depth + 1)
        except RelayError:
            raise
        except Exception as exc:  # pure data parsing failed: name the tag and the reason
            raise _malformed(f"its {tag!r} value is bad ({type(exc).__name__}: {exc})") from None

    def items(self, node: dict, depth: int) -> list:
        return [self.decode(item, depth) for item in _get(node, "items", list)]

    def pairs(self, node: dict, depth: int) -> list[tuple]:
        pairs = _get(node, "items", list)
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
            raise ValueError("'items' are not [key, value] pairs")
        return [(self.decode(key, depth), self.decode(value, depth)) for key, value in pairs]

    def number(self, node: dict, key: str, depth: int, kinds: tuple[type, ...]) -> Any:
        value = self.decode(_get(node, key, int, float, dict), depth)
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise ValueError(f"{key!r} is not a {' or '.join(k.__name__ for k in kinds)}")
        return value

    def buffer(self, node: dict, key: str = "buf") -> bytes:
        index = _get(node, key, int)
        if not 0 <= index < len(self.buffers):
            raise ValueError(f"buffer {index} does not exist")
        return self.buffers[index]

    def npy(self, node: dict, key: str = "buf") -> Any:
        np = _needs("numpy", "a numpy array")
        data = self.buffer(node, key)
        stream = io.BytesIO(data)
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f".npy version {version} is not read")
        if dtype.hasobject:
            raise ValueError(f"the .npy holds {dtype} data, which needs pickles")
        declared, present = math.prod(shape) * dtype.itemsize, len(data) - stream.tell()
        if declared != present:
            raise ValueError(f"the .npy header declares {declared:,} bytes of data but {present:,} follow")
        stream.seek(0)
        return np.lib.format.read_array(stream, allow_pickle=False)

    def arrow_frame(self, node: dict) -> Any:
        pyarrow = kernel_pyarrow() if self.arrow else None
        if pyarrow is None:
            raise ValueError("it is Arrow, which this kernel did not ask for")
        _needs("pandas", "a pandas object")
        return pyarrow.ipc.open_stream(pyarrow.py_buffer(self.buffer(node, "arrow"))).read_all().to_pandas()

    def index(self, spec: Any, depth: int) -> Any:
        pd = _needs("pandas", "a pandas object")
        if not isinstance(spec, dict):
            raise ValueError("an index is not an object")
        kind = _get(spec, "kind", str)
        if kind == "range":
            return pd.RangeIndex(_get(spec, "start", int), _get(spec, "stop", int), _get(spec, "step", int),
                                 name=self.decode(spec.get("name"), depth))
        if kind == "multi":
            levels = [self.column(level, depth) for level in _get(spec, "levels", list)]
            return pd.MultiIndex.from_arrays([pd.Index(level, dtype=level.dtype, tupleize_cols=False)
                                              for level in levels],
                                             names=[self.decode(n, depth) for n in _get(spec, "names", list)])
        if kind != "flat":
            raise ValueError(f"index kind {kind!r} is unknown")
        data = self.column(_get(spec, "data", dict), depth)
        index = pd.Index(data, dtype=data.dtype, name=self.decode(spec.get("name"), depth), tupleize_cols=False)
        freq = spec.get("freq")
        if freq is not None:
            index = {"M": pd.DatetimeIndex, "m": pd.TimedeltaIndex}[index.dtype.kind](index, freq=str(freq))
        return index

    def column(self, spec: Any, depth: int) -> Any:
        np, pd = _needs("numpy", "a pandas object"), _needs("pandas", "a pandas object")
        if not isinstance(spec, dict):
            raise ValueError("a column is not an object")
        kind = _get(spec, "kind", str)
        if kind == "npy":
            values = self.npy(spec)
            if values.ndim != 1:
                raise ValueError("a column is not one-dimensional")
            return values
        if kind == "category":
            return pd.Categorical.from_codes(self.npy(spec, "codes"), categories=self.index(spec["categories"], depth),
                                             ordered=_get(spec, "ordered", bool))
        if kind == "datetimetz":
            utc = self.npy(spec)
            if utc.dtype.kind != "M":
                raise ValueError("a datetime column does not hold datetime64 values")
            return pd.DatetimeIndex(utc).tz_localize("UTC").tz_convert(_get(spec, "tz", str)).array
        if kind == "masked":
            dtype = _get(spec, "dtype", str)
            build = {"Int": pd.arrays.IntegerArray, "UInt": pd.arrays.IntegerArray, "Float": pd.arrays.FloatingArray,
                     "boolean": pd.arrays.BooleanArray}.get(re.sub(r"\d+$", "", dtype))
            if build is None:
                raise ValueError(f"{dtype!r} is not a nullable numeric dtype")
            array = build(self.npy(spec), self.npy(spec, "mask"))
            if str(array.dtype) != dtype:
                raise ValueError(f"the values make a {array.dtype} column, not {dtype}")
            return array
        if kind == "string":
            values = _get(spec, "values", list)
            if not all(v is None or isinstance(v, str) for v in values):
                raise ValueError("a string column holds other values")
            dtype = pd.StringDtype(na_value=np.nan) if _get(spec, "na", str) == "nan" else pd.StringDtype()
            return pd.array(values, dtype=dtype)
        if kind != "values":
            raise ValueError(f"column kind {kind!r} is unknown")
        values = [self.decode(v, depth) for v in _get(spec, "values", list)]
        array = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):  # one by one: a list item must stay a list, not become a row
            array[i] = value
        return array

    def frame(self, node: dict, depth: int) -> Any:
        pd = _needs("pandas", "a pandas DataFrame")
        if "arrow" in node:
            return self.arrow_frame(node)
        index, columns = self.index(node["index"], depth), self.index(node["columns"], depth)
        data = [self.column(spec, depth) for spec in _get(node, "data", list)]
        if len(data) != len(columns):
            raise ValueError(f"{len(data)} columns of data for {len(columns)} column names")
        rows = pd.RangeIndex(len(index))
        frame = pd.DataFrame({i: pd.Series(values, index=rows, dtype=values.dtype, copy=False)
                              for i, values in enumerate(data)}, index=rows)
        frame.index, frame.columns = index, columns
        return frame

    def series(self, node: dict, depth: int) -> Any:
        pd = _needs("pandas", "a pandas Series")
        name = self.decode(node.get("name"), depth)
        if "arrow" in node:
            frame = self.arrow_frame(node)
            if frame.shape[1] != 1:
                raise ValueError("an Arrow series does not have one column")
            return frame.iloc[:, 0].rename(name)
        values = self.column(_get(node, "data", dict), depth)
        return pd.Series(values, index=self.index(node["index"], depth), dtype=values.dtype, name=name, copy=False)

    def npscalar(self, node: dict) -> Any:
        array = self.npy(node)
        if array.shape != ():
            raise ValueError("a numpy scalar is not zero-dimensional")
        return array[()]

    def repr(self, node: dict) -> PulledRepr:
        return PulledRepr(_get(node, "text", str), _get(node, "type", str))


def _datetime_value(node: dict, kind: type) -> Any:
    value = kind.fromisoformat(_get(node, "iso", str))
    return value.replace(fold=1) if node.get("fold") == 1 else value


def _float(node: dict) -> float:
    text = _get(node, "v", str)
    if text not in ("nan", "inf", "-inf"):
        raise ValueError(f"{text!r} is not nan, inf or -inf")
    return float(text)


def _deque(decoder: _Decoder, node: dict, depth: int) -> collections.deque:
    maxlen = node.get("maxlen")
    if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
        raise ValueError("'maxlen' is not a size")
    return collections.deque(decoder.items(node, depth), maxlen)


def _pandas_scalar(kind: str, node: dict) -> Any:
    pd = _needs("pandas", "a pandas value")
    return pd.Timestamp(_get(node, "iso", str)) if kind == "timestamp" else pd.Timedelta(_get(node, "ns", int), "ns")


_Decoder.TAGS = {
    "int": lambda d, n, depth: int(_get(n, "hex", str), 16),
    "float": lambda d, n, depth: _float(n),
    "complex": lambda d, n, depth: complex(d.number(n, "re", depth, (int, float)),
                                           d.number(n, "im", depth, (int, float))),
    "bytes": lambda d, n, depth: base64.b64decode(_get(n, "b64", str), validate=True),
    "bytearray": lambda d, n, depth: bytearray(base64.b64decode(_get(n, "b64", str), validate=True)),
    "tuple": lambda d, n, depth: tuple(d.items(n, depth)),
    "set": lambda d, n, depth: set(d.items(n, depth)),
    "frozenset": lambda d, n, depth: frozenset(d.items(n, depth)),
    "deque": _deque,
    "dict": lambda d, n, depth: dict(d.pairs(n, depth)),
    "odict": lambda d, n, depth: collections.OrderedDict(d.pairs(n, depth)),
    "counter": lambda d, n, depth: collections.Counter(dict(d.pairs(n, depth))),
    "datetime": lambda d, n, depth: _datetime_value(n, datetime.datetime),
    "date": lambda d, n, depth: _datetime_value(n, datetime.date),
    "time": lambda d, n, depth: _datetime_value(n, datetime.time),
    "timedelta": lambda d, n, depth: datetime.timedelta(_get(n, "d", int), _get(n, "s", int), _get(n, "us", int)),
    "decimal": lambda d, n, depth: decimal.Decimal(_get(n, "v", str)),
    "fraction": lambda d, n, depth: fractions.Fraction(d.number(n, "n", depth, (int,)),
                                                       d.number(n, "d", depth, (int,))),
    "uuid": lambda d, n, depth: uuid.UUID(hex=_get(n, "hex", str)),
    "ndarray": lambda d, n, depth: d.npy(n),
    "npscalar": lambda d, n, depth: d.npscalar(n),
    "dataframe": _Decoder.frame,
    "series": _Decoder.series,
    "index": lambda d, n, depth: d.index(n, depth),
    "timestamp": lambda d, n, depth: _pandas_scalar("timestamp", n),
    "pdtimedelta": lambda d, n, depth: _pandas_scalar("pdtimedelta", n),
    "repr": lambda d, n, depth: d.repr(n),
}
