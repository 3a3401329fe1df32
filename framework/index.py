"""The candidate index: finds the best pair each step without rescanning every pair.

Built on the scorers' split loss ``loss_a(N, m, k01) + loss_b(k01, k0, k1)``: pairs are grouped
by joint count k01, each group is a pairing heap ordered by (loss_b, s0, s1), and the best pair
is the minimum over the (few: at most sqrt(2N)) non-empty groups of ``loss_a(k01) + min loss_b``.
After a merge only the pairs whose k01 changed, and (for scorers that use k0/k1) the pairs that
contain one of the two merged symbols, are rescored: one vectorized scorer call per step.

Scorers that do not split are rescored in full each step (vectorized), with the same tie rule:
smallest loss, then lowest k01, then smallest (s0, s1).
"""

from __future__ import annotations

import numba
import numpy as np

from chunkpress.lists import list_add, list_remove
from chunkpress.pairtable import EMPTY as _EMPTY
from chunkpress.pairtable import HASH_USED as _HASH_USED
from chunkpress.pairtable import N_SLOTS as _N_SLOTS
from chunkpress.pairtable import find_or_insert, grown, new_table, rehash
from chunkpress.scoring import Scorer

# further meta fields after the pair table's
_N_ACTIVE, _EPOCH = 2, 3


# ---- pairing heaps, one per k01 group, over slot-indexed arrays --------------------------------


@numba.njit(cache=True, inline="always")
def _less(x, y, bval, ps0, ps1):
    bx = bval[x]
    by = bval[y]
    if bx != by:
        return bx < by
    if ps0[x] != ps0[y]:
        return ps0[x] < ps0[y]
    return ps1[x] < ps1[y]


@numba.njit(cache=True, inline="always")
def _link(a, b, child, sib, prev, bval, ps0, ps1):
    """Meld two roots; returns the new root."""
    if _less(b, a, bval, ps0, ps1):
        a, b = b, a
    first = child[a]
    sib[b] = first
    if first != _EMPTY:
        prev[first] = b
    prev[b] = a
    child[a] = b
    return a


@numba.njit(cache=True)
def _merge_children(first, child, sib, prev, bval, ps0, ps1, scratch):
    """Two-pass merge of a sibling list; returns the root of the result (or -1)."""
    if first == _EMPTY:
        return _EMPTY
    n = 0
    x = first
    while x != _EMPTY:
        y = sib[x]
        prev[x] = _EMPTY
        sib[x] = _EMPTY
        if y == _EMPTY:
            scratch[n] = x
            n += 1
            break
        nxt = sib[y]
        prev[y] = _EMPTY
        sib[y] = _EMPTY
        scratch[n] = _link(x, y, child, sib, prev, bval, ps0, ps1)
        n += 1
        x = nxt
    root = scratch[n - 1]
    for i in range(n - 2, -1, -1):
        root = _link(scratch[i], root, child, sib, prev, bval, ps0, ps1)
    return root


@numba.njit(cache=True)
def _heap_insert(g, slot, groot, child, sib, prev, bval, ps0, ps1):
    child[slot] = _EMPTY
    sib[slot] = _EMPTY
    prev[slot] = _EMPTY
    r = groot[g]
    groot[g] = slot if r == _EMPTY else _link(r, slot, child, sib, prev, bval, ps0, ps1)


@numba.njit(cache=True, inline="always")
def _cut(slot, child, sib, prev):
    """Detach a non-root node (with its subtree) from its parent or left sibling."""
    p = prev[slot]
    if child[p] == slot:
        child[p] = sib[slot]
    else:
        sib[p] = sib[slot]
    if sib[slot] != _EMPTY:
        prev[sib[slot]] = p
    sib[slot] = _EMPTY
    prev[slot] = _EMPTY


@numba.njit(cache=True)
def _heap_remove(g, slot, groot, child, sib, prev, bval, ps0, ps1, scratch):
    if groot[g] == slot:
        groot[g] = _merge_children(child[slot], child, sib, prev, bval, ps0, ps1, scratch)
    else:
        _cut(slot, child, sib, prev)
        sub = _merge_children(child[slot], child, sib, prev, bval, ps0, ps1, scratch)
        if sub != _EMPTY:
            groot[g] = _link(groot[g], sub, child, sib, prev, bval, ps0, ps1)
    child[slot] = _EMPTY
    sib[slot] = _EMPTY
    prev[slot] = _EMPTY


# ---- groups and per-symbol adjacency -----------------------------------------------------------


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


@numba.njit(cache=True)
def ingest(
    cs0, cs1, ck01, touched, split, uses_parts, floor,
    table, meta, ps0, ps1, k01, bval, child, sib, prev, mark,
    groot, gsize, gactive, gpos, lhead, lnext, lprev, rhead, rnext, rprev, scratch, out,
):
    """:func:`ingest_slots` for pairs given as (s0, s1): finds or adds their slots first."""
    slots = np.empty(cs0.size, dtype=np.int64)
    for i in range(cs0.size):
        slot = find_or_insert(table, meta, cs0[i], cs1[i])
        ps0[slot] = cs0[i]
        ps1[slot] = cs1[i]
        slots[i] = slot
    return ingest_slots(
        slots, ck01, touched, split, uses_parts, floor, meta, ps0, ps1, k01, bval, child, sib,
        prev, mark, groot, gsize, gactive, gpos, lhead, lnext, lprev, rhead, rnext, rprev,
        scratch, out,
    )


@numba.njit(cache=True)
def ingest_slots(
    slots, ck01, touched, split, uses_parts, floor,
    meta, ps0, ps1, k01, bval, child, sib, prev, mark,
    groot, gsize, gactive, gpos, lhead, lnext, lprev, rhead, rnext, rprev, scratch, out,
):
    """Apply new joint counts ``ck01`` to the pairs at ``slots`` and list every pair that needs
    a new loss_b in ``out``.

    Pairs whose k01 changed leave their group's heap (they will be inserted into their new
    group). Pairs that only contain a touched symbol stay in their heap for now and are listed
    after them; the return value is (number listed, number of the first kind). Only pairs with
    k01 >= floor are on the per-symbol lists, so only they are rescored for a touched symbol."""
    meta[_EPOCH] += 1
    epoch = meta[_EPOCH]
    n_out = 0
    for i in range(slots.size):
        slot = slots[i]
        old = k01[slot]
        new = ck01[i]
        if old >= 1 and mark[slot] != epoch and split:
            _heap_remove(old, slot, groot, child, sib, prev, bval, ps0, ps1, scratch)
            _group_drop(old, gsize, gactive, gpos, meta)
        if uses_parts and split:
            if old < floor <= new:
                list_add(slot, ps0[slot], lhead, lnext, lprev)
                list_add(slot, ps1[slot], rhead, rnext, rprev)
            elif new < floor <= old:
                list_remove(slot, ps0[slot], lhead, lnext, lprev)
                list_remove(slot, ps1[slot], rhead, rnext, rprev)
        k01[slot] = new
        if mark[slot] != epoch:
            mark[slot] = epoch
            if new >= 1:
                out[n_out] = slot
                n_out += 1
        elif new >= 1:
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
    if uses_parts and split:
        for t in touched:
            for side in range(2):
                slot = lhead[t] if side == 0 else rhead[t]
                while slot != _EMPTY:
                    nxt = lnext[slot] if side == 0 else rnext[slot]
                    if mark[slot] != epoch:
                        mark[slot] = epoch
                        out[n_out] = slot
                        n_out += 1
                    slot = nxt
    return n_out, n_moved


@numba.njit(cache=True)
def insert_scored(slots, losses, n_moved, meta, ps0, ps1, k01, bval, child, sib, prev, groot,
                  gsize, gactive, gpos, scratch):
    """Give rescored pairs their new loss_b. The first ``n_moved`` are out of any heap and go
    into the heap of their k01 group; the others are in their heap already: a smaller loss is
    a decrease-key (cut and meld, O(1)), a larger one a remove and insert."""
    for i in range(slots.size):
        slot = slots[i]
        g = k01[slot]
        value = losses[i]
        if i < n_moved:
            bval[slot] = value
            _heap_insert(g, slot, groot, child, sib, prev, bval, ps0, ps1)
            _group_add(g, gsize, gactive, gpos, meta)
        elif value < bval[slot]:
            bval[slot] = value
            if groot[g] != slot:
                _cut(slot, child, sib, prev)
                groot[g] = _link(groot[g], slot, child, sib, prev, bval, ps0, ps1)
        elif value > bval[slot]:
            _heap_remove(g, slot, groot, child, sib, prev, bval, ps0, ps1, scratch)
            bval[slot] = value
            _heap_insert(g, slot, groot, child, sib, prev, bval, ps0, ps1)


@numba.njit(cache=True)
def best_of_groups(groups, loss_a, min_count, groot, bval):
    """Slot of the best pair and its loss: min over groups of loss_a + min loss_b; on equal
    loss the lower k01 wins. Returns (-1, inf) when no group qualifies."""
    best_slot = -1
    best_loss = np.inf
    best_k = 0
    for i in range(groups.size):
        g = groups[i]
        if g < min_count:
            continue
        r = groot[g]
        total = loss_a[i] + bval[r]
        if best_slot == -1 or total < best_loss or (total == best_loss and g < best_k):
            best_slot = r
            best_loss = total
            best_k = g
    return best_slot, best_loss


@numba.njit(cache=True)
def best_of_all(slots, losses, k01, ps0, ps1):
    """Lexicographic argmin of (loss, k01, s0, s1) over the given slots."""
    best = -1
    for i in range(slots.size):
        s = slots[i]
        if best == -1:
            best = i
            continue
        b = slots[best]
        li, lb = losses[i], losses[best]
        if li < lb or (
            li == lb
            and (k01[s] < k01[b] or (k01[s] == k01[b] and (ps0[s] < ps0[b] or (ps0[s] == ps0[b] and ps1[s] < ps1[b]))))
        ):
            best = i
    return best


class PairIndex:
    """Incremental best-pair finder over a scorer (see the module docstring)."""

    _SLOT_ARRAYS = ("ps0", "ps1", "k01", "bval", "child", "sib", "prev", "mark",
                    "lnext", "lprev", "rnext", "rprev", "scratch")

    def __init__(self, scorer: Scorer, min_count: int = 1):
        self.scorer = scorer
        self.min_count = max(1, int(min_count))
        self.floor = max(self.min_count, int(getattr(scorer, "min_merge_count", 1)))
        self.split = bool(scorer.splits)
        self.uses_parts = bool(scorer.uses_parts)
        self.meta = np.zeros(4, dtype=np.int64)
        self.table = new_table(1 << 11)
        cap = 1 << 11
        self.ps0 = np.zeros(cap, dtype=np.int32)
        self.ps1 = np.zeros(cap, dtype=np.int32)
        self.k01 = np.zeros(cap, dtype=np.int64)
        self.bval = np.zeros(cap, dtype=np.float64)
        self.mark = np.zeros(cap, dtype=np.int64)
        for name in ("child", "sib", "prev", "lnext", "lprev", "rnext", "rprev", "scratch"):
            setattr(self, name, np.full(cap, _EMPTY, dtype=np.int32))
        self.groot = np.full(16, _EMPTY, dtype=np.int32)
        self.gsize = np.zeros(16, dtype=np.int64)
        self.gactive = np.zeros(16, dtype=np.int64)
        self.gpos = np.full(16, _EMPTY, dtype=np.int32)
        self.lhead = np.full(512, _EMPTY, dtype=np.int32)
        self.rhead = np.full(512, _EMPTY, dtype=np.int32)
        self._out = np.zeros(cap, dtype=np.int64)

    # -- capacity ------------------------------------------------------------------------------
    def _reserve(self, n_new: int, max_k: int, max_sym: int, table_rows: int | None = None) -> None:
        """Room for ``n_new`` more pairs, k01 up to ``max_k`` and symbols up to ``max_sym``; the
        hash table gets ``table_rows`` rows if given, else grows with the pairs."""
        need = int(self.meta[_N_SLOTS]) + n_new
        cap = self.ps0.size
        if need > cap:
            new_cap = max(need, 2 * cap)
            for name in self._SLOT_ARRAYS:
                a = getattr(self, name)
                setattr(self, name, grown(a, new_cap, 0 if a.dtype != np.int32 or name in ("ps0", "ps1") else _EMPTY))
        if table_rows is not None:
            if table_rows > self.table.shape[0]:
                self.table = new_table(0, minimum=table_rows)
                rehash(self.table, self.ps0, self.ps1, int(self.meta[_N_SLOTS]))
        elif 2 * (int(self.meta[_HASH_USED]) + n_new) > self.table.shape[0]:
            self.table = new_table(int(self.meta[_HASH_USED]) + n_new, minimum=2 * self.table.shape[0])
            rehash(self.table, self.ps0, self.ps1, int(self.meta[_N_SLOTS]))
        if max_k >= self.groot.size:
            size = max(max_k + 1, 2 * self.groot.size)
            self.groot = grown(self.groot, size, _EMPTY)
            self.gsize = grown(self.gsize, size, 0)
            self.gactive = grown(self.gactive, size, 0)
            self.gpos = grown(self.gpos, size, _EMPTY)
        if max_sym >= self.lhead.size:
            size = max(max_sym + 1, 2 * self.lhead.size)
            self.lhead = grown(self.lhead, size, _EMPTY)
            self.rhead = grown(self.rhead, size, _EMPTY)

    def reserve_like(self, n_slots: int, n_symbols: int, table_rows: int) -> None:
        """Room for as many pairs as the rewriter has slots, a hash table as large as its, and
        ``n_symbols`` symbol ids: the index never holds more pairs than the rewriter has seen,
        so the compiled loop's capacity checks on the rewriter cover it."""
        self._reserve(max(n_slots - int(self.meta[_N_SLOTS]), 0), 0, n_symbols - 1, table_rows)
        if self._out.size < self.ps0.size:
            self._out = np.zeros(self.ps0.size, dtype=np.int64)

    def kernel_state(self):
        """The arrays of the index, in the order the compiled loops take them."""
        return (self.table, self.meta, self.ps0, self.ps1, self.k01, self.bval,
                self.child, self.sib, self.prev, self.mark, self.groot, self.gsize, self.gactive,
                self.gpos, self.lhead, self.lnext, self.lprev, self.rhead, self.rnext, self.rprev,
                self.scratch, self._out)

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
        if self._out.size < self.ps0.size:
            self._out = np.zeros(self.ps0.size, dtype=np.int64)
        n, n_moved = ingest(
            s0, s1, k01, touched, self.split, self.uses_parts, self.floor,
            self.table, self.meta, self.ps0, self.ps1, self.k01, self.bval,
            self.child, self.sib, self.prev, self.mark,
            self.groot, self.gsize, self.gactive, self.gpos,
            self.lhead, self.lnext, self.lprev, self.rhead, self.rnext, self.rprev,
            self.scratch, self._out,
        )
        if not self.split or n == 0:
            return
        slots = self._out[:n].copy()
        a, b = self.ps0[slots], self.ps1[slots]
        losses = self.scorer.loss_b(self.k01[slots], counts[a], counts[b], a == b)
        insert_scored(
            slots, np.ascontiguousarray(losses, dtype=np.float64), n_moved, self.meta, self.ps0,
            self.ps1, self.k01, self.bval, self.child, self.sib, self.prev,
            self.groot, self.gsize, self.gactive, self.gpos, self.scratch,
        )

    # -- queries -------------------------------------------------------------------------------
    def best(self, N: int, m: int, counts: np.ndarray):
        """(s0, s1, k01, loss) of the best pair, or None when there is no candidate."""
        if self.split:
            groups = self.gactive[: self.meta[_N_ACTIVE]]
            if groups.size == 0:
                return None
            loss_a = np.ascontiguousarray(self.scorer.loss_a(N, m, groups), dtype=np.float64)
            slot, loss = best_of_groups(groups, loss_a, self.floor, self.groot, self.bval)
            if slot < 0:
                return None
        else:
            n_slots = int(self.meta[_N_SLOTS])
            slots = np.flatnonzero(self.k01[:n_slots] >= self.min_count)
            if slots.size == 0:
                return None
            a, b = self.ps0[slots], self.ps1[slots]
            k = self.k01[slots]
            losses = np.ascontiguousarray(
                self.scorer.loss(N, m, k, counts[a], counts[b], a == b), dtype=np.float64
            )
            i = best_of_all(slots, losses, self.k01, self.ps0, self.ps1)
            slot, loss = slots[i], losses[i]
        return int(self.ps0[slot]), int(self.ps1[slot]), int(self.k01[slot]), float(loss)

    def settle(self, best, N: int, m: int, counts: np.ndarray):
        """The exact best candidate when the run stops: ``best`` compared with the pairs below
        the scorer's ``min_merge_count``, which were not kept up to date while merging."""
        if self.floor <= self.min_count:
            return best
        n_slots = int(self.meta[_N_SLOTS])
        k = self.k01[:n_slots]
        slots = np.flatnonzero((k >= self.min_count) & (k < self.floor))
        if slots.size == 0:
            return best
        a, b = self.ps0[slots], self.ps1[slots]
        kk, k0, k1, same = self.k01[slots], counts[a], counts[b], a == b
        if self.split:
            loss_b = np.asarray(self.scorer.loss_b(kk, k0, k1, same), dtype=np.float64)
            losses = np.asarray(self.scorer.loss_a(N, m, kk), dtype=np.float64) + loss_b
            order = np.lexsort((b, a, loss_b, kk, losses))
        else:
            losses = np.asarray(self.scorer.loss(N, m, kk, k0, k1, same), dtype=np.float64)
            order = np.lexsort((b, a, kk, losses))
        i = order[0]
        low = (int(a[i]), int(b[i]), int(kk[i]), float(losses[i]))
        if best is None or low[3] < best[3] or (low[3] == best[3] and low[2] < best[2]):
            return low
        return best
