"""The reference rewriter: recount and rewrite the whole string with numpy at every merge.

Clear rather than fast (O(N) per merge): it is the executable definition of the counting and
replacement semantics that the fast ``linked`` rewriter must reproduce exactly.
"""

from __future__ import annotations

import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, MergeReport, Rewriter

_SHIFT = np.int64(32)


def counted_pairs(s: np.ndarray, breaks: np.ndarray) -> np.ndarray:
    """Positions i whose pair (s[i], s[i+1]) is counted under the non-overlapping rule."""
    n = len(s)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    valid = ~breaks[:-1]
    same = (s[:-1] == s[1:]) & valid
    idx = np.arange(n - 1)
    chain_start = same.copy()
    chain_start[1:] &= ~same[:-1]
    last_start = np.maximum.accumulate(np.where(chain_start, idx, 0))
    keep = valid & (~same | ((idx - last_start) % 2 == 0))
    return np.flatnonzero(keep)


def pair_table(s: np.ndarray, breaks: np.ndarray):
    """Sorted pair keys (s0 << 32 | s1) and their non-overlapping counts."""
    pos = counted_pairs(s, breaks)
    keys = (s[pos].astype(np.int64) << _SHIFT) | s[pos + 1].astype(np.int64)
    return np.unique(keys, return_counts=True)


class ScanRewriter(Rewriter):
    supports_events = True

    def __init__(self, params=None):
        self._s = np.zeros(0, dtype=np.int32)
        self._breaks = np.zeros(0, dtype=bool)
        self._starts = np.zeros(0, dtype=np.int64)  # each symbol's first byte in the loaded text
        self._counts = np.zeros(BYTE_SYMBOLS, dtype=np.int64)
        self._next_symbol = BYTE_SYMBOLS

    def load(self, data, breaks=None, weights=None):
        if weights is not None:
            raise TypeError("the scan rewriter does not support weights")
        self._s = np.asarray(data).astype(np.int32)
        self._breaks = (
            np.zeros(len(self._s), dtype=bool) if breaks is None else np.asarray(breaks, dtype=bool).copy()
        )
        self._starts = np.arange(len(self._s), dtype=np.int64)
        self._counts = np.bincount(self._s, minlength=BYTE_SYMBOLS).astype(np.int64)
        self._next_symbol = BYTE_SYMBOLS
        self._table = pair_table(self._s, self._breaks)

    @property
    def length(self):
        return len(self._s)

    def symbol_counts(self):
        return self._counts

    def pairs(self):
        keys, counts = self._table
        return keys >> _SHIFT, keys & 0xFFFFFFFF, counts.astype(np.int64)

    def symbols(self):
        return self._s

    def apply(self, s0, s1):
        s, breaks = self._s, self._breaks
        pos = counted_pairs(s, breaks)
        sites = pos[(s[pos] == s0) & (s[pos + 1] == s1)]
        new = self._next_symbol
        self._next_symbol += 1
        s = s.copy()
        s[sites] = new
        breaks = breaks.copy()
        breaks[sites] = breaks[sites + 1]
        keep = np.ones(len(s), dtype=bool)
        keep[sites + 1] = False
        if new >= len(self._counts):
            self._counts = np.concatenate([self._counts, np.zeros(len(self._counts), dtype=np.int64)])
        self._counts[s0] -= len(sites)
        self._counts[s1] -= len(sites)
        self._counts[new] = len(sites)
        return self._rewritten(s[keep], breaks[keep], self._starts[keep], new, len(sites))

    def delete(self, step):
        at = np.flatnonzero(self._s == step.symbol)
        k = step.pieces.size
        repeat = np.where(self._s == step.symbol, k, 1)
        s = np.repeat(self._s, repeat)
        starts = np.repeat(self._starts, repeat)
        breaks = np.zeros(s.size, dtype=bool)
        ends = np.cumsum(repeat) - 1
        breaks[ends] = self._breaks  # a symbol's boundary goes after its last piece
        first = ends[at] - (k - 1)
        for j in range(k):
            s[first + j] = step.pieces[j]
            starts[first + j] += step.offsets[j]
        self._counts[step.symbol] -= at.size
        np.add.at(self._counts, step.pieces, at.size)
        return self._rewritten(s, breaks, starts, step.symbol, at.size)

    def open(self, positions):
        last = np.searchsorted(self._starts, np.asarray(positions, dtype=np.int64), side="right") - 1
        breaks = self._breaks.copy()
        breaks[last] = False
        return self._rewritten(self._s, breaks, self._starts, -1, len(last))

    def _rewritten(self, s, breaks, starts, symbol, sites):
        """Take the new string, and report every pair whose count changed."""
        self._s, self._breaks, self._starts = s, breaks, starts
        old_keys, old_counts = self._table
        self._table = new_keys, new_counts = pair_table(self._s, self._breaks)
        keys = np.union1d(old_keys, new_keys)
        before = _lookup(old_keys, old_counts, keys)
        after = _lookup(new_keys, new_counts, keys)
        changed = keys[before != after]
        return MergeReport(symbol=symbol, sites=sites, s0=changed >> _SHIFT, s1=changed & 0xFFFFFFFF,
                           k01=after[before != after])


def _lookup(keys, counts, query):
    i = np.searchsorted(keys, query)
    i_clipped = np.minimum(i, len(keys) - 1)
    found = (i < len(keys)) & (keys[i_clipped] == query) if len(keys) else np.zeros(len(query), bool)
    return np.where(found, counts[i_clipped] if len(keys) else 0, 0).astype(np.int64)
