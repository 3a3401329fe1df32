"""Unigram sampling (Kudo 2018) as sentencepiece samples it with ``nbest_size = -1``: a word's
segmentation drawn with probability proportional to ``exp(alpha × the sum of its tokens'
log-probabilities)``, by forward filtering and backward sampling over the lattice of every
token that spells part of it (sentencepiece's ``Lattice::Sample``).

The lattice is sentencepiece's: edges start and end on characters, so a byte token inside a
character is no edge; where no token spells the character at a position alone, an unknown
edge spans that character, at the unknown score (the vocabulary's least log-probability, its
bytes' as a byte-fallback model holds them), and stands for its bytes. Every occurrence of a
word is sampled on its own, from the seeded generator BPE-dropout uses (:mod:`.dropout`).
"""

from __future__ import annotations

import math

import attrs
import numba
import numpy as np

from ..errors import ConfigError
from .dropout import Dropout, seeded_state, xorshift_uniform
from .vocabulary import trie_child


@numba.njit(cache=True, forceinline=True)
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@numba.njit(cache=True)
def _edges(buf, lo, hi, char_start, keys, children, token, logp, unk_score, fill, e_from, e_to, e_sym, e_score):
    """The lattice of ``buf[lo:hi]``: counts its edges, and with ``fill`` writes them (from, to,
    symbol or -1 for an unknown character, score) ordered by their start."""
    n = 0
    for i in range(lo, hi):
        if not char_start[i]:
            continue
        after = i + 1  # the end of the character at i
        while after < hi and not char_start[after]:
            after += 1
        single = False
        node = 0
        j = i
        while j < hi:
            node = trie_child(keys, children, node, buf[j])
            if node < 0:
                break
            j += 1
            if token[node] >= 0 and (j == hi or char_start[j]):
                if fill:
                    e_from[n], e_to[n], e_sym[n], e_score[n] = i - lo, j - lo, token[node], logp[node]
                n += 1
                single = single or j == after
        if not single:
            if fill:
                e_from[n], e_to[n], e_sym[n], e_score[n] = i - lo, after - lo, -1, unk_score
            n += 1
    return n


@numba.njit(cache=True)
def sample_words(buf, starts, char_start, keys, children, token, logp, unk_score, theta, state, out, out_len):
    """Each word ``buf[starts[w]:starts[w + 1]]``'s sampled tokens into ``out`` from
    ``starts[w]`` (an unknown character as its bytes), their number in ``out_len[w]``."""
    dummy_i = np.empty(0, dtype=np.int64)
    dummy_f = np.empty(0, dtype=np.float64)
    for w in range(starts.size - 1):
        lo, hi = starts[w], starts[w + 1]
        length = hi - lo
        n = _edges(buf, lo, hi, char_start, keys, children, token, logp, unk_score, False,
                   dummy_i, dummy_i, dummy_i, dummy_f)
        e_from = np.empty(n, dtype=np.int64)
        e_to = np.empty(n, dtype=np.int64)
        e_sym = np.empty(n, dtype=np.int64)
        e_score = np.empty(n, dtype=np.float64)
        _edges(buf, lo, hi, char_start, keys, children, token, logp, unk_score, True, e_from, e_to, e_sym, e_score)
        alpha = np.full(length + 1, -np.inf)
        alpha[0] = 0.0
        for e in range(n):  # ordered by start: every edge into a start comes before it
            alpha[e_to[e]] = _logaddexp(alpha[e_to[e]], alpha[e_from[e]] + theta * e_score[e])
        by_end = np.argsort(e_to, kind="mergesort")
        first = np.searchsorted(e_to[by_end], np.arange(length + 2))
        chosen = np.empty(length, dtype=np.int64)
        count = 0
        at = length
        while at > 0:
            u = xorshift_uniform(state)
            total = 0.0
            pick = by_end[first[at]]
            for k in range(first[at], first[at + 1]):
                e = by_end[k]
                total += math.exp(alpha[e_from[e]] + theta * e_score[e] - alpha[at])
            u *= total
            for k in range(first[at], first[at + 1]):
                e = by_end[k]
                u -= math.exp(alpha[e_from[e]] + theta * e_score[e] - alpha[at])
                pick = e
                if u < 0:
                    break
            chosen[count] = pick
            count += 1
            at = e_from[pick]
        k = 0
        for c in range(count - 1, -1, -1):
            e = chosen[c]
            if e_sym[e] >= 0:
                out[lo + k] = e_sym[e]
                k += 1
            else:
                for b in range(lo + e_from[e], lo + e_to[e]):
                    out[lo + k] = buf[b]
                    k += 1
        out_len[w] = k


@attrs.frozen
class UnigramSample:
    """``alpha`` (sentencepiece's smoothing) and the generator the samples draw from."""

    alpha: float
    state: np.ndarray

    @classmethod
    def of(cls, alpha, nbest_size, seed) -> UnigramSample:
        """ConfigError unless ``alpha`` is a finite number from 0 up and ``nbest_size`` is -1
        (every segmentation: the n-best lists are not sampled yet)."""
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha < math.inf:
            raise ConfigError(f"alpha (--alpha) must be a finite number from 0 up, not {alpha!r}")
        if nbest_size not in (None, -1, 0):
            raise ConfigError(f"nbest_size (--nbest-size) {nbest_size!r}: only -1 (sampling from every "
                              "segmentation, forward filtering and backward sampling) is read")
        return cls(float(alpha), seeded_state(seed))

    def symbols(self, vocabulary, arr: np.ndarray, breaks: np.ndarray | None) -> np.ndarray:
        """The symbols of ``arr`` cut at ``breaks`` (None: one word), each word sampled."""
        from .characters import char_classes  # the pre-tokenizer read them already, within classes_kept

        starts = np.unique(np.concatenate([[0], np.flatnonzero(breaks) + 1 if breaks is not None else [],
                                           [arr.size]]).astype(np.int64))
        out = np.empty(arr.size, dtype=np.int64)
        counts = np.empty(starts.size - 1, dtype=np.int64)
        unk = float(np.nanmin(vocabulary.logp)) if vocabulary.logp.size else 0.0
        sample_words(arr, starts, char_classes(arr)[1], vocabulary.keys, vocabulary.children, vocabulary.token,
                     vocabulary.logp, unk, self.alpha, self.state, out, counts)
        lengths = np.diff(starts)
        inside = np.arange(arr.size) - np.repeat(starts[:-1], lengths)
        return out[inside < np.repeat(counts, lengths)]


def sampler(merges: bool, samples_lattice: bool, dropout, alpha, nbest_size, seed) -> Dropout | UnigramSample | None:
    """What a tokenizer's encode samples with: BPE-dropout for a vocabulary that replays plain
    merges (``merges``: no deletions, no boundary policy), Unigram sampling for one cut by the
    most likely path (``samples_lattice``), None where neither keyword is given; ConfigError
    for a keyword the vocabulary cannot sample with."""
    if dropout is None and alpha is None:
        if nbest_size is not None:
            raise ConfigError("nbest_size (--nbest-size) samples with alpha (--alpha): give alpha")
        return None
    if dropout is not None and alpha is not None:
        raise ConfigError("dropout (--dropout) samples merges and alpha (--alpha) a Unigram lattice: give one")
    if dropout is not None:
        if not merges:
            raise ConfigError("dropout (--dropout) skips merges as HF's BPE applies them: this vocabulary is cut "
                              "by a search, or has deletions or a boundary policy")
        return Dropout.of(dropout, seed)
    if not samples_lattice:
        raise ConfigError("alpha (--alpha) samples a Unigram lattice: this vocabulary is not cut by the most likely "
                          "path under its tokens' log-probabilities")
    return UnigramSample.of(alpha, nbest_size, seed)
