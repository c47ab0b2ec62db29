"""Runs in the target, never in the kernel: keeps each line that recorded code runs, in a ring.

The debugpy backend sends this file's text at a ``record`` request (``recording.py``); it becomes the module
``_jupyter_debug_relay_recorder`` of the target and answers every later call with JSON text, read by the relay as
data only. A recorded function is compiled again with a record after each statement (``CompiledRecorder``, with
``_record_compiler.py``, on 3.11+): its function objects run that code from their next call, at the cost of an
append a line. Code that cannot be compiled again (a module's own lines, a file changed since it was loaded) is
recorded on 3.12+ through ``sys.monitoring`` (``MonitoredRecorder``): it takes a tool id of its own (never
debugpy's) and turns on ``PY_START``, ``LINE`` and ``PY_RETURN`` for those code objects only. ``RAISE``
cannot be local: on 3.12+ it is on for the whole program while recording (exceptions raised in recorded code), and
returns at once elsewhere. Each event keeps the line, the locals changed since the call's last event (a local is
changed when its bounded repr changed) and the return value or exception. Events live in a ring with a byte cap;
what falls out is counted. Standard library only.
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
_FIXED = frozenset((int, float, bool, type(None), complex, range, types.FunctionType))  # kept as they are
NEW_LOCALS = 0x02  # CO_NEWLOCALS: a function's code (not a module's or a class body's)
RECORD_BYTES = 128  # what a record not yet read may cost: the records' ring holds the cap's worth
LAZY_TRACING = "_jupyter_debug_relay_boot_lazy_tracing"  # the boot's lazy tracing (3.11), when it is on
COMPILED_BREAKPOINTS = "_jupyter_debug_relay_boot_compiled_breakpoints"  # the boot's guards, when they are on
GUARDS = "_jupyter_debug_relay_boot_guards"
COMPILER = "_jupyter_debug_relay_record_compiler"  # the module of _record_compiler.py in the target
BOOT_NAMES = {  # what a recording reads of the boot's features (boot/NAME.py), checked against them by the tests
    LAZY_TRACING: ("ORIGINAL", "STATE", "HOT", "patch_tree", "canonical"),
    COMPILED_BREAKPOINTS: ("CANONICAL", "SLOTS"),
    GUARDS: ("Guard", "guarded"),
}

recorder = None  # the one Recorder of this target, while recording


class Recorder:
    """A recording: its code objects and the ring of events (each numbered; a byte cap)."""

    def __init__(self, tool: int, codes: list, ranges: list, names: list, cap: int, max_chars: int) -> None:
        self.tool, self.cap, self.max_chars = tool, cap, max_chars
        self.codes = {id(code): index for index, code in enumerate(codes)}  # a code's hash reads all of it: ids
        self.code_list = codes
        self.ranges = ranges  # per code: (first, last) line recorded, or None for all its lines
        self.names = names  # per code: the names shown (module code: those its recorded lines assign), or None
        self.ring: collections.deque = collections.deque()  # (number, call, code, kind, line, changes, value, size)
        self.bytes = 0
        self.numbers = itertools.count(1)
        self.last = 0  # the number of the newest event
        self.calls = itertools.count(1)
        self.how = "sys.monitoring"
        self.repr = reprlib.Repr()
        self.repr.maxstring = self.repr.maxother = max_chars
        self.repr.maxlist = self.repr.maxtuple = self.repr.maxdict = self.repr.maxset = 12
        self.repr.maxlevel = 3

    def _event(self, call: int, index: int, kind: str, line: int, changes: list, value, size: int) -> None:  # noqa: ANN001
        self.last = number = next(self.numbers)
        self.ring.append((number, call, index, kind, line, changes, value, size))
        self.bytes += size
        if self.bytes > self.cap:
            self._trim()

    def _trim(self) -> None:
        """Drop the oldest events until the ring is within its byte cap."""
        ring = self.ring
        while self.bytes > self.cap and ring:
            self.bytes -= ring.popleft()[7]

    def settle(self) -> None:
        """Bring the ring up to date (the compiled recorder turns its records into events here)."""

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
        self.settle()
        first = self.ring[0][0] if self.ring else self.last + 1
        return {"codes": [{"name": code.co_qualname, "path": code.co_filename, "first": code.co_firstlineno,
                           "range": list(span) if span else None}
                          for code, span in zip(self.code_list, self.ranges, strict=True)],
                "tool": self.tool, "cap": self.cap, "bytes": self.bytes, "dropped": first - 1,
                "first": first, "last": self.last, "how": self.how}

    def since(self, seq: int, limit: int) -> dict:
        """The events after number ``seq``, up to about ``limit`` bytes of text."""
        told = self.describe()
        events, size, more = [], 0, False
        for number, call, code, kind, line, changes, value, cost in self.ring:
            if number <= seq:
                continue
            if events and size + cost > limit:
                more = True
                break
            events.append([number, call, code, kind, line, [list(change) for change in changes], value])
            size += cost
        return {**told, "events": events, "more": more}

    def value(self, seq: int, expression: str) -> dict:
        """``expression`` evaluated on the recorded locals at event ``seq`` (literals as values, others as
        placeholders showing their recorded repr), with the builtins only."""
        self.settle()
        upto = [event for event in self.ring if event[0] <= seq]
        if not upto or upto[-1][0] != seq:
            return {"error": "gone"}
        call = upto[-1][1]
        texts: dict = {}
        for event in upto:
            if event[1] == call:
                for name, text in event[5]:
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
        """Take the recorder's ``sys.monitoring`` tool back (each kind undoes the rest of its own)."""
        if self.tool < 0:
            return
        monitoring = sys.monitoring
        for code in self.code_list:
            monitoring.set_local_events(self.tool, code, 0)
        monitoring.set_events(self.tool, 0)
        for event in (monitoring.events.PY_START, monitoring.events.LINE, monitoring.events.PY_RETURN,
                      monitoring.events.RAISE):
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)

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
        self._raised(index, frame, line, f"{type(exc).__name__}: {message}" if message else type(exc).__name__)


class MonitoredRecorder(Recorder):
    """Records through ``sys.monitoring`` callbacks on the recorded code objects (code that cannot be compiled
    again: a module's own lines, a file changed since it was loaded)."""

    def __init__(self, tool: int, codes: list, ranges: list, names: list, cap: int, max_chars: int) -> None:
        super().__init__(tool, codes, ranges, names, cap, max_chars)
        self.lines = [_line_table(code) for code in codes]  # per code: line -> (names it stores, names it may change)
        self.frames: dict = {}  # id(frame) -> [call, the line it last ran, {name: the text last kept}]

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
        self._event(state[0], index, "line", line, changes, None, size)

    def on_return(self, code, offset, value):
        frame = sys._getframe(1)
        self._keep(self.codes[id(code)], frame, "return", frame.f_lineno, self.text(value))
        self.frames.pop(id(frame), None)

    def _raised(self, index, frame, line, value):
        self._keep(index, frame, "exception", line, value)

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
        self._event(state[0], index, kind, line, changes, value, _size(changes, value))

    def start(self, functions: list) -> None:
        """Start recording (``functions``: the program's, unused here: monitoring needs no swap)."""
        monitoring = sys.monitoring
        events = monitoring.events
        monitoring.register_callback(self.tool, events.PY_START, self.on_start)
        monitoring.register_callback(self.tool, events.LINE, self.on_line)
        monitoring.register_callback(self.tool, events.PY_RETURN, self.on_return)
        monitoring.register_callback(self.tool, events.RAISE, self.on_raise)
        for code in self.code_list:
            monitoring.set_local_events(self.tool, code, events.PY_START | events.LINE | events.PY_RETURN)
        monitoring.set_events(self.tool, events.RAISE)


class Kept(str):
    """A value's bounded repr, kept when it was recorded (the value may change in place later)."""


class CompiledRecorder(Recorder):
    """Records through the recorded functions compiled again with a record after each statement
    (``_record_compiler``): a record is a tuple in a ring, turned into events when the relay asks."""

    def __init__(self, tool: int, codes: list, ranges: list, names: list, cap: int, max_chars: int, made: list,
                 sites: list, pending: dict) -> None:
        super().__init__(tool, codes, ranges, names, cap, max_chars)
        self.pending = pending  # id(namespace code) -> (that code, [(name, index of a code it defines, not made yet)])
        self.how = "compiled"
        self.made = made  # per code: the code compiled again, with its records
        self.sites = sites  # site -> (code index, kind, line, names, gone)
        self.records: collections.deque = collections.deque(maxlen=max(1_000, cap // RECORD_BYTES))
        self.sequence = itertools.count(1)
        self.seen = 0  # the sequence number of the last record turned into events
        self.states: dict = {}  # call -> [{name: the text last kept}, the changes not yet told]
        self.swapped: list = []  # (function, its own code, the code compiled again) while it runs the latter
        self.codes = {id(code): index for index, code in enumerate(made)}  # for exceptions (on_raise)

    def keep(self, value) -> Kept:
        return Kept(self.text(value))

    def returned(self, call, site, value):
        self.records.append((next(self.sequence), call, site, value if type(value) in _FIXED else self.keep(value)))
        return value

    def start(self, functions: list) -> None:
        """Start recording: every function among ``functions`` running a recorded code runs its compiled one."""
        names = _record_compiler()
        setattr(builtins, names.APPEND, self.records.append)
        setattr(builtins, names.SEQUENCE, self.sequence.__next__)
        setattr(builtins, names.CALLS, self.calls.__next__)
        setattr(builtins, names.KEEP, self.keep)
        setattr(builtins, names.RETURNED, self.returned)
        setattr(builtins, names.FIXED, _FIXED)
        setattr(builtins, names.TYPE, type)
        olds = {id(code): index for index, code in enumerate(self.code_list)}
        for function in functions:
            if id(function.__code__) in olds:
                self._swap(function, olds[id(function.__code__)])
        if self.tool < 0:
            return
        monitoring = sys.monitoring
        for parent, _ in self.pending.values():  # 3.12+: a def not yet run is swapped as its namespace goes on
            monitoring.set_local_events(self.tool, parent, monitoring.events.LINE)
        monitoring.register_callback(self.tool, monitoring.events.LINE, self.on_parent_line)
        monitoring.register_callback(self.tool, monitoring.events.RAISE, self.on_raise)
        monitoring.set_events(self.tool, monitoring.events.RAISE)  # exceptions raised in the recorded code

    def _swap(self, function, index: int) -> None:  # noqa: ANN001 - a function of the program
        self.swapped.append((function, function.__code__, self.made[index]))
        function.__code__ = self.made[index]

    def on_parent_line(self, code, line):
        """A line of a module or class body that defines a recorded function not made yet: once its name holds
        that function, the function runs the code compiled again (before its first call)."""
        waiting = self.pending.get(id(code))
        if not waiting:
            return _DISABLE
        namespace = _getframe(1).f_locals  # a module's globals, a class body's namespace
        for name, index in list(waiting[1]):
            function = _function_of(namespace.get(name))
            if function is not None and function.__code__ is self.code_list[index]:
                self._swap(function, index)
                waiting[1].remove((name, index))
        if not waiting[1]:
            del self.pending[id(code)]
            sys.monitoring.set_local_events(self.tool, code, 0)
        return None

    def stop(self) -> None:
        """Give each function its own code back; a call under way runs on as compiled, its records discarded."""
        for parent, _ in self.pending.values():
            sys.monitoring.set_local_events(self.tool, parent, 0)
        super().stop()
        for function, own, made in self.swapped:
            if _unpatched(function.__code__) is made:
                try:
                    function.__code__ = _traced_lazily(own)
                except Exception:  # noqa: BLE001 - the boot's Unsafe: it traces that code as it did before
                    function.__code__ = own
        self.swapped = []
        names = _record_compiler()
        setattr(builtins, names.APPEND, collections.deque(maxlen=0).append)
        setattr(builtins, names.KEEP, id)
        setattr(builtins, names.RETURNED, _returned_nowhere)

    def _raised(self, index, frame, line, value):
        call = frame.f_locals.get(_record_compiler().CALL)
        if call is not None:
            self.records.append((next(self.sequence), call, -1, index, line, value))

    def settle(self) -> None:
        """Each record not yet read becomes events: a line's record tells the line ran (its event carries what the
        line before it changed) and what it stored; a call's first record, its arguments."""
        records, sites, states = self.records, self.sites, self.states
        while records:
            record = records.popleft()
            if record[0] != self.seen + 1:  # records fell out of the ring before they were read
                self.numbers = itertools.count(self.last + record[0] - self.seen)
                states.clear()
            self.seen = record[0]
            call, site = record[1], record[2]
            if site < 0:
                self._told(call, record[3], "exception", record[4], record[5])
                continue
            index, kind, line, names, gone = sites[site]
            values = record[3:3 + len(names)]
            if kind == "entry":
                if len(states) >= MAX_FRAMES:
                    states.clear()
                kept: dict = {}
                states[call] = [kept, self._changes(kept, names, values, gone)]
                continue
            state = states.get(call)
            if state is None:  # its first records fell out of the ring
                state = states[call] = [{}, []]
            if kind == "end":
                self._told(call, index, "return", line, "None")
                del states[call]
                continue
            self._told(call, index, "line", line, None)
            state[1] = self._changes(state[0], names, values, gone)
            if kind == "return":
                self._told(call, index, "return", line, self._text(record[-1]))
                del states[call]

    def _told(self, call, index, kind, line, value):
        """An event of the call, carrying the changes not yet told."""
        state = self.states[call]
        changes, state[1] = state[1], []
        self._event(call, index, kind, line, changes, value, _size(changes, value))

    def _text(self, value) -> str:
        return value if type(value) is Kept else self.text(value)

    def _changes(self, kept: dict, names: tuple, values: tuple, gone: tuple) -> list:
        changes = []
        for name, value in zip(names, values, strict=True):
            text = self._text(value)
            if kept.get(name) != text:
                kept[name] = text
                changes.append((name, text))
        for name in gone:
            if name in kept:
                del kept[name]
                changes.append((name, None))
        return changes


def _function_of(obj):
    """The function behind a name: itself, a method's, a staticmethod's, or the one a decorator wrapped."""
    for _ in range(8):
        if type(obj) is types.FunctionType:
            return obj
        obj = getattr(obj, "__func__", None) or getattr(obj, "__wrapped__", None)
        if obj is None:
            return None
    return None


def _returned_nowhere(call, site, value):
    return value


def _size(changes: list, value) -> int:
    size = EVENT_BYTES + (len(value) if value else 0)
    for name, text in changes:
        size += len(name) + (len(text) if text else 0)
    return size


def _record_compiler():
    return sys.modules[COMPILER]


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
    return any(folder in path for folder in DEBUGGER_FOLDERS) or path.startswith(
        ("<jupyter_debug_relay", "<builtin jupyter_debug_relay"))


def _functions() -> list:
    """Every function of the program: the one walk of the collector's objects a ``record`` makes (the most of its
    time in a program of millions of objects)."""
    return [obj for obj in gc.get_objects() if type(obj) is types.FunctionType]


def _all_codes(functions: list) -> list:
    """Every code object the program has: its ``functions``', its frames', and the code nested in those."""
    roots = [function.__code__ for function in functions]
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


def _function(name: str, functions: list, codes: list) -> list:
    found = [c for c in codes if c.co_qualname == name]
    if not found and "." in name:  # module.function, or module.Class.method
        found = [f.__code__ for f in functions if f"{f.__module__}.{f.__qualname__}" == name]
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
    if sys.version_info < (3, 11):
        return {"error": "unsupported", "version": list(sys.version_info[:3]),
                "why": "recording needs Python 3.11 or newer in the target"}
    functions = _functions()
    every = _all_codes(functions)
    if kind == "function":
        codes = _function(name, functions, every)
        ranges = [None] * len(codes)
        names = [None] * len(codes)
        if not codes:
            return {"error": "unknown_function"}
    else:
        codes, ranges, names = [], [], []
        for code in every:
            if not _same_file(code.co_filename, path):
                continue
            held = {line for line in _lines(code) if first <= line <= last}
            if not held:
                continue
            codes.append(code)
            ranges.append((first, last))
            names.append(_assigned(code, first, last) if code.co_name == "<module>" else None)
        if not codes:
            return {"error": "no_code", "loaded": any(_same_file(c.co_filename, path) for c in every)}
    if recorder is not None:
        recorder.stop()
        recorder = None
    chosen, made, sites, pending, unfit = _compiled(codes, ranges, functions, every)
    monitoring = getattr(sys, "monitoring", None)
    if made is None and monitoring is None:
        return {"error": "unsupported", "version": list(sys.version_info[:3]), "why": unfit}
    tool = -1
    if monitoring is not None:
        tool = next((t for t in TOOL_IDS if monitoring.get_tool(t) is None), None)
        if tool is None:
            return {"error": "no_tool", "tools": [monitoring.get_tool(t) for t in range(6)]}
        monitoring.use_tool_id(tool, TOOL_NAME)
    if made is not None:
        recorder = CompiledRecorder(tool, [codes[i] for i in chosen], [ranges[i] for i in chosen],
                                    [names[i] for i in chosen], cap, max_chars, made, sites, pending)
    else:
        recorder = MonitoredRecorder(tool, codes, ranges, names, cap, max_chars)
    recorder.start(functions)
    told = recorder.describe()
    if unfit:
        told["why"] = unfit
    return told


def _compiled(codes: list, ranges: list, functions: list, every: list) -> tuple:
    """(indexes of the codes compiled again, their new codes, the sites, the defs not run yet, None), or
    ([], None, None, {}, why not): the functions among ``codes`` (a comprehension or lambda inside one is recorded
    as its lines). A function not made yet is waited for where its module or class body defines it (3.12+).
    ``functions`` and ``every`` are the program's functions and code objects."""
    nested = {id(inner) for code in codes for inner in code.co_consts if type(inner) is types.CodeType}
    chosen = [index for index, code in enumerate(codes) if not (code.co_name.startswith("<") and id(code) in nested)]
    held = {id(function.__code__) for function in functions}
    parents = {id(inner): code for code in every for inner in code.co_consts if type(inner) is types.CodeType}
    pending: dict = {}
    for place, index in enumerate(chosen):
        code = codes[index]
        if id(code) in held or code.co_name == "<module>":
            continue
        parent = parents.get(id(code))
        if parent is None or parent.co_flags & NEW_LOCALS or getattr(sys, "monitoring", None) is None:
            why = "it is made anew at each call" if parent is not None and parent.co_flags & NEW_LOCALS else \
                "it is not defined yet: record it at a stop after its def ran"
            return [], None, None, {}, f"no function holds {code.co_qualname} now ({why})"
        pending.setdefault(id(parent), (parent, []))[1].append((code.co_name, place))
    compiler = _record_compiler()
    try:
        made, sites = compiler.recompiled([_unpatched(codes[i]) for i in chosen], [ranges[i] for i in chosen],
                                          _as_loaded)
        made = [_traced_lazily(code) for code in made]
    except compiler.Unfit as exc:
        return [], None, None, {}, str(exc)
    except Exception as exc:  # noqa: BLE001 - the boot's Unsafe: a breakpoint in code resuming past its start
        return [], None, None, {}, f"the debugger cannot trace it compiled again ({exc})"
    return chosen, made, sites, pending, None


def _as_loaded(tree, path: str):
    """A file's tree compiled as the boot compiled it when the file was read: with the guards of its breakpoints
    whose condition, hit count or log message runs in the program's code (``compiled_breakpoints``)."""
    compiled, guards = sys.modules.get(COMPILED_BREAKPOINTS), sys.modules.get(GUARDS)
    wanted = {}
    if compiled is not None and guards is not None and compiled.CANONICAL:
        canonical = compiled.CANONICAL[0](path)
        for slot, (where, line, parts) in enumerate(compiled.SLOTS):
            if where == canonical:
                wanted[line] = guards.Guard(slot, *parts)
    if not wanted:
        return compile(tree, path, "exec", dont_inherit=True)
    return guards.guarded(tree, path, wanted)


def _unpatched(code):
    """``code`` without the call the boot's lazy tracing put into it (3.11), or ``code`` itself."""
    lazy = sys.modules.get(LAZY_TRACING)
    return lazy.ORIGINAL.get(code, code) if lazy is not None else code


def _traced_lazily(code):
    """On 3.11 the boot traces a thread only once code holding a breakpoint runs: a call put at that code's start
    (``lazy_tracing.patch_tree``). Code compiled again, or given back, gets that call for the breakpoints now."""
    lazy = sys.modules.get(LAZY_TRACING)
    if lazy is None or lazy.STATE.get("for_good"):
        return code
    return lazy.patch_tree(code, lazy.HOT.get(lazy.canonical(code.co_filename), frozenset()))


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
