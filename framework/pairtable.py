"""An open-addressing hash table from a pair (s0, s1) to a dense slot number, for numba kernels.

Slots are handed out in insertion order and never freed, so slot-indexed arrays (counts,
occurrence heads, heap links) stay valid; callers keep the load factor at or below 1/2.
"""

from __future__ import annotations

import numba
import numpy as np

EMPTY = -1
# fields of the ``meta`` array shared with the callers
N_SLOTS, HASH_USED = 0, 1


@numba.njit(cache=True, inline="always")
def _hash(key, mask):
    h = key * np.int64(-7046029254386353131)  # Fibonacci hashing, wrapping int64 product
    return (h ^ (h >> 31)) & mask


@numba.njit(cache=True)
def find_slot(hkeys, hvals, s0, s1):
    """Slot of (s0, s1), or -1 when the pair was never inserted."""
    key = (np.int64(s0) << 32) | np.int64(s1)
    mask = hkeys.size - 1
    i = _hash(key, mask)
    while True:
        k = hkeys[i]
        if k == key:
            return hvals[i]
        if k == EMPTY:
            return -1
        i = (i + 1) & mask


@numba.njit(cache=True)
def find_or_insert(hkeys, hvals, meta, ps0, ps1, s0, s1):
    """Slot of (s0, s1), inserting the pair (and recording s0, s1 at its slot) if new."""
    key = (np.int64(s0) << 32) | np.int64(s1)
    mask = hkeys.size - 1
    i = _hash(key, mask)
    while True:
        k = hkeys[i]
        if k == key:
            return hvals[i]
        if k == EMPTY:
            slot = meta[N_SLOTS]
            meta[N_SLOTS] += 1
            meta[HASH_USED] += 1
            hkeys[i] = key
            hvals[i] = slot
            ps0[slot] = s0
            ps1[slot] = s1
            return slot
        i = (i + 1) & mask


@numba.njit(cache=True)
def rehash(hkeys, hvals, ps0, ps1, n_slots):
    """Fill an empty (all -1) table with every slot's key."""
    mask = hkeys.size - 1
    for slot in range(n_slots):
        key = (np.int64(ps0[slot]) << 32) | np.int64(ps1[slot])
        i = _hash(key, mask)
        while hkeys[i] != EMPTY:
            i = (i + 1) & mask
        hkeys[i] = key
        hvals[i] = slot


def table_size_for(n_keys: int, minimum: int = 1 << 10) -> int:
    """A power of two at least twice ``n_keys``."""
    size = minimum
    while size < 2 * n_keys:
        size *= 2
    return size


def grown(a: np.ndarray, size: int, fill) -> np.ndarray:
    """A copy of ``a`` extended to ``size`` entries with ``fill``."""
    out = np.full(size, fill, dtype=a.dtype)
    out[: a.size] = a
    return out
