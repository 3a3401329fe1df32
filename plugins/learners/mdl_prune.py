"""MDL pruning: the top-down counterpart of ``--scorer mdl``. From a large vocabulary (a BPE
vocabulary of the same words, ``initial_factor`` times the size), the tokens go whose removal
lowers the description length most, or raises it least, until the size.

The description length is the one the ``mdl`` scorer minimises (*Information Theoretic
Chunking*): the dictionary (two symbols a rule, rule r in base 256 + r), the counts (stars and
bars) and the string (the multiset permutation of the parse), in bits; the Elias-delta terms of
the rule count and the length change by a bit or two and are left out. Each round parses the
words by the most likely path under the last round's token frequencies (the first round: the
fewest tokens), and a token's removal is priced as Unigram's pruning prices it: its occurrences
become its best segmentation by the other tokens, their counts and the string's length change
accordingly. At most ``1 - keep`` of the tokens beyond the bytes go a round. A sweep of sizes is
one run from the largest size's BPE vocabulary, through each smaller size in turn.
"""

from __future__ import annotations

import math

import attrs
import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, Learner

from .lattice import (
    NEG,
    Lattice,
    occurrences,
    second_best_in_lattice,
    sizes_down,
    spelled,
    start_pieces,
    viterbi_counts,
)

_LN2 = math.log(2.0)


@attrs.frozen(kw_only=True)
class MdlPruneParams:
    """How much larger than the size the BPE vocabulary it starts from is, and the share of
    the tokens beyond the bytes kept a round."""

    initial_factor: int = attrs.field(default=4, validator=[attrs.validators.ge(1), attrs.validators.le(64)])
    keep: float = attrs.field(default=0.9, validator=[attrs.validators.gt(0), attrs.validators.lt(1)])


@numba.njit(cache=True)
def _log2_binomial(n, k):
    return (math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)) / _LN2


@numba.njit(cache=True)
def _removal_bits(alive, beyond, own, alt_first, alt_pieces, freq, living, delta):
    """Each living token's change of the description length if it went (``delta``, bits)."""
    n = 0.0
    for t in range(freq.size):
        n += freq[t]
    rules = living - BYTE_SYMBOLS
    rule_bits = 2.0 * math.log2(BYTE_SYMBOLS + rules - 1.0) if rules > 0 else 0.0
    counts_now = _log2_binomial(n + living - 1.0, living - 1.0)
    for t in range(freq.size):
        if not (alive[t] and beyond[t]):
            continue
        k = freq[t]
        if k == 0 or not own[t]:
            delta[t] = -rule_bits - counts_now + _log2_binomial(n + living - 2.0, living - 2.0)
            continue
        parts = alt_first[t + 1] - alt_first[t]
        grown = n + k * (parts - 1)
        # the string: log2 N! - sum log2 k_i!, with t's occurrences spelled by its parts
        change = (math.lgamma(grown + 1.0) - math.lgamma(n + 1.0) + math.lgamma(k + 1.0)) / _LN2
        for a in range(alt_first[t], alt_first[t + 1]):
            p = alt_pieces[a]
            before = freq[p]
            for b in range(alt_first[t], a):  # a part twice in the segmentation gains twice
                if alt_pieces[b] == p:
                    before += k
            change -= (math.lgamma(before + k + 1.0) - math.lgamma(before + 1.0)) / _LN2
        change += _log2_binomial(grown + living - 2.0, living - 2.0) - counts_now
        delta[t] = change - rule_bits


def train_mdl_prune(buf, offsets, counts, vocab_size: int, params: MdlPruneParams,
                    bottom_up) -> tuple[list[bytes], np.ndarray]:
    """(the tokens, bytes first, their log-frequencies in the last parse) of a vocabulary of
    ``vocab_size`` pruned by description length from a BPE vocabulary of the words
    ``buf[offsets[w]:offsets[w + 1]]`` seen ``counts[w]`` times."""
    return train_mdl_prune_sizes(buf, offsets, counts, [vocab_size], params, bottom_up)[0]


def train_mdl_prune_sizes(buf, offsets, counts, vocab_sizes: list[int], params: MdlPruneParams,
                          bottom_up) -> list[tuple[list[bytes], np.ndarray]]:
    """:func:`train_mdl_prune`'s answer for each of ``vocab_sizes`` (in their order) from one
    pruning run, which starts from the largest size's BPE vocabulary and passes through the
    smaller sizes on its way down."""
    pending = sizes_down(vocab_sizes)
    pieces = start_pieces(bottom_up(BYTE_SYMBOLS + params.initial_factor * pending[0]))
    vocabulary = [bytes([b]) for b in range(BYTE_SYMBOLS)] + pieces
    size = len(vocabulary)
    spell, starts = spelled(vocabulary)
    lengths = np.diff(starts)
    beyond = lengths > 1
    alive = np.ones(size, dtype=bool)
    logp = np.zeros(size)  # the first parse: every token alike, so the fewest tokens
    counts = np.asarray(counts, dtype=np.int64)
    longest = max(int(np.diff(offsets).max(initial=0)), int(lengths.max())) + 1
    score, back_len, back_tok = np.zeros(longest + 1), np.zeros(longest + 1, dtype=np.int64), \
        np.zeros(longest + 1, dtype=np.int64)
    answers = {}
    lattice = Lattice.of(buf, offsets, spell, starts)  # found once: a removed token leaves its chains
    while True:
        parsed = np.where(alive, logp, NEG)  # the parse's log-probabilities, which the cuts below use too
        freq, inverted = np.zeros(size), np.zeros(size)
        viterbi_counts(offsets, counts, lattice.top, lattice.shorter, lattice.length, parsed, freq, inverted,
                       np.full(size, -1, dtype=np.int32), score, back_len, back_tok)
        total = freq.sum()
        logp = np.where(freq > 0, np.log(np.maximum(freq, 1.0) / max(total, 1.0)), math.log(0.5 / max(total, 1.0)))
        while pending and int((alive & beyond).sum()) <= pending[0]:
            kept = np.flatnonzero(alive)
            answers[pending.pop(0)] = ([vocabulary[t] for t in kept.tolist()], logp[kept])
        if not pending:
            break
        target = pending[0]
        own, alt_first = np.zeros(size, dtype=bool), np.zeros(size + 1, dtype=np.int32)
        alt_pieces = np.zeros(int(starts[-1]) + 1, dtype=np.int32)
        # the change of a token in no path needs no other segmentation of it; one in a path
        # occurs in the words, and its bytes' other cuts are the lattice's edges there
        second_best_in_lattice(occurrences(lattice.top, lattice.shorter, size), starts, alive & beyond & (freq > 0),
                               lattice.top, lattice.shorter, lattice.length, parsed, own, alt_first, alt_pieces, score,
                               back_len, back_tok)
        delta = np.full(size, np.inf)
        _removal_bits(alive, beyond, own, alt_first, alt_pieces, freq, int(alive.sum()), delta)
        candidates = np.flatnonzero(alive & beyond)
        gone = min(candidates.size - target, max(1, math.floor((1 - params.keep) * candidates.size)))
        order = np.lexsort((-lengths[candidates], delta[candidates]))  # lowest first; among equals the longest
        alive[candidates[order[:gone]]] = False
        lattice.keep(alive)
    return [answers[size - BYTE_SYMBOLS] for size in vocab_sizes]


class MdlPrune(Learner):
    """MDL pruning: the tokens whose removal shortens the description most go first."""

    segmenter = "likelihood"

    sweeps_in_one_run = True

    def learn(self, buf, offsets, counts, vocab_size, bottom_up):
        return train_mdl_prune(buf, offsets, counts, vocab_size, self.params, bottom_up)

    def learn_sizes(self, buf, offsets, counts, vocab_sizes, bottom_up):
        return train_mdl_prune_sizes(buf, offsets, counts, vocab_sizes, self.params, bottom_up)
