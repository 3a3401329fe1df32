"""Regrouping the linked string: the same text laid out again in larger segments, each pair
carried over with its slot (renumbered), so nothing is hashed again.

A string of distinct words, each weighted by its count, trains like the text it was counted
from; past a point (SuperBPE's transition) the segments to go on with are runs of those words
(units), each weighted by its own count. Loading the units afresh would hash every pair of them
again. Regrouping instead copies each token's word (its symbols as merged so far, and at each
node the slot of the pair counted there) into a new node array, then rebuilds the occurrence
lists and recounts. The slots are numbered anew on the way, the pairs counted before first in
their order: the slots of pairs that merges left uncounted (a sixth of them after SuperBPE's
first stage) are not carried into the larger string's arrays. Where the weights of the tokens
add up to the words' (as the units' do), no pair's count changes; any that does is reported, as
a merge reports its changes.
"""

from __future__ import annotations

from .kernels import kernel
from .linkednodes import (
    META_LENGTH,
    META_LIVE,
    META_N_CHANGED,
    META_POOL_USED,
    META_TOUCH_EPOCH,
    NXT,
    OSLOT,
    PRV,
    SYM,
    append_entry,
)
from .pairtable import EMPTY, N_SLOTS


@kernel
def word_lengths(node, word_starts, out):
    """The live nodes (symbols) of each word: word w is the segment that starts at node
    ``word_starts[w]`` (a segment's first node is never unlinked: a merge keeps its left node)."""
    for w in range(word_starts.size):
        q = word_starts[w]
        k = 0
        while q != EMPTY:
            k += 1
            q = node[q, NXT]
        out[w] = k


@kernel
def gather_words(node, word_starts, word_offsets, renumber, symbols):
    """Each word's symbols and the slots of the pairs counted at them (-1: none), numbered anew
    by ``renumber``, one word after another (word w at ``word_offsets[w]``): a compact copy
    that laying the tokens out reads from the cache, where the words' nodes lie all over."""
    for w in range(word_starts.size):
        q = word_starts[w]
        k = word_offsets[w]
        while q != EMPTY:
            symbols[k, 0] = node[q, SYM]
            slot = node[q, OSLOT]
            symbols[k, 1] = renumber[slot] if slot >= 0 else EMPTY  # a stale entry is not carried over
            k += 1
            q = node[q, NXT]


@kernel
def lay_out(tokens, word_offsets, symbols, token_weights, node, weight, token_last):
    """Fill ``node`` with the tokens one after another: token t a copy of word ``tokens[t]``'s
    symbols and slots (see :func:`gather_words`), a segment of its own, each of its nodes
    weighted ``token_weights[t]`` (where ``weight`` has room); ``token_last[t]``: its last node."""
    q = 0
    weighted = weight.size > 0
    for t in range(tokens.size):
        w = tokens[t]
        first = q
        for k in range(word_offsets[w], word_offsets[w + 1]):
            node[q, SYM] = symbols[k, 0]
            node[q, NXT] = q + 1
            node[q, PRV] = q - 1
            node[q, OSLOT] = symbols[k, 1]
            q += 1
        node[first, PRV] = EMPTY
        node[q - 1, NXT] = EMPTY
        token_last[t] = q - 1
        if weighted:
            for p in range(first, q):
                weight[p] = token_weights[t]


@kernel
def recount(node, pool, pairs, changed, meta, weight, counts):
    """Every pair's occurrence list, sites and count, and every symbol's count, from the nodes
    and the slots they hold (the pool empty); the slots whose count changed go to ``changed``."""
    n_slots = meta[N_SLOTS]
    for slot in range(n_slots):
        pairs[slot].oldcnt = pairs[slot].cnt
        pairs[slot].cnt = 0
        pairs[slot].head = EMPTY
        pairs[slot].nsites = 0
    for s in range(counts.size):
        counts[s] = 0
    meta[META_POOL_USED] = 0
    meta[META_LIVE] = 0
    length = 0
    for q in range(node.shape[0]):
        w = weight[q] if weight.size else 1
        counts[node[q, SYM]] += w
        length += w
        slot = node[q, OSLOT]
        if slot >= 0:
            append_entry(q, slot, pool, pairs, meta)
            pairs[slot].cnt += w
            pairs[slot].nsites += 1
            meta[META_LIVE] += 1
    meta[META_LENGTH] = length
    meta[META_TOUCH_EPOCH] += 1
    n = 0
    for slot in range(n_slots):
        if pairs[slot].cnt != pairs[slot].oldcnt:
            pairs[slot].cmark = meta[META_TOUCH_EPOCH]
            changed[n] = slot
            n += 1
    meta[META_N_CHANGED] = n
