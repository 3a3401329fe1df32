"""The hash table of bit histories, lpaq's layout: one 16-byte slot per context and 4 levels of a
binary decision tree (a checksum byte, then the 15 bit histories of that nibble's tree), three
candidate slots to a 64-byte cache line, the lowest-priority one replaced on a miss.

    mask = slot_mask(ht)
    hv = slot_hash(ctx, c0)                  # the context at the node whose path is c0
    prefetch_row(ht, slot_base(hv, mask))    # ask for the line ahead
    at = find_slot(ht, hv, mask)             # later: the slot; histories at ht[at + 1:at + 16]
"""

from __future__ import annotations

import numba
import numpy as np

from .hashing import K2, M8, S24, S32, mix64


@numba.njit(cache=True, inline="always")
def slot_mask(ht):
    """The hash table ``ht``'s 16-byte slots, less one: ``hv``'s bits picking a slot."""
    return np.uint64((ht.size >> 4) - 1)


@numba.njit(cache=True, inline="always")
def slot_hash(ctx, c0):
    """Context hash ``ctx`` at node ``c0`` (the bits coded so far after a leading 1, a slot's
    worth at a time): the key of the slot for the next 4 bits."""
    return mix64(ctx + np.uint64(c0) * K2)


@numba.njit(cache=True, inline="always")
def slot_base(hv, mask):
    """Offset of the first of hashed context ``hv``'s 3 candidate slots (one 64-byte line)."""
    return np.int64((hv >> S32) & mask) << 4


@numba.njit(cache=True, forceinline=True)
def find_slot(ht, hv, mask):
    """Offset of the 16-byte slot for hashed context ``hv``: one of 3 slots in a 64-byte line,
    the one whose checksum matches, else the lowest-priority one, cleared."""
    chk = np.uint8((hv >> S24) & M8)
    base = slot_base(hv, mask)
    if ht[base] == chk:
        return base
    b1 = base ^ 16
    if ht[b1] == chk:
        return b1
    b2 = base ^ 32
    if ht[b2] == chk:
        return b2
    best = base
    if ht[b1 + 1] < ht[best + 1]:
        best = b1
    if ht[b2 + 1] < ht[best + 1]:
        best = b2
    for k in range(16):
        ht[best + k] = 0
    ht[best] = chk
    return best
