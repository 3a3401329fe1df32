"""The compiled pieces of the block-sorting coder (``bwt-cm``): LZP, the inverse transform and
the model that codes a block-sorted text.

    n = lzp_encode(data, out, lut, min_len)     # -1 where LZP would not shrink the block
    n = lzp_decode(coded, out, lut, min_len)    # -1 on a corrupt stream
    primary = sort_block(data, sa, last, rows)  # the last column, from a suffix array
    inverse_bwt(last, primary, rows, lf, counts, out)   # the block from its last column
    code_sorted(decode, data, n, tables, ac, out, inp)   # code (or decode) n sorted bytes

The suffix array is libdivsufsort's (pydivsufsort): ``last`` is the last column of the sorted
rotations of the block and an end marker, without the marker, and ``primary`` is where the
marker stood.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from chunkpress.plugin import long_kernel, prefetch_row

from .mixing.arithmetic import AC, code_bit_scaled
from .mixing.states import RATE

#: the LZP escape byte: a match follows (its length), or 255 for the byte itself
LZP_ESCAPE = 0xF2
#: log2 of the LZP table's entries (the last position of each hashed order-4 context)
LZP_TABLE_BITS = 18


@numba.njit(cache=True, forceinline=True)
def _lzp_predict(lut, a, i):
    """Where the four bytes before ``i`` last occurred (the position after them; 0: never),
    recording ``i`` in their place: the one lookup both sides make per coded unit, so the
    decoder keeps the encoder's table."""
    ctx = (np.int64(a[i - 1]) | (np.int64(a[i - 2]) << 8) | (np.int64(a[i - 3]) << 16)
           | (np.int64(a[i - 4]) << 24))
    h = ((ctx >> 15) ^ ctx ^ (ctx >> 3)) & ((1 << LZP_TABLE_BITS) - 1)
    ref = np.int64(lut[h])
    lut[h] = i
    return ref


@long_kernel
def lzp_encode(data, out, lut, min_len):
    """Replace each run of at least ``min_len`` bytes that repeats what followed the last
    occurrence of its order-4 context by the escape and the run's length; an escape byte in
    the text, where a context has been seen, is doubled (escape, 255). Returns the coded length,
    or -1 where it is not shorter than the input (the block is then sorted as it is)."""
    n = data.size
    lut[:] = 0
    if n < 4 + min_len:
        return -1
    for k in range(4):
        out[k] = data[k]
    i = 4
    o = 4
    limit = out.size - 8
    while i < n:
        if o >= limit:
            return -1
        ref = _lzp_predict(lut, data, i)
        if ref > 0:
            length = 0
            last = min_len - 1  # most candidates differ somewhere: their last byte says so at once
            if i + last < n and data[ref + last] == data[i + last]:
                while i + length < n and length < min_len and data[ref + length] == data[i + length]:
                    length += 1
            if length == min_len:
                while i + length < n and data[ref + length] == data[i + length]:
                    length += 1
                i += length
                out[o] = LZP_ESCAPE
                o += 1
                length -= min_len
                while length >= 254:
                    if o >= limit:
                        return -1
                    out[o] = 254
                    o += 1
                    length -= 254
                out[o] = length
                o += 1
                continue
            c = data[i]
            out[o] = c
            o += 1
            if c == LZP_ESCAPE:
                out[o] = 255
                o += 1
        else:
            out[o] = data[i]
            o += 1
        i += 1
    return o if o < n else -1


@long_kernel
def lzp_decode(coded, out, lut, min_len):
    """The inverse of :func:`lzp_encode` into ``out`` (exactly as long as the block); -1 on a
    stream that is truncated, refers outside the block or does not fill it exactly."""
    n = out.size
    m = coded.size
    lut[:] = 0
    if n < 4 or m < 4:
        return -1
    for k in range(4):
        out[k] = coded[k]
    i = 4
    o = 4
    while i < m:
        if o >= n:
            return -1
        ref = _lzp_predict(lut, out, o)
        c = coded[i]
        i += 1
        if ref > 0 and c == LZP_ESCAPE:
            if i >= m:
                return -1
            if coded[i] == 255:
                out[o] = LZP_ESCAPE
                o += 1
                i += 1
                continue
            length = min_len
            while True:
                if i >= m:
                    return -1
                step = np.int64(coded[i])
                i += 1
                length += step
                if step != 254:
                    break
            if o + length > n:
                return -1
            for k in range(length):  # the source may overlap what this loop writes, as in LZ77
                out[o + k] = out[ref + k]
            o += length
        else:
            out[o] = c
            o += 1
    return o if o == n else -1


#: the most independent walks that invert one block (their cache misses overlap), one for each
#: MiB of sorted bytes: a small block inverts fast in one walk and saves their rows
MAX_WALKS = 16


def walk_count(n: int) -> int:
    """Walks for ``n`` sorted bytes (a function of the block head, so both sides agree)."""
    return max(1, min(MAX_WALKS, n >> 20))


@long_kernel
def sort_block(data, sa, last, rows):
    """The block's last column (the marker left out) from its suffix array ``sa``, into
    ``last``; ``rows[j]`` gets the row of the rotation that starts at walk j + 1's first byte
    (see :func:`walk_starts`). Returns the marker's row."""
    n = data.size
    step = walk_step(n, rows.size + 1)
    last[0] = data[n - 1]  # row 0: the rotation that starts at the marker
    primary = 0
    for i in range(n):
        if i + 32 < n:
            prefetch_row(data, max(0, sa[i + 32] - 1))  # the gather's misses overlap
        s = np.int64(sa[i])
        row = i + 1
        if s == 0:
            primary = row
        else:
            last[row - 1 if primary else row] = data[s - 1]
        if s > 0 and s % step == 0 and s // step <= rows.size:
            rows[s // step - 1] = row
    return primary


@numba.njit(cache=True, inline="always")
def walk_step(n, walks):
    """Bytes per walk (the last walk takes the rest)."""
    return max(1, -(-n // walks))


@long_kernel
def inverse_bwt(last, primary, rows, lf, counts, out):
    """The block whose sorted rotations (with an end marker) end in ``last`` (the marker, at
    ``primary``, left out), into ``out``; False where a walk meets the marker (a corrupt marker,
    row or column). ``rows``: the rows where walks 1.. start (from :func:`sort_block`); walk j
    writes its bytes backwards from the next walk's first byte, the last walk from row 0, so the
    walks run interleaved. Scratch: ``lf``, ``last.size + 1`` int32, and ``counts``, 257 int64.
    The caller checks that ``0 < primary <= last.size`` and every row is at most that."""
    n = last.size
    counts[:] = 0
    for k in range(n):
        counts[np.int64(last[k]) + 1] += 1
    start = 1  # row 0 of the first column is the marker
    for c in range(257):
        t = counts[c]
        counts[c] = start
        start += t
    # lf[row] = the row that starts with this row's last character
    for row in range(n + 1):
        if row == primary:
            lf[row] = 0
            continue
        sym = np.int64(last[row - 1 if row > primary else row]) + 1
        lf[row] = counts[sym]
        counts[sym] += 1
    walks = rows.size + 1
    step = walk_step(n, walks)
    # walk j covers [j * step, min(n, (j + 1) * step)), from that end down
    heads = counts[:walks]  # reuse the scratch: each walk's current row
    for j in range(walks):
        heads[j] = rows[j] if j < walks - 1 else 0
    longest = min(step, n)
    for t in range(longest):
        for j in range(walks):
            end = min(n, (j + 1) * step)
            k = end - 1 - t
            if k < j * step:
                continue
            row = heads[j]
            if row == primary:
                return False
            out[k] = last[row - 1 if row > primary else row]
            heads[j] = lf[row]
    return True


class SortedTables(NamedTuple):
    """The model's adaptive tables, all P(1) in 1/65536, each looked up by the bits so far of
    the byte and: ``order0``, nothing more; ``order1``, the byte before (and, as a second
    estimate, the byte before that), with ``order1_seen`` counting its updates (up to 30);
    ``sse``, 17 knots over the mixed estimate, by whether the last two bytes were equal and
    whether the bits so far agree with the byte before (in a sorted text, the byte that most
    often comes next; bwt_cm_notes.md has what each piece is worth)."""

    order0: np.ndarray
    order1: np.ndarray
    order1_seen: np.ndarray
    sse: np.ndarray


def sorted_tables() -> SortedTables:
    knots = np.array([(k << 12) - (k == 16) for k in range(17)], dtype=np.uint16)
    return SortedTables(order0=np.full(256, 1 << 15, np.uint16), order1=np.full(65536, 1 << 15, np.uint16),
                        order1_seen=np.zeros(65536, np.uint8), sse=np.tile(knots, 4 * 256))


@numba.njit(cache=True, inline="always")
def _toward(t, i, bit, rate):
    """Move t[i] (P(1) in 1/65536) a 2^-rate step toward ``bit``."""
    v = np.int64(t[i])
    if bit:
        t[i] = v + ((65535 - v) >> rate)
    else:
        t[i] = v - (v >> rate)


@numba.njit(cache=True, inline="always")
def _toward_counted(t, seen, i, bit, rate):
    """Move t[i] toward ``bit`` by 1/(n + 1.5) after n updates, at least 2^-rate: a context
    learns fast from its first bits (small files gain most)."""
    n = seen[i]
    step = max(RATE[n], 65536 >> rate)
    v = np.int64(t[i])
    t[i] = v + ((((bit << 16) - bit - v) * step) >> 16)
    if n < 30:
        seen[i] = n + 1


@numba.njit(cache=True, inline="always")
def _refine(sse, ctx, p):
    """The SSE map's estimate for ``p`` in context ``ctx``, between its two nearest knots (the
    lower knot's index is returned too: both move after the bit)."""
    j = ctx * 17 + (p >> 12)
    x1 = np.int64(sse[j])
    return x1 + (((np.int64(sse[j + 1]) - x1) * (p & 4095)) >> 12), j


@long_kernel
def code_sorted(decode, data, n, tables, ac, out, inp):
    """Code ``data[:n]`` (or decode into it) bit by bit, most significant first.

    A block-sorted text is runs of the same byte, so the context is the byte before, the one
    before that, whether they were equal, and whether this byte follows the one before so far.
    The order-0 and the two order-1 estimates are mixed with fixed weights in the probability
    domain (where 16-bit precision holds for the long runs) and refined by an SSE map. Returns
    the bytes coded; fewer when the coder is stopped or a decoder's input runs out
    (``ac[AC.OVERRUN]``)."""
    o0 = tables.order0
    o1 = tables.order1
    seen = tables.order1_seen
    sse = tables.sse
    c1 = 0
    c2 = 0
    run = 0
    for i in range(n):
        if ac[AC.OVERRUN]:
            return i
        run = run + 1 if c1 == c2 else 0
        flag = 512 if run > 1 else 0
        c = 0 if decode else np.int64(data[i])
        ctx = 1
        for b in range(7, -1, -1):
            i1 = (c1 << 8) | ctx
            i2 = (c2 << 8) | ctx
            p = ((np.int64(o0[ctx]) + o1[i1]) * 7 + 2 * np.int64(o1[i2])) >> 4
            agree = 256 if ((c1 | 256) >> (b + 1)) == ctx else 0
            by_run, j = _refine(sse, flag | agree | ctx, p)
            q = max(1, (3 * by_run + p) >> 2)  # at most 65535
            bit = code_bit_scaled(decode, ac, out, inp, (c >> b) & 1, q, 16)
            _toward(o0, ctx, bit, 2)
            _toward_counted(o1, seen, i1, bit, 4)
            _toward(sse, j, bit, 6)
            _toward(sse, j + 1, bit, 6)
            ctx = (ctx << 1) | bit
        c2 = c1
        c1 = ctx & 255
        if decode:
            data[i] = c1
    return n
