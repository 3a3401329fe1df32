"""The fused merge loop: selection, stop, rewrite, rescoring and trace row of many merges in one
kernel call, no Python per merge.

It runs over the engine's :class:`~.linkedstring.LinkedString` (a rewriter offers one through
``Rewriter.linked_string()``) and any scorer, built-in or not: the scorer's loss functions come
in as compiled first-class functions (:mod:`.losses`), so this kernel is compiled and cached once
for all of them. The learner (:mod:`.learner`) takes the run's last step itself, the same way
for every rewriter.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numba
import numpy as np

from . import index as ix
from .codelength import merge_sum_delta
from .kernels import kernel
from .linkedstring import META_LENGTH, META_N_CHANGED, META_ROOM, LinkedString, merge, room_for
from .losses import CompiledScorer, Strategy
from .pairtable import N_SLOTS, find_slot, has_room
from .prefetch import prefetch_row
from .trace import LogSum, fill_trace_row

# status codes of the kernel
STOP_FOUND, BATCH_DONE, NEED_ROOM, DELETE = 0, 1, 2, 3
# the strategies, as ints the kernel compares with
FULL, BY_COUNT, SPLIT_PARTS = int(Strategy.FULL), int(Strategy.BY_COUNT), int(Strategy.SPLIT_PARTS)


@kernel
def run_fused(strategy, f_a, f_b, f_bl, f, f_stop, bounds, acc, string, index, rules_out, trace_out, held, lengths,
              f_del):
    """Up to ``batch`` merges. Returns (merges done, status): STOP_FOUND when the best
    candidate would stop the run (or ``max_rules`` is reached, or no candidate is left): the
    caller then takes the final step itself; BATCH_DONE; NEED_ROOM when the slot arrays must
    grow first; or DELETE after a merge one of whose parts the deletion policy ``f_del``
    (compiled ``removes``, or None: compiled out) removes, which the caller then does. ``acc``
    is the trace's :class:`~.trace.LogSum`.

    ``strategy``: the scorer's :class:`~.losses.Strategy` (an int); ``f_a``, ``f_b``, ``f``,
    ``f_stop``: its compiled loss_a, loss_b, loss and stop (first-class functions, passed one
    by one: numba warns on each call given them in a tuple); ``f_bl``: loss_b of a scorer that
    reads lengths (numba prunes the branch of a None argument, not that of an array, so the
    two signatures come as two arguments, the unused one a zero loss); ``bounds``: (batch, rules done,
    max rules or -1, floor); ``string``: :class:`~.linkedstring.StringArrays`; ``index``:
    :class:`~.index.IndexArrays`; ``trace_out`` None for no trace (the trace code is then
    compiled out); ``held``: :class:`Scratch` (this kernel creates no arrays); ``lengths``: the
    bytes of each symbol for a scorer whose loss_b reads them (kept here: the merged symbol's
    is written), else None (compiled out, as the trace)."""
    batch, rules_done, max_rules, floor = bounds
    node, pool, table, pairs, changed, meta, weight, zcache, counts, sites = string
    _, x_meta, x_rec, groot, gsize, gactive, gpos, lhead, rhead, scratch, out = index
    work, scores, small = held
    full = strategy == FULL
    by_count = strategy == BY_COUNT
    rescore_parts = strategy == SPLIT_PARTS
    parts = small[:5]
    touched = small[5:7]
    cslots = work[0]
    ck = work[1]
    done = 0
    top = 0
    if by_count:
        for i in range(x_meta[ix._N_ACTIVE]):
            top = max(top, gactive[i])
    while True:
        m = 256 + rules_done + done
        n = meta[META_LENGTH]
        if by_count:
            slot, top = ix.select_by_count(top, floor, gsize, groot)
            best_k = top
            best_loss = f_a(n, m, top) + (x_rec[slot].bval if slot >= 0 else 0.0)
        else:
            slot, best_loss, best_k = ix.select(full, f_a, f, n, m, floor, counts, gactive,
                                                x_meta[ix._N_ACTIVE], groot, x_rec, scratch)
        if (slot == -1 or f_stop(best_loss, best_k)
                or (max_rules >= 0 and rules_done + done >= max_rules)):
            return done, STOP_FOUND
        if done == batch:
            return done, BATCH_DONE
        a = np.int64(x_rec[slot].ps0)
        b = np.int64(x_rec[slot].ps1)
        slot_ab = find_slot(table, a, b)
        nsites = pairs[slot_ab].nsites  # sites, not the (weighted) count
        room = room_for(nsites, m)
        # the index's records are at the string's slots, sized like them (PairIndex.keep_up)
        if meta[N_SLOTS] + room > pairs.shape[0] or not has_room(table, meta, room) or m + 1 > counts.size:
            meta[META_ROOM] = nsites
            return done, NEED_ROOM
        if trace_out is not None:  # None: pruned at compile time (compress compiles no trace code)
            fill_trace_row(m, n, counts, acc, parts, trace_out[done], a, b, best_k, best_loss)
        old_a = counts[a]
        old_b = counts[b]
        merge(slot_ab, a, b, m, node, pool, table, pairs, changed, meta, weight, zcache, counts, sites)
        if lengths is not None:
            lengths[m] = lengths[a] + lengths[b]
        if trace_out is not None:
            acc.total[0] += merge_sum_delta(old_a, counts[a], old_b, counts[b], counts[m], a == b)
        keep = _changed_slots(changed, meta[META_N_CHANGED], pairs, x_meta, x_rec, cslots, ck)
        touched[0] = a
        touched[1] = b
        n_out, n_moved = ix.ingest_slots(
            cslots[:keep], ck[:keep], touched, rescore_parts, floor,
            x_meta, x_rec, groot, gsize, gactive, gpos, lhead, rhead, scratch, out,
        )
        for i in range(n_out):
            t = out[i]
            p0 = x_rec[t].ps0
            p1 = x_rec[t].ps1
            if lengths is None:
                scores[i] = f_b(x_rec[t].k01, counts[p0], counts[p1], p0 == p1)
            else:
                scores[i] = f_bl(x_rec[t].k01, counts[p0], counts[p1], p0 == p1, lengths[p0], lengths[p1])
        ix.insert_scored(out[:n_out], scores, n_moved, floor, x_meta, x_rec, groot, gsize, gactive,
                         gpos, scratch)
        rules_out[done, 0] = a
        rules_out[done, 1] = b
        done += 1
        if f_del is not None:
            if (a >= 256 and f_del(counts[m], counts[a])) or (b != a and b >= 256 and f_del(counts[m], counts[b])):
                return done, DELETE


@numba.njit(cache=True, forceinline=True)
def _changed_slots(changed, n_changed, pairs, x_meta, x_rec, cslots, ck):
    """The pairs whose count a merge changed (the first ``n_changed`` of ``changed``): their
    slots (the index's records are at the string's slots) in ``cslots`` and their counts in
    ``ck``: how many."""
    keep = 0
    for t in range(n_changed):
        rs = changed[t]
        if pairs[rs].cnt != pairs[rs].oldcnt:
            ix.claim_slot(rs, pairs, x_meta, x_rec)  # its record, from the pair's first change on
            prefetch_row(x_rec, rs)  # ingest_slots reads it next
            cslots[keep] = rs
            ck[keep] = pairs[rs].cnt
            keep += 1
    return keep


class Scratch(NamedTuple):
    """Scratch arrays of :func:`run_fused`."""

    work: np.ndarray  # (2, changed.size) int64: the changed pairs' slots and counts
    scores: np.ndarray  # (out.size) float64: their new loss_b
    small: np.ndarray  # (7) int64: trace parts, touched symbols


class _HeldScratch:
    """:class:`Scratch` kept between batches (allocating it per batch cost as much as a
    batch's work); new when the slot arrays grew."""

    def __init__(self):
        self.arrays: Scratch | None = None

    def get(self, n_changed: int, n_out: int) -> Scratch:
        held = self.arrays
        if held is None or held.work.shape[1] < n_changed or held.scores.size < n_out:
            self.arrays = held = Scratch(np.empty((2, n_changed), dtype=np.int64), np.zeros(n_out),
                                         np.zeros(7, dtype=np.int64))
        return held


def run(string: LinkedString, scorer: CompiledScorer, index: ix.PairIndex, rules_done: int,
        max_rules: int | None, trace: bool, acc: LogSum, batch: int = 1 << 12, removes=None):
    """Merge until the run would stop (the caller then takes the final step) or, with a
    deletion policy's compiled ``removes``, until a merge whose part it removes. Yields (rules,
    trace rows as an (n, 12) array or None, seconds, status) per batch, the last with
    STOP_FOUND or DELETE. A scorer that reads lengths finds them in ``index.lengths``, grown
    here with the symbols."""
    assert index.string is string, "the fused loop's index follows its string"
    scratch = _HeldScratch()
    while True:
        rules = np.zeros((batch, 2), dtype=np.int64)
        trace_out = np.zeros((batch, 12)) if trace else None
        index.keep_up()
        if index.lengths is not None and index.lengths.size < string.counts.size:
            index.lengths = np.concatenate([index.lengths, np.zeros(string.counts.size - index.lengths.size, np.int64)])
        started = time.perf_counter()
        arrays = index.arrays()
        steps, status = run_fused(
            int(scorer.strategy), scorer.loss_a, *scorer.loss_b_pair(), scorer.loss, scorer.stop,
            (batch, rules_done, -1 if max_rules is None else max_rules, index.floor), acc, string.arrays(), arrays,
            rules, trace_out, scratch.get(string.changed.size, arrays.out.size), index.lengths, removes,
        )
        del arrays  # a live reference would make the next growth copy the arrays
        string.next_symbol += steps
        rules_done += steps
        yield rules[:steps], trace_out[:steps] if trace_out is not None else None, time.perf_counter() - started, status
        if status in (STOP_FOUND, DELETE):
            return
        if status == NEED_ROOM:
            scratch.arrays = None  # the slot arrays grow: let go of views of them
            string.grow_for_pending_merge()
