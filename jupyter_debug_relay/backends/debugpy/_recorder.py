"""Runs in a Python 3.12+ target, never in the kernel: keeps each line that recorded code runs, in a ring.

The debugpy backend sends this file's text at a ``record`` request (``recording.py``); it becomes the module
``_jupyter_debug_relay_recorder`` of the target and answers every later call with JSON text, read by the relay as
data only. It takes a ``sys.monitoring`` tool id of its own (never debugpy's) and turns on ``PY_START``,
``LINE`` and ``PY_RETURN`` for the recorded code objects only (``set_local_events``); a line outside a recorded
range is disabled where it is met. ``RAISE`` cannot be local: it is on for the whole program while recording, and
returns at once for code that is not recorded. Each event keeps the line, the locals changed since the call's last
event (a local is changed when it is another object, or a list, dict, set or bytearray of another length) as
reprs cut to a length, and the return value or exception. Events live in a ring with a byte cap; what falls out is
counted. Standard library only.
"""

from __future__ import annotations

import ast
import builtins
import collections
import dis
import gc
import itertools
import json
import reprlib
import sys
import types

NAME = "_jupyter_debug_relay_recorder"
TOOL_NAME = "jupyter_debug_relay recorder"
TOOL_IDS = (4, 3, 2, 1, 5)  # tried in order: debugpy holds 0 (DEBUGGER_ID)
DEBUGGER_FOLDERS = ("debugpy", "pydevd", "jupyter_debug_relay")
CONTAINERS = (list, dict, set, bytearray, collections.deque)  # changed in place: their length is compared too
EVENT_BYTES = 64  # what an event costs in the ring besides its texts
MAX_FRAMES = 10_000  # calls followed at once; past it the oldest are forgotten (their next line starts afresh)
_NOTHING = ((), ())
_getframe = sys._getframe
_DISABLE = getattr(getattr(sys, "monitoring", None), "DISABLE", None)
_SIMPLE = (int, float, bool, type(None), complex)
_UNCHANGING = frozenset((int, float, bool, type(None), complex, str, bytes, range, types.FunctionType))

recorder = None  # the one Recorder of this target, while recording


class Recorder:
    """The recording: its code objects, the ring of events, and the state of each call under way."""

    def __init__(self, tool: int, codes: list, ranges: list, names: list, cap: int, max_chars: int) -> None:
        self.tool, self.cap, self.max_chars = tool, cap, max_chars
        self.codes = {id(code): index for index, code in enumerate(codes)}  # a code's hash reads all of it: ids
        self.code_list = codes
        self.ranges = ranges  # per code: (first, last) line recorded, or None for all its lines
        self.names = names  # per code: the names shown (module code: those its recorded lines assign), or None
        self.lines = [_line_table(code) for code in codes]  # per code: line -> (names it stores, names it may change)
        self.ring: collections.deque = collections.deque()  # (call, code, kind, line, changes, value, size)
        self.bytes = 0
        self.dropped = 0  # events fallen out: the first event in the ring is number dropped + 1
        self.calls = itertools.count(1)
        self.frames: dict = {}  # id(frame) -> [call, the line it last ran, {name: the text last kept}]
        self.repr = reprlib.Repr()
        self.repr.maxstring = self.repr.maxother = max_chars
        self.repr.maxlist = self.repr.maxtuple = self.repr.maxdict = self.repr.maxset = 12
        self.repr.maxlevel = 3

    # -- the callbacks (the hot path) -------------------------------------------------------------------------

    def on_start(self, code, offset):
        frames = self.frames
        if len(frames) >= MAX_FRAMES:
            frames.clear()
        frames[id(sys._getframe(1))] = [next(self.calls), 0, None]

    def on_line(self, code, line):
        index = self.codes[id(code)]
        span = self.ranges[index]
        if span is not None and not span[0] <= line <= span[1]:
            return _DISABLE  # this line is not recorded: not called for it again
        frame = _getframe(1)
        state = self.frames.get(id(frame))
        if state is None or state[2] is None:
            return self._keep(index, frame, "line", line, None)
        # the hot path, inlined: what the line run since the call's last event stored, or changed in place
        found = frame.f_locals
        kept = state[2]
        changes = []
        size = EVENT_BYTES
        stores, watched = self.lines[index].get(state[1], _NOTHING)
        for name in stores:
            if name in found:
                value = found[name]
                kind = type(value)
                if kind is int or kind is float or kind is bool:
                    text = repr(value)
                    if len(text) > 40:
                        text = self.text(value)
                else:
                    text = self.text(value)
                if kept.get(name) != text:
                    kept[name] = text
                    changes.append((name, text))
                    size += len(text)
            elif name in kept:
                del kept[name]
                changes.append((name, None))
        for name in watched:
            if name in found:
                value = found[name]
                if type(value) in _UNCHANGING:
                    continue
                text = self.text(value)
                if kept.get(name) != text:
                    kept[name] = text
                    changes.append((name, text))
                    size += len(text)
        state[1] = line
        self.ring.append((state[0], index, "line", line, changes, None, size))
        self.bytes += size
        if self.bytes > self.cap:
            self._trim()

    def on_return(self, code, offset, value):
        frame = sys._getframe(1)
        self._keep(self.codes[id(code)], frame, "return", frame.f_lineno, self.text(value))
        self.frames.pop(id(frame), None)

    def on_raise(self, code, offset, exc):
        index = self.codes.get(id(code))
        if index is None:
            return
        frame = sys._getframe(1)
        line = frame.f_lineno
        span = self.ranges[index]
        if span is not None and not span[0] <= line <= span[1]:
            return
        message = str(exc)
        message = message if len(message) <= self.max_chars else message[:self.max_chars] + "…"
        self._keep(index, frame, "exception", line, f"{type(exc).__name__}: {message}" if message else
                   type(exc).__name__)

    def _keep(self, index, frame, kind, line, value):
        """Keep one event: what the line run since the call's last event changed (its stores, and the values it
        may have changed in place), or every local at the call's first event."""
        state = self.frames.get(id(frame))
        if state is None:  # a call under way when recording began, or forgotten
            state = self.frames[id(frame)] = [next(self.calls), 0, None]
        found = frame.f_locals
        kept = state[2]
        changes = []
        if kept is None:  # the call's first event: every local
            names = self.names[index]
            kept = state[2] = {}
            for name in (found if names is None else names):
                if name in found:
                    kept[name] = text = self.text(found[name])
                    changes.append((name, text))
        else:
            stores, watched = self.lines[index].get(state[1], _NOTHING)
            for name in stores:
                if name in found:
                    text = self.text(found[name])
                    if kept.get(name) != text:
                        kept[name] = text
                        changes.append((name, text))
                elif name in kept:
                    del kept[name]
                    changes.append((name, None))
            for name in watched:
                if name in found and type(found[name]) not in _UNCHANGING:
                    text = self.text(found[name])
                    if kept.get(name) != text:
                        kept[name] = text
                        changes.append((name, text))
        state[1] = line
        size = EVENT_BYTES
        for name, text in changes:
            size += len(name) + (len(text) if text else 0)
        if value:
            size += len(value)
        self.ring.append((state[0], index, kind, line, changes, value, size))
        self.bytes += size
        if self.bytes > self.cap:
            self._trim()

    def _trim(self) -> None:
        """Drop the oldest events until the ring is within its byte cap (counted in ``dropped``)."""
        ring = self.ring
        while self.bytes > self.cap and ring:
            self.bytes -= ring.popleft()[6]
            self.dropped += 1

    # -- values -----------------------------------------------------------------------------------------------

    def text(self, value) -> str:
        """A value's repr cut to ``max_chars`` (the program's own ``__repr__`` runs; a failing one is named)."""
        try:
            kind = type(value)
            if kind in _SIMPLE:
                text = repr(value)
            elif kind is str:
                return self.text_of_str(value)
            else:
                text = self.repr.repr(value)
        except Exception as exc:  # noqa: BLE001 - the program's __repr__ may raise anything
            return f"<{type(value).__name__}: repr failed with {type(exc).__name__}>"
        return text if len(text) <= self.max_chars else text[:self.max_chars] + "…"

    def text_of_str(self, value: str) -> str:
        return repr(value) if len(value) <= self.max_chars else repr(value[:self.max_chars]) + "…"

    # -- answers ----------------------------------------------------------------------------------------------

    def describe(self) -> dict:
        return {"codes": [{"name": code.co_qualname, "path": code.co_filename, "first": code.co_firstlineno,
                           "range": list(span) if span else None}
                          for code, span in zip(self.code_list, self.ranges, strict=True)],
                "tool": self.tool, "cap": self.cap, "bytes": self.bytes, "dropped": self.dropped,
                "first": self.dropped + 1, "last": self.dropped + len(self.ring)}

    def since(self, seq: int, limit: int) -> dict:
        """The events after number ``seq``, up to about ``limit`` bytes of text."""
        skip = max(0, seq - self.dropped)
        events, size, number = [], 0, self.dropped + skip
        for call, code, kind, line, changes, value, cost in itertools.islice(self.ring, skip, None):
            if events and size + cost > limit:
                break
            number += 1
            events.append([number, call, code, kind, line, [list(change) for change in changes], value])
            size += cost
        return {**self.describe(), "events": events, "more": number < self.dropped + len(self.ring)}

    def value(self, seq: int, expression: str) -> dict:
        """``expression`` evaluated on the recorded locals at event ``seq`` (literals as values, others as
        placeholders showing their recorded repr), with the builtins only."""
        skip = seq - self.dropped - 1
        if not 0 <= skip < len(self.ring):
            return {"error": "gone"}
        call = self.ring[skip][0]
        texts: dict = {}
        for event in itertools.islice(self.ring, 0, skip + 1):
            if event[0] == call:
                for name, text in event[4]:
                    if text is None:
                        texts.pop(name, None)
                    else:
                        texts[name] = text
        scope = {name: _revived(text) for name, text in texts.items()}
        try:
            found = eval(compile(expression, "<recorded state>", "eval"), {"__builtins__": builtins}, scope)
        except Exception as exc:  # noqa: BLE001 - the user's expression may raise anything
            return {"error": "raised", "type": type(exc).__name__, "message": str(exc)[:300]}
        return {"value": found.text if isinstance(found, Recorded) else self.text(found),
                "type": "recorded repr" if isinstance(found, Recorded) else type(found).__name__}

    def stop(self) -> None:
        monitoring = sys.monitoring
        for code in self.code_list:
            monitoring.set_local_events(self.tool, code, 0)
        monitoring.set_events(self.tool, 0)
        for event in (monitoring.events.PY_START, monitoring.events.LINE, monitoring.events.PY_RETURN,
                      monitoring.events.RAISE):
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)


class Recorded:
    """A recorded value that is no literal: it shows its recorded repr and has nothing else."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _revived(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return Recorded(text)


# -- finding the code ---------------------------------------------------------------------------------------------

def _ours(path: str) -> bool:
    return any(f"{folder}" in path for folder in DEBUGGER_FOLDERS) or path.startswith("<jupyter_debug_relay")


def _all_codes() -> list:
    """Every code object the program has: its functions', its frames', and the code nested in those."""
    roots = []
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType:
            roots.append(obj.__code__)
    for top in sys._current_frames().values():
        frame = top
        while frame is not None:
            roots.append(frame.f_code)
            frame = frame.f_back
    seen, found = set(), []
    while roots:
        code = roots.pop()
        if id(code) in seen or _ours(code.co_filename):
            continue
        seen.add(id(code))
        found.append(code)
        roots.extend(c for c in code.co_consts if type(c) is types.CodeType)
    return found


STORES = {"STORE_FAST", "STORE_DEREF", "STORE_NAME", "STORE_GLOBAL", "DELETE_FAST", "DELETE_DEREF", "DELETE_NAME",
          "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_MAYBE_NULL"}
LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "LOAD_NAME", "LOAD_FAST_LOAD_FAST",
         "LOAD_CLOSURE"}
CHANGING = {"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR", "DELETE_ATTR", "CALL", "CALL_FUNCTION_EX", "CALL_KW",
            "STORE_SLICE"}  # a line with one of these may change what it loads in place


def _line_table(code) -> dict:
    """Line -> (the names it stores or deletes, the names it loads and may change in place)."""
    stores: dict = {}
    loads: dict = {}
    changing: set = set()
    line = None
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions and ins.positions.lineno else line
        if line is None:
            continue
        names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
        if ins.opname in STORES:
            stores.setdefault(line, []).extend(n for n in names if isinstance(n, str))
        if ins.opname in LOADS or ins.opname == "STORE_FAST_LOAD_FAST":
            loads.setdefault(line, []).extend(n for n in names if isinstance(n, str))
        if ins.opname in CHANGING:
            changing.add(line)
    table = {}
    for number in set(stores) | set(loads):
        stored = tuple(dict.fromkeys(stores.get(number, ())))
        watched = tuple(n for n in dict.fromkeys(loads.get(number, ())) if n not in stored) \
            if number in changing else ()
        table[number] = (stored, watched)
    return table


def _lines(code) -> set:
    return {line for _, _, line in code.co_lines() if line is not None}


def _assigned(code, first: int, last: int) -> list:
    """The names module-level code stores on lines ``first`` to ``last``."""
    names, line = [], None
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions and ins.positions.lineno else line
        if ins.opname in ("STORE_NAME", "STORE_GLOBAL") and line and first <= line <= last and ins.argval not in names:
            names.append(ins.argval)
    return names


def _function(name: str) -> list:
    codes = _all_codes()
    found = [c for c in codes if c.co_qualname == name]
    if not found and "." in name:  # module.function, or module.Class.method
        for obj in gc.get_objects():
            if type(obj) is types.FunctionType and f"{obj.__module__}.{obj.__qualname__}" == name:
                found.append(obj.__code__)
    if not found:
        found = [c for c in codes if c.co_name == name and not c.co_name.startswith("<")]
    return list(dict.fromkeys(found))


def _same_file(a: str, b: str) -> bool:
    import os
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


# -- the module's calls --------------------------------------------------------------------------------------------

def call(action: str, args_json: str) -> str:
    """One request of the relay, as JSON text in and out."""
    args = json.loads(args_json)
    try:
        return json.dumps(_ACTIONS[action](**args))
    except Exception as exc:  # noqa: BLE001 - told to the relay as data, never raised into the program
        return json.dumps({"error": "failed", "type": type(exc).__name__, "message": str(exc)[:300]})


def _record(kind: str, cap: int, max_chars: int, name: str = "", path: str = "", first: int = 0,
            last: int = 0) -> dict:
    global recorder
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return {"error": "unsupported", "version": list(sys.version_info[:3])}
    if kind == "function":
        codes = _function(name)
        ranges = [None] * len(codes)
        names = [None] * len(codes)
        if not codes:
            return {"error": "unknown_function"}
    else:
        codes, ranges, names = [], [], []
        for code in _all_codes():
            if not _same_file(code.co_filename, path):
                continue
            held = {line for line in _lines(code) if first <= line <= last}
            if not held:
                continue
            codes.append(code)
            ranges.append((first, last))
            names.append(_assigned(code, first, last) if code.co_name == "<module>" else None)
        if not codes:
            return {"error": "no_code", "loaded": any(_same_file(c.co_filename, path) for c in _all_codes())}
    if recorder is not None:
        recorder.stop()
        recorder = None
    tool = next((t for t in TOOL_IDS if monitoring.get_tool(t) is None), None)
    if tool is None:
        return {"error": "no_tool", "tools": [monitoring.get_tool(t) for t in range(6)]}
    monitoring.use_tool_id(tool, TOOL_NAME)
    made = Recorder(tool, codes, ranges, names, cap, max_chars)
    events = monitoring.events
    monitoring.register_callback(tool, events.PY_START, made.on_start)
    monitoring.register_callback(tool, events.LINE, made.on_line)
    monitoring.register_callback(tool, events.PY_RETURN, made.on_return)
    monitoring.register_callback(tool, events.RAISE, made.on_raise)
    for code in codes:
        monitoring.set_local_events(tool, code, events.PY_START | events.LINE | events.PY_RETURN)
    monitoring.set_events(tool, events.RAISE)
    recorder = made
    return made.describe()


def _off() -> dict:
    global recorder
    if recorder is None:
        return {"error": "not_recording"}
    told = recorder.describe()
    recorder.stop()
    recorder = None
    return told


def _since(seq: int, limit: int) -> dict:
    return recorder.since(seq, limit) if recorder is not None else {"error": "not_recording"}


def _value(seq: int, expression: str) -> dict:
    return recorder.value(seq, expression) if recorder is not None else {"error": "not_recording"}


_ACTIONS = {"record": _record, "off": _off, "since": _since, "value": _value}
