"""Python 3.11 bytecode: a call to a function put at the start of a code object, its lines, jumps and handlers
as they were (``insert_call``). Used by ``_lazy_trace311.py``, beside this file, for the code that holds a
breakpoint."""

import sys
import types
from dis import _inline_cache_entries, opmap


class Unsafe(Exception):
    """A breakpoint's line is in code the call cannot be put into safely."""


def _exception_varint(data: bytes, i: int) -> tuple:
    byte = data[i]
    value = byte & 63
    while byte & 64:
        i += 1
        byte = data[i]
        value = (value << 6) | (byte & 63)
    return value, i + 1


def _write_exception_varint(value: int, first: bool) -> bytes:
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(64 | (value & 63))
        value >>= 6
    out = bytearray(reversed(chunks))
    for k in range(len(out) - 1):
        out[k] |= 64
    if first:
        out[0] |= 128
    return bytes(out)


def shift_exception_table(table: bytes, at: int, by: int) -> bytes:
    """The exception table with ``by`` code units inserted at unit ``at``."""
    out = bytearray()
    i = 0
    while i < len(table):
        start, i = _exception_varint(table, i)
        size, i = _exception_varint(table, i)
        target, i = _exception_varint(table, i)
        depth, i = _exception_varint(table, i)
        if start >= at:
            start += by
        elif start + size > at:
            size += by
        if target >= at:
            target += by
        out += (_write_exception_varint(start, True) + _write_exception_varint(size, False)
                + _write_exception_varint(target, False) + _write_exception_varint(depth, False))
    return bytes(out)


def _skip_varint(table: bytes, j: int) -> int:
    while table[j] & 64:
        j += 1
    return j + 1


def _line_entries(table: bytes) -> list:
    """(first byte index, end index, kind, code units) of each entry of a 3.11 location table."""
    entries, i = [], 0
    while i < len(table):
        kind, units, j = (table[i] >> 3) & 15, (table[i] & 7) + 1, i + 1
        if kind == 14:
            for _ in range(4):
                j = _skip_varint(table, j)
        elif kind == 13:
            j = _skip_varint(table, j)
        elif 10 <= kind <= 12:
            j += 2
        elif kind < 10:
            j += 1
        entries.append((i, j, kind, units))
        i = j
    return entries


def _same_place(table: bytes, start: int, end: int, kind: int, units: int) -> bytes:
    """An entry for ``units`` more code units at the place of the entry at ``start`` (line delta 0)."""
    head = 0x80 | (kind << 3) | (units - 1)
    if 10 <= kind <= 12:
        return bytes([0x80 | (10 << 3) | (units - 1)]) + table[start + 1:end]
    if kind == 13:
        return bytes([head, 0])
    if kind == 14:
        return bytes([head, 0]) + table[_skip_varint(table, start + 1):end]
    return bytes([head]) + table[start + 1:end]


def _at_same_place(table: bytes, start: int, end: int, kind: int, units: int) -> bytes:
    """``_same_place`` for any number of code units (an entry holds 8 at most)."""
    out = bytearray()
    while units:
        chunk = min(units, 8)
        out += _same_place(table, start, end, kind, chunk)
        units -= chunk
    return bytes(out)


def _nowhere(units: int) -> bytes:
    """Location entries for ``units`` code units with no line."""
    return bytes(0x80 | (15 << 3) | (min(8, units - k) - 1) for k in range(0, units, 8))


def _load_const(index: int) -> bytes:
    load = bytes([opmap["LOAD_CONST"], index & 0xFF])
    return bytes([opmap["EXTENDED_ARG"], index >> 8]) + load if index > 0xFF else load


def _call_const(index: int) -> bytes:
    """Call the constant ``index`` with no arguments, its result on the stack."""
    return (bytes([opmap["PUSH_NULL"], 0]) + _load_const(index)
            + bytes([opmap["PRECALL"], 0]) + bytes(2 * _inline_cache_entries[opmap["PRECALL"]])
            + bytes([opmap["CALL"], 0]) + bytes(2 * _inline_cache_entries[opmap["CALL"]]))


def insert_call(code: types.CodeType, hook: object) -> types.CodeType:
    """``code`` calling ``hook()`` right after its first ``RESUME`` when ``sys.gettrace()`` is None (a traced
    thread skips the call, in C); its lines, jumps and handlers as they were."""
    raw = code.co_code
    resume = next((k for k in range(0, len(raw), 2) if raw[k] == opmap["RESUME"]), None)
    if resume is None:
        raise Unsafe(code.co_name)
    at = resume // 2 + 1
    const = len(code.co_consts)
    if const + 1 > 0xFFFF:
        raise Unsafe(code.co_name)
    # Only the hook's call has the def's line (a frame paused in it needs one); the rest has none, so a traced
    # call gets no line event for the def, and the body's first instruction starts a line (even on the def's line).
    check = _call_const(const + 1)
    call = _call_const(const)
    prefix = (check + bytes([opmap["POP_JUMP_FORWARD_IF_NOT_NONE"], len(call) // 2 + 1])
              + call + bytes([opmap["POP_TOP"], 0, opmap["NOP"], 0]))
    unplaced = len(check) // 2 + 1, len(call) // 2, 2  # units: no line, the def's line, no line
    table, lines, pos = code.co_linetable, bytearray(), 0
    placed = False
    for start, end, kind, units in _line_entries(table):
        if placed or pos + units < at:
            lines += table[start:end]
        else:
            before = at - pos
            lines += bytes([(table[start] & 0xF8) | (before - 1)]) + table[start + 1:end]
            lines += (_nowhere(unplaced[0]) + _at_same_place(table, start, end, kind, unplaced[1])
                      + _nowhere(unplaced[2]))
            if units > before:
                lines += _same_place(table, start, end, kind, units - before)
            placed = True
        pos += units
    if not placed:
        raise Unsafe(code.co_name)
    return code.replace(co_code=raw[:at * 2] + prefix + raw[at * 2:], co_consts=code.co_consts + (hook, sys.gettrace),
                        co_linetable=bytes(lines), co_stacksize=max(code.co_stacksize, 2),
                        co_exceptiontable=shift_exception_table(code.co_exceptiontable, at, len(prefix) // 2))
