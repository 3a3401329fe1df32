"""LEB128 varints for arrays of non-negative integers (compiled; no Python loop per value)."""

from __future__ import annotations

import numba
import numpy as np

from ..errors import FormatError


@numba.njit(cache=True)
def _encode(values, out):
    n = 0
    for i in range(values.size):
        v = values[i]
        while v >= 0x80:
            out[n] = (v & 0x7F) | 0x80
            v >>= 7
            n += 1
        out[n] = v
        n += 1
    return n


@numba.njit(cache=True)
def _decode(buf, start, count, out):
    """Decode ``count`` varints from ``buf[start:]``; returns the end offset, or -1 if the buffer
    ends early or a value exceeds 63 bits."""
    pos = start
    for i in range(count):
        v = np.int64(0)
        shift = 0
        while True:
            if pos >= buf.size or shift > 56:
                return -1
            byte = np.int64(buf[pos])
            pos += 1
            v |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        out[i] = v
    return pos


def encode_varints(values) -> bytes:
    values = np.ascontiguousarray(values, dtype=np.int64)
    if values.size and values.min() < 0:
        raise ValueError("varints encode non-negative integers only")
    out = np.empty(values.size * 10, dtype=np.uint8)
    return out[: _encode(values, out)].tobytes()


def decode_varints(buf, count: int, start: int = 0) -> tuple[np.ndarray, int]:
    """``count`` values from ``buf`` at ``start``; returns (values, end offset)."""
    data = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    if count < 0 or count > data.size - start:  # every varint takes at least one byte
        raise FormatError(f"truncated data: {count} values announced, {max(data.size - start, 0)} bytes left")
    out = np.empty(count, dtype=np.int64)
    end = _decode(data, start, count, out)
    if end < 0:
        raise FormatError("truncated or malformed varint data")
    return out, end
