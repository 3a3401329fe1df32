"""An open-addressing hash table from a pair (s0, s1) to a dense slot number, for numba kernels.

Each entry is one 16-byte row ``[key, slot]`` of an int64 array, so a probe costs one cache
miss. Slots are handed out in insertion order and never freed, so slot-indexed arrays (counts,
occurrence heads, heap links) stay valid; callers keep the load factor at or below 2/3
(:func:`has_room`): the tables are a large part of the engine's memory.
"""

from __future__ import annotations

import numba
import numpy as np

from .kernels import kernel

EMPTY = -1
# fields of the ``meta`` array shared with the callers
N_SLOTS, HASH_USED = 0, 1
_KEY, _SLOT = 0, 1


@numba.njit(cache=True, inline="always")
def _hash(key, mask):
    h = key * np.int64(-7046029254386353131)  # Fibonacci hashing, wrapping int64 product
    return (h ^ (h >> 31)) & mask


@numba.njit(cache=True, inline="always")
def home_row(table, s0, s1):
    """The row where the probe for (s0, s1) starts: what to prefetch before looking it up."""
    return _hash((np.int64(s0) << 32) | np.int64(s1), table.shape[0] - 1)


@numba.njit(cache=True, forceinline=True)
def find_slot(table, s0, s1):
    """Slot of (s0, s1), or -1 when the pair was never inserted."""
    key = (np.int64(s0) << 32) | np.int64(s1)
    mask = table.shape[0] - 1
    i = _hash(key, mask)
    while True:
        k = table[i, _KEY]
        if k == key:
            return table[i, _SLOT]
        if k == EMPTY:
            return -1
        i = (i + 1) & mask


@numba.njit(cache=True, forceinline=True)
def find_or_insert(table, meta, s0, s1):
    """Slot of (s0, s1), handing out the next slot number if the pair is new (the caller
    records s0 and s1 for its slot)."""
    key = (np.int64(s0) << 32) | np.int64(s1)
    mask = table.shape[0] - 1
    i = _hash(key, mask)
    while True:
        k = table[i, _KEY]
        if k == key:
            return table[i, _SLOT]
        if k == EMPTY:
            slot = meta[N_SLOTS]
            meta[N_SLOTS] += 1
            meta[HASH_USED] += 1
            table[i, _KEY] = key
            table[i, _SLOT] = slot
            return slot
        i = (i + 1) & mask


@numba.njit(cache=True)
def find_slots(table, s0, s1):
    """:func:`find_slot` of each pair (s0[i], s1[i])."""
    slots = np.empty(s0.size, dtype=np.int64)
    for i in range(s0.size):
        slots[i] = find_slot(table, s0[i], s1[i])
    return slots


@kernel
def rehash(table, ps0, ps1, n_slots):
    """Fill an empty table (see :func:`new_table`) with every slot's key."""
    mask = table.shape[0] - 1
    for slot in range(n_slots):
        key = (np.int64(ps0[slot]) << 32) | np.int64(ps1[slot])
        i = _hash(key, mask)
        while table[i, _KEY] != EMPTY:
            i = (i + 1) & mask
        table[i, _KEY] = key
        table[i, _SLOT] = slot


@numba.njit(cache=True, inline="always")
def has_room(table, meta, n_new):
    """Whether ``n_new`` more keys keep the load factor at or below 2/3."""
    return 3 * (meta[HASH_USED] + n_new) <= 2 * table.shape[0]


def new_table(n_keys: int, minimum: int = 1 << 10) -> np.ndarray:
    """An empty table with room for ``n_keys`` at load factor <= 2/3 (a power of two)."""
    size = minimum
    while 2 * size < 3 * n_keys:
        size *= 2
    return np.full((size, 2), EMPTY, dtype=np.int64)


def grown(a: np.ndarray, size: int, fill) -> np.ndarray:
    """A copy of ``a`` extended to ``size`` entries (rows), the new ones set to ``fill`` (a
    value or one record; None leaves them unset, for arrays whose entries are written before
    they are read: their pages are then not touched until used)."""
    out = np.empty((size,) + a.shape[1:], dtype=a.dtype)
    out[: a.shape[0]] = a
    _fill_from(out, a.shape[0], fill)
    return out


def grow(owner, name: str, size: int, fill) -> None:
    """Extend the array ``owner.<name>`` to ``size`` entries (rows), the new ones set to
    ``fill`` (None: unset, as in :func:`grown`). In place (realloc) when nothing else refers to
    the array, which numpy checks: large arrays then grow without a copy and without faulting
    their old pages in again, the main cost of growth on big inputs. Otherwise (a view or
    another reference is alive) by copy, so no outside view is ever left pointing at freed
    memory."""
    a = getattr(owner, name)
    setattr(owner, name, None)
    n = a.shape[0]
    # numpy fills what a resize adds with zeros, unless the array is read-only: touching every
    # new page (and faulting it in) at once, where the slot arrays grow by half and may never
    # use the last of it. Read-only for the resize, the new part is set only where ``fill`` says
    writeable, a.flags.writeable = a.flags.writeable, False
    try:
        a.resize((size,) + a.shape[1:], refcheck=True)
    except ValueError:
        a.flags.writeable = writeable
        a = grown(a, size, fill)
    else:
        a.flags.writeable = writeable
        _fill_from(a, n, fill)
    setattr(owner, name, a)


def _fill_from(a: np.ndarray, n: int, fill) -> None:
    if fill is None:
        return
    if a.dtype.names:  # records: fill through a plain integer view (much faster)
        words = a.view(np.int64).reshape(a.shape[0], -1)
        words[n:] = np.asarray(fill, dtype=a.dtype).reshape(1).view(np.int64)
    else:
        a[n:] = fill
