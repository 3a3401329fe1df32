"""The linked string's records and the region rewrite every operation on it shares.

A node is a byte of the loaded text; its record holds the symbol that starts there, the string
links, and the slot of the pair counted at it. A rewrite anywhere (a merge's site, a deleted
symbol split back into its parts, a boundary opened) uncounts the pairs of a small region
(``recount_region``: the site, its neighbours, and the runs of equal symbols touching them,
whose left-to-right pairing may shift), rewrites the nodes, and counts the region again.
:mod:`.linkedstring` holds the string, its merge, deletions and openings.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .kernels import kernel
from .pairtable import EMPTY, N_SLOTS, find_or_insert

# The kernels are memory-bound (a merge site touches a handful of nodes and pairs scattered over
# the string), so each node and each pair is one record: one cache miss instead of one per field.
#: fields of a node record (int32): symbol, string links, and the slot of the pair counted at
#: the node: >= 0 counted, and its pool entry is live; -(slot + 2) uncounted, but its entry is
#: still on that slot's list (counting the same pair there again reuses it); -1 neither
SYM, NXT, PRV, OSLOT = range(4)
NODE_FIELDS = 4
#: fields of a pool entry (int32): the node, the next entry of the same pair's list
POS, LINK = 0, 1
#: a pair record (36 bytes): count, count before this merge, epoch of the last touch,
#: occurrence-list head (a pool entry), sites (unweighted count), and the pair itself; the
#: candidate index keeps its record of the pair at the same slot
PAIR = np.dtype([
    ("cnt", np.int64), ("oldcnt", np.int64), ("cmark", np.int32), ("head", np.int32),
    ("nsites", np.int32), ("ps0", np.int32), ("ps1", np.int32),
])

#: how many sites ahead the merge kernel asks for a node
PREFETCH_AHEAD = 8

# meta fields after the pair table's; META_ROOM: sites of the next merge (what it needs room for,
# see room_for); META_POOL_USED: entries handed out; META_LIVE: nodes counted (live entries);
# META_REBUILDS: times the pool was rebuilt
META_TOUCH_EPOCH, META_N_CHANGED, META_LENGTH, META_ROOM, META_POOL_USED, META_LIVE, META_REBUILDS = 2, 3, 4, 5, 6, 7, 8
META_FIELDS = 9


class StringArrays(NamedTuple):
    """A LinkedString's arrays, as compiled code takes them (one named argument, not ten)."""

    node: np.ndarray  # node records: symbol, links, counted slot (SYM, NXT, PRV, OSLOT)
    pool: np.ndarray  # occurrence-list entries (POS, LINK)
    table: np.ndarray  # hash table (s0, s1) -> pair slot
    pairs: np.ndarray  # pair records (PAIR)
    changed: np.ndarray  # slots whose count the last merge changed
    meta: np.ndarray  # counters (pair table's, then META_TOUCH_EPOCH ... META_REBUILDS)
    weight: np.ndarray  # per node: how many times it counts (word counts), or empty
    zcache: np.ndarray  # per symbol: cached zero-count lookups
    counts: np.ndarray  # per symbol: occurrences (weighted)
    sites: np.ndarray  # a merge's sites, sort scratch


@numba.njit(cache=True, inline="always")
def touch(slot, pairs, changed, meta):
    if pairs[slot].cmark != meta[META_TOUCH_EPOCH]:
        pairs[slot].cmark = meta[META_TOUCH_EPOCH]
        pairs[slot].oldcnt = pairs[slot].cnt
        changed[meta[META_N_CHANGED]] = slot
        meta[META_N_CHANGED] += 1


@numba.njit(cache=True, inline="always")
def uncount(q, node, pairs, changed, meta, weight, merged):
    """Take the pair at node q out of its count. Its list entry stays, marked stale by the node
    (the merged pair's whole list is dropped at the end of the merge)."""
    slot = node[q, OSLOT]
    touch(slot, pairs, changed, meta)
    node[q, OSLOT] = EMPTY if slot == merged else -(slot + 2)
    pairs[slot].cnt -= weight[q] if weight.size else 1
    pairs[slot].nsites -= 1
    meta[META_LIVE] -= 1


@numba.njit(cache=True, forceinline=True)
def slot_of(x, y, table, meta, pairs):
    """Slot of (x, y), recording the pair in a new slot's record. (Written only then: storing
    it at every count made counting several times slower on AMD Zen, as measured.)"""
    made = meta[N_SLOTS]
    slot = find_or_insert(table, meta, x, y)
    if slot == made:  # new: records are not filled in advance
        pairs[slot].cnt = 0
        pairs[slot].oldcnt = 0
        pairs[slot].cmark = -1  # no epoch yet: its first count touches it
        pairs[slot].head = EMPTY
        pairs[slot].nsites = 0
        pairs[slot].ps0 = x
        pairs[slot].ps1 = y
    return slot


@numba.njit(cache=True, forceinline=True)
def pair_slot(x, y, z, zcache, table, meta, pairs):
    """Slot of (x, y). Pairs with the new symbol z go through ``zcache`` first: a merge's sites
    mostly share a few neighbours, and a row of this small array is cheaper than a probe of the
    large hash table. Rows are valid for the merge (epoch) that wrote them."""
    if y == z:
        col = 0
        key = x
    elif x == z:
        col = 2
        key = y
    else:
        return slot_of(x, y, table, meta, pairs)
    if zcache[key, col] == meta[META_TOUCH_EPOCH]:
        return zcache[key, col + 1]
    slot = slot_of(x, y, table, meta, pairs)
    zcache[key, col] = meta[META_TOUCH_EPOCH]
    zcache[key, col + 1] = slot
    return slot


@numba.njit(cache=True, inline="always")
def append_node(q, slot, node, pool, pairs, meta):
    """A new entry for node q, first on ``slot``'s list. A full pool is rebuilt first: at most
    one live entry per node, and the pool holds more entries than there are nodes, so a rebuild
    always frees room (and, with a quarter of headroom, rebuilds are rare: amortized O(1)).
    No merge, however degenerate, can write past the pool."""
    if meta[META_POOL_USED] >= pool.shape[0]:
        rebuild_pool(node, pool, pairs, meta)
    append_entry(q, slot, pool, pairs, meta)


@numba.njit(cache=True, inline="always")
def append_entry(q, slot, pool, pairs, meta):
    e = meta[META_POOL_USED]
    meta[META_POOL_USED] += 1
    pool[e, POS] = q
    pool[e, LINK] = pairs[slot].head
    pairs[slot].head = e


@numba.njit(cache=True, forceinline=True)
def count_at(q, slot, node, pool, pairs, changed, meta, weight):
    """Count the pair (x, y) at node q, whose slot is ``slot``. A pair at a node never comes
    back once it changed (symbols are only replaced by new ones), so the only stale entry that
    can name q on this slot's list is its own last one, which is reused."""
    touch(slot, pairs, changed, meta)
    if node[q, OSLOT] != -(slot + 2):
        append_node(q, slot, node, pool, pairs, meta)
    node[q, OSLOT] = slot
    pairs[slot].cnt += weight[q] if weight.size else 1
    pairs[slot].nsites += 1
    meta[META_LIVE] += 1


@numba.njit(cache=True, forceinline=True)
def recount_region(start, off, after, add, merged, z, zcache, node, pool, table, pairs, changed, meta, weight):
    """Uncount (add=False) or count (add=True) the pairs from node ``start``, at offset ``off``
    in its run of equal symbols, up to the node ``after`` (exclusive; -1 = end of list). A pair
    (x, x) counts at even run offsets."""
    q = start
    while True:
        r = node[q, NXT]
        if r == EMPTY or r == after:
            return
        x = node[q, SYM]
        y = node[r, SYM]
        if x != y or off % 2 == 0:
            if add:
                count_at(q, pair_slot(x, y, z, zcache, table, meta, pairs), node, pool, pairs, changed, meta, weight)
            else:
                uncount(q, node, pairs, changed, meta, weight, merged)
        off = off + 1 if x == y else 0
        q = r


@numba.njit(cache=True, inline="always")
def run_parity(q, node):
    """The parity of live node q's offset in its run of equal symbols, read off its predecessor:
    1 where that predecessor holds the same symbol and a counted pair (a pair (x, x) is counted
    exactly at even offsets), else 0. Walking back to the run's start instead made periodic
    input quadratic (in abab... each site of the first merge walked the whole run to its left)."""
    p = node[q, PRV]
    return 1 if p != EMPTY and node[p, SYM] == node[q, SYM] and node[p, OSLOT] >= 0 else 0


@numba.njit(cache=True, inline="always")
def region_start(i, node):
    """(start, its run offset's parity) of the region a rewrite at node i recounts: the left
    neighbour, or i itself at the start of a segment."""
    left = node[i, PRV]
    if left == EMPTY:
        return i, 0
    return left, run_parity(left, node)


@numba.njit(cache=True, forceinline=True)
def region_bounds(i, node):
    """(start, its run offset's parity, after) of the region around node i that a rewrite at i
    recounts: from :func:`region_start` to past the run that holds the right neighbour."""
    start, off = region_start(i, node)
    after = node[i, NXT]
    if after != EMPTY:
        s = node[after, SYM]
        while after != EMPTY and node[after, SYM] == s:
            after = node[after, NXT]
    return start, off, after


@numba.njit(cache=True, inline="always")
def unlink(j, node):
    p = node[j, PRV]
    n = node[j, NXT]
    node[p, NXT] = n
    if n != EMPTY:
        node[n, PRV] = p
    node[j, SYM] = EMPTY
    node[j, NXT] = EMPTY
    node[j, PRV] = EMPTY


@kernel
def rebuild_pool(node, pool, pairs, meta):
    """Rebuild every list from the nodes, dropping the stale entries: one pass in string order
    (so each list comes out in reverse string order, as a merge wants it)."""
    for slot in range(meta[N_SLOTS]):
        pairs[slot].head = EMPTY
    meta[META_POOL_USED] = 0
    meta[META_REBUILDS] += 1
    for q in range(node.shape[0]):
        slot = node[q, OSLOT]
        if slot >= 0:
            append_entry(q, slot, pool, pairs, meta)
        else:
            node[q, OSLOT] = EMPTY
