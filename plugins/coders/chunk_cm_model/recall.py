"""What chunk-cm recalls of where ids repeat: the run model (per context, the rank seen there
last and its repeats, paq8's run map), the match model (the id that followed the last
occurrence of the previous ids, while the ids since agree; with ``expect``, that id is a
context too) and the text-indirect contexts' table (the chunk that followed the last few bytes,
or the word in progress, last time)."""

from __future__ import annotations

import numba
import numpy as np
from chunkpress.plugin import inlined_kernel, kernel, prefetch_row

from ..mixing.hashing import B8, K1, K2, K3, M8, context_hash, mix64
from ..mixing.logistic import STRETCH
from .layout import (
    C_EXPECTED,
    EXPECTED_LENGTHS,
    H_ID1,
    H_ID2,
    HISTORY_BITS,
    IN_CONTEXTS,
    INDIRECT_BYTES,
    M_AT,
    M_LEN,
    M_LONG,
    M_PTR,
    M_SHORT,
    MATCH_IDS,
    MATCH_VERIFY,
    R_CHECK,
    R_COUNT,
    R_MAP,
    R_RANK,
    R_SLOT,
)

# Per context, the rank seen there last and how many times in a row (paq8's run map): at low
# orders, where many ranks share a context, the bit histories weigh the past evenly and the
# last rank seen is the better guess. One entry per run and chunk: a 24-bit key check, the rank
# + 1 (32 bits) and the repeats (8 bits). While the tree's path leads to a run's rank, the run
# map (repeats, expected bit, bit position) gives a mixer input, and the runs' agreement picks
# mixer 1's weight set.


_S40 = np.uint64(40)
_RANK_BITS = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True, inline="always")
def n_runs(tb):
    return tb.run_contexts.size + (tb.run_ids > 0)


@numba.njit(cache=True, inline="always")
def n_inputs(tb):
    """The inputs every mixer reads: match, expected bit, bias, the contexts, the runs, the
    direct probabilities."""
    return IN_CONTEXTS + tb.order.size + n_runs(tb) + tb.direct.size


@numba.njit(cache=True, inline="always")
def mix2_inputs(tb):
    """Mixer 2's inputs: those, then (model 4) a flag a context."""
    return n_inputs(tb) + tb.order.size * tb.empty_flags


@numba.njit(cache=True, inline="always")
def run_key(tb, sc, ranks, t, i):
    """Run ``i``'s key for chunk ``t``: a context's hash, or the last ``run_ids`` ids hashed."""
    if i < tb.run_contexts.size:
        return mix64(sc.every[tb.run_contexts[i]] + K3)
    h = np.uint64(tb.run_ids) * K2
    for k in range(1, tb.run_ids + 1):
        h = (h + np.uint64(ranks[t - k] + 2 if t >= k else 0)) * K1
    return mix64(h)


@numba.njit(cache=True, inline="always")
def run_lookup(tb, sc, ranks, t):
    """Each run's entry for chunk ``t``, asked for: :func:`run_read` reads it at the chunk's
    first node, once the contexts' first slots are found (the entries miss the cache)."""
    mask = np.uint64(tb.run.size - 1)
    for i in range(n_runs(tb)):
        h = run_key(tb, sc, ranks, t, i)
        sc.runs[i, R_SLOT] = np.int64(h & mask)
        sc.runs[i, R_CHECK] = np.int64(h >> _S40)
        prefetch_row(tb.run, sc.runs[i, R_SLOT])


@inlined_kernel
def run_read(tb, sc):
    """Each run's rank and repeats (rank -1 where its entry holds another key)."""
    for i in range(n_runs(tb)):
        e = tb.run[sc.runs[i, R_SLOT]]
        if np.int64(e >> _S40) == sc.runs[i, R_CHECK]:
            sc.runs[i, R_RANK] = np.int64((e >> B8) & _RANK_BITS) - 1
            sc.runs[i, R_COUNT] = np.int64(e & M8)
        else:
            sc.runs[i, R_RANK] = -1
            sc.runs[i, R_COUNT] = 0


@numba.njit(cache=True, inline="always")
def runs_off_path(tb, sc, lo, hi):
    """Forget, for this chunk, the runs whose rank is not under the node ``lo:hi``."""
    for i in range(n_runs(tb)):
        if not (lo <= sc.runs[i, R_RANK] < hi):
            sc.runs[i, R_RANK] = -1


@numba.njit(cache=True, forceinline=True)
def run_inputs(tb, sc, mid, jj, first):
    """The runs' mixer inputs from ``tx[first]`` on, at a node splitting at ``mid``; returns the
    vote (bit 0: a run expects 0, bit 1: a run expects 1)."""
    vote = np.int64(0)
    for i in range(n_runs(tb)):
        if sc.runs[i, R_RANK] >= 0:
            eb = np.int64(sc.runs[i, R_RANK] >= mid)
            vote |= 1 << eb
            sc.runs[i, R_MAP] = ((((i << 4) | min(sc.runs[i, R_COUNT], 15)) << 1 | eb) << 3) | min(jj, 7)
            sc.tx[first + i] = STRETCH[tb.rm[sc.runs[i, R_MAP]] >> 20]
        else:
            sc.runs[i, R_MAP] = -1
            sc.tx[first + i] = 0
    return vote


@kernel
def run_update(tb, sc, rank):
    """The chunk is known: each run's entry now holds it, one repeat more if it was expected.
    Not inlined: inlined into ``code_chunks``, its store made LLVM compile the whole loop worse
    (the same bytes, a slower coder); a call a chunk costs nothing measurable."""
    for i in range(n_runs(tb)):
        slot, check = sc.runs[i, R_SLOT], sc.runs[i, R_CHECK]
        e = tb.run[slot]
        same = np.int64(e >> _S40) == check and np.int64((e >> B8) & _RANK_BITS) == rank + 1
        count = np.int64(e & M8) + 1 if same else np.int64(1)
        count = min(count, np.int64(255))
        tb.run[slot] = (np.uint64(check) << _S40) | (np.uint64(rank + 1) << B8) | np.uint64(count)


@numba.njit(cache=True, forceinline=True)
def match_find(mm_ht, ranks, t, h):
    """Where the ids before chunk ``t`` occurred last (table entry ``h``), verified backwards:
    (the chunk after them, the match length in ids), or (-1, 0); records ``t`` for the next
    lookup."""
    cand = np.int64(mm_ht[h])
    mm_ht[h] = t
    if cand <= 0:
        return -1, 0
    k = 0
    while k < MATCH_VERIFY and cand - 1 - k >= 0 and ranks[cand - 1 - k] == ranks[t - 1 - k]:
        k += 1
    if k < MATCH_IDS:
        return -1, 0
    return cand, k


@inlined_kernel
def follow_match(ranks, t, rank, tb, sc):
    """The match model after chunk ``t``: follow the match, and ask for the entries of the two
    lookups (the last ``MATCH_IDS`` ids, and model 4's last ``long_ids``): :func:`match_lookup`
    reads them at the next chunk's first node, once its contexts' slots are found. With
    ``expect``, the expected chunk's context as the match stands now, so that its first slot is
    asked for with the others'."""
    h = sc.hist
    mt = sc.match
    if mt[M_LEN] > 0:
        if ranks[mt[M_PTR]] == rank:
            mt[M_PTR] += 1
            mt[M_LEN] = min(mt[M_LEN] + 1, 65535)
        else:
            mt[M_LEN] = 0
    mt[M_AT] = t + 1
    mt[M_LONG] = -1
    n = tb.long_ids
    if n and t + 1 >= n:
        lh = np.uint64(n)
        for k in range(n):
            lh = (lh + np.uint64(ranks[t - k] + 1)) * K1
        mt[M_LONG] = np.int64(mix64(lh) & np.uint64(tb.mm_long.size - 1))
        prefetch_row(tb.mm_long, mt[M_LONG])
    if tb.expected >= 0:  # the expected chunk's context as it stands (the lookups may change it)
        sc.every[C_EXPECTED] = expected_context(match_expected(ranks, mt), mt[M_LEN])
    mt[M_SHORT] = -1
    if t + 1 >= MATCH_IDS:
        ids_hash = mix64(h[H_ID1] * K1 + h[H_ID2] * K2 + np.uint64(MATCH_IDS))
        mt[M_SHORT] = np.int64(ids_hash & np.uint64(tb.mm_ht.size - 1))
        prefetch_row(tb.mm_ht, mt[M_SHORT])


@inlined_kernel
def match_lookup(tb, ranks, sc):
    """The lookups :func:`follow_match` asked for: model 4's long one taken where the match in
    hand is shorter (two ids often repeat in a new place; four seldom do), else its entry kept
    up to date; then the two-id one where there is no match."""
    mt = sc.match
    at = mt[M_AT]
    if at == 0:
        return
    mt[M_AT] = 0
    if mt[M_LONG] >= 0:
        if mt[M_LEN] < tb.long_ids:
            cand, k = match_find(tb.mm_long, ranks, at, mt[M_LONG])
            if cand >= 0 and k >= tb.long_ids:
                mt[M_PTR] = cand
                mt[M_LEN] = k
        else:
            tb.mm_long[mt[M_LONG]] = at
    if mt[M_SHORT] >= 0:
        if mt[M_LEN] == 0:
            cand, k = match_find(tb.mm_ht, ranks, at, mt[M_SHORT])
            if cand >= 0:
                mt[M_PTR] = cand
                mt[M_LEN] = k
        else:
            tb.mm_ht[mt[M_SHORT]] = at


@numba.njit(cache=True, inline="always")
def match_expected(ranks, mt):
    """The rank the match model's state ``mt`` expects next, -1 where it has no match."""
    return np.int64(ranks[mt[M_PTR]]) if mt[M_LEN] > 0 else -1


@numba.njit(cache=True, inline="always")
def expected_context(expected, m_len):
    """The expected chunk's context: rank ``expected`` (-1: no match) and the match's length in
    ids (``m_len``, up to :data:`EXPECTED_LENGTHS`). Its tag, 25, follows the 1..24 of the
    contexts ``model.set_contexts`` hashes, 26 is the opener's and 27 and 28 the scoped ones'."""
    return context_hash(25, np.uint64(expected + 1), np.uint64(min(m_len, EXPECTED_LENGTHS)))


@numba.njit(cache=True, inline="always")
def text_follow_entry(tf, text, word, k):
    """Indirect context ``k``'s entry in table ``tf``: its key hashed, the last
    ``INDIRECT_BYTES[k]`` bytes of ``text`` (the bytes before a chunk, newest lowest) or, where
    that is 0, ``word`` (the word in progress's hash)."""
    n = INDIRECT_BYTES[k]
    key = text & np.uint64((1 << (8 * n)) - 1) if n else word
    return np.int64(mix64(key + np.uint64(k) * K3) & np.uint64(tf.size - 1))


@numba.njit(cache=True, inline="always")
def text_followed(tf, text, word, k):
    """The chunk (rank + 1; 0: none) that followed indirect context ``k``'s key last time (the
    first context's: with the ones before it, :func:`text_follow_record`)."""
    return np.uint64(tf[text_follow_entry(tf, text, word, k)])


@numba.njit(cache=True, inline="always")
def text_follow_record(tf, text, word, rank, keep):
    """Chunk ``rank`` followed ``text`` and ``word``: each indirect context's entry now holds it
    (rank + 1), the first one's above the bits ``keep`` of the followers before it."""
    for k in range(len(INDIRECT_BYTES)):
        e = text_follow_entry(tf, text, word, k)
        older = (tf[e] & keep) << HISTORY_BITS if k == 0 else 0
        tf[e] = (rank + 1) | older
