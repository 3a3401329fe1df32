"""The fast rewriter: an incremental doubly-linked string with per-pair occurrence lists.

The string lives in numpy arrays whose indices never move: a merge writes the new symbol at the
left node and unlinks the right one in O(1). Every pair keeps its non-overlapping count and its
counted occurrence positions (a list threaded through ``onext``/``oprev``). A merge visits only
its sites: at each, the pairs of a small region (the site, its neighbours, and the runs of equal
symbols touching them, whose left-to-right pairing may shift) are uncounted, the string is
rewritten, and the region is counted again. All of it runs in numba kernels.

Memory: 26 bytes per input symbol plus about 60 bytes per distinct pair.
"""

from __future__ import annotations

import numba
import numpy as np

import chunkpress
from chunkpress import index as ix
from chunkpress.codelength import EXACT_SUM_LIMIT, merge_sum_delta, parts_from_sum, string_log_sum
from chunkpress.pairtable import EMPTY, HASH_USED, N_SLOTS, find_or_insert, find_slot, grown, rehash, table_size_for
from chunkpress.rewriting import BYTE_SYMBOLS, MergeReport, Rewriter

# meta fields after the pair table's
_EPOCH, _N_CHANGED, _LENGTH = 2, 3, 4


@numba.njit(cache=True, inline="always")
def _touch(slot, cnt, cmark, oldcnt, changed, meta):
    if cmark[slot] != meta[_EPOCH]:
        cmark[slot] = meta[_EPOCH]
        oldcnt[slot] = cnt[slot]
        changed[meta[_N_CHANGED]] = slot
        meta[_N_CHANGED] += 1


@numba.njit(cache=True, inline="always")
def _uncount(q, onext, oprev, oslot, head, cnt, cmark, oldcnt, changed, meta):
    slot = oslot[q]
    _touch(slot, cnt, cmark, oldcnt, changed, meta)
    a = oprev[q]
    b = onext[q]
    if a != EMPTY:
        onext[a] = b
    else:
        head[slot] = b
    if b != EMPTY:
        oprev[b] = a
    oslot[q] = EMPTY
    cnt[slot] -= 1


@numba.njit(cache=True, inline="always")
def _count(q, x, y, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark, oldcnt, changed, meta):
    slot = find_or_insert(hkeys, hvals, meta, ps0, ps1, x, y)
    _touch(slot, cnt, cmark, oldcnt, changed, meta)
    h = head[slot]
    onext[q] = h
    oprev[q] = EMPTY
    if h != EMPTY:
        oprev[h] = q
    head[slot] = q
    oslot[q] = slot
    cnt[slot] += 1


@numba.njit(cache=True)
def _region(start, after, add, sym, nxt, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt,
            cmark, oldcnt, changed, meta):
    """Uncount (add=False) or count (add=True) the pairs from run start ``start`` up to the
    node ``after`` (exclusive; -1 = end of list). A pair (x, x) counts at even run offsets."""
    q = start
    off = 0
    while True:
        r = nxt[q]
        if r == EMPTY or r == after:
            return
        x = sym[q]
        y = sym[r]
        if x != y or off % 2 == 0:
            if add:
                _count(q, x, y, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt,
                       cmark, oldcnt, changed, meta)
            else:
                _uncount(q, onext, oprev, oslot, head, cnt, cmark, oldcnt, changed, meta)
        off = off + 1 if x == y else 0
        q = r


@numba.njit(cache=True)
def count_all(sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark,
              oldcnt, changed, meta):
    """Count every pair of a freshly loaded string (each list segment from its first node)."""
    for q in range(sym.size):
        if prv[q] == EMPTY:
            _region(q, EMPTY, True, sym, nxt, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head,
                    cnt, cmark, oldcnt, changed, meta)


@numba.njit(cache=True, inline="always")
def _unlink(j, sym, nxt, prv):
    p = prv[j]
    n = nxt[j]
    nxt[p] = n
    if n != EMPTY:
        prv[n] = p
    sym[j] = EMPTY
    nxt[j] = EMPTY
    prv[j] = EMPTY


@numba.njit(cache=True)
def merge(a, b, z, sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark,
          oldcnt, changed, meta, counts, sites):
    """Replace every counted occurrence of (a, b) by z, left to right. Returns the site count;
    the slots whose count changed are in ``changed[:meta[_N_CHANGED]]``."""
    meta[_EPOCH] += 1
    meta[_N_CHANGED] = 0
    slot_ab = find_slot(hkeys, hvals, a, b)
    if slot_ab == EMPTY:
        return 0
    n = 0
    q = head[slot_ab]
    while q != EMPTY:
        sites[n] = q
        n += 1
        q = onext[q]
    order = np.sort(sites[:n])
    replaced = 0
    for t in range(n):
        i = order[t]
        if sym[i] != a:
            continue
        j = nxt[i]
        if j == EMPTY or sym[j] != b or oslot[i] != slot_ab:
            continue
        # region start: the first node of the run that holds the left neighbour
        left = prv[i]
        start = i
        if left != EMPTY:
            start = left
            s = sym[left]
            while prv[start] != EMPTY and sym[prv[start]] == s:
                start = prv[start]
        # the rewritten part ends at j, or for (a, a) at the end of the run of a's
        last = j
        if a == b:
            last = i
            while nxt[last] != EMPTY and sym[nxt[last]] == a:
                last = nxt[last]
        # region end: past the run that holds the right neighbour
        after = nxt[last]
        if after != EMPTY:
            s = sym[after]
            while after != EMPTY and sym[after] == s:
                after = nxt[after]
        _region(start, after, False, sym, nxt, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head,
                cnt, cmark, oldcnt, changed, meta)
        if a != b:
            sym[i] = z
            _unlink(j, sym, nxt, prv)
            replaced += 1
        else:
            end = nxt[last]
            q = i
            while q != end:
                r = nxt[q]
                if r == end:
                    break
                sym[q] = z
                _unlink(r, sym, nxt, prv)
                replaced += 1
                q = nxt[q]
        _region(start, after, True, sym, nxt, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head,
                cnt, cmark, oldcnt, changed, meta)
    counts[a] -= replaced
    counts[b] -= replaced
    counts[z] = replaced
    meta[_LENGTH] -= replaced
    return replaced


@numba.njit(cache=True)
def changed_pairs(changed, n_changed, cnt, oldcnt, ps0, ps1):
    """(s0, s1, new count) of the touched slots whose count really changed."""
    keep = 0
    for t in range(n_changed):
        if cnt[changed[t]] != oldcnt[changed[t]]:
            keep += 1
    s0 = np.empty(keep, dtype=np.int64)
    s1 = np.empty(keep, dtype=np.int64)
    k = np.empty(keep, dtype=np.int64)
    i = 0
    for t in range(n_changed):
        slot = changed[t]
        if cnt[slot] != oldcnt[slot]:
            s0[i] = ps0[slot]
            s1[i] = ps1[slot]
            k[i] = cnt[slot]
            i += 1
    return s0, s1, k


# status codes of run_most_frequent
STOPPED, BATCH_DONE, NEED_ROOM = 0, 1, 2


@numba.njit(cache=True)
def run_most_frequent(
    batch, rules_done, max_rules, stop_below, min_count, want_trace, acc,
    sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark, oldcnt,
    changed, meta, counts, sites,
    x_hkeys, x_hvals, x_meta, x_ps0, x_ps1, x_k01, x_bval, x_child, x_sib, x_prev, x_mark,
    groot, gsize, gactive, gpos, lhead, lnext, lprev, rhead, rnext, rprev, scratch, out,
    rules_out, trace_out,
):
    """Up to ``batch`` merges of the most frequent pair (ties: smallest (s0, s1)), selection,
    rewrite, index update and trace row all in this kernel: no Python per merge.

    Returns (merges done, rows written, status): STOPPED (no pair, count below ``stop_below``
    or ``max_rules`` reached; the last row is the rejected candidate), BATCH_DONE, or NEED_ROOM
    (the slot arrays must grow before the next merge). ``acc[0]`` carries the running sum of
    lf(k_i) for the trace once the dictionary is past EXACT_SUM_LIMIT."""
    parts = np.zeros(5, dtype=np.int64)
    done = 0
    rows = 0
    zeros = np.zeros(0)
    touched = np.zeros(0, dtype=np.int64)
    # the largest non-empty group never grows (a merge creates pairs at most as frequent as
    # itself), so a pointer walked downwards finds it in amortized O(1)
    top = 0
    for i in range(x_meta[ix._N_ACTIVE]):
        top = max(top, gactive[i])
    while True:
        while top > 0 and gsize[top] == 0:
            top -= 1
        best = top if top >= min_count else -1
        m = 256 + rules_done + done
        n = meta[_LENGTH]
        a = -1
        b = -1
        if best > 0:
            slot = groot[best]
            a = x_ps0[slot]
            b = x_ps1[slot]
        stop = best <= 0 or best < stop_below or (max_rules >= 0 and rules_done + done >= max_rules)
        if not stop:
            if done == batch:
                return done, rows, BATCH_DONE
            room = 3 * best + 8
            if (meta[N_SLOTS] + room > ps0.size or 2 * (meta[HASH_USED] + room) > hkeys.size
                    or meta[N_SLOTS] + room > x_ps0.size or 2 * (x_meta[HASH_USED] + room) > x_hkeys.size
                    or m + 1 > counts.size):
                return done, rows, NEED_ROOM
        if want_trace:
            if m <= EXACT_SUM_LIMIT:
                acc[0] = string_log_sum(counts, m)
            parts_from_sum(m, n, acc[0], parts)
            total = 0
            for j in range(5):
                trace_out[rows, 1 + j] = parts[j]
                total += parts[j]
            trace_out[rows, 0] = m
            trace_out[rows, 6] = total
            trace_out[rows, 7] = a
            trace_out[rows, 8] = b
            trace_out[rows, 9] = max(best, 0)
            trace_out[rows, 10] = -best if best > 0 else np.nan
            trace_out[rows, 11] = n
            rows += 1
        if stop:
            return done, rows, STOPPED
        old_a = counts[a]
        old_b = counts[b]
        z = m
        merge(a, b, z, sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt,
              cmark, oldcnt, changed, meta, counts, sites)
        if want_trace:
            acc[0] += merge_sum_delta(old_a, counts[a], old_b, counts[b], counts[z], a == b)
        cs0, cs1, ck = changed_pairs(changed, meta[_N_CHANGED], cnt, oldcnt, ps0, ps1)
        n_out, n_moved = ix.ingest(
            cs0, cs1, ck, touched, True, False, 1,
            x_hkeys, x_hvals, x_meta, x_ps0, x_ps1, x_k01, x_bval, x_child, x_sib, x_prev, x_mark,
            groot, gsize, gactive, gpos, lhead, lnext, lprev, rhead, rnext, rprev, scratch, out,
        )
        if zeros.size < n_out:
            zeros = np.zeros(2 * n_out)
        ix.insert_scored(out[:n_out], zeros, n_moved, x_meta, x_ps0, x_ps1, x_k01, x_bval,
                         x_child, x_sib, x_prev, groot, gsize, gactive, gpos, scratch)
        rules_out[rules_done + done, 0] = a
        rules_out[rules_done + done, 1] = b
        done += 1


class LinkedRewriter(Rewriter):
    """Incremental rewriter; same semantics as ``scan``, cost proportional to the sites."""

    _SLOT_FIELDS = (("ps0", np.int32, 0), ("ps1", np.int32, 0), ("head", np.int32, EMPTY),
                    ("cnt", np.int64, 0), ("cmark", np.int64, 0), ("oldcnt", np.int64, 0),
                    ("changed", np.int32, 0))

    def __init__(self, params=None):
        self.load(np.zeros(0, dtype=np.uint8))

    def load(self, data, breaks=None):
        n = len(data)
        self.sym = np.asarray(data).astype(np.int32)
        self.nxt = np.arange(1, n + 1, dtype=np.int32)
        self.prv = np.arange(-1, n - 1, dtype=np.int32)
        if n:
            self.nxt[-1] = EMPTY
        if breaks is not None:
            cut = np.flatnonzero(np.asarray(breaks, dtype=bool)[: max(n - 1, 0)])
            self.nxt[cut] = EMPTY
            self.prv[cut + 1] = EMPTY
        self.onext = np.full(n, EMPTY, dtype=np.int32)
        self.oprev = np.full(n, EMPTY, dtype=np.int32)
        self.oslot = np.full(n, EMPTY, dtype=np.int32)
        self.sites = np.zeros(n // 2 + 1, dtype=np.int32)
        self.counts = np.bincount(self.sym, minlength=BYTE_SYMBOLS).astype(np.int64)
        self.meta = np.zeros(5, dtype=np.int64)
        self.meta[_LENGTH] = n
        cap = min(max(n, 16), 1 << 17)
        for name, dtype, fill in self._SLOT_FIELDS:
            setattr(self, name, np.full(cap, fill, dtype=dtype))
        self.hkeys = np.full(table_size_for(cap), EMPTY, dtype=np.int64)
        self.hvals = np.zeros(self.hkeys.size, dtype=np.int32)
        self.next_symbol = BYTE_SYMBOLS
        count_all(*self._kernel_state())

    def _kernel_state(self):
        return (self.sym, self.nxt, self.prv, self.onext, self.oprev, self.oslot, self.hkeys,
                self.hvals, self.ps0, self.ps1, self.head, self.cnt, self.cmark, self.oldcnt,
                self.changed, self.meta)

    def _reserve(self, n_new: int) -> None:
        need = int(self.meta[N_SLOTS]) + n_new
        if need > self.ps0.size:
            size = max(need, 2 * self.ps0.size)
            for name, _dtype, fill in self._SLOT_FIELDS:
                setattr(self, name, grown(getattr(self, name), size, fill))
        if 2 * (int(self.meta[HASH_USED]) + n_new) > self.hkeys.size:
            self.hkeys = np.full(table_size_for(int(self.meta[HASH_USED]) + n_new), EMPTY, dtype=np.int64)
            self.hvals = np.zeros(self.hkeys.size, dtype=np.int32)
            rehash(self.hkeys, self.hvals, self.ps0, self.ps1, int(self.meta[N_SLOTS]))

    @property
    def length(self):
        return int(self.meta[_LENGTH])

    def symbol_counts(self):
        return self.counts

    def pairs(self):
        n = int(self.meta[N_SLOTS])
        live = np.flatnonzero(self.cnt[:n] > 0)
        return (self.ps0[live].astype(np.int64), self.ps1[live].astype(np.int64),
                self.cnt[live].astype(np.int64))

    def symbols(self):
        return self.sym[self.sym >= 0]

    def _reserve_symbols(self, z: int) -> None:
        if z >= self.counts.size:
            self.counts = grown(self.counts, 2 * self.counts.size, 0)

    def apply(self, s0, s1):
        slot = find_slot(self.hkeys, self.hvals, s0, s1)
        k = int(self.cnt[slot]) if slot >= 0 else 0
        self._reserve(3 * k + 8)
        z = self.next_symbol
        self.next_symbol += 1
        self._reserve_symbols(z)
        sites = merge(s0, s1, z, *self._kernel_state(), self.counts, self.sites)
        a, b, k01 = changed_pairs(self.changed, int(self.meta[_N_CHANGED]), self.cnt, self.oldcnt,
                                  self.ps0, self.ps1)
        return MergeReport(symbol=z, sites=int(sites), s0=a, s1=b, k01=k01)


    def run_most_frequent(self, index, max_rules, stop_below, min_count, trace, batch=1 << 14,
                          progress=None):
        """Merge the most frequent pair until ``stop_below`` / ``max_rules`` / no pair, with the
        whole loop compiled. ``index`` is a PairIndex already holding this string's pairs.
        Returns (rules, [(trace rows as an (n, 12) array, seconds they took)], sum state)."""
        import time

        cap_rules = max_rules if max_rules is not None else self.length
        rules = np.zeros((max(cap_rules, 0) + 1, 2), dtype=np.int64)
        rows = []
        acc = np.zeros(1)
        done = 0
        while True:
            limit = batch
            trace_out = np.zeros((limit + 1 if trace else 1, 12))
            index.reserve_like(self.ps0.size, self.hkeys.size)
            started = time.perf_counter()
            steps, n_rows, status = run_most_frequent(
                limit, done, -1 if max_rules is None else max_rules, stop_below, min_count,
                trace, acc, *self._kernel_state(), self.counts, self.sites, *index.kernel_state(),
                rules, trace_out,
            )
            self.next_symbol += steps
            done += steps
            if trace:
                chunk = trace_out[:n_rows]
                chunk_time = time.perf_counter() - started
                rows.append((chunk, chunk_time))
            if progress is not None:
                progress(done, self.length, -1)
            if status == STOPPED:
                break
            if status == NEED_ROOM:
                top = int(index.k01[: int(index.meta[N_SLOTS])].max(initial=0))
                self._reserve(3 * top + 8)
                self._reserve_symbols(self.next_symbol + 1)
        return rules[:done], rows, acc

    def kernel_arrays(self):
        return (*self._kernel_state(), self.counts, self.sites)


@chunkpress.hookimpl
def register_rewriters():
    return [
        chunkpress.RewriterInfo(
            name="linked",
            factory=LinkedRewriter,
            summary="fast incremental rewriter: linked string, per-pair occurrence lists (numba)",
            version="1",
        )
    ]
