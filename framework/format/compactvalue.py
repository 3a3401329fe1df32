"""A compact, canonical binary form of JSON values, for archive headers (container version 3).

A header names its codec and its coder's params; as JSON those took more than the higher
levels gain on a small text. Here each value starts with one byte: its kind in the low 3
bits and a small number in the high 5 (0-30; 31: a varint follows with the number less 31)::

    kind 0  atom      number 0 false, 1 true, 2 null
    kind 1  int >= 0  the number is the int
    kind 2  int < 0   the number is -1 - the int
    kind 3  string    the number is its length in UTF-8 bytes, which follow
    kind 4  word      the number is an index into WORDS (a codec id or a param's name)
    kind 5  map       the number is its count of entries: each a key (kind 3 or 4), then a value
    kind 6  list      the number is its count of items
    kind 7  float     number 0, then 8 bytes IEEE 754 big-endian

So ``{"memory": 28, "light": false}`` takes 5 bytes. The writer is canonical (a string in WORDS
is always written as its word, keys sorted, the shortest number), so a header has one form.
WORDS only grows: an index, once written, means the same string forever.
"""

from __future__ import annotations

import math
import struct

from ..errors import FormatError
from .varint import read_varint, varint

#: strings written as a word (append only: archives hold these indices); the first 31 take one
#: byte, so they are the default coder's codec id and params, then the commonest others
WORDS = (
    "chunkpress.chunk-cm.v5", "memory", "contexts", "runs", "light", "direct", "indirect", "expect", "opener",
    "structure", "scoped", "hash_per_byte", "level", "order", "parse", "preset", "extreme", "x86",
    "chunkpress.cm.v1", "chunkpress.bwt-cm.v1", "chunkpress.combinatorial.v1", "chunkpress.raw-zstd.v1",
    "chunkpress.raw-lzma.v1", "chunkpress.varint-zstd.v1", "chunkpress.varint-lzma.v1", "block_mb", "lzp_min",
    "memory_mb", "model_order", "blake2b", "count",
    # two bytes from here
    "chunkpress.chunk-cm.v4", "chunkpress.chunk-cm.v3", "chunkpress.chunk-cm.v2", "chunkpress.chunk-cm.v1",
    "chunkpress.raw-zlib.v1", "chunkpress.raw-bz2.v1", "chunkpress.raw-ppmd.v1", "chunkpress.varint-zlib.v1",
    "chunkpress.varint-bz2.v1", "chunkpress.varint-ppmd.v1", "indirect_history",
    "chunkpress.chunk-cm.v6",
)
_INDEX = {w: i for i, w in enumerate(WORDS)}
ATOM, INT, NEGATIVE, STRING, WORD, MAP, LIST, FLOAT = range(8)
_INLINE = 31
#: how deep maps and lists may nest in a header read (a header is two levels deep)
MAX_DEPTH = 32


def dumps(value) -> bytes:
    """The compact form of a JSON value (dict keys must be strings)."""
    out = bytearray()
    _write(out, value)
    return bytes(out)


def _head(out: bytearray, kind: int, number: int) -> None:
    if number < _INLINE:
        out.append(kind | number << 3)
    else:
        out.append(kind | _INLINE << 3)
        out += varint(number - _INLINE)


def _write(out: bytearray, value) -> None:
    if value is False or value is True or value is None:
        _head(out, ATOM, 2 if value is None else int(value))
    elif isinstance(value, int) and value >= 0:
        _head(out, INT, value)
    elif isinstance(value, int):
        _head(out, NEGATIVE, -1 - value)
    elif isinstance(value, str):
        _write_string(out, value)
    elif isinstance(value, dict):
        _head(out, MAP, len(value))
        for key in sorted(value):
            if not isinstance(key, str):
                raise TypeError(f"a header's map keys are strings, not {key!r}")
            _write_string(out, key)
            _write(out, value[key])
    elif isinstance(value, (list, tuple)):
        _head(out, LIST, len(value))
        for item in value:
            _write(out, item)
    elif isinstance(value, float) and math.isfinite(value):
        _head(out, FLOAT, 0)
        out += struct.pack(">d", value)
    else:
        raise TypeError(f"a header holds JSON values, not {value!r}")


def _write_string(out: bytearray, text: str) -> None:
    if text in _INDEX:
        _head(out, WORD, _INDEX[text])
    else:
        raw = text.encode()
        _head(out, STRING, len(raw))
        out += raw


def loads(data: bytes, pos: int = 0):
    """(value, position after it) read from ``data`` at ``pos``; FormatError on anything that
    is not a value: a cut one, an unknown kind or word, a repeated key, nesting past MAX_DEPTH."""
    return _read(data, pos, 0)


def _number(data: bytes, pos: int) -> tuple[int, int, int]:
    if pos >= len(data):
        raise FormatError("corrupt archive header: it ends inside a value")
    kind, number = data[pos] & 7, data[pos] >> 3
    pos += 1
    if number == _INLINE:
        extra, pos = read_varint(data, pos)
        number += extra
    return kind, number, pos


def _read(data: bytes, pos: int, depth: int):
    kind, number, pos = _number(data, pos)
    if kind == ATOM:
        if number > 2:
            raise FormatError(f"corrupt archive header: no atom {number}")
        return (False, True, None)[number], pos
    if kind == INT:
        return number, pos
    if kind == NEGATIVE:
        return -1 - number, pos
    if kind in (STRING, WORD):
        return _read_string(data, kind, number, pos)
    if kind == FLOAT:
        if number != 0 or pos + 8 > len(data):
            raise FormatError("corrupt archive header: a cut or malformed float")
        return struct.unpack(">d", data[pos: pos + 8])[0], pos + 8
    if depth >= MAX_DEPTH:
        raise FormatError("corrupt archive header: nested too deeply")
    if number > len(data) - pos:  # every entry or item takes a byte at least
        raise FormatError("corrupt archive header: more entries than bytes")
    if kind == LIST:
        items = []
        for _ in range(number):
            item, pos = _read(data, pos, depth + 1)
            items.append(item)
        return items, pos
    entries = {}
    for _ in range(number):
        key_kind, key_number, pos = _number(data, pos)
        if key_kind not in (STRING, WORD):
            raise FormatError("corrupt archive header: a map's key is not a string")
        key, pos = _read_string(data, key_kind, key_number, pos)
        if key in entries:
            raise FormatError(f"corrupt archive header: the key {key!r} is repeated")
        entries[key], pos = _read(data, pos, depth + 1)
    return entries, pos


def _read_string(data: bytes, kind: int, number: int, pos: int) -> tuple[str, int]:
    if kind == WORD:
        if number >= len(WORDS):
            raise FormatError(f"corrupt archive header: no word {number} (a newer chunkpress's archive?)")
        return WORDS[number], pos
    if pos + number > len(data):
        raise FormatError("corrupt archive header: it ends inside a string")
    try:
        return data[pos: pos + number].decode(), pos + number
    except UnicodeDecodeError:
        raise FormatError("corrupt archive header: a string is not UTF-8") from None
