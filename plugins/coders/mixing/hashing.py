"""Hashing: 64-bit mixing of context values, names for spelled strings, and open-addressing
key tables whose probes are bounded whatever keys a crafted archive holds.

    h = context_hash(tag, a, b)        # a context's hash from two values and its tag
    key = chunk_key(spelling_hash, n)  # the name of a spelled string of n bytes
    slot = table_slot(keys, used, key) # where key is, or goes, in a key table
"""

from __future__ import annotations

import numba
import numpy as np

K1 = np.uint64(0x9E3779B97F4A7C15)
K2 = np.uint64(0xC2B2AE3D27D4EB4F)
K3 = np.uint64(0x165667B19E3779F9)
#: shifts and masks as uint64, so numba keeps the arithmetic unsigned
S24, S29, S32, B8 = np.uint64(24), np.uint64(29), np.uint64(32), np.uint64(8)
M8 = np.uint64(0xFF)
ONE, ZERO = np.uint64(1), np.uint64(0)

#: base of the polynomial string hash that names chunks: H(xy) = H(x) * B^|y| + H(y)
CHUNK_BASE = np.uint64(0x100000001B3)


@numba.njit(cache=True, inline="always")
def mix64(x):
    x = (x ^ (x >> S29)) * K2
    x = (x ^ (x >> S32)) * K3
    return x ^ (x >> S29)


@numba.njit(cache=True, inline="always")
def chunk_key(h, length):
    """The name of a spelled string: its polynomial hash and its length, mixed."""
    return mix64(h + np.uint64(length) * K1)


@numba.njit(cache=True, inline="always")
def context_hash(tag, a, b):
    """A context's hash: two values and the context's tag (no two contexts share one)."""
    return mix64((a * K1 + b) ^ (np.uint64(tag) * K3))


#: the longest run of occupied slots a key table may hold, and so the most probes of any lookup:
#: a table whose keys cluster more (a hash flood) is rebuilt larger with another random seed
MAX_PROBES = 64


@numba.njit(cache=True, forceinline=True)
def table_slot(keys, used, key):
    """Slot of ``key`` in an open-addressing key table: where it is, or the empty slot where it
    goes; -1 after :data:`MAX_PROBES` occupied slots. ``used`` has a power of 2 of slots and
    ``keys[used.size]`` holds the table's random seed, so the slots of a crafted dictionary's
    keys cannot be predicted (which keys a table holds, and so every lookup's answer, does not
    depend on the seed: the archive is the same)."""
    mask = np.uint64(used.size - 1)
    i = np.int64(mix64(key ^ keys[used.size]) & mask)
    for _ in range(MAX_PROBES):
        if not used[i] or keys[i] == key:
            return i
        i = np.int64((np.uint64(i) + ONE) & mask)
    return -1


@numba.njit(cache=True)
def lookup(keys, used, key):
    """Slot of ``key`` in a key table, or -1."""
    i = table_slot(keys, used, key)
    return i if i >= 0 and used[i] else -1


@numba.njit(cache=True)
def longest_run(used):
    """The longest run of occupied slots (cyclic): a lookup probes at most this many plus one."""
    size = used.size
    best = run = 0
    for k in range(2 * size):
        if used[k % size]:
            run += 1
            if run > best:
                best = run
                if best >= size:
                    return best
        else:
            run = 0
    return best
