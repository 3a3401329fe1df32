"""Segmenters that search the vocabulary's trie (Uzan et al. 2024 evaluate these as a
tokenizer's inference, whatever learned its vocabulary):

* ``longest-prefix`` (WordPiece's MaxMatch): the longest token that starts the rest of the
  unit, then the same on what is left;
* ``fewest-tokens`` (PathPiece's): a shortest path through the unit, the fewest tokens; among
  those, at every end the longest last token, so ties go to long tokens;
* ``likelihood`` (Unigram LM's Viterbi): the path whose tokens' log-probabilities sum highest,
  ties the same way.

Each unit is searched on its own: a dynamic program over its positions, each position's
tokens read off the trie in one walk, so a unit of n bytes costs n walks of at most the
longest token's length.
"""

import numpy as np
from chunkpress.plugin import ConfigError, Segmenter, kernel, trie_child

#: no path reaches the position (yet)
_UNREACHED = -1e300


@kernel
def longest_prefix(buf, offsets, keys, children, token, out, counts):
    """Greedy longest match, unit by unit (every byte is a token, so each step takes one)."""
    for u in range(offsets.size - 1):
        lo, hi = offsets[u], offsets[u + 1]
        pos, n = lo, 0
        while pos < hi:
            node = np.int64(0)
            best, best_len = np.int64(-1), np.int64(0)
            k = pos
            while k < hi:
                node = trie_child(keys, children, node, buf[k])
                if node < 0:
                    break
                k += 1
                if token[node] >= 0:
                    best, best_len = token[node], k - pos
            out[lo + n] = best
            n += 1
            pos += best_len
        counts[u] = n


@kernel
def best_path(buf, offsets, keys, children, token, logp, by_likelihood, score, back_len, back_tok, out, counts):
    """The best path through each unit: the highest sum of log-probabilities (``by_likelihood``)
    or the fewest tokens (each scores -1); at each end position ties go to the longest last
    token. ``score``, ``back_len`` and ``back_tok``: scratch of the longest unit's length + 1."""
    for u in range(offsets.size - 1):
        lo = offsets[u]
        n = offsets[u + 1] - lo
        score[0] = 0.0
        for j in range(1, n + 1):
            score[j] = _UNREACHED
            back_len[j] = 0
        for i in range(n):
            if score[i] == _UNREACHED:
                continue
            node = np.int64(0)
            for k in range(i, n):
                node = trie_child(keys, children, node, buf[lo + k])
                if node < 0:
                    break
                t = token[node]
                if t < 0:
                    continue
                s = score[i] + (logp[node] if by_likelihood else -1.0)
                j = k + 1
                if s > score[j] or (s == score[j] and j - i > back_len[j]):
                    score[j] = s
                    back_len[j] = j - i
                    back_tok[j] = t
        m = 0
        j = n
        while j > 0:
            m += 1
            j -= back_len[j]
        counts[u] = m
        j = n
        while j > 0:
            m -= 1
            out[lo + m] = back_tok[j]
            j -= back_len[j]


class LongestPrefix(Segmenter):
    """WordPiece's MaxMatch: the longest token that starts what is left of the unit."""

    def segment(self, vocabulary, buf, offsets, out):
        counts = np.zeros(offsets.size - 1, dtype=np.int64)
        longest_prefix(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, out, counts)
        return counts


class FewestTokens(Segmenter):
    """The fewest tokens (a shortest path), ties to the longest last token: PathPiece's."""

    by_likelihood = False

    def segment(self, vocabulary, buf, offsets, out):
        longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
        score = np.zeros(longest + 1)
        back_len, back_tok = np.zeros(longest + 1, dtype=np.int64), np.zeros(longest + 1, dtype=np.int64)
        counts = np.zeros(offsets.size - 1, dtype=np.int64)
        best_path(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, vocabulary.logp,
                  self.by_likelihood, score, back_len, back_tok, out, counts)
        return counts


class Likelihood(FewestTokens):
    """The most likely tokens under their log-probabilities: Unigram LM's Viterbi."""

    by_likelihood = True
    needs_scores = True

    def segment(self, vocabulary, buf, offsets, out):
        if not vocabulary.has_scores:
            raise ConfigError("segmenter 'likelihood' needs the tokens' log-probabilities, and this vocabulary has "
                              "none (train with this version, or choose another --segmenter)")
        return super().segment(vocabulary, buf, offsets, out)
