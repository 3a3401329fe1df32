"""PathPiece (Schmidt et al. 2024, "Tokenization Is More Than Compression"): a vocabulary for
the fewest-tokens segmentation, pruned top-down.

It starts from a large vocabulary: the most frequent substrings of the words (``initial =
"ngrams"``: whole characters, up to ``max_piece_bytes``, by frequency times length, as Unigram's
seeds) or a BPE vocabulary of the same words (``initial = "bpe"``), ``initial_factor`` times the
size. Each round cuts every word into the fewest tokens and charges each token what its removal
would cost: where an occurrence lies on every shortest path of its word, what the word's fewest
tokens grow by without it, times the word's count (an occurrence that some shortest path
avoids costs nothing; each occurrence is charged alone). The tokens that cost least go, at most
``1 - keep`` of them a round, until the size. The 256 bytes are never removed, so every word can
be cut. A sweep of sizes is one run from the largest size's initial vocabulary, through each
smaller size in turn.
"""

from __future__ import annotations

import math

import attrs
import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, Learner, trie_child

from .lattice import sizes_down, spelled, start_pieces, trie_of
from .seeds import seed_pieces

_FAR = 1 << 40


@attrs.frozen(kw_only=True)
class PathPieceParams:
    """Where the pruning starts (``ngrams`` or ``bpe``), how much larger than the size, pieces
    of up to ``max_piece_bytes`` (n-grams), and the share of the candidates kept a round."""

    initial: str = attrs.field(default="ngrams", validator=attrs.validators.in_(("ngrams", "bpe")))
    initial_factor: int = attrs.field(default=8, validator=[attrs.validators.ge(1), attrs.validators.le(64)])
    max_piece_bytes: int = attrs.field(default=16, validator=[attrs.validators.ge(2), attrs.validators.le(64)])
    keep: float = attrs.field(default=0.9, validator=[attrs.validators.gt(0), attrs.validators.lt(1)])


@numba.njit(cache=True, inline="always")
def _edges_from(buf, lo, i, n, keys, children, token, ends, tokens):
    """The tokens that start at position ``i`` of the word ``buf[lo:lo + n]``: how many, their
    end positions into ``ends`` and their trie ids into ``tokens`` (shortest first)."""
    m = 0
    node = np.int64(0)
    for k in range(i, n):
        node = trie_child(keys, children, node, buf[lo + k])
        if node < 0:
            break
        if token[node] >= 0:
            ends[m], tokens[m] = k + 1, token[node]
            m += 1
    return m


@numba.njit(cache=True)
def _costs(buf, offsets, counts, keys, children, token, reach, cost, fwd, n_fwd, bwd, n_bwd, local):
    """Each token's removal cost into ``cost`` (indexed by the trie's token ids); returns the
    words' fewest tokens in all. ``reach``: the longest token's bytes. ``fwd``/``bwd``: the
    fewest tokens to reach a position from the word's start / its end, ``n_fwd``/``n_bwd``: how
    many such paths (as floats: only compared). A word of n bytes costs O(n * reach) steps."""
    ends, tokens = np.empty(reach + 1, dtype=np.int64), np.empty(reach + 1, dtype=np.int64)
    total = 0.0
    for w in range(offsets.size - 1):
        lo = offsets[w]
        n = offsets[w + 1] - lo
        for i in range(n + 1):
            fwd[i] = _FAR
            bwd[i] = _FAR
            n_fwd[i] = 0.0
            n_bwd[i] = 0.0
        fwd[0] = 0
        n_fwd[0] = 1.0
        for i in range(n):
            for e in range(_edges_from(buf, lo, i, n, keys, children, token, ends, tokens)):
                b = ends[e]
                if fwd[i] + 1 < fwd[b]:
                    fwd[b] = fwd[i] + 1
                    n_fwd[b] = n_fwd[i]
                elif fwd[i] + 1 == fwd[b]:
                    n_fwd[b] += n_fwd[i]
        bwd[n] = 0
        n_bwd[n] = 1.0
        for i in range(n - 1, -1, -1):
            for e in range(_edges_from(buf, lo, i, n, keys, children, token, ends, tokens)):
                b = ends[e]
                if bwd[b] + 1 < bwd[i]:
                    bwd[i] = bwd[b] + 1
                    n_bwd[i] = n_bwd[b]
                elif bwd[b] + 1 == bwd[i]:
                    n_bwd[i] += n_bwd[b]
        best = fwd[n]
        total += best * counts[w]
        # Without one occurrence (i, b), a path still crosses the cut after position i by one
        # edge (a, c), a <= i < c, and costs fwd[a] + 1 + bwd[c] at least (neither part can use
        # the occurrence). ``local[c]``: the least fwd[a] + 1 over the edges (a, c) with a < i,
        # so the best crossing that does not start at i is a scan of the ends within reach.
        for j in range(n + 1):
            local[j] = _FAR
        for i in range(n):
            m = _edges_from(buf, lo, i, n, keys, children, token, ends, tokens)
            if fwd[i] + bwd[i] == best:  # a shortest path passes i: its occurrences there are charged
                crossing = np.int64(_FAR)
                for c in range(i + 1, min(n, i - 1 + reach) + 1):
                    crossing = min(crossing, local[c] + bwd[c])
                first, second = np.int64(_FAR), np.int64(_FAR)  # the two cheapest edges from i
                for e in range(m):
                    value = fwd[i] + 1 + bwd[ends[e]]
                    if value < first:
                        first, second = value, first
                    elif value < second:
                        second = value
                for e in range(m):
                    b = ends[e]
                    if b == i + 1 or fwd[i] + 1 + bwd[b] != best or n_fwd[i] * n_bwd[b] != n_fwd[n]:
                        continue
                    # the fewest tokens for the word without this occurrence: the cheapest other
                    # crossing of the cut (this one is the cheapest from i, so the next is second)
                    cost[tokens[e]] += (min(crossing, second) - best) * counts[w]
            for e in range(m):  # the edges from i cross the cuts after i + 1 on
                if fwd[i] + 1 < local[ends[e]]:
                    local[ends[e]] = fwd[i] + 1
    return total


def train_pathpiece(buf, offsets, counts, vocab_size: int, params: PathPieceParams, bottom_up) -> list[bytes]:
    """The tokens beyond the bytes of a PathPiece vocabulary of ``vocab_size`` over the words
    ``buf[offsets[w]:offsets[w + 1]]`` seen ``counts[w]`` times."""
    return train_pathpiece_sizes(buf, offsets, counts, [vocab_size], params, bottom_up)[0]


def train_pathpiece_sizes(buf, offsets, counts, vocab_sizes: list[int], params: PathPieceParams,
                          bottom_up) -> list[list[bytes]]:
    """:func:`train_pathpiece`'s answer for each of ``vocab_sizes`` (in their order) from one
    pruning run, which starts from the largest size's initial vocabulary and passes through
    the smaller sizes on its way down."""
    pending = sizes_down(vocab_sizes)
    wanted = BYTE_SYMBOLS + params.initial_factor * pending[0]
    if params.initial == "bpe":
        pieces = start_pieces(bottom_up(wanted))
    else:
        spell, starts, *_ = seed_pieces(buf, offsets, np.asarray(counts, dtype=np.int64),
                                          params.initial_factor * pending[0], params.max_piece_bytes)
        pieces = [spell[starts[t]:starts[t + 1]].tobytes() for t in range(starts.size - 1)
                  if starts[t + 1] - starts[t] > 1]
    pieces = sorted(set(pieces), key=lambda p: (len(p), p))
    vocabulary = [bytes([b]) for b in range(BYTE_SYMBOLS)] + pieces
    spell, starts = spelled(vocabulary)
    lengths = np.diff(starts)
    alive = np.ones(len(vocabulary), dtype=bool)
    longest = int(np.diff(offsets).max(initial=0)) + 2
    fwd, bwd = np.zeros(longest, dtype=np.int64), np.zeros(longest, dtype=np.int64)
    n_fwd, n_bwd = np.zeros(longest), np.zeros(longest)
    local = np.zeros(longest, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    answers = {}
    while pending:
        if alive[BYTE_SYMBOLS:].sum() <= pending[0]:
            answers[pending.pop(0)] = [vocabulary[t] for t in np.flatnonzero(alive[BYTE_SYMBOLS:]) + BYTE_SYMBOLS]
            continue
        target = pending[0]
        ids = np.flatnonzero(alive)
        trie, _, _ = trie_of(spell, starts, ids, np.zeros(ids.size))
        cost = np.zeros(len(vocabulary), dtype=np.int64)
        reach = int(lengths[ids].max())
        _costs(buf, offsets, counts, trie.keys, trie.children, trie.token, reach, cost, fwd, n_fwd, bwd, n_bwd, local)
        candidates = ids[ids >= BYTE_SYMBOLS]
        gone = max(candidates.size - target, 0)
        gone = min(gone, max(1, math.floor((1 - params.keep) * candidates.size)))
        # the cheapest go; among equals, the longest first (a shorter token serves more words)
        order = np.lexsort((-lengths[candidates], cost[candidates]))
        alive[candidates[order[:gone]]] = False
    return [answers[size - BYTE_SYMBOLS] for size in vocab_sizes]


class PathPiece(Learner):
    """PathPiece: a vocabulary for the fewest tokens, cut by the shortest path."""

    segmenter = "fewest-tokens"

    sweeps_in_one_run = True

    def learn(self, buf, offsets, counts, vocab_size, bottom_up):
        return train_pathpiece(buf, offsets, counts, vocab_size, self.params, bottom_up), None

    def learn_sizes(self, buf, offsets, counts, vocab_sizes, bottom_up):
        return [(pieces, None) for pieces in
                train_pathpiece_sizes(buf, offsets, counts, vocab_sizes, self.params, bottom_up)]
