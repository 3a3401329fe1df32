"""Encoding new text with a learned dictionary, exactly as training would have parsed it: the
rules in order, each by left-to-right replacement, with training's events (boundaries opened
at a step, symbols deleted after a rule) where they happened.

A short unit (a pre-token, or a unit of pre-tokens a boundary policy may join) is merged in a
small array, lowest rank first: the same result as the rules in order, since no merge creates
a pair of a lower rank, except that a deletion brings back pairs whose rules came earlier, so
only ranks at or past the last event count (and a pair learned again after a deletion has
several ranks: the first one at or past that point). A longer one is replayed with the engine's linked
string, whose cost does not grow with the square of the length.
"""

from __future__ import annotations

import numba
import numpy as np

from ..arrays import distinct
from ..contract import BYTE_SYMBOLS
from ..engine.events import Deletion, Opening, deletion_steps, schedule
from ..engine.linkedstring import LinkedString
from ..format.expand import symbol_lengths
from .wordcounts import DistinctWords

#: Units up to this many symbols are merged in a small array; longer ones are replayed.
SHORT_UNIT = 64
#: a rank or step no rule reaches
NEVER = np.int64(1) << 62


@numba.njit(cache=True)
def rank_table(rules):
    """Open-addressing table (s0, s1) -> the rules of that pair, for merging by rank: ``vals``
    holds (first, count) into ``ranks``, where a pair's rule indices are listed ascending. A
    pair has several where its symbol was deleted and the pair learned again."""
    size = 1
    while size < 2 * rules.shape[0] + 2:
        size *= 2
    keys = np.full(size, -1, dtype=np.int64)
    vals = np.zeros((size, 2), dtype=np.int64)
    slot_of = np.empty(rules.shape[0], dtype=np.int64)
    for r in range(rules.shape[0]):
        key = (rules[r, 0] << 32) | rules[r, 1]
        i = ((key * np.int64(-7046029254386353131)) >> 20) & (size - 1)
        while keys[i] != -1 and keys[i] != key:
            i = (i + 1) & (size - 1)
        keys[i] = key
        vals[i, 1] += 1
        slot_of[r] = i
    first = 0
    for i in range(size):
        if keys[i] != -1:
            vals[i, 0] = first
            first += vals[i, 1]
            vals[i, 1] = 0
    ranks = np.empty(rules.shape[0], dtype=np.int64)
    for r in range(rules.shape[0]):  # in order: each pair's list comes out ascending
        i = slot_of[r]
        ranks[vals[i, 0] + vals[i, 1]] = r
        vals[i, 1] += 1
    return keys, vals, ranks


@numba.njit(cache=True, forceinline=True)
def rule_of_pair(keys, vals, ranks, a, b, least):
    """The first rule of the pair (a, b) at or past ``least``, or -1."""
    key = (a << 32) | b
    mask = keys.size - 1
    i = ((key * np.int64(-7046029254386353131)) >> 20) & mask
    while True:
        k = keys[i]
        if k == key:
            for j in range(vals[i, 0], vals[i, 0] + vals[i, 1]):
                if ranks[j] >= least:
                    return ranks[j]
            return -1
        if k == -1:
            return -1
        i = (i + 1) & mask


@numba.njit(cache=True)
def merge_short_units(buf, offsets, gaps, below, keys, vals, ranks, deleted, pieces, out, out_at, out_len):
    """Encode each unit of at most SHORT_UNIT symbols (unit u is ``buf[offsets[u]:offsets[u+1]]``,
    bytes or symbols) by the rules below ``below``, into ``out`` from ``out_at[u]``; longer
    ones get out_len -1. ``gaps[p]``: the step from which a pair across the boundary after
    position p may merge (0 inside a pre-token). ``deleted[s]``: (rule after which, order,
    first piece, pieces) of a deleted symbol s, rule -1 if it is not deleted; its pieces are
    ``pieces[first:first + count]``."""
    width = 4 * SHORT_UNIT  # a deletion lengthens a unit back towards its bytes
    w = np.empty(width, dtype=np.int64)
    c = np.empty(width, dtype=np.int64)
    r = np.empty(width, dtype=np.int64)
    for u in range(offsets.size - 1):
        length = offsets[u + 1] - offsets[u]
        if length > SHORT_UNIT:
            out_len[u] = -1
            continue
        for k in range(length):
            w[k] = buf[offsets[u] + k]
            c[k] = gaps[offsets[u] + k]
        least = 0  # ranks below it were applied (or came before the last deletion)
        # r[p]: the rank of the pair at p, kept as merges go; each stays the first rule at or
        # past ``least`` (the smallest of them is the next merge), so only the two pairs beside
        # a merge are looked up again, and every one after a deletion
        for p in range(length - 1):
            r[p] = rule_of_pair(keys, vals, ranks, w[p], w[p + 1], max(least, c[p]))
        while True:
            best = -1
            at = -1
            for p in range(length - 1):
                if r[p] >= 0 and (best < 0 or r[p] < best):
                    best = r[p]
                    at = p
            # a deletion due before that rule: the present symbol deleted first
            due = -1
            for p in range(length if pieces.size else 0):
                s = w[p]
                if s < deleted.shape[0] and deleted[s, 0] >= 0 and (best < 0 or deleted[s, 0] < best):
                    if due < 0 or deleted[s, 0] < deleted[due, 0] or (
                            deleted[s, 0] == deleted[due, 0] and deleted[s, 1] < deleted[due, 1]):
                        due = s
            if due >= 0:
                first, count = deleted[due, 2], deleted[due, 3]
                p = 0
                while p < length:
                    if w[p] != due:
                        p += 1
                        continue
                    for q in range(length - 1, p, -1):  # make room for count - 1 more
                        w[q + count - 1] = w[q]
                        c[q + count - 1] = c[q]
                    gap = c[p]
                    for j in range(count):
                        w[p + j] = pieces[first + j]
                        c[p + j] = 0
                    c[p + count - 1] = gap
                    length += count - 1
                    p += count
                least = deleted[due, 0] + 1
                for p in range(length - 1):
                    r[p] = rule_of_pair(keys, vals, ranks, w[p], w[p + 1], max(least, c[p]))
                continue
            if best < 0 or best >= below:
                break
            w[at] = 256 + best
            for p in range(at + 1, length - 1):
                w[p] = w[p + 1]
            for p in range(at, length - 1):
                c[p] = c[p + 1]
            for p in range(at + 1, length - 2):
                r[p] = r[p + 1]
            length -= 1
            least = best
            if at > 0:
                r[at - 1] = rule_of_pair(keys, vals, ranks, w[at - 1], w[at], max(least, c[at - 1]))
            if at < length - 1:
                r[at] = rule_of_pair(keys, vals, ranks, w[at], w[at + 1], max(least, c[at]))
        for k in range(length):
            out[out_at[u] + k] = w[k]
        out_len[u] = length


@numba.njit(cache=True, forceinline=True)
def _tree_set(tree, where, leaf, value):
    """Set a leaf of the min tree (``tree``: values, ``where``: the leftmost leaf holding each
    node's minimum) and fix its ancestors."""
    size = tree.size // 2
    i = size + leaf
    tree[i] = value
    where[i] = leaf
    i //= 2
    while i >= 1:
        left, right = 2 * i, 2 * i + 1
        if tree[left] <= tree[right]:  # ties to the left: the leftmost pair merges first
            tree[i] = tree[left]
            where[i] = where[left]
        else:
            tree[i] = tree[right]
            where[i] = where[right]
        i //= 2


@numba.njit(cache=True)
def merge_long_units(buf, offsets, gaps, below, keys, vals, ranks, todo, out, out_at, out_len):
    """Encode the units ``todo`` as :func:`merge_short_units` does (no deletions), for any
    length: the symbols in a linked list and each pair's rank in a min tree, so a merge costs
    a few lookups and a logarithmic update, not a scan of the unit."""
    longest = 1
    for t in range(todo.size):
        longest = max(longest, offsets[todo[t] + 1] - offsets[todo[t]])
    size = 1
    while size < longest:
        size *= 2
    w = np.empty(longest, dtype=np.int64)
    c = np.empty(longest, dtype=np.int64)
    nxt = np.empty(longest, dtype=np.int64)
    prv = np.empty(longest, dtype=np.int64)
    tree = np.empty(2 * size, dtype=np.int64)
    where = np.empty(2 * size, dtype=np.int64)
    for t in range(todo.size):
        u = todo[t]
        length = offsets[u + 1] - offsets[u]
        tree[:] = NEVER
        where[:] = 0
        for k in range(length):
            w[k] = buf[offsets[u] + k]
            c[k] = gaps[offsets[u] + k]
            nxt[k] = k + 1 if k + 1 < length else -1
            prv[k] = k - 1
        for k in range(length - 1):
            r = rule_of_pair(keys, vals, ranks, w[k], w[k + 1], c[k])
            if r >= 0:
                _tree_set(tree, where, k, r)
        while tree[1] < below:
            best = tree[1]
            at = where[1]
            j = nxt[at]
            w[at] = 256 + best
            c[at] = c[j]
            nxt[at] = nxt[j]
            if nxt[j] >= 0:
                prv[nxt[j]] = at
            _tree_set(tree, where, j, NEVER)
            # ranks stay the first rule at or past the last merged (see merge_short_units)
            for k in (prv[at], at):
                if k >= 0:
                    r = -1 if nxt[k] < 0 else rule_of_pair(keys, vals, ranks, w[k], w[nxt[k]], max(best, c[k]))
                    _tree_set(tree, where, k, r if r >= 0 else NEVER)
        n = 0
        k = 0
        while k >= 0:
            out[out_at[u] + n] = w[k]
            n += 1
            k = nxt[k]
        out_len[u] = n


class Encoder:
    """The rules, deletions and boundary policy of a dictionary, ready to encode units."""

    def __init__(self, rules: np.ndarray, deletions: np.ndarray, boundary=None):
        self.rules = rules
        self.steps: list[Deletion] = deletion_steps(rules, deletions)
        self.boundary = boundary
        self.keys, self.vals, self.ranks = rank_table(rules)
        size = BYTE_SYMBOLS + len(rules)
        self.deleted = np.full((size, 4), -1, dtype=np.int64)
        first = 0
        for order, step in enumerate(self.steps):
            self.deleted[step.symbol] = (step.after, order, first, step.pieces.size)
            first += step.pieces.size
        self.pieces = np.concatenate([np.zeros(0, dtype=np.int64), *(step.pieces for step in self.steps)])
        self.lengths = symbol_lengths(rules)

    def encode_units(self, buf: np.ndarray, offsets: np.ndarray, gaps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(symbols, symbols per unit) of the units of ``buf`` (unit u's symbols start at
        ``offsets[u]`` in the first array); ``gaps`` as in :func:`merge_short_units`.

        Where boundaries open and nothing is deleted, the rules before the first opening
        merge inside pre-tokens only: each distinct pre-token is merged by them once, and the
        units go on from the symbols they made (fewer, so each merge scans less)."""
        symbols = np.empty(buf.size, dtype=np.int64)
        seg_len = np.empty(offsets.size - 1, dtype=np.int64)
        opens = gaps[(gaps > 0) & (gaps < NEVER)]
        first = int(opens.min()) if opens.size and not self.pieces.size else 0
        units, at, unit_gaps = (buf, offsets, gaps) if first == 0 else self._inside_pretokens(buf, offsets, gaps, first)
        self._merge(units, at, unit_gaps, NEVER, symbols, offsets, seg_len)
        for u in np.flatnonzero(seg_len < 0).tolist():  # long units through deletions: replayed
            lo, hi = int(offsets[u]), int(offsets[u + 1])
            unit = self.replay(buf[lo:hi], gaps[lo:hi])
            symbols[lo:lo + unit.size] = unit
            seg_len[u] = unit.size
        return symbols, seg_len

    def _merge(self, units, at, gaps, below, out, out_at, out_len) -> None:
        """The units merged by the rules below ``below`` (see :func:`merge_short_units`); a long
        one is left at out_len -1 only where symbols are deleted."""
        merge_short_units(units, at, gaps, below, self.keys, self.vals, self.ranks, self.deleted, self.pieces, out,
                          out_at, out_len)
        long = np.flatnonzero(out_len < 0)
        if long.size and not self.pieces.size:
            merge_long_units(units, at, gaps, below, self.keys, self.vals, self.ranks, long, out, out_at, out_len)

    def _inside_pretokens(self, buf: np.ndarray, offsets: np.ndarray, gaps: np.ndarray, first: int):
        """(symbols, unit offsets in them, gaps after each) of the units of ``buf`` once each
        distinct pre-token in them is merged by the rules before ``first``."""
        words = DistinctWords(buf, gaps > 0)
        merged = np.empty(words.buf.size, dtype=np.int64)
        counts = np.empty(words.offsets.size - 1, dtype=np.int64)
        self._merge(words.buf, words.offsets, np.zeros(words.buf.size, dtype=np.int64), first, merged, words.offsets,
                    counts)
        symbols = words.assemble(merged, words.offsets[:-1], counts)
        ends = np.cumsum(self.lengths[symbols]) - 1  # each symbol's last byte
        at = np.concatenate([[0], np.searchsorted(ends, offsets[1:] - 1) + 1]).astype(np.int64)
        return symbols, at, gaps[ends]

    def replay(self, data: np.ndarray, gaps: np.ndarray | None = None) -> np.ndarray:
        """The symbols of ``data`` replayed rule by rule with the events (``gaps`` > 0: a
        boundary opening at that step; NEVER: a cut)."""
        string = LinkedString()
        if gaps is None:
            string.load(data, None)
            string.replay(self.rules, events=self.steps)
        else:
            string.load(data, gaps > 0)
            steps = distinct(gaps[(gaps > 0) & (gaps < NEVER)])
            opened = [Opening(at=int(s), positions=np.flatnonzero(gaps == s)) for s in steps.tolist()]
            string.replay(self.rules, events=schedule(self.steps, opened))
        return string.symbols().astype(np.int64)
