"""Turn (rules, symbols) back into bytes: each symbol expands to the bytes of its rule tree."""

from __future__ import annotations

from typing import Literal, overload

import numba
import numpy as np
from numpy.typing import ArrayLike

from ..contract import BYTE_SYMBOLS
from ..errors import FormatError
from .limits import check_allocation

#: No symbol may stand for more bytes than this (2^48: far past any real input).
MAX_EXPANSION = 1 << 48


@numba.njit(cache=True)
def _lengths(rules):
    """Expanded length of every symbol; at index 0, -1 if a rule uses a later symbol and -2 if
    a symbol would expand past MAX_EXPANSION bytes."""
    r = rules.shape[0]
    lens = np.ones(BYTE_SYMBOLS + r, dtype=np.int64)
    for k in range(r):
        a = rules[k, 0]
        b = rules[k, 1]
        limit = BYTE_SYMBOLS + k
        if a < 0 or b < 0 or a >= limit or b >= limit:
            lens[0] = -1
            return lens
        lens[BYTE_SYMBOLS + k] = lens[a] + lens[b]
        if lens[BYTE_SYMBOLS + k] > MAX_EXPANSION:
            lens[0] = -2
            return lens
    return lens


@numba.njit(cache=True)
def expand_into(rules, symbols, lens, out):
    stack = np.empty(rules.shape[0] + 2, dtype=np.int64)
    pos = np.int64(0)  # not a literal: _spell_into compiles once for both callers
    for i in range(symbols.size):
        pos = _spell_into(symbols[i], rules, stack, out, pos)
    return pos


@numba.njit(cache=True, forceinline=True)
def _spell_into(symbol, rules, stack, out, pos):
    """Write the bytes of ``symbol`` into ``out`` from ``pos`` (``stack``: scratch of the
    rules' depth); returns the position after them."""
    stack[0] = symbol
    top = 1
    while top > 0:
        top -= 1
        s = stack[top]
        while s >= BYTE_SYMBOLS:
            # walk down the left spine, leaving right children on the stack
            stack[top] = rules[s - BYTE_SYMBOLS, 1]
            top += 1
            s = rules[s - BYTE_SYMBOLS, 0]
        out[pos] = s
        pos += 1
    return pos


@numba.njit(cache=True)
def _expand_with_extras(rules, symbols, lens, extra_bytes, extra_start, out):
    """As :func:`expand_into`, where a symbol ``-1 - k`` stands for the bytes
    ``extra_bytes[extra_start[k]:extra_start[k + 1]]`` (an added token's text)."""
    stack = np.empty(rules.shape[0] + 2, dtype=np.int64)
    pos = np.int64(0)  # not a literal: _spell_into compiles once for both callers
    for i in range(symbols.size):
        s = symbols[i]
        if s < 0:
            k = -1 - s
            for j in range(extra_start[k], extra_start[k + 1]):
                out[pos] = extra_bytes[j]
                pos += 1
            continue
        pos = _spell_into(s, rules, stack, out, pos)
    return pos


def expand_with_extras(rules: np.ndarray, symbols: np.ndarray, extras: list[bytes]) -> bytes:
    """The bytes of ``symbols`` under ``rules``, a symbol ``-1 - k`` standing for ``extras[k]``
    (HF's added tokens): one compiled pass, its output's size checked against the memory limit
    before it is allocated."""
    rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
    symbols = np.ascontiguousarray(symbols, dtype=np.int64)
    lens = symbol_lengths(rules)
    extra_len = np.array([len(e) for e in extras], dtype=np.int64)
    if symbols.size and (symbols.max() >= lens.size or symbols.min() < -len(extras)):
        raise FormatError("the string uses a symbol that no rule defines")
    used = np.where(symbols >= 0, lens[np.maximum(symbols, 0)], extra_len[np.maximum(-1 - symbols, 0)] if extras
                    else 0)
    total = float(used.astype(np.float64).sum())  # no int64 wrap on crafted lengths
    check_allocation(f"{symbols.size:,} tokens that spell {total:,.0f} bytes", int(min(2 * total, 2.0**62)))
    out = bytearray(int(total))
    extra_start = np.concatenate([[0], np.cumsum(extra_len)]).astype(np.int64)
    _expand_with_extras(rules, symbols, lens, np.frombuffer(b"".join(extras) or b"\0", dtype=np.uint8), extra_start,
                        np.frombuffer(out, dtype=np.uint8))
    return bytes(out)


def symbol_lengths(rules: np.ndarray) -> np.ndarray:
    """Expanded byte length of every symbol id (FormatError if a rule refers forward)."""
    rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
    lens = _lengths(rules)
    if lens[0] == -1:
        raise FormatError("a rule refers to a symbol that is not defined before it")
    if lens[0] == -2:
        raise FormatError("a rule expands to more than 2^48 bytes")
    return lens


@overload
def expand(rules: np.ndarray, symbols: ArrayLike, max_length: int | None = None, *,
           buffer: Literal[False] = False) -> bytes: ...
@overload
def expand(rules: np.ndarray, symbols: ArrayLike, max_length: int | None = None, *,
           buffer: Literal[True]) -> bytearray: ...
def expand(rules: np.ndarray, symbols: ArrayLike, max_length: int | None = None, *,
           buffer: bool = False) -> bytes | bytearray:
    """The bytes that ``symbols`` stand for under ``rules``. With ``buffer`` they come in a
    bytearray the caller owns, without the second copy that ``bytes`` costs (the decode path
    of an archive, where the output may be most of the memory limit). Symbols with no rules may
    come as uint8, as a coder of raw bytes returns them, so they are never widened to 8 bytes."""
    rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
    if len(rules) == 0 and isinstance(symbols, np.ndarray) and symbols.dtype == np.uint8:
        if max_length is not None and symbols.size != max_length:
            raise FormatError(f"decoded length {symbols.size} does not match the recorded length {max_length}")
        return bytearray(symbols) if buffer else symbols.tobytes()
    symbols = np.ascontiguousarray(symbols, dtype=np.int64)
    lens = symbol_lengths(rules)
    if symbols.size and (symbols.min() < 0 or symbols.max() >= lens.size):
        raise FormatError("the string uses a symbol that no rule defines")
    # each length is at most 2^48 and there are fewer than 2^31 symbols: sum as Python ints
    # where int64 could wrap (a crafted archive once wrapped to the header's length)
    used = lens[symbols] if symbols.size else lens[:0]
    if used.size and int(used.max()) * used.size >= 1 << 62:
        values, counts = np.unique(used, return_counts=True)
        total = sum(int(v) * int(c) for v, c in zip(values, counts, strict=False))
    else:
        total = int(used.sum())
    if max_length is not None and total != max_length:
        raise FormatError(f"decoded length {total} does not match the recorded length {max_length}")
    # the output (twice for bytes), beside the 8-byte symbols already held
    check_allocation(f"{symbols.size:,} symbols that spell {total:,} bytes", (1 if buffer else 2) * total + 8 * symbols.size)
    out = bytearray(total)
    expand_into(rules, symbols, lens, np.frombuffer(out, dtype=np.uint8))
    return out if buffer else bytes(out)
