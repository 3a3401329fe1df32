"""The engine's incremental string: a doubly-linked string with per-pair occurrence lists.

The string lives in a numpy array of node records whose indices never move: a merge writes the
new symbol at the left node and unlinks the right one in O(1). Every pair keeps its
non-overlapping count and a list of its occurrence positions. The lists live in one shared pool
of (position, next) entries and are lazy: counting an occurrence appends an entry (a sequential
write), uncounting one only marks its node, and a merge skips the stale entries it meets. So
uncounting touches no other node (a doubly-linked list would touch two random ones), and
entries that went stale are dropped when the pool is rebuilt from the nodes. A merge visits only
its sites: at each, the pairs of a small region (the site, its neighbours, and the runs of equal
symbols touching them, whose left-to-right pairing may shift) are uncounted, the string is
rewritten, and the region is counted again. All of it runs in numba kernels.

Memory: 26 bytes per input symbol (34 with weights): a 16-byte node, and 1.25 pool entries of
8 bytes (the pool is rebuilt, not grown, once a quarter of it is stale). Plus about 80 bytes
per distinct pair (its 40-byte record, the list of changed slots, and the hash table at load
1/3 to 2/3); the candidate index adds about 110 more per pair. Arrays grow in place by half.
"""

from __future__ import annotations

import numba
import numpy as np

from ..contract import BYTE_SYMBOLS, MergeReport
from .codelength import merge_sum_delta, string_log_sum
from .kernels import kernel, sort_in_place
from .linkednodes import (
    LINK,
    META_FIELDS,
    META_LENGTH,
    META_N_CHANGED,
    META_REBUILDS,
    META_ROOM,
    META_TOUCH_EPOCH,
    NODE_FIELDS,
    NXT,
    OSLOT,
    PAIR,
    POS,
    PREFETCH_AHEAD,
    PRV,
    SYM,
    StringArrays,
    count_at,
    recount_region,
    region_bounds,
    region_start,
    run_parity,
    slot_of,
    unlink,
)
from .pairtable import EMPTY, HASH_USED, N_SLOTS, find_slot, find_slots, grow, has_room, home_row, new_table, rehash
from .prefetch import prefetch_row
from .regroup import gather_words, lay_out, recount, word_lengths


@numba.njit(cache=True)
def room_for(nsites, z):
    """New pair slots a merge with ``nsites`` sites that makes symbol ``z`` may need: 3 per
    site, but every new pair holds z, as (x, z), (z, y) or (z, z), so at most 2 (z + 1) + 1 of
    them however many sites there are (3 per site alone made 10 MB of "ab" reserve 15 million
    pair records for the one new pair (z, z)). The pool needs no reservation (see append_node)."""
    return min(3 * nsites + 8, 2 * z + 11)


@kernel
def load_nodes(data, breaks, weight, node, counts):
    """Fill a fresh node array in one pass: symbols, string links (cut after every position
    ``breaks`` marks; an empty ``breaks`` marks none), no occurrences yet; and add each
    symbol's occurrences to ``counts``, each ``weight[q]`` times (an empty ``weight``: once)."""
    n = data.size
    for q in range(n):
        node[q, SYM] = data[q]
        counts[data[q]] += weight[q] if weight.size else 1
        cut_before = q == 0 or (breaks.size > 0 and breaks[q - 1])
        cut_after = q == n - 1 or (breaks.size > 0 and breaks[q])
        node[q, PRV] = EMPTY if cut_before else q - 1
        node[q, NXT] = EMPTY if cut_after else q + 1
        node[q, OSLOT] = EMPTY


@kernel
def count_all(begin, off, node, pool, table, pairs, changed, meta, weight, zcache, direct):
    """Count every pair of a freshly loaded string (node order is string order) from node
    ``begin``, at offset ``off`` in its run of equal symbols: what :func:`recount_region` does
    segment by segment, with byte pairs found in ``direct`` (a 64K table, all -1) instead of
    the hash table. Returns (node, offset) where it stopped: the end, or a pair that would
    need a slot or hash-table room the string has not got (it goes on from there once grown)."""
    for q in range(begin, node.shape[0]):
        r = node[q, NXT]
        if r == EMPTY:
            off = 0
            continue
        x = node[q, SYM]
        y = node[r, SYM]
        if x != y or off % 2 == 0:
            if x < BYTE_SYMBOLS and y < BYTE_SYMBOLS and direct[x * BYTE_SYMBOLS + y] != EMPTY:
                slot = direct[x * BYTE_SYMBOLS + y]
            else:
                if meta[N_SLOTS] >= pairs.shape[0] or not has_room(table, meta, 1):
                    return q, off
                slot = slot_of(x, y, table, meta, pairs)
                if x < BYTE_SYMBOLS and y < BYTE_SYMBOLS:
                    direct[x * BYTE_SYMBOLS + y] = slot
            count_at(q, slot, node, pool, pairs, changed, meta, weight)
        off = off + 1 if x == y else 0
    return node.shape[0], 0


@numba.njit(cache=True, inline="always")
def _prefetch_neighbour(q, node, pairs):
    """Prefetch the pair record that uncounting the pair at node q will touch."""
    if q == EMPTY:
        return
    slot = node[q, OSLOT]
    if slot >= 0:
        prefetch_row(pairs, slot)


@numba.njit(cache=True, inline="always")
def _prefetch_site(i, node, pairs):
    """Prefetch for a site whose node is (by now) cached: the pairs left and right of it."""
    _prefetch_neighbour(node[i, PRV], node, pairs)
    _prefetch_neighbour(node[i, NXT], node, pairs)


@kernel
def merge(slot_ab, a, b, z, node, pool, table, pairs, changed, meta, weight, zcache, counts, sites):
    """Replace every counted occurrence of (a, b), whose slot is ``slot_ab`` (-1: never seen),
    by z, left to right. Returns the number of replacements (weighted); the slots whose count
    changed are in ``changed[:meta[META_N_CHANGED]]``."""
    meta[META_TOUCH_EPOCH] += 1
    meta[META_N_CHANGED] = 0
    if slot_ab == EMPTY:
        return 0
    n = 0
    order = sites[0]
    e = pairs[slot_ab].head
    while e != EMPTY:
        q = pool[e, POS]
        if node[q, OSLOT] == slot_ab:  # else stale
            order[n] = q
            n += 1
        elif node[q, OSLOT] == -(slot_ab + 2):  # its entry goes with the list (the pair may come back:
            node[q, OSLOT] = EMPTY              # a deletion splits a symbol into the pair it was made of)
        e = pool[e, LINK]
    # Lists are mostly in reverse string order (a merge adds its new pairs left to right, each
    # at the head), so reversing first makes the sort cheap.
    for t in range(n // 2):
        order[t], order[n - 1 - t] = order[n - 1 - t], order[t]
    sort_in_place(order, n, sites[1])
    replaced = 0
    for t in range(n):
        if t + PREFETCH_AHEAD < n:
            prefetch_row(node, order[t + PREFETCH_AHEAD])
        if t + PREFETCH_AHEAD // 2 < n:
            _prefetch_site(order[t + PREFETCH_AHEAD // 2], node, pairs)
        i = order[t]
        if node[i, OSLOT] != slot_ab:  # uncounted by an earlier site of this merge
            continue
        j = node[i, NXT]
        start, off = region_start(i, node)
        # the rewritten part ends at j, or for (a, a) at the end of the run of a's
        last = j
        if a == b:
            last = i
            while node[last, NXT] != EMPTY and node[node[last, NXT], SYM] == a:
                last = node[last, NXT]
        # region end: past the run that holds the right neighbour
        after = node[last, NXT]
        if after != EMPTY:
            s = node[after, SYM]
            while after != EMPTY and node[after, SYM] == s:
                after = node[after, NXT]
        recount_region(start, off, after, False, slot_ab, z, zcache, node, pool, table, pairs, changed, meta, weight)
        w = weight[i] if weight.size else 1  # every node of a word carries the word's count
        if a != b:
            node[i, SYM] = z
            unlink(j, node)
            replaced += w
        else:
            end = node[last, NXT]
            q = i
            while q != end:
                r = node[q, NXT]
                if r == end:
                    break
                node[q, SYM] = z
                unlink(r, node)
                replaced += w
                q = node[q, NXT]
        recount_region(start, off, after, True, EMPTY, z, zcache, node, pool, table, pairs, changed, meta, weight)
    # every occurrence of (a, b) was replaced (a merge cannot make a new one), so its list is empty
    pairs[slot_ab].head = EMPTY
    counts[a] -= replaced
    counts[b] -= replaced
    counts[z] = replaced
    meta[META_LENGTH] -= replaced
    return replaced


@kernel
def split_symbol(t, pieces, offsets, node, pool, table, pairs, changed, meta, weight, zcache, counts):
    """Replace every occurrence of symbol ``t`` by ``pieces``, piece k taking the node of its
    first byte, ``offsets[k]`` bytes past the occurrence's first (the merges that made t unlinked
    those nodes; a node is a byte of the loaded text). Visits every node: a deletion is rare.
    Returns the occurrences replaced (weighted); the changed slots are in ``changed``."""
    meta[META_TOUCH_EPOCH] += 1
    meta[META_N_CHANGED] = 0
    k = pieces.size
    replaced = 0
    for i in range(node.shape[0]):
        if node[i, SYM] != t:
            continue
        start, off, after = region_bounds(i, node)
        recount_region(start, off, after, False, EMPTY, EMPTY, zcache, node, pool, table, pairs, changed, meta, weight)
        nxt = node[i, NXT]
        node[i, SYM] = pieces[0]
        last = i
        for j in range(1, k):
            q = i + offsets[j]
            node[q, SYM] = pieces[j]
            node[q, PRV] = last
            node[last, NXT] = q
            last = q
        node[last, NXT] = nxt
        if nxt != EMPTY:
            node[nxt, PRV] = last
        w = weight[i] if weight.size else 1
        counts[t] -= w
        for j in range(k):
            counts[pieces[j]] += w
        meta[META_LENGTH] += (k - 1) * w
        replaced += w
        recount_region(start, off, after, True, EMPTY, EMPTY, zcache, node, pool, table, pairs, changed, meta, weight)
    return replaced


#: pair slots an opened boundary may make: the pair across it, and one more where a run of
#: equal symbols is counted again
SLOTS_PER_OPENING = 2
#: how many boundaries ahead an opening prefetches
OPEN_AHEAD = 16


@kernel
def open_boundaries(positions, begin, node, pool, table, pairs, changed, meta, weight, zcache):
    """Join the string across the boundary after each byte of ``positions[begin:]``
    (ascending; cuts the load made), counting the pairs across it: the right segment's first
    node is never unlinked (a merge unlinks its right node), the left one's last symbol is the
    live node at or before the byte. Where both sides' symbols are equal, the right run's pairs
    are counted again with their new parity. The changed slots are in ``changed``, gathered
    over the calls of one opening (``begin`` 0 starts one). Returns where it stopped: the end,
    or the first boundary for which the slots or the hash table had no room."""
    if begin == 0:
        meta[META_TOUCH_EPOCH] += 1
        meta[META_N_CHANGED] = 0
    n = positions.size
    for k in range(begin, n):
        if meta[N_SLOTS] + SLOTS_PER_OPENING > pairs.shape[0] or not has_room(table, meta, SLOTS_PER_OPENING):
            return k
        # the pairs a few boundaries on: their hash rows, then (rows cached by now) their
        # records, asked for ahead so that the misses overlap (hints: a merged node's stale
        # symbol only makes one useless)
        if k + OPEN_AHEAD < n:
            p = positions[k + OPEN_AHEAD]
            prefetch_row(table, home_row(table, node[p, SYM], node[p + 1, SYM]))
        if k + OPEN_AHEAD // 2 < n:
            p = positions[k + OPEN_AHEAD // 2]
            ahead = find_slot(table, node[p, SYM], node[p + 1, SYM])
            if ahead >= 0:
                prefetch_row(pairs, ahead)
        f = positions[k] + 1
        last = positions[k]
        while node[last, SYM] == EMPTY:
            last -= 1
        if node[last, NXT] != EMPTY or node[f, PRV] != EMPTY:
            continue  # not a cut (or opened already)
        s = node[f, SYM]
        after = f
        while after != EMPTY and node[after, SYM] == s:
            after = node[after, NXT]
        same = node[last, SYM] == s
        if same:
            recount_region(f, 0, after, False, EMPTY, EMPTY, zcache, node, pool, table, pairs, changed, meta, weight)
        off = run_parity(last, node)
        node[last, NXT] = f
        node[f, PRV] = last
        recount_region(last, off, after if same else node[f, NXT], True, EMPTY, EMPTY, zcache, node, pool, table, pairs,
                changed, meta, weight)
    return positions.size


@numba.njit(cache=True)
def changed_pairs(changed, n_changed, pairs):
    """(s0, s1, new count) of the touched slots whose count really changed."""
    keep = 0
    for t in range(n_changed):
        if pairs[changed[t]].cnt != pairs[changed[t]].oldcnt:
            keep += 1
    s0 = np.empty(keep, dtype=np.int64)
    s1 = np.empty(keep, dtype=np.int64)
    k = np.empty(keep, dtype=np.int64)
    i = 0
    for t in range(n_changed):
        slot = changed[t]
        if pairs[slot].cnt != pairs[slot].oldcnt:
            s0[i] = pairs[slot].ps0
            s1[i] = pairs[slot].ps1
            k[i] = pairs[slot].cnt
            i += 1
    return s0, s1, k


@kernel
def replay(rules, start, record, n_out, sum_out, acc,
           node, pool, table, pairs, changed, meta, weight, zcache, counts, sites):
    """Apply rules[start:] in order (rule i makes symbol 256 + i), each by left-to-right
    replacement of its counted occurrences: exactly what training did, at a cost proportional to
    the sites. With ``record``, n_out[i] / sum_out[i] get N and sum lf(k_j) before rule i (acc[0]
    carries the sum). Returns the index of the next rule: rules.shape[0] when done, less when the
    slot arrays must grow first."""
    for i in range(start, rules.shape[0]):
        a = rules[i, 0]
        b = rules[i, 1]
        if record:
            n_out[i] = meta[META_LENGTH]
            sum_out[i] = acc[0]
        slot = find_slot(table, a, b)
        if slot == EMPTY or pairs[slot].cnt == 0:
            continue
        z = 256 + i
        room = room_for(pairs[slot].nsites, z)
        if meta[N_SLOTS] + room > pairs.shape[0] or not has_room(table, meta, room):
            return i
        old_a = counts[a]
        old_b = counts[b]
        merge(slot, a, b, z, node, pool, table, pairs, changed, meta, weight, zcache, counts, sites)
        if record:
            acc[0] += merge_sum_delta(old_a, counts[a], old_b, counts[b], counts[z], a == b)
    return rules.shape[0]


class LinkedString:
    """The string and its pair counts, kept incrementally (see the module docstring); the
    ``linked`` rewriter is this class, and the engine's fused loop merges in its arrays."""

    #: pair records allocated at load (more as needed: growth is in place, by half)
    initial_slots = 1 << 17
    #: boundaries an opening makes room for at a time
    OPEN_ROOM = 1 << 16
    #: pool entries allocated at load beyond one per symbol, as a fraction of the length
    pool_headroom = 0.25

    def __init__(self):
        self.load(np.zeros(0, dtype=np.uint8))

    def load(self, data, breaks=None, weights=None, dictionary_size: int = BYTE_SYMBOLS):
        """Load a string; ``weights[i]`` (optional) counts position i that many times, so a list
        of distinct words, each weighted by its count, trains like the whole text. With a
        ``dictionary_size`` above the bytes', ``data`` holds symbols made by that many minus 256
        merges already learned (an int array), and the next merge makes symbol
        ``dictionary_size``: a run goes on from there."""
        n = len(data)
        node = np.empty((n, NODE_FIELDS), dtype=np.int32)
        cuts = np.zeros(0, dtype=np.bool_) if breaks is None else np.asarray(breaks, dtype=np.bool_)
        self.weight = np.zeros(0, dtype=np.int64) if weights is None else np.ascontiguousarray(weights, dtype=np.int64)
        data = np.asarray(data)
        if data.size and data.min() < 0:
            raise ValueError("a string's symbols are ids from 0")
        self.counts = np.zeros(max(dictionary_size, int(data.max(initial=0)) + 1), dtype=np.int64)
        load_nodes(data, cuts, self.weight, node, self.counts)
        self.node = node
        # a merge's sites, sort scratch: as much is touched (made resident) as the largest merge uses
        self.sites = np.empty((2, n // 2 + 1), dtype=np.int32)
        self.meta = np.zeros(META_FIELDS, dtype=np.int64)
        self.meta[META_LENGTH] = n if weights is None else int(self.weight.sum())
        cap = min(max(n, 16), self.initial_slots)
        if dictionary_size == BYTE_SYMBOLS and cap < min(n, BYTE_SYMBOLS * BYTE_SYMBOLS):  # a slot a byte pair
            codes = node[:-1, SYM] * BYTE_SYMBOLS + node[1:, SYM]
            cap = max(cap, int(np.count_nonzero(np.bincount(codes))) + 16)
        self.pair_records = np.empty(cap, dtype=PAIR)  # a record is written when its slot is made
        self.changed = np.empty(cap, dtype=np.int32)
        self.table = new_table(cap)
        self.pool = np.empty((n + int(n * self.pool_headroom) + 16, 2), dtype=np.int32)  # count_all appends < n
        self.zcache = np.zeros((self.counts.size, 4), dtype=np.int64)
        self.next_symbol = dictionary_size
        direct = np.full(BYTE_SYMBOLS * BYTE_SYMBOLS, EMPTY, dtype=np.int32)
        q, off = count_all(0, 0, *self.arrays()[:8], direct)
        while q < n:  # symbols past the bytes: room for their pairs as they come
            self._reserve(max(self.pair_records.shape[0] // 2, 16))
            q, off = count_all(q, off, *self.arrays()[:8], direct)

    def capacities(self) -> tuple[int, int]:
        """(pair slots, symbols): what an index numbered by this string's slots needs."""
        return self.pair_records.shape[0], self.counts.size

    def slots_of(self, s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
        """The slot of each pair (s0[i], s1[i]), every one a pair this string has seen."""
        slots = find_slots(self.table, s0, s1)
        if slots.size and int(slots.min()) < 0:
            raise AssertionError("a reported pair has no slot in the linked string")
        return slots

    def grow_for_pending_merge(self) -> None:
        """Room for the merge the fused loop stopped before (it returned NEED_ROOM) and for the
        symbol it makes."""
        self._reserve_merge(int(self.meta[META_ROOM]), self.next_symbol)
        self._reserve_symbols(self.next_symbol + 1)

    def arrays(self) -> StringArrays:
        """The string's arrays, named, as the compiled loops take them."""
        return StringArrays(self.node, self.pool, self.table, self.pair_records, self.changed, self.meta,
                            self.weight, self.zcache, self.counts, self.sites)

    def _reserve_merge(self, nsites: int, z: int) -> None:
        """Room for a merge with ``nsites`` sites making symbol ``z``."""
        self._reserve(room_for(nsites, z))

    @property
    def n_slots(self) -> int:
        """The pairs seen so far (each has a slot for good)."""
        return int(self.meta[N_SLOTS])

    @property
    def pool_rebuilds(self) -> int:
        return int(self.meta[META_REBUILDS])

    def _reserve(self, n_new: int) -> None:
        need = int(self.meta[N_SLOTS]) + n_new
        if need > self.pair_records.shape[0]:
            size = max(need, self.pair_records.shape[0] * 3 // 2)  # in place: growing by half wastes less
            grow(self, "pair_records", size, None)
            grow(self, "changed", size, None)
        if not has_room(self.table, self.meta, n_new):
            self.table = new_table(int(self.meta[HASH_USED]) + n_new)
            rehash(self.table, self.pair_records["ps0"], self.pair_records["ps1"], int(self.meta[N_SLOTS]))

    @property
    def length(self):
        return int(self.meta[META_LENGTH])

    def symbol_counts(self):
        return self.counts

    def pairs(self):
        records = self.pair_records[: int(self.meta[N_SLOTS])]
        live = records[records["cnt"] > 0]
        return live["ps0"].astype(np.int64), live["ps1"].astype(np.int64), live["cnt"]

    def symbols(self):
        sym = self.node[:, SYM]
        return sym[sym >= 0]

    def _reserve_symbols(self, z: int) -> None:
        """Make symbol id ``z`` addressable in the counts."""
        if z >= self.counts.size:
            grow(self, "counts", max(2 * self.counts.size, z + 1), 0)
            grow(self, "zcache", self.counts.size, 0)

    def _sites_at(self, slot: int) -> int:
        return int(self.pair_records[slot]["nsites"]) if slot >= 0 else 0

    def apply(self, s0, s1):
        slot = find_slot(self.table, s0, s1)  # slots never move, so it survives a rehash
        z = self.next_symbol
        self._reserve_merge(self._sites_at(slot), z)
        self.next_symbol += 1
        self._reserve_symbols(z)
        sites = merge(slot, s0, s1, z, *self.arrays())
        a, b, k01 = changed_pairs(self.changed, int(self.meta[META_N_CHANGED]), self.pair_records)
        return MergeReport(symbol=z, sites=int(sites), s0=a, s1=b, k01=k01)

    def _report(self, symbol: int, sites: int) -> MergeReport:
        a, b, k01 = changed_pairs(self.changed, int(self.meta[META_N_CHANGED]), self.pair_records)
        return MergeReport(symbol=symbol, sites=sites, s0=a, s1=b, k01=k01)

    def delete(self, step) -> MergeReport:
        """Split every occurrence of ``step.symbol`` into ``step.pieces`` (an
        :class:`~.events.Deletion`); the report's ``sites`` are the occurrences (weighted)."""
        sites = int(np.count_nonzero(self.node[:, SYM] == step.symbol))
        if sites == 0:
            none = np.zeros(0, dtype=np.int64)
            return MergeReport(symbol=step.symbol, sites=0, s0=none, s1=none, k01=none)
        self._reserve((step.pieces.size + 1) * sites + 8)
        replaced = split_symbol(step.symbol, step.pieces, step.offsets, *self.arrays()[:8], self.counts)
        return self._report(step.symbol, int(replaced))

    def open(self, positions) -> MergeReport:
        """Open the boundaries after the bytes ``positions`` (ascending): pairs across them
        count from now on; the report's ``sites`` are the boundaries."""
        positions = np.ascontiguousarray(positions, dtype=np.int64)
        done = 0
        while True:  # room as the new pairs need it: most boundaries make pairs seen before
            self._reserve(SLOTS_PER_OPENING * min(positions.size - done, self.OPEN_ROOM) + 8)
            done = open_boundaries(positions, done, *self.arrays()[:8])
            if done == positions.size:
                break
        return self._report(-1, int(positions.size))

    def regroup(self, tokens, word_starts, weights=None) -> tuple[MergeReport, np.ndarray]:
        """Lay the string out again as tokens (see :mod:`.regroup`): token t a copy of the
        segment that starts at node ``word_starts[tokens[t]]``, a segment of its own, counted
        ``weights[t]`` times (None: once). The slots are numbered anew, the pairs counted
        before first, in their order (an index at the slots is built again). Returns the report
        (the pairs whose count changed: none where the tokens' weights add up to the segments')
        and each token's last node, which names the boundary after it from now on."""
        tokens = np.ascontiguousarray(tokens, dtype=np.int64)
        word_starts = np.ascontiguousarray(word_starts, dtype=np.int64)
        lengths = np.empty(word_starts.size, dtype=np.int64)
        word_lengths(self.node, word_starts, lengths)
        word_offsets = np.concatenate([[0], np.cumsum(lengths)])
        symbols = np.empty((int(word_offsets[-1]), 2), dtype=np.int32)
        gather_words(self.node, word_starts, word_offsets, self._renumber_counted(), symbols)
        n = int(lengths[tokens].sum())
        del lengths
        # the old arrays go before the new ones are made
        self.node, self.sites, self.pool = (np.empty((0, 2), dtype=np.int32),) * 3
        self.weight = np.zeros(0, dtype=np.int64)
        node = np.empty((n, NODE_FIELDS), dtype=np.int32)
        weight = np.empty(n if weights is not None else 0, dtype=np.int64)
        token_last = np.empty(tokens.size, dtype=np.int64)
        lay_out(tokens, word_offsets, symbols, np.zeros(0, dtype=np.int64) if weights is None
                else np.ascontiguousarray(weights, dtype=np.int64), node, weight, token_last)
        del symbols
        self.node, self.weight = node, weight
        self.sites = np.empty((2, n // 2 + 1), dtype=np.int32)
        self.pool = np.empty((n + int(n * self.pool_headroom) + 16, 2), dtype=np.int32)
        recount(self.node, self.pool, self.pair_records, self.changed, self.meta, self.weight, self.counts)
        return self._report(-1, int(tokens.size)), token_last

    def _renumber_counted(self) -> np.ndarray:
        """Drop the slots of the pairs not counted: the others move down, in their order, and
        the hash table is filled again. Returns each old slot's new one (-1: dropped); the nodes
        still hold the old ones."""
        n_slots = int(self.meta[N_SLOTS])
        counted = self.pair_records["cnt"][:n_slots] > 0
        kept = int(np.count_nonzero(counted))
        renumber = np.full(n_slots, EMPTY, dtype=np.int32)
        renumber[counted] = np.arange(kept, dtype=np.int32)
        self.pair_records[:kept] = self.pair_records[:n_slots][counted]
        self.meta[N_SLOTS] = self.meta[HASH_USED] = kept
        self.table.fill(EMPTY)
        rehash(self.table, self.pair_records["ps0"], self.pair_records["ps1"], kept)
        return renumber

    def replay(self, rules: np.ndarray, record: bool = False, events=()):
        """Apply ``rules`` in order to the loaded string (see :func:`replay`), and ``events``
        (:mod:`.events`: deletions and openings, in the order :func:`~.events.schedule` gives)
        where they happened. With ``record``, returns (N before each rule and after the last,
        sum lf(k_i) likewise)."""
        rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        r = len(rules)
        self._reserve_symbols(BYTE_SYMBOLS + r)
        n_out = np.zeros(r + 1 if record else 1, dtype=np.int64)
        sum_out = np.zeros(r + 1 if record else 1)
        acc = np.array([string_log_sum(self.counts, BYTE_SYMBOLS) if record else 0.0])
        i = 0
        for event in [*events, None]:
            stop = r if event is None else min(event.point[0], r)
            while i < stop:
                i = replay(rules[:stop], i, record, n_out, sum_out, acc, *self.arrays())
                if i < stop:
                    self._reserve_merge(self._sites_at(find_slot(self.table, rules[i, 0], rules[i, 1])),
                                        BYTE_SYMBOLS + i)
            if event is None:
                break
            if hasattr(event, "symbol"):
                self.delete(event)
                if record:  # a deletion moves several counts: the sum is taken again
                    acc[0] = string_log_sum(self.counts, BYTE_SYMBOLS + i)
            else:
                self.open(event.positions)
        self.next_symbol = BYTE_SYMBOLS + r
        if record:
            n_out[r] = self.length
            sum_out[r] = acc[0]
        return n_out, sum_out
