"""The fast rewriter: an incremental doubly-linked string with per-pair occurrence lists.

The string lives in numpy arrays whose indices never move: a merge writes the new symbol at the
left node and unlinks the right one in O(1). Every pair keeps its non-overlapping count and its
counted occurrence positions (a list threaded through ``onext``/``oprev``). A merge visits only
its sites: at each, the pairs of a small region (the site, its neighbours, and the runs of equal
symbols touching them, whose left-to-right pairing may shift) are uncounted, the string is
rewritten, and the region is counted again. All of it runs in numba kernels.

Memory: 26 bytes per input symbol (34 with weights) plus about 64 bytes per distinct pair.
"""

from __future__ import annotations

import numba
import numpy as np

import chunkpress
from chunkpress import compiled_losses as cl
from chunkpress import index as ix
from chunkpress.lists import list_add, list_remove
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
def _uncount(q, onext, oprev, oslot, head, cnt, cmark, oldcnt, changed, meta, weight, nsites):
    slot = oslot[q]
    _touch(slot, cnt, cmark, oldcnt, changed, meta)
    list_remove(q, slot, head, onext, oprev)
    oslot[q] = EMPTY
    cnt[slot] -= weight[q] if weight.size else 1
    nsites[slot] -= 1


@numba.njit(cache=True, inline="always")
def _count(q, x, y, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark, oldcnt, changed, meta,
           weight, nsites):
    slot = find_or_insert(hkeys, hvals, meta, ps0, ps1, x, y)
    _touch(slot, cnt, cmark, oldcnt, changed, meta)
    list_add(q, slot, head, onext, oprev)
    oslot[q] = slot
    cnt[slot] += weight[q] if weight.size else 1
    nsites[slot] += 1


@numba.njit(cache=True)
def _region(start, after, add, sym, nxt, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt,
            cmark, oldcnt, changed, meta, weight, nsites):
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
                       cmark, oldcnt, changed, meta, weight, nsites)
            else:
                _uncount(q, onext, oprev, oslot, head, cnt, cmark, oldcnt, changed, meta, weight, nsites)
        off = off + 1 if x == y else 0
        q = r


@numba.njit(cache=True)
def count_all(sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark,
              oldcnt, changed, meta, weight, nsites):
    """Count every pair of a freshly loaded string (each list segment from its first node)."""
    for q in range(sym.size):
        if prv[q] == EMPTY:
            _region(q, EMPTY, True, sym, nxt, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head,
                    cnt, cmark, oldcnt, changed, meta, weight, nsites)


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
          oldcnt, changed, meta, weight, nsites, counts, sites):
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
                cnt, cmark, oldcnt, changed, meta, weight, nsites)
        w = weight[i] if weight.size else 1  # every node of a word carries the word's count
        if a != b:
            sym[i] = z
            _unlink(j, sym, nxt, prv)
            replaced += w
        else:
            end = nxt[last]
            q = i
            while q != end:
                r = nxt[q]
                if r == end:
                    break
                sym[q] = z
                _unlink(r, sym, nxt, prv)
                replaced += w
                q = nxt[q]
        _region(start, after, True, sym, nxt, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head,
                cnt, cmark, oldcnt, changed, meta, weight, nsites)
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


# status codes of run_compiled
STOP_FOUND, BATCH_DONE, NEED_ROOM = 0, 1, 2


@numba.njit(cache=True)
def run_compiled(
    kind, batch, rules_done, max_rules, stop_below, floor, want_trace, acc,
    sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark, oldcnt,
    changed, meta, weight, nsites, counts, sites,
    x_hkeys, x_hvals, x_meta, x_ps0, x_ps1, x_k01, x_bval, x_child, x_sib, x_prev, x_mark,
    groot, gsize, gactive, gpos, lhead, lnext, lprev, rhead, rnext, rprev, scratch, out,
    rules_out, trace_out,
):
    """Up to ``batch`` merges with a built-in loss (``chunkpress.compiled_losses``): selection,
    rewrite, rescoring and trace row all in this kernel, no Python per merge.

    Returns (merges done, status): STOP_FOUND when the best candidate would stop the run (or
    ``max_rules`` is reached, or no candidate is left): the caller then takes the final step
    itself, exactly as the general path does; BATCH_DONE; or NEED_ROOM when the slot arrays must
    grow first. ``acc[0]`` is the running sum of lf(k_i) for the trace past EXACT_SUM_LIMIT.
    Selection is the index's: most frequent first (a pointer that only moves down, since no
    merge creates a pair more frequent than itself), else the minimum over k01 groups of
    loss_a + the group's minimum loss_b, the lower k01 on a tie."""
    parts = np.zeros(5, dtype=np.int64)
    consts = np.zeros(4)
    done = 0
    scores = np.zeros(0)
    touched = np.zeros(2, dtype=np.int64)
    split = kind != cl.MOST_FREQUENT
    top = 0
    for i in range(x_meta[ix._N_ACTIVE]):
        top = max(top, gactive[i])
    while True:
        m = 256 + rules_done + done
        n = meta[_LENGTH]
        slot = -1
        best_k = 0
        best_loss = np.inf
        if not split:
            while top > 0 and gsize[top] == 0:
                top -= 1
            if top >= floor:
                best_k = top
                slot = groot[top]
                best_loss = -float(top)
        else:
            cl.step_constants(kind, n, m, consts)
            for i in range(x_meta[ix._N_ACTIVE]):
                g = gactive[i]
                if g < floor:
                    continue
                r = groot[g]
                total = cl.loss_a_given(kind, n, m, g, consts) + x_bval[r]
                if slot == -1 or total < best_loss or (total == best_loss and g < best_k):
                    slot = r
                    best_loss = total
                    best_k = g
        if (slot == -1 or cl.stops(kind, best_loss, best_k, stop_below)
                or (max_rules >= 0 and rules_done + done >= max_rules)):
            return done, STOP_FOUND
        if done == batch:
            return done, BATCH_DONE
        a = x_ps0[slot]
        b = x_ps1[slot]
        room = 3 * nsites[find_slot(hkeys, hvals, a, b)] + 8  # sites, not the (weighted) count
        if (meta[N_SLOTS] + room > ps0.size or 2 * (meta[HASH_USED] + room) > hkeys.size
                or meta[N_SLOTS] + room > x_ps0.size or 2 * (x_meta[HASH_USED] + room) > x_hkeys.size
                or m + 1 > counts.size):
            return done, NEED_ROOM
        if want_trace:
            if m <= EXACT_SUM_LIMIT:
                acc[0] = string_log_sum(counts, m)
            parts_from_sum(m, n, acc[0], parts)
            total_bits = 0
            for j in range(5):
                trace_out[done, 2 + j] = parts[j]
                total_bits += parts[j]
            trace_out[done, 0] = m
            trace_out[done, 1] = total_bits
            trace_out[done, 7] = a
            trace_out[done, 8] = b
            trace_out[done, 9] = best_k
            trace_out[done, 10] = best_loss
            trace_out[done, 11] = n
        old_a = counts[a]
        old_b = counts[b]
        merge(a, b, m, sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt,
              cmark, oldcnt, changed, meta, weight, nsites, counts, sites)
        if want_trace:
            acc[0] += merge_sum_delta(old_a, counts[a], old_b, counts[b], counts[m], a == b)
        cs0, cs1, ck = changed_pairs(changed, meta[_N_CHANGED], cnt, oldcnt, ps0, ps1)
        touched[0] = a
        touched[1] = b
        n_out, n_moved = ix.ingest(
            cs0, cs1, ck, touched, True, split, floor,
            x_hkeys, x_hvals, x_meta, x_ps0, x_ps1, x_k01, x_bval, x_child, x_sib, x_prev, x_mark,
            groot, gsize, gactive, gpos, lhead, lnext, lprev, rhead, rnext, rprev, scratch, out,
        )
        if scores.size < n_out:
            scores = np.zeros(2 * n_out)
        if split:
            for i in range(n_out):
                t = out[i]
                p0 = x_ps0[t]
                p1 = x_ps1[t]
                scores[i] = cl.loss_b(kind, x_k01[t], counts[p0], counts[p1], p0 == p1)
        ix.insert_scored(out[:n_out], scores, n_moved, x_meta, x_ps0, x_ps1, x_k01, x_bval,
                         x_child, x_sib, x_prev, groot, gsize, gactive, gpos, scratch)
        rules_out[done, 0] = a
        rules_out[done, 1] = b
        done += 1


@numba.njit(cache=True)
def replay(rules, start, record, n_out, sum_out, acc,
           sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt, cmark, oldcnt,
           changed, meta, weight, nsites, counts, sites):
    """Apply rules[start:] in order (rule i makes symbol 256 + i), each by left-to-right
    replacement of its counted occurrences: exactly what training did, at a cost proportional to
    the sites. With ``record``, n_out[i] / sum_out[i] get N and sum lf(k_j) before rule i (acc[0]
    carries the sum). Returns the index of the next rule: rules.shape[0] when done, less when the
    slot arrays must grow first."""
    for i in range(start, rules.shape[0]):
        a = rules[i, 0]
        b = rules[i, 1]
        if record:
            n_out[i] = meta[_LENGTH]
            sum_out[i] = acc[0]
        slot = find_slot(hkeys, hvals, a, b)
        if slot == EMPTY or cnt[slot] == 0:
            continue
        room = 3 * nsites[slot] + 8
        if meta[N_SLOTS] + room > ps0.size or 2 * (meta[HASH_USED] + room) > hkeys.size:
            return i
        old_a = counts[a]
        old_b = counts[b]
        z = 256 + i
        merge(a, b, z, sym, nxt, prv, onext, oprev, oslot, hkeys, hvals, ps0, ps1, head, cnt,
              cmark, oldcnt, changed, meta, weight, nsites, counts, sites)
        if record:
            acc[0] += merge_sum_delta(old_a, counts[a], old_b, counts[b], counts[z], a == b)
    return rules.shape[0]


class LinkedRewriter(Rewriter):
    """Incremental rewriter; same semantics as ``scan``, cost proportional to the sites."""

    _SLOT_FIELDS = (("ps0", np.int32, 0), ("ps1", np.int32, 0), ("head", np.int32, EMPTY),
                    ("cnt", np.int64, 0), ("cmark", np.int64, 0), ("oldcnt", np.int64, 0),
                    ("changed", np.int32, 0), ("nsites", np.int32, 0))

    def __init__(self, params=None):
        self.load(np.zeros(0, dtype=np.uint8))

    def load(self, data, breaks=None, weights=None):
        """Load a string; ``weights[i]`` (optional) counts position i that many times, so a list
        of distinct words, each weighted by its count, trains like the whole text."""
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
        if weights is None:
            self.weight = np.zeros(0, dtype=np.int64)
            self.counts = np.bincount(self.sym, minlength=BYTE_SYMBOLS).astype(np.int64)
        else:
            self.weight = np.ascontiguousarray(weights, dtype=np.int64)
            self.counts = np.bincount(self.sym, weights=self.weight, minlength=BYTE_SYMBOLS).astype(np.int64)
        self.meta = np.zeros(5, dtype=np.int64)
        self.meta[_LENGTH] = n if weights is None else int(self.weight.sum())
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
                self.changed, self.meta, self.weight, self.nsites)

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
        """Make symbol id ``z`` addressable in the counts."""
        if z >= self.counts.size:
            self.counts = grown(self.counts, max(2 * self.counts.size, z + 1), 0)

    def apply(self, s0, s1):
        slot = find_slot(self.hkeys, self.hvals, s0, s1)
        k = int(self.nsites[slot]) if slot >= 0 else 0
        self._reserve(3 * k + 8)
        z = self.next_symbol
        self.next_symbol += 1
        self._reserve_symbols(z)
        sites = merge(s0, s1, z, *self._kernel_state(), self.counts, self.sites)
        a, b, k01 = changed_pairs(self.changed, int(self.meta[_N_CHANGED]), self.cnt, self.oldcnt,
                                  self.ps0, self.ps1)
        return MergeReport(symbol=z, sites=int(sites), s0=a, s1=b, k01=k01)


    def run_compiled(self, kind: str, index, rules_done: int, max_rules, stop_below: int,
                     trace: bool, acc: np.ndarray, batch: int = 1 << 12):
        """Merge with the built-in loss ``kind`` until the run would stop (the caller then takes
        the final step). Yields (rules, trace rows as an (n, 12) array, seconds) per batch."""
        import time

        code = cl.KINDS[kind]
        while True:
            rules = np.zeros((batch, 2), dtype=np.int64)
            trace_out = np.zeros((batch if trace else 1, 12))
            index.reserve_like(self.ps0.size, self.counts.size)
            started = time.perf_counter()
            steps, status = run_compiled(
                code, batch, rules_done, -1 if max_rules is None else max_rules, stop_below,
                index.floor, trace, acc, *self._kernel_state(), self.counts, self.sites,
                *index.kernel_state(), rules, trace_out,
            )
            self.next_symbol += steps
            rules_done += steps
            yield rules[:steps], trace_out[:steps] if trace else None, time.perf_counter() - started
            if status == STOP_FOUND:
                return
            if status == NEED_ROOM:
                top = int(self.nsites[: int(self.meta[N_SLOTS])].max(initial=0))
                self._reserve(3 * top + 8)
                self._reserve_symbols(self.next_symbol + 1)

    def replay(self, rules: np.ndarray, record: bool = False):
        """Apply ``rules`` in order to the loaded string (see :func:`replay`). With ``record``,
        returns (N before each rule and after the last, sum lf(k_i) likewise)."""
        rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        r = len(rules)
        self._reserve_symbols(BYTE_SYMBOLS + r)
        n_out = np.zeros(r + 1 if record else 1, dtype=np.int64)
        sum_out = np.zeros(r + 1 if record else 1)
        acc = np.array([string_log_sum(self.counts, BYTE_SYMBOLS) if record else 0.0])
        i = 0
        while True:
            i = replay(rules, i, record, n_out, sum_out, acc, *self._kernel_state(), self.counts, self.sites)
            if i >= r:
                break
            slot = find_slot(self.hkeys, self.hvals, rules[i, 0], rules[i, 1])
            self._reserve(3 * int(self.nsites[slot]) + 8)
        self.next_symbol = BYTE_SYMBOLS + r
        if record:
            n_out[r] = self.length
            sum_out[r] = acc[0]
        return n_out, sum_out


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
