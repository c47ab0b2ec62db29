"""The target side of ``pull``: an encoder sent as source and run in the debuggee (see ``pull.codec``).

``_Unpullable``, ``_TargetEncoder`` and ``encode_payload`` are sent as source (``TARGET_SOURCE``) and run in
the debuggee, the user's own program. They use numpy and pandas only if the target has imported them
already, and import pyarrow only when the kernel asks for Arrow. This module is never given target bytes.
"""

from __future__ import annotations

import base64
import collections
import inspect
import io
import json
import math
import sys
from typing import Any

MAGIC = b"JDRPULL1"
MAX_DEPTH = 100  # nesting levels of containers a pulled value may have


# -- target side: sent as source, runs in the debuggee ------------------------------------------


class _Unpullable(Exception):
    """(target) A value that cannot travel as data; ``where`` is its path inside the pulled value."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = ""


class _TargetEncoder:
    """(target) Turns one value into a JSON tree and binary buffers; what is not data becomes its repr.

    pandas objects go as an Arrow IPC stream when Arrow is asked for, pyarrow imports and the frame
    round-trips through it (string column names, no object columns); otherwise as a column layout:
    ``{"columns": INDEX, "index": INDEX, "data": [COLUMN, ...]}`` where INDEX is a RangeIndex
    (start, stop, step), a MultiIndex (levels as COLUMNs, names) or a flat index (a COLUMN, name, freq),
    and a COLUMN is a ``.npy`` buffer (numeric, bool, datetime64, timedelta64), a category (codes,
    categories, ordered), a datetime with a named zone (UTC ``.npy``, tz), a nullable Int/Float/boolean
    (values and mask ``.npy``), strings, or a list of TREEs (object and other extension dtypes).
    """

    def __init__(self, arrow: bool) -> None:
        self.arrow = arrow
        self.buffers: list[bytes] = []
        self.open: set[int] = set()  # ids of the containers being encoded, to find cycles
        self.np = sys.modules.get("numpy")
        self.pd = sys.modules.get("pandas")
        self.containers = {list: "list", tuple: "tuple", set: "set", frozenset: "frozenset", dict: "dict",
                           collections.deque: "deque", collections.OrderedDict: "odict",
                           collections.Counter: "counter"}
        self.scalars = {}  # only modules the program imported: no value can be of a class never loaded
        for module, name in (("datetime", "datetime"), ("datetime", "date"), ("datetime", "time"),
                             ("datetime", "timedelta"), ("decimal", "Decimal"), ("fractions", "Fraction"),
                             ("uuid", "UUID")):
            cls = getattr(sys.modules.get(module), name, None)
            if cls is not None:
                self.scalars[cls] = name.lower()

    def encode(self, value: object) -> object:
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value if -(2**63) <= value < 2**63 else {"$": "int", "hex": hex(value)}
        if kind is float:
            return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
        if kind is complex:
            return {"$": "complex", "re": self.encode(value.real), "im": self.encode(value.imag)}
        if kind is bytes or kind is bytearray:
            return {"$": kind.__name__, "b64": base64.b64encode(value).decode()}
        if kind in self.containers:
            return self._container(value)
        if kind in self.scalars:
            return self._scalar(value, self.scalars[kind])
        np, pd = self.np, self.pd
        if np is not None and (kind is np.ndarray or isinstance(value, np.memmap)):
            return self._repr(value) if value.dtype.hasobject else {"$": "ndarray", "buf": self._npy(value)}
        if np is not None and isinstance(value, np.generic):
            return self._repr(value) if value.dtype.hasobject else {"$": "npscalar", "buf": self._npy(value)}
        if pd is not None:
            if kind is pd.DataFrame:
                return self._frame(value)
            if kind is pd.Series:
                return self._series(value)
            if isinstance(value, pd.Index):
                return {"$": "index", **self._index(value)}
            if kind is pd.Timestamp:
                return {"$": "timestamp", "iso": value.isoformat()}
            if kind is pd.Timedelta:
                return {"$": "pdtimedelta", "ns": value.value}
        return self._repr(value)

    def _container(self, value: Any) -> object:
        if id(value) in self.open:
            raise _Unpullable(f"a reference cycle (this {type(value).__name__} contains itself)")
        if len(self.open) >= MAX_DEPTH:
            raise _Unpullable(f"containers nested deeper than {MAX_DEPTH} levels")
        self.open.add(id(value))
        try:
            tag = self.containers[type(value)]
            if tag == "dict" and "$" not in value and all(type(key) is str for key in value):
                return {key: self._at(key, item) for key, item in value.items()}
            if tag in ("dict", "odict", "counter"):
                return {"$": tag, "items": [[self._at(key, key), self._at(key, item)] for key, item in value.items()]}
            items = [self._at(i, item) for i, item in enumerate(value)]
            if tag == "list":
                return items
            return {"$": tag, "items": items, **({"maxlen": value.maxlen} if tag == "deque" else {})}
        finally:
            self.open.discard(id(value))

    def _at(self, key: object, item: object) -> object:
        try:
            return self.encode(item)
        except _Unpullable as exc:
            exc.where = f"[{key!r}]" + exc.where
            raise

    def _scalar(self, value: Any, tag: str) -> dict:
        if tag in ("datetime", "date", "time"):
            return {"$": tag, "iso": value.isoformat(), **({"fold": 1} if getattr(value, "fold", 0) else {})}
        if tag == "timedelta":
            return {"$": tag, "d": value.days, "s": value.seconds, "us": value.microseconds}
        if tag == "fraction":
            return {"$": tag, "n": self.encode(value.numerator), "d": self.encode(value.denominator)}
        return {"$": tag, **({"hex": value.hex} if tag == "uuid" else {"v": str(value)})}

    def _repr(self, value: object) -> dict:
        kind = type(value)
        try:
            text = repr(value)
        except Exception as exc:  # the program's own __repr__ may fail; say so instead of losing the pull
            text = f"<repr failed: {type(exc).__name__}: {exc}>"
        module = "" if kind.__module__ == "builtins" else kind.__module__ + "."
        return {"$": "repr", "type": module + kind.__qualname__, "text": text}

    def _buffer(self, data: bytes) -> int:
        self.buffers.append(data)
        return len(self.buffers) - 1

    def _npy(self, array: Any) -> int:
        out = io.BytesIO()
        self.np.save(out, self.np.asarray(array), allow_pickle=False)
        return self._buffer(out.getvalue())

    def _frame(self, frame: Any) -> dict:
        data = self._arrow(frame) if self.arrow else None
        if data is not None:
            return {"$": "dataframe", "arrow": self._buffer(data)}
        return {"$": "dataframe", "columns": self._index(frame.columns), "index": self._index(frame.index),
                "data": [self._column(frame.iloc[:, i]) for i in range(frame.shape[1])]}

    def _series(self, series: Any) -> dict:
        data = self._arrow(series.to_frame(name="values")) if self.arrow else None
        if data is not None:
            return {"$": "series", "name": self.encode(series.name), "arrow": self._buffer(data)}
        return {"$": "series", "name": self.encode(series.name), "index": self._index(series.index),
                "data": self._column(series)}

    def _arrow(self, frame: Any) -> bytes | None:
        index = frame.index
        dtypes = [*frame.dtypes, *(index.dtypes if hasattr(index, "levels") else [index.dtype])]
        objects = any(isinstance(dtype, self.np.dtype) and dtype.kind == "O" for dtype in dtypes)
        if objects or any(type(name) is not str for name in frame.columns):
            return None  # Arrow would turn these objects or names into something else
        try:
            import warnings

            import pyarrow
            import pyarrow.ipc

            with warnings.catch_warnings():
                warnings.simplefilter("error")  # pyarrow warns where a frame does not round-trip
                table = pyarrow.Table.from_pandas(frame)
            sink = pyarrow.BufferOutputStream()
            with pyarrow.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            return sink.getvalue().to_pybytes()
        except Exception:  # no pyarrow here, or a column Arrow cannot hold: the column layout carries it
            return None

    def _index(self, index: Any) -> dict:
        pd = self.pd
        if type(index) is pd.RangeIndex:
            return {"kind": "range", "start": index.start, "stop": index.stop, "step": index.step,
                    "name": self.encode(index.name)}
        if isinstance(index, pd.MultiIndex):
            return {"kind": "multi", "names": [self.encode(name) for name in index.names],
                    "levels": [self._column(index.get_level_values(i)) for i in range(index.nlevels)]}
        freq = index.freqstr if isinstance(index, (pd.DatetimeIndex, pd.TimedeltaIndex)) else None
        return {"kind": "flat", "name": self.encode(index.name), "data": self._column(index), "freq": freq}

    def _column(self, values: Any) -> dict:
        np, pd = self.np, self.pd
        dtype, array = values.dtype, values.array
        if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
            return {"kind": "npy", "buf": self._npy(values.to_numpy())}
        if isinstance(dtype, pd.CategoricalDtype):
            return {"kind": "category", "codes": self._npy(array.codes), "ordered": bool(array.ordered),
                    "categories": self._index(array.categories)}
        tz = getattr(dtype, "tz", None)
        zone = getattr(tz, "key", None) or getattr(tz, "zone", None)  # zoneinfo, pytz: a name the kernel can read
        if isinstance(dtype, pd.DatetimeTZDtype) and zone:
            utc = pd.DatetimeIndex(values).tz_convert("UTC").tz_localize(None)
            return {"kind": "datetimetz", "tz": zone, "buf": self._npy(utc.to_numpy())}
        masked = tuple(getattr(pd.arrays, name) for name in ("IntegerArray", "FloatingArray", "BooleanArray"))
        if isinstance(array, masked):
            plain = array.to_numpy(dtype=dtype.numpy_dtype, na_value=dtype.numpy_dtype.type(0))
            return {"kind": "masked", "dtype": str(dtype), "buf": self._npy(plain),
                    "mask": self._npy(np.asarray(array.isna()))}
        if isinstance(dtype, pd.StringDtype):
            missing = np.asarray(values.isna()).tolist()
            return {"kind": "string", "na": "NA" if getattr(dtype, "na_value", pd.NA) is pd.NA else "nan",
                    "values": [None if missing[i] else str(v) for i, v in enumerate(values.tolist())]}
        return {"kind": "values", "values": [self._at(i, v) for i, v in enumerate(values.astype(object).tolist())]}


def encode_payload(value: object, arrow: bool = False) -> bytes:
    """(target) The payload that carries ``value``; DataFrames as Arrow IPC when ``arrow`` and pyarrow allow."""
    encoder = _TargetEncoder(arrow)
    try:
        header: dict = {"value": encoder.encode(value), "buffers": [len(b) for b in encoder.buffers]}
    except _Unpullable as exc:
        header, encoder.buffers = {"error": {"reason": exc.reason, "where": exc.where}}, []
    text = json.dumps(header, allow_nan=False, separators=(",", ":")).encode()
    return b"".join([MAGIC, len(text).to_bytes(8, "big"), text, *encoder.buffers])


TARGET_SOURCE = "\n".join([
    "from __future__ import annotations",
    "import base64, collections, io, json, math, sys",
    f"MAGIC = {MAGIC!r}",
    f"MAX_DEPTH = {MAX_DEPTH}",
    *(inspect.getsource(part) for part in (_Unpullable, _TargetEncoder, encode_payload)),
])
"""The encoder's source, run in the target; it defines ``encode_payload(value, arrow)``."""


