"""Unigram sampling (Kudo 2018) as sentencepiece samples it: a word's segmentation drawn with
probability proportional to ``exp(alpha × the sum of its tokens' log-probabilities)``, with
``nbest_size = -1`` from all of them, by forward filtering and backward sampling over the
lattice of every token that spells part of it (sentencepiece's ``Lattice::Sample``), and with
``nbest_size`` above 1 from the n best, found by A* as its ``NBestEncode`` finds them.

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
from .dropout import Dropout, each_word, seeded_state, xorshift_uniform
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


@numba.njit(cache=True, forceinline=True)
def _push(pri, idx, n, p, i):
    """Push (priority ``p``, hypothesis ``i``) on the max-heap ``pri[:n], idx[:n]``."""
    k = n
    pri[k], idx[k] = p, i
    while k > 0 and pri[(k - 1) >> 1] < pri[k]:
        up = (k - 1) >> 1
        pri[up], pri[k] = pri[k], pri[up]
        idx[up], idx[k] = idx[k], idx[up]
        k = up
    return n + 1


@numba.njit(cache=True, forceinline=True)
def _pop(pri, idx, n):
    """The hypothesis of the highest priority, taken off the heap of ``n``."""
    top = idx[0]
    n -= 1
    pri[0], idx[0] = pri[n], idx[n]
    k = 0
    while True:
        best = k
        for child in (2 * k + 1, 2 * k + 2):
            if child < n and pri[child] > pri[best]:
                best = child
        if best == k:
            return top
        pri[best], pri[k] = pri[k], pri[best]
        idx[best], idx[k] = idx[k], idx[best]
        k = best


#: the most partial paths an n-best search keeps (sentencepiece bounds its agenda likewise)
_MOST_HYPOTHESES = 1 << 20


@numba.njit(cache=True)
def _nbest_path(e_from, e_to, e_score, length, nbest, theta, state, chosen):
    """One of the ``nbest`` best paths through the lattice (its edges ordered by start), drawn
    with probability proportional to ``exp(theta × its score)``, as sentencepiece samples its
    n-best list (found best first by A*, the rest of a path priced by the backward Viterbi
    score); its edges written to ``chosen`` from the last, their number returned."""
    n = e_from.size
    out_first = np.searchsorted(e_from, np.arange(length + 2))
    beta = np.full(length + 1, -np.inf)
    beta[length] = 0.0
    for e in range(n - 1, -1, -1):  # by start, descending: every edge after a position is priced
        beta[e_from[e]] = max(beta[e_from[e]], e_score[e] + beta[e_to[e]])
    cap = 1024
    h_pos = np.empty(cap, dtype=np.int64)
    h_g = np.empty(cap)
    h_parent = np.empty(cap, dtype=np.int64)
    h_edge = np.empty(cap, dtype=np.int64)
    pri = np.empty(cap)
    idx = np.empty(cap, dtype=np.int64)
    h_pos[0], h_g[0], h_parent[0], h_edge[0] = 0, 0.0, -1, -1
    pool, heap = 1, _push(pri, idx, 0, beta[0], 0)
    found = np.empty(nbest, dtype=np.int64)
    count = 0
    while heap > 0 and count < nbest:
        at = _pop(pri, idx, heap)
        heap -= 1
        if h_pos[at] == length:
            found[count] = at
            count += 1
            continue
        for e in range(out_first[h_pos[at]], out_first[h_pos[at] + 1]):
            if beta[e_to[e]] == -np.inf or pool >= _MOST_HYPOTHESES:
                continue
            if pool >= cap:  # grow the pool and the heap together
                cap *= 2
                h_pos, h_g = np.concatenate((h_pos, np.empty_like(h_pos))), np.concatenate((h_g, np.empty_like(h_g)))
                h_parent = np.concatenate((h_parent, np.empty_like(h_parent)))
                h_edge = np.concatenate((h_edge, np.empty_like(h_edge)))
                pri, idx = np.concatenate((pri, np.empty_like(pri))), np.concatenate((idx, np.empty_like(idx)))
            h_pos[pool], h_g[pool], h_parent[pool], h_edge[pool] = e_to[e], h_g[at] + e_score[e], at, e
            heap = _push(pri, idx, heap, h_g[pool] + beta[e_to[e]], pool)
            pool += 1
    top = h_g[found[0]]
    total = 0.0
    for r in range(count):
        total += math.exp(theta * (h_g[found[r]] - top))
    u = xorshift_uniform(state) * total
    pick = found[count - 1]
    for r in range(count):
        u -= math.exp(theta * (h_g[found[r]] - top))
        if u < 0:
            pick = found[r]
            break
    k = 0
    while h_edge[pick] >= 0:
        chosen[k] = h_edge[pick]
        k += 1
        pick = h_parent[pick]
    return k


@numba.njit(cache=True)
def sample_words(buf, starts, char_start, keys, children, token, logp, unk_score, theta, nbest, state, out, out_len):
    """Each word ``buf[starts[w]:starts[w + 1]]``'s sampled tokens into ``out`` from
    ``starts[w]`` (an unknown character as its bytes), their number in ``out_len[w]``: from
    every segmentation, or (``nbest`` above 1) from the ``nbest`` best."""
    dummy_i = np.empty(0, dtype=np.int64)
    dummy_f = np.empty(0, dtype=np.float64)
    most, longest = 0, 0  # scratch for the largest lattice, allocated once
    for w in range(starts.size - 1):
        longest = max(longest, starts[w + 1] - starts[w])
        most = max(most, _edges(buf, starts[w], starts[w + 1], char_start, keys, children, token, logp, unk_score,
                                False, dummy_i, dummy_i, dummy_i, dummy_f))
    e_from = np.empty(most, dtype=np.int64)
    e_to = np.empty(most, dtype=np.int64)
    e_sym = np.empty(most, dtype=np.int64)
    e_score = np.empty(most, dtype=np.float64)
    by_end = np.empty(most, dtype=np.int64)
    first = np.empty(longest + 2, dtype=np.int64)
    alpha = np.empty(longest + 1)
    chosen = np.empty(longest, dtype=np.int64)
    for w in range(starts.size - 1):
        lo, hi = starts[w], starts[w + 1]
        length = hi - lo
        n = _edges(buf, lo, hi, char_start, keys, children, token, logp, unk_score, True, e_from, e_to, e_sym, e_score)
        if nbest > 1:
            count = _nbest_path(e_from[:n], e_to[:n], e_score[:n], length, nbest, theta, state, chosen)
            out_len[w] = _spell(buf, lo, e_from, e_to, e_sym, chosen, count, out)
            continue
        alpha[: length + 1] = -np.inf
        alpha[0] = 0.0
        first[: length + 2] = 0
        for e in range(n):  # ordered by start: every edge into a start comes before it
            alpha[e_to[e]] = _logaddexp(alpha[e_to[e]], alpha[e_from[e]] + theta * e_score[e])
            first[e_to[e] + 1] += 1
        for at in range(1, length + 2):  # the edges by their end (a counting sort)
            first[at] += first[at - 1]
        for e in range(n):
            by_end[first[e_to[e]]] = e
            first[e_to[e]] += 1
        for at in range(length, 0, -1):  # back to each end's first edge
            first[at] = first[at - 1]
        first[0] = 0
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
        out_len[w] = _spell(buf, lo, e_from, e_to, e_sym, chosen, count, out)


@numba.njit(cache=True)
def _spell(buf, lo, e_from, e_to, e_sym, chosen, count, out):
    """The tokens of the path whose edges ``chosen[:count]`` lists from the last, into ``out``
    from ``lo`` (an unknown character as its bytes); returns how many."""
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
    return k


@attrs.frozen
class UnigramSample:
    """``alpha`` (sentencepiece's smoothing) and the generator the samples draw from."""

    alpha: float
    nbest: int  # -1: every segmentation; above 1, the n best
    state: np.ndarray

    @classmethod
    def of(cls, alpha, nbest_size, seed) -> UnigramSample:
        """ConfigError unless ``alpha`` is a finite number from 0 up and ``nbest_size`` is -1
        (or None, 0: every segmentation) or from 2 to 10,000 (sentencepiece's n-best)."""
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 <= alpha < math.inf:
            raise ConfigError(f"alpha (--alpha) must be a finite number from 0 up, not {alpha!r}")
        if nbest_size is None or nbest_size in (-1, 0):
            nbest_size = -1
        if isinstance(nbest_size, bool) or not isinstance(nbest_size, int) or not 2 <= nbest_size <= 10_000 \
                and nbest_size != -1:
            raise ConfigError(f"nbest_size (--nbest-size) {nbest_size!r}: -1 (every segmentation) or from 2 to "
                              "10,000 (the n best; 1 would be no sample)")
        return cls(float(alpha), nbest_size, seeded_state(seed))

    def symbols(self, vocabulary, arr: np.ndarray, breaks: np.ndarray | None) -> np.ndarray:
        """The symbols of ``arr`` cut at ``breaks`` (None: one word), each word sampled."""
        from .characters import char_classes  # the pre-tokenizer read them already, within classes_kept

        unk = float(np.nanmin(vocabulary.logp)) if vocabulary.logp.size else 0.0
        return each_word(arr, breaks, lambda starts, out, counts: sample_words(
            arr, starts, char_classes(arr)[1], vocabulary.keys, vocabulary.children, vocabulary.token,
            vocabulary.logp, unk, self.alpha, self.nbest, self.state, out, counts))


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
