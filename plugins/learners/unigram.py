"""Unigram LM training (Kudo 2018), as sentencepiece's trainer runs it
(``unigram_model_trainer.cc``), on a text's word counts, so that its work and memory follow the
distinct words, not the sentences:

* **seeds**: every character (they are never pruned), and the most frequent substrings of the
  words (whole UTF-8 characters, at most ``max_piece_bytes`` bytes, seen at least twice), by
  frequency times length, up to ``seed_size``; counted length by length, a substring counted
  only where both its shorter halves were frequent. As sentencepiece's seeds are its suffix
  array's internal nodes, only right-maximal substrings are seeds (two characters follow them,
  or a word's end), and as its pieces are valid ones (``split_by_unicode_script``), a piece's
  characters are of one Unicode script (Hiragana and Katakana count as Han, a combining mark
  joins any, a space only starts a piece);
* **EM**: the expected count of each piece in each word's lattice (forward-backward), then
  sentencepiece's Bayesian M step: a piece whose expected count is under a half goes, the others
  get ``digamma(count) - digamma(total)``; ``sub_iterations`` rounds between prunings;
* **pruning**: each piece's loss is what the likelihood would lose if its occurrences in the
  Viterbi paths were replaced by the second-best segmentation of the piece itself; the pieces
  with the least loss go, ``shrinking`` of the rest kept a round, until 1.1 times the size;
* the final pieces: every character (the most likely of them, where they alone exceed the size),
  then the best by score, up to the size.

A sweep of sizes is one run: the largest size's pieces are those of a run for it alone, and the
pruning goes on from there to 1.1 times each smaller size in turn.

The pieces are byte strings of whole characters; the 256 bytes stay tokens besides (a byte that
is no character the pieces hold is as unlikely as the least likely piece, less 10, as
sentencepiece's unknown), so every text can be cut.
"""

from __future__ import annotations

import math

import attrs
import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, Learner, char_scripts, script_names

from .lattice import NEG, Lattice, second_best_in_lattice, sizes_down, spellings_of, viterbi_counts
from .seeds import ANY_GROUP, LEADING_ONLY, largest, seed_pieces

#: sentencepiece's: an expected count under this drops a piece in the M step
EXPECTED_AT_LEAST = 0.5
#: sentencepiece's: prune until the pieces are this many times the size, then keep the best
PRUNE_TO = 1.1
#: sentencepiece's: how much less likely than the least likely piece a rare character is
CHARACTER_BELOW = 1e-4


@attrs.frozen(kw_only=True)
class UnigramParams:
    """sentencepiece's defaults: a million seeds, pieces of up to 16 bytes, three quarters kept
    a round, two EM rounds between prunings, a piece's characters of one script
    (``split_by_script``: sentencepiece's ``split_by_unicode_script``)."""

    seed_size: int = attrs.field(default=1_000_000, validator=attrs.validators.ge(1))
    max_piece_bytes: int = attrs.field(default=16, validator=[attrs.validators.ge(2), attrs.validators.le(64)])
    shrinking: float = attrs.field(default=0.75, validator=[attrs.validators.gt(0), attrs.validators.lt(1)])
    sub_iterations: int = attrs.field(default=2, validator=attrs.validators.ge(1))
    split_by_script: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))


#: sentencepiece's script groups: Hiragana, Katakana and the prolonged sound mark (U+30FC) are Han
_AS_HAN = ("Hiragana", "Katakana")
_PROLONGED_SOUND_MARK = "\u30fc".encode()


def script_groups(buf: np.ndarray) -> np.ndarray:
    """Per byte of ``buf``, the group of its character for sentencepiece's valid pieces: its
    script (Hiragana and Katakana as Han), a combining mark (script Inherited) joining any, a
    space only leading."""
    scripts, _ = char_scripts(buf)
    names = script_names()
    groups = scripts.astype(np.int16)
    han = names.index("Han")
    groups[np.isin(scripts, [names.index(n) for n in _AS_HAN])] = han
    marks = np.flatnonzero((buf[:-2] == _PROLONGED_SOUND_MARK[0]) & (buf[1:-1] == _PROLONGED_SOUND_MARK[1])
                           & (buf[2:] == _PROLONGED_SOUND_MARK[2])) if buf.size >= 3 else np.zeros(0, dtype=np.int64)
    for k in range(3):
        groups[marks + k] = han
    groups[scripts == names.index("Inherited")] = ANY_GROUP
    groups[buf == 0x20] = LEADING_ONLY
    return groups


# -- EM ------------------------------------------------------------------------------------------


@numba.njit(cache=True, forceinline=True)
def _logadd(a, b):
    if a < b:
        a, b = b, a
    if b <= NEG:
        return a
    return a + math.log1p(math.exp(b - a))


#: a word up to this many bytes is summed in probabilities, not their logs: its best path is
#: at least e^-700 likely (pieces of a byte or more, each at least e^-40), which a double holds
LINEAR_BYTES = 256
#: below this a word's total probability is not inverted (its inverse would near the largest double)
SMALLEST_INVERTED = 1e-290


@numba.njit(cache=True)
def _e_step(offsets, counts, top, shorter, length, logp, prob, expected, alpha, beta, chain):
    """Each piece's expected count over the words' lattices (forward-backward), into
    ``expected``; returns the counts' log-likelihood. A word up to LINEAR_BYTES is summed in
    probabilities (``prob``: exp(logp)), a longer one in logs. ``chain``: scratch for a
    position's pieces, which the backward sum takes shortest first."""
    objective = 0.0
    for w in range(offsets.size - 1):
        lo = offsets[w]
        n = offsets[w + 1] - lo
        linear = n <= LINEAR_BYTES
        for j in range(n + 1):
            alpha[j] = 0.0 if linear else NEG
            beta[j] = 0.0 if linear else NEG
        alpha[0] = 1.0 if linear else 0.0
        for i in range(n):
            a = alpha[i]
            if (a == 0.0) if linear else (a <= NEG):
                continue
            t = top[lo + i]
            while t >= 0:
                j = i + length[t]
                if linear:
                    alpha[j] += a * prob[t]
                else:
                    alpha[j] = _logadd(alpha[j], a + logp[t])
                t = shorter[t]
        if (alpha[n] == 0.0) if linear else (alpha[n] <= NEG):
            continue  # no path: a character that is no piece (never, while every character is one)
        beta[n] = 1.0 if linear else 0.0
        for i in range(n - 1, -1, -1):
            links = 0
            t = top[lo + i]
            while t >= 0:
                chain[links] = t
                links += 1
                t = shorter[t]
            b = 0.0 if linear else NEG
            for k in range(links - 1, -1, -1):
                t = chain[k]
                j = i + length[t]
                if linear:
                    b += prob[t] * beta[j]
                else:
                    b = _logadd(b, logp[t] + beta[j])
            beta[i] = b
        c = counts[w]
        z = alpha[n]
        objective += c * (math.log(z) if linear else z)
        # times 1 / z, not over z, where 1 / z is finite: a multiplication an edge, not a division
        inv_z = 1.0 / z if linear and z > SMALLEST_INVERTED else 0.0
        for i in range(n):
            a = alpha[i]
            if (a == 0.0) if linear else (a <= NEG):
                continue
            ca = c * a
            t = top[lo + i]
            while t >= 0:
                j = i + length[t]
                if inv_z > 0.0:
                    expected[t] += ca * prob[t] * beta[j] * inv_z
                elif linear:
                    expected[t] += ca * prob[t] * beta[j] / z
                else:
                    expected[t] += c * math.exp(a + logp[t] + beta[j] - z)
                t = shorter[t]
    return objective


@numba.njit(cache=True)
def _digamma(x):
    """sentencepiece's digamma: shifted up past 7, then the asymptotic series."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return result + math.log(x) + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4


@numba.njit(cache=True)
def _m_step(expected, keep, scores):
    """sentencepiece's Bayesian M step: ``keep`` marks the pieces whose expected count is at
    least a half (characters always), ``scores`` their digamma(count) - digamma(total)."""
    total = 0.0
    for t in range(expected.size):
        if keep[t]:
            total += expected[t]
    logsum = _digamma(total)
    for t in range(expected.size):  # a character kept with next to no expected count: as good as rare
        scores[t] = _digamma(max(expected[t], 1e-6)) - logsum if keep[t] else NEG


# -- pruning -------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _losses(alive, required, beyond, own, alt_first, alt_pieces, freq, inverted, occurrences, loss):
    """sentencepiece's pruning loss of each living piece beyond the bytes: what the likelihood
    loses if its Viterbi occurrences became its second-best segmentation (+inf: kept whatever,
    a character or a piece with no other segmentation; -inf: gone, as Viterbi never takes it)."""
    total = 0.0
    for t in range(freq.size):
        total += freq[t]
    logsum = math.log(total)
    for t in range(freq.size):
        if not (alive[t] and beyond[t]):
            continue
        m = alt_first[t + 1] - alt_first[t]
        if required[t]:
            loss[t] = np.inf
        elif freq[t] == 0 or not own[t]:
            loss[t] = -np.inf
        elif m == 0:
            loss[t] = np.inf
        else:
            logsum_alt = math.log(total + freq[t] * (m - 1))
            logprob_alt = 0.0
            for a in range(alt_first[t], alt_first[t + 1]):
                logprob_alt += math.log(freq[alt_pieces[a]] + freq[t]) - logsum_alt
            loss[t] = inverted[t] / occurrences * (math.log(freq[t]) - logsum - logprob_alt)


def train_unigram(buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, vocab_size: int,
                  params: UnigramParams = UnigramParams()) -> tuple[list[bytes], np.ndarray]:
    """(the pieces, their log-probabilities) of a Unigram LM over the words
    ``buf[offsets[w]:offsets[w + 1]]`` seen ``counts[w]`` times, with ``vocab_size`` tokens in
    all: the 256 bytes and the pieces that are not single bytes."""
    return train_unigram_sizes(buf, offsets, counts, [vocab_size], params)[0]


def train_unigram_sizes(buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, vocab_sizes: list[int],
                        params: UnigramParams = UnigramParams()) -> list[tuple[list[bytes], np.ndarray]]:
    """:func:`train_unigram`'s answer for each of ``vocab_sizes`` (in their order) from one
    pruning run: the run prunes towards the largest size first, as a run for that size alone
    does, and on from there towards each smaller one."""
    pending = sizes_down(vocab_sizes)
    spell, starts, scores, required, where = seed_pieces(buf, offsets, np.asarray(counts, dtype=np.int64), params.seed_size,
                                                         params.max_piece_bytes, right_maximal=True,
                                                         grouping=script_groups if params.split_by_script else None)
    counts = np.asarray(counts, dtype=np.int64)
    n = starts.size - 1
    beyond = np.diff(starts) > 1
    longest = max(int(np.diff(offsets).max(initial=0)), int(np.diff(starts).max(initial=0))) + 1
    alpha, beta, score = np.zeros(longest + 1), np.zeros(longest + 1), np.zeros(longest + 1)
    back_len, back_tok = np.zeros(longest + 1, dtype=np.int64), np.zeros(longest + 1, dtype=np.int64)
    chain = np.zeros(longest + 1, dtype=np.int32)
    alive = np.ones(n, dtype=bool)
    answers: dict[int, tuple[list[bytes], np.ndarray]] = {}
    # the seeds' lattice is found once: a pruned piece leaves its chains
    lattice = Lattice.of(buf, offsets, spell, starts)
    expected, prob, logp, seen, own, alt_first = _per_piece(n)
    while True:
        for _ in range(params.sub_iterations):
            expected[:] = 0.0
            _living_scores(scores, alive, logp)
            np.exp(logp, out=prob)
            _e_step(offsets, counts, lattice.top, lattice.shorter, lattice.length, logp, prob, expected,
                    alpha, beta, chain)
            alive &= (expected >= EXPECTED_AT_LEAST) | required
            _m_step(expected, alive, scores)
        while pending and int((alive & beyond).sum()) <= _pruned_to(pending[0]):
            beyond_bytes = pending.pop(0)
            answers[beyond_bytes] = _final_pieces(spell, starts, alive, required, beyond, scores, beyond_bytes)
        if not pending:
            break
        if 4 * int(alive.sum()) <= 3 * n:  # a quarter or more is gone: the rest, numbered anew
            living = np.flatnonzero(alive)
            lattice = lattice.renumbered(alive)
            spell, starts = spellings_of(spell, starts, living)
            scores, required, where, beyond = scores[living], required[living], where[living], beyond[living]
            n = living.size
            alive = np.ones(n, dtype=bool)
            expected, prob, logp, seen, own, alt_first = _per_piece(n)
        target = _pruned_to(pending[0])
        _living_scores(scores, alive, logp)
        freq, inverted = expected, prob  # the E step's arrays, free until the next E step
        freq[:], inverted[:], seen[:] = 0.0, 0.0, -1
        viterbi_counts(offsets, counts, lattice.top, lattice.shorter, lattice.length, logp, freq, inverted, seen, score,
                       back_len, back_tok)
        # a loss needs the other segmentation only of a piece in some Viterbi path that may go
        wanted = alive & beyond & ~required & (freq > 0)
        alt_pieces = np.empty(int(starts[1:][wanted].sum() - starts[:-1][wanted].sum()) + 1, dtype=np.int32)
        second_best_in_lattice(where, starts, wanted, lattice.top, lattice.shorter, lattice.length, logp, own, alt_first,
                               alt_pieces, score, back_len, back_tok)
        loss = logp  # free once the other segmentations are found
        loss[:] = -np.inf
        _losses(alive, required, beyond, own, alt_first, alt_pieces, freq, inverted, float(counts.sum()), loss)
        candidates = np.flatnonzero(alive & beyond)
        size = max(target, math.floor(params.shrinking * candidates.size))
        candidates = candidates[loss[candidates] > -np.inf]  # never in a Viterbi path: gone, as in sentencepiece
        kept = np.zeros(n, dtype=bool)
        kept[candidates[largest(loss[candidates], size)]] = True
        alive &= kept | ~beyond
        lattice = lattice.keep(alive)
    return [answers[size - BYTE_SYMBOLS] for size in vocab_sizes]


def _per_piece(n: int) -> tuple[np.ndarray, ...]:
    """A run's arrays for each of ``n`` pieces (expected counts, probabilities, log-probabilities,
    seen, own, second-best offsets), made once and filled again each pass: fresh ones each
    round would leave the freed ones in the heap, and the run's peak would climb a round at a
    time."""
    return (np.empty(n), np.empty(n), np.empty(n), np.empty(n, dtype=np.int32), np.empty(n, dtype=bool),
            np.empty(n + 1, dtype=np.int32))


def _living_scores(scores: np.ndarray, alive: np.ndarray, logp: np.ndarray) -> None:
    """``logp``: the living pieces' scores, NEG for the dead."""
    np.copyto(logp, scores)
    logp[~alive] = NEG


def _pruned_to(beyond_bytes: int) -> int:
    """How many pieces the pruning leaves for the final choice of ``beyond_bytes`` pieces."""
    return math.floor(PRUNE_TO * beyond_bytes)


def _final_pieces(spell, starts, alive, required, beyond, scores, budget: int) -> tuple[list[bytes], np.ndarray]:
    """The final ``budget`` pieces beyond the bytes from those alive: every character, then the
    best by score, up to the budget. Where the characters alone exceed it (random bytes: more
    distinct characters than the size), the most likely ones are kept and the rest are spelled
    by their bytes, as sentencepiece's ``character_coverage`` leaves its rarest characters out."""
    chosen = np.flatnonzero(alive & required & beyond)
    chosen = np.sort(chosen[np.argsort(-scores[chosen], kind="stable")][:budget])
    rest = np.flatnonzero(alive & ~required & beyond)
    rest = rest[np.argsort(-scores[rest], kind="stable")][: max(0, budget - chosen.size)]
    keep = np.sort(np.concatenate([chosen, rest, np.flatnonzero(alive & ~beyond)]))
    final = scores[keep]
    # a character the EM found next to no use for is kept (it is required) just below the least
    # likely piece, as sentencepiece adds its required characters back
    chosen_by_count = final[~required[keep]]
    floor = float(chosen_by_count.min()) if chosen_by_count.size else float(final.max(initial=0.0))
    final = np.where(required[keep] & (final < floor), floor - CHARACTER_BELOW, final)
    return [spell[starts[t]: starts[t + 1]].tobytes() for t in keep.tolist()], final


class Unigram(Learner):
    """Unigram LM: the pieces and their log-probabilities, cut by the most likely path."""

    segmenter = "likelihood"

    sweeps_in_one_run = True

    def learn(self, buf, offsets, counts, vocab_size, bottom_up):
        return train_unigram(buf, offsets, counts, vocab_size, self.params)

    def learn_sizes(self, buf, offsets, counts, vocab_sizes, bottom_up):
        return train_unigram_sizes(buf, offsets, counts, vocab_sizes, self.params)
