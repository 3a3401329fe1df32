"""The candidate index: finds the best pair each step without rescanning every pair.

Built on the scorers' split loss ``loss_a(N, m, k01) + loss_b(k01, k0, k1)``: pairs are grouped
by joint count k01, each group is a pairing heap ordered by (loss_b, s0, s1), and the best pair
is the minimum over the (few: at most sqrt(2N)) non-empty groups of ``loss_a(k01) + min loss_b``.
A pair's record is found by the index's own hash table, or, over the engine's linked string
(:meth:`PairIndex.follow`), is at the slot the string gave the pair: one table of pairs, not two.
After a merge only the pairs whose k01 changed, and (for scorers that use k0/k1) the pairs that
contain one of the two merged symbols, are rescored: one compiled loop over them per step.

Scorers that do not split (and read N or m) are kept in the same groups and scored in full
each step by walking the heaps (compiled), with the tie rule: smallest loss, then lowest k01,
then smallest (s0, s1).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ..arrays import lexicographic_argmin
from .kernels import kernel
from .linkedstring import LinkedString
from .losses import CompiledScorer, Strategy
from .pairtable import EMPTY as _EMPTY
from .pairtable import HASH_USED as _HASH_USED
from .pairtable import N_SLOTS as _N_SLOTS
from .pairtable import find_or_insert, grow, has_room, new_table, rehash


class IndexArrays(NamedTuple):
    """The pair index's arrays, as compiled code takes them (one named argument, not eleven)."""

    table: np.ndarray  # hash table (s0, s1) -> record slot
    meta: np.ndarray  # counters: slots used, active groups, epoch, ...
    rec: np.ndarray  # one record per pair: parts, k01, loss_b, heap and list links
    groot: np.ndarray  # per k01 group: root of its heap of loss_b
    gsize: np.ndarray  # per group: pairs in its heap
    gactive: np.ndarray  # the k01 values that have a group (at most one a pair: sized like rec)
    gpos: np.ndarray  # per k01: its position in gactive
    lhead: np.ndarray  # per symbol: first pair with it on the left
    rhead: np.ndarray  # per symbol: first pair with it on the right
    scratch: np.ndarray  # work space of the selection
    out: np.ndarray  # slots listed for rescoring

# further meta fields after the pair table's
_N_ACTIVE, _RESCORE_EPOCH = 2, 3


#: One record per pair (64 bytes, one cache line): the heap and list operations touch a few
#: fields of many scattered pairs, so keeping a pair's fields together saves a miss per field.
#: bval: loss_b; k01: joint count (its group); mark: epoch of the last listing; ps0/ps1: the
#: pair; child/sib/prev: pairing-heap links; lnext/lprev, rnext/rprev: the per-symbol lists
#: (pairs by left and by right symbol).
RECORD = np.dtype([
    ("bval", np.float64), ("k01", np.int64), ("mark", np.int64),
    ("ps0", np.int32), ("ps1", np.int32), ("child", np.int32), ("sib", np.int32), ("prev", np.int32),
    ("lnext", np.int32), ("lprev", np.int32), ("rnext", np.int32), ("rprev", np.int32), ("pad", np.int32),
])


def new_records(size: int) -> np.ndarray:
    """Room for ``size`` records; :func:`record_slot` writes each when its slot is made."""
    return np.empty(size, dtype=RECORD)


@numba.njit(cache=True, forceinline=True)
def _fresh(slot, s0, s1, rec):
    """The record at ``slot`` made new: the pair (s0, s1), no count, in no heap or list."""
    r = rec[slot]
    r.bval = 0.0
    r.k01 = 0
    r.mark = 0
    r.ps0 = s0
    r.ps1 = s1
    r.child = _EMPTY
    r.sib = _EMPTY
    r.prev = _EMPTY
    r.lnext = _EMPTY
    r.lprev = _EMPTY
    r.rnext = _EMPTY
    r.rprev = _EMPTY


@numba.njit(cache=True, forceinline=True)
def record_slot(s0, s1, table, meta, rec):
    """Slot of the pair (s0, s1), with a fresh record (no count, in no heap or list) if new."""
    made = meta[_N_SLOTS]
    slot = find_or_insert(table, meta, s0, s1)
    if slot == made:
        _fresh(slot, s0, s1, rec)
    return slot


@numba.njit(cache=True, forceinline=True)
def claim_slot(slot, pairs, meta, rec):
    """Make the records up to ``slot``, a pair slot of a linked string (whose ``pairs`` records
    hold each slot's pair): fresh, for the pair at the same slot. The string hands out slots in
    order, so ``meta``'s slot count stays the number of records made."""
    while meta[_N_SLOTS] <= slot:
        made = meta[_N_SLOTS]
        _fresh(made, pairs[made].ps0, pairs[made].ps1, rec)
        meta[_N_SLOTS] += 1


# ---- pairing heaps, one per k01 group, over the records ----------------------------------------


@numba.njit(cache=True, inline="always")
def _less(x, y, rec):
    bx = rec[x].bval
    by = rec[y].bval
    if bx != by:
        return bx < by
    if rec[x].ps0 != rec[y].ps0:
        return rec[x].ps0 < rec[y].ps0
    return rec[x].ps1 < rec[y].ps1


@numba.njit(cache=True, forceinline=True)
def _link(a, b, rec):
    """Meld two roots; returns the new root."""
    if _less(b, a, rec):
        a, b = b, a
    first = rec[a].child
    rec[b].sib = first
    if first != _EMPTY:
        rec[first].prev = b
    rec[b].prev = a
    rec[a].child = b
    return a


@kernel
def _merge_children(first, rec, scratch):
    """Two-pass merge of a sibling list; returns the root of the result (or -1)."""
    if first == _EMPTY:
        return _EMPTY
    n = 0
    x = first
    while x != _EMPTY:
        y = rec[x].sib
        rec[x].prev = _EMPTY
        rec[x].sib = _EMPTY
        if y == _EMPTY:
            scratch[n] = x
            n += 1
            break
        nxt = rec[y].sib
        rec[y].prev = _EMPTY
        rec[y].sib = _EMPTY
        scratch[n] = _link(x, y, rec)
        n += 1
        x = nxt
    root = scratch[n - 1]
    for i in range(n - 2, -1, -1):
        root = _link(scratch[i], root, rec)
    return root


@kernel
def _heap_insert(g, slot, groot, rec):
    rec[slot].child = _EMPTY
    rec[slot].sib = _EMPTY
    rec[slot].prev = _EMPTY
    r = groot[g]
    groot[g] = slot if r == _EMPTY else _link(r, slot, rec)


@numba.njit(cache=True, forceinline=True)
def _cut(slot, rec):
    """Detach a non-root node (with its subtree) from its parent or left sibling."""
    p = rec[slot].prev
    s = rec[slot].sib
    if rec[p].child == slot:
        rec[p].child = s
    else:
        rec[p].sib = s
    if s != _EMPTY:
        rec[s].prev = p
    rec[slot].sib = _EMPTY
    rec[slot].prev = _EMPTY


@kernel
def _heap_remove(g, slot, groot, rec, scratch):
    if groot[g] == slot:
        groot[g] = _merge_children(rec[slot].child, rec, scratch)
    else:
        _cut(slot, rec)
        sub = _merge_children(rec[slot].child, rec, scratch)
        if sub != _EMPTY:
            groot[g] = _link(groot[g], sub, rec)
    rec[slot].child = _EMPTY
    rec[slot].sib = _EMPTY
    rec[slot].prev = _EMPTY


# ---- groups and per-symbol lists ---------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def _group_add(g, gsize, gactive, gpos, meta):
    if gsize[g] == 0:
        gpos[g] = meta[_N_ACTIVE]
        gactive[meta[_N_ACTIVE]] = g
        meta[_N_ACTIVE] += 1
    gsize[g] += 1


@numba.njit(cache=True, inline="always")
def _group_drop(g, gsize, gactive, gpos, meta):
    gsize[g] -= 1
    if gsize[g] == 0:
        last = gactive[meta[_N_ACTIVE] - 1]
        gactive[gpos[g]] = last
        gpos[last] = gpos[g]
        gpos[g] = _EMPTY
        meta[_N_ACTIVE] -= 1


@numba.njit(cache=True, forceinline=True)
def _lists_add(slot, rec, lhead, rhead):
    """Put a pair first on its left symbol's and its right symbol's list."""
    h = lhead[rec[slot].ps0]
    rec[slot].lnext = h
    rec[slot].lprev = _EMPTY
    if h != _EMPTY:
        rec[h].lprev = slot
    lhead[rec[slot].ps0] = slot
    h = rhead[rec[slot].ps1]
    rec[slot].rnext = h
    rec[slot].rprev = _EMPTY
    if h != _EMPTY:
        rec[h].rprev = slot
    rhead[rec[slot].ps1] = slot


@numba.njit(cache=True, forceinline=True)
def _lists_remove(slot, rec, lhead, rhead):
    p = rec[slot].lprev
    n = rec[slot].lnext
    if p != _EMPTY:
        rec[p].lnext = n
    else:
        lhead[rec[slot].ps0] = n
    if n != _EMPTY:
        rec[n].lprev = p
    p = rec[slot].rprev
    n = rec[slot].rnext
    if p != _EMPTY:
        rec[p].rnext = n
    else:
        rhead[rec[slot].ps1] = n
    if n != _EMPTY:
        rec[n].rprev = p


@numba.njit(cache=True)
def ingest(cs0, cs1, ck01, touched, rescore_parts, floor, x):
    """:func:`ingest_slots` for pairs given as (s0, s1): finds or adds their slots first.
    ``x``: the index's :class:`IndexArrays`."""
    slots = np.empty(cs0.size, dtype=np.int64)
    for i in range(cs0.size):
        slots[i] = record_slot(cs0[i], cs1[i], x.table, x.meta, x.rec)
    return ingest_slots(slots, ck01, touched, rescore_parts, floor, x.meta, x.rec,
                        x.groot, x.gsize, x.gactive, x.gpos, x.lhead, x.rhead, x.scratch, x.out)


@numba.njit(cache=True)
def ingest_claimed(slots, ck01, touched, rescore_parts, floor, pairs, x):
    """:func:`ingest_slots` for pairs at the ``slots`` a linked string gave them (its pair
    records: ``pairs``)."""
    for i in range(slots.size):
        claim_slot(slots[i], pairs, x.meta, x.rec)
    return ingest_slots(slots, ck01, touched, rescore_parts, floor, x.meta, x.rec,
                        x.groot, x.gsize, x.gactive, x.gpos, x.lhead, x.rhead, x.scratch, x.out)


@kernel
def ingest_slots(slots, ck01, touched, rescore_parts, floor, meta, rec,
                 groot, gsize, gactive, gpos, lhead, rhead, scratch, out):
    """Apply new joint counts ``ck01`` to the pairs at ``slots`` and list every pair that needs
    a new loss_b in ``out``.

    Pairs whose k01 changed leave their group's heap (they will be inserted into their new
    group). Pairs that only contain a touched symbol stay in their heap for now and are listed
    after them; the return value is (number listed, number of the first kind). Only pairs with
    k01 >= floor are on the per-symbol lists, so only they are rescored for a touched symbol."""
    meta[_RESCORE_EPOCH] += 1
    epoch = meta[_RESCORE_EPOCH]
    n_out = 0
    for i in range(slots.size):
        slot = slots[i]
        old = rec[slot].k01
        new = ck01[i]
        if old >= floor and rec[slot].mark != epoch:
            _heap_remove(old, slot, groot, rec, scratch)
            _group_drop(old, gsize, gactive, gpos, meta)
        if rescore_parts:
            if old < floor <= new:
                _lists_add(slot, rec, lhead, rhead)
            elif new < floor <= old:
                _lists_remove(slot, rec, lhead, rhead)
        rec[slot].k01 = new
        if rec[slot].mark != epoch:
            rec[slot].mark = epoch
            if new >= floor:
                out[n_out] = slot
                n_out += 1
        elif new >= floor:
            # listed twice in one batch: keep one entry
            found = False
            for j in range(n_out):
                if out[j] == slot:
                    found = True
                    break
            if not found:
                out[n_out] = slot
                n_out += 1
    n_moved = n_out
    if rescore_parts:
        for t in touched:
            slot = lhead[t]
            while slot != _EMPTY:
                if rec[slot].mark != epoch:
                    rec[slot].mark = epoch
                    out[n_out] = slot
                    n_out += 1
                slot = rec[slot].lnext
            slot = rhead[t]
            while slot != _EMPTY:
                if rec[slot].mark != epoch:
                    rec[slot].mark = epoch
                    out[n_out] = slot
                    n_out += 1
                slot = rec[slot].rnext
    return n_out, n_moved


@kernel
def insert_scored(slots, losses, n_moved, floor, meta, rec, groot, gsize, gactive, gpos, scratch):
    """Give rescored pairs their new loss_b. The first ``n_moved`` are out of any heap and go
    into the heap of their k01 group (if it is at least ``floor``); the others are in their heap
    already: a smaller loss is a decrease-key (cut and meld, O(1)), a larger one a remove and
    insert."""
    for i in range(slots.size):
        slot = slots[i]
        g = rec[slot].k01
        value = losses[i]
        if i < n_moved:
            rec[slot].bval = value
            if g < floor:
                continue
            _heap_insert(g, slot, groot, rec)
            _group_add(g, gsize, gactive, gpos, meta)
        elif value < rec[slot].bval:
            rec[slot].bval = value
            if groot[g] != slot:
                _cut(slot, rec)
                groot[g] = _link(groot[g], slot, rec)
        elif value > rec[slot].bval:
            _heap_remove(g, slot, groot, rec, scratch)
            rec[slot].bval = value
            _heap_insert(g, slot, groot, rec)


@numba.njit(cache=True)
def select(full, f_a, f, n, m, floor, counts, gactive, n_active, groot, rec, stack):
    """The best candidate: (slot, loss, k01), or (-1, inf, 0) when no group reaches ``floor``.

    This is the selection rule, written once: the fused loop and :meth:`PairIndex.best` both
    call it. Split scorers: the minimum over k01 groups of ``f_a(n, m, k01)`` plus the group's
    minimum loss_b (its heap root), the lower k01 on equal loss. ``full``: every pair of every
    group is scored by ``f`` (the heaps are walked with ``stack`` as scratch), and the smallest
    (loss, k01, s0, s1) wins."""
    best_slot = -1
    best_loss = np.inf
    best_k = 0
    for i in range(n_active):
        g = gactive[i]
        if g < floor:
            continue
        if not full:
            r = groot[g]
            total = f_a(n, m, g) + rec[r].bval
            if best_slot == -1 or total < best_loss or (total == best_loss and g < best_k):
                best_slot = r
                best_loss = total
                best_k = g
            continue
        top = 0
        stack[top] = groot[g]
        top += 1
        while top > 0:
            top -= 1
            x = stack[top]
            if rec[x].child != _EMPTY:
                stack[top] = rec[x].child
                top += 1
            if x != groot[g] and rec[x].sib != _EMPTY:
                stack[top] = rec[x].sib
                top += 1
            a = rec[x].ps0
            b = rec[x].ps1
            total = f(n, m, g, counts[a], counts[b], a == b)
            if (best_slot == -1 or total < best_loss or (total == best_loss and (
                    g < best_k or (g == best_k and (a < rec[best_slot].ps0 or (
                        a == rec[best_slot].ps0 and b < rec[best_slot].ps1)))))):
                best_slot = x
                best_loss = total
                best_k = g
    return best_slot, best_loss, best_k


@numba.njit(cache=True, inline="always")
def select_by_count(top, floor, gsize, groot):
    """For scorers that order pairs as "most frequent first": the root of the highest non-empty
    group at or below ``top`` (a pointer that only moves down, since no merge creates a pair
    more frequent than itself). Returns (slot, new top); slot -1 below ``floor``."""
    while top > 0 and gsize[top] == 0:
        top -= 1
    if top >= floor:
        return groot[top], top
    return -1, top


#: the pair slots :meth:`PairIndex.settle` scores at a time
SETTLE_BLOCK = 1 << 15
#: the pairs an update takes at a time (see PairIndex.update)
UPDATE_BLOCK = 1 << 15


class PairIndex:
    """Incremental best-pair finder over a compiled scorer (see the module docstring)."""

    def __init__(self, scorer: CompiledScorer, min_count: int = 1):
        self.scorer = scorer
        self.min_count = max(1, int(min_count))
        self.floor = max(self.min_count, scorer.floor)
        self.full = scorer.strategy == Strategy.FULL
        self.rescore_parts = scorer.strategy == Strategy.SPLIT_PARTS
        self.meta = np.zeros(4, dtype=np.int64)
        self.table = new_table(1 << 11)
        cap = 1 << 11
        self.rec = new_records(cap)
        self.scratch = np.full(cap, _EMPTY, dtype=np.int32)
        self.groot = np.full(16, _EMPTY, dtype=np.int32)
        self.gsize = np.zeros(16, dtype=np.int32)  # pairs per group: fewer than 2^31
        self.gactive = np.zeros(cap, dtype=np.int64)
        self.gpos = np.full(16, _EMPTY, dtype=np.int32)
        self.lhead = np.full(512, _EMPTY, dtype=np.int32)
        self.rhead = np.full(512, _EMPTY, dtype=np.int32)
        self._out = np.zeros(cap, dtype=np.int64)
        #: the linked string whose pair slots number the records (None: the index's own table does)
        self.string: LinkedString | None = None
        #: bytes per symbol, for a scorer that reads them (its learner keeps them up to date)
        self.lengths: np.ndarray | None = None

    def _pairs_at(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s0, s1, k01) of the records at ``slots``, field by field: whole records (64 bytes
        a pair) would be tens of MB for a load's every pair."""
        return self.rec["ps0"][slots].astype(np.int64), self.rec["ps1"][slots].astype(np.int64), self.rec["k01"][slots]

    def _lengths_of(self, a: np.ndarray, b: np.ndarray) -> tuple:
        if not self.scorer.uses_lengths:
            return None, None
        assert self.lengths is not None, "a scorer that reads lengths needs the learner's lengths"
        return self.lengths[a], self.lengths[b]

    def follow(self, string: LinkedString) -> None:
        """Number the records by the pair slots of the engine's linked ``string`` (before any
        pair is in the index): every report and the fused loop then name a pair by its slot,
        and the index keeps no hash table of its own."""
        assert self.n_slots == 0, "an index follows a string from the start"
        self.string = string

    @property
    def n_slots(self) -> int:
        """The records made (each has a slot for good)."""
        return int(self.meta[_N_SLOTS])

    # -- capacity ------------------------------------------------------------------------------
    def _reserve(self, n_new: int, max_k: int, max_sym: int) -> None:
        """Room for ``n_new`` more pairs (following a string: for every slot it has room for),
        k01 up to ``max_k`` and symbols up to ``max_sym``."""
        need = self.string.capacities()[0] if self.string is not None else self.n_slots + n_new
        cap = self.rec.size
        if need > cap:
            # grows in place: by half wastes less (a followed string grows by half itself)
            new_cap = need if self.string is not None else max(need, cap * 3 // 2)
            grow(self, "rec", new_cap, None)
            grow(self, "scratch", new_cap, None)
            grow(self, "_out", new_cap, None)
            grow(self, "gactive", new_cap, None)  # a group has a pair: never more groups than slots
        if self.string is None and not has_room(self.table, self.meta, n_new):
            table = new_table(int(self.meta[_HASH_USED]) + n_new, minimum=2 * self.table.shape[0])
            rehash(table, self.rec["ps0"], self.rec["ps1"], self.n_slots)
            self.table = table
        if max_k >= self.groot.size:
            size = max(max_k + 1, 2 * self.groot.size)
            grow(self, "groot", size, _EMPTY)
            grow(self, "gsize", size, 0)
            grow(self, "gpos", size, _EMPTY)
        if max_sym >= self.lhead.size:
            size = max(max_sym + 1, 2 * self.lhead.size)
            grow(self, "lhead", size, _EMPTY)
            grow(self, "rhead", size, _EMPTY)

    def keep_up(self) -> None:
        """Room for every slot and symbol id of the followed string: the compiled loop's
        capacity checks on the string then cover the index."""
        assert self.string is not None
        self._reserve(0, 0, self.string.capacities()[1] - 1)

    def arrays(self) -> IndexArrays:
        """The index's arrays, named, as the compiled loops take them."""
        return IndexArrays(self.table, self.meta, self.rec, self.groot, self.gsize, self.gactive, self.gpos,
                           self.lhead, self.rhead, self.scratch, self._out)

    # -- updates -------------------------------------------------------------------------------
    def update(self, s0, s1, k01, counts: np.ndarray, touched=()) -> None:
        """Record new joint counts for pairs (s0, s1) and rescore what changed.

        ``counts`` are the current symbol counts; ``touched`` the symbols whose count changed.
        """
        s0 = np.ascontiguousarray(s0, dtype=np.int64)
        s1 = np.ascontiguousarray(s1, dtype=np.int64)
        k01 = np.ascontiguousarray(k01, dtype=np.int64)
        touched = np.ascontiguousarray(touched, dtype=np.int64)
        max_sym = max(int(s0.max(initial=0)), int(s1.max(initial=0)), int(touched.max(initial=0)))
        self._reserve(len(s0), int(k01.max(initial=0)), max_sym)
        # a block of pairs at a time: a load's or an opening's every pair would make tens of MB
        # of temporaries; the order does not matter (a heap's root is the least by a total order)
        for lo in range(0, max(len(s0), 1), UPDATE_BLOCK):  # once at least: the touched symbols go last
            hi = lo + UPDATE_BLOCK
            self._update_block(s0[lo:hi], s1[lo:hi], k01[lo:hi], counts, touched[:0] if hi < len(s0) else touched)

    def _update_block(self, s0, s1, k01, counts: np.ndarray, touched: np.ndarray) -> None:
        """:meth:`update` for pairs the index has room for (the symbols ``touched`` rescored last)."""
        if self.string is None:
            n, n_moved = ingest(s0, s1, k01, touched, self.rescore_parts, self.floor, self.arrays())
        else:
            n, n_moved = ingest_claimed(self.string.slots_of(s0, s1), k01, touched, self.rescore_parts, self.floor,
                                        self.string.pair_records, self.arrays())
        if n == 0:
            return
        slots = self._out[:n].copy()
        a, b, k = self._pairs_at(slots)
        losses = self.scorer.losses_b(k, counts[a], counts[b], a == b, *self._lengths_of(a, b))
        insert_scored(
            slots, losses, n_moved, self.floor, self.meta, self.rec,
            self.groot, self.gsize, self.gactive, self.gpos, self.scratch,
        )

    # -- queries -------------------------------------------------------------------------------
    def best(self, N: int, m: int, counts: np.ndarray):
        """(s0, s1, k01, loss) of the best pair, or None when there is no candidate."""
        sc = self.scorer
        slot, loss, _ = select(self.full, sc.loss_a, sc.loss, N, m, self.floor, counts, self.gactive,
                               self.meta[_N_ACTIVE], self.groot, self.rec, self.scratch)
        if slot < 0:
            return None
        r = self.rec[slot]
        return int(r["ps0"]), int(r["ps1"]), int(r["k01"]), float(loss)

    def settle(self, best, N: int, m: int, counts: np.ndarray):
        """The exact best candidate when the run stops: ``best`` compared with the pairs below
        the scorer's ``min_merge_count``, which were not kept up to date while merging."""
        if self.floor <= self.min_count or (best is not None and self.scorer.strategy == Strategy.BY_COUNT):
            return best  # none below, or most frequent first: a pair below is less frequent than best
        low, low_key = None, None
        # loss_a reads N and m, fixed here, and k01, which lies in [min_count, floor): one value each
        loss_a = np.zeros(0) if self.full else self.scorer.losses_a(N, m, np.arange(self.min_count, self.floor))
        # a block of slots at a time: small temporaries reuse the heap's pages (not tens of MB)
        for lo in range(0, self.n_slots, SETTLE_BLOCK):
            k = self.rec["k01"][lo: min(self.n_slots, lo + SETTLE_BLOCK)]
            slots = np.flatnonzero((k >= self.min_count) & (k < self.floor))
            if slots.size == 0:
                continue
            a, b, kk = self._pairs_at(slots + lo)
            k0, k1, same = counts[a], counts[b], a == b
            keys: tuple[np.ndarray, ...]
            if self.full:
                losses = self.scorer.losses(N, m, kk, k0, k1, same)
                keys = (losses, kk, a, b)
            else:
                loss_b = self.scorer.losses_b(kk, k0, k1, same, *self._lengths_of(a, b))
                losses = loss_a[kk - self.min_count] + loss_b
                keys = (losses, kk, loss_b, a, b)
            i = lexicographic_argmin(*keys)
            key = tuple((bool(np.isnan(v)), 0 if np.isnan(v) else v) for v in (x[i] for x in keys))  # NaN last
            if low_key is None or key < low_key:  # the first of equals, as over all slots at once
                low, low_key = (int(a[i]), int(b[i]), int(kk[i]), float(losses[i])), key
        if low is not None and (best is None or low[3] < best[3] or (low[3] == best[3] and low[2] < best[2])):
            return low
        return best
