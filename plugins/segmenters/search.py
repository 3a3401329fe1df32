"""Segmenters that search the vocabulary's trie (Uzan et al. 2024 evaluate these as a
tokenizer's inference, whatever learned its vocabulary):

* ``longest-prefix`` (WordPiece's MaxMatch): the longest token that starts the rest of the
  unit, then the same on what is left;
* ``fewest-tokens`` (PathPiece's): a shortest path through the unit, the fewest tokens; among
  those, at every end the longest last token, so ties go to long tokens;
* ``likelihood`` (Unigram LM's Viterbi): the path whose tokens' log-probabilities sum highest,
  ties the same way;
* ``best-pair`` (sentencepiece's BPE inference): from the unit's characters (a character that
  is no token, as its bytes), the two adjacent tokens that spell the best-scored token join,
  the leftmost among equals, until no two do.

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


@kernel
def _char_bytes(buf, at, hi):
    """How many bytes the UTF-8 character at ``at`` has (1 for a byte that starts none)."""
    lead = buf[at]
    size = 1 if lead < 0x80 else 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else \
        4 if 0xF0 <= lead < 0xF5 else 1
    if at + size > hi:
        return 1
    for k in range(at + 1, at + size):
        if buf[k] & 0xC0 != 0x80:
            return 1
    return size


@kernel
def _spelled(buf, lo, hi, keys, children, token):
    """The trie node of the token spelled by ``buf[lo:hi]``, or -1."""
    node = np.int64(0)
    for k in range(lo, hi):
        node = trie_child(keys, children, node, buf[k])
        if node < 0:
            return np.int64(-1)
    return node if token[node] >= 0 else np.int64(-1)


@kernel
def best_pair(buf, offsets, keys, children, token, logp, start, size, node_of, out, counts):
    """sentencepiece's BPE inference, unit by unit. ``start``/``size``/``node_of``: scratch of
    the longest unit's length (each symbol's first byte, its bytes, its trie node)."""
    for u in range(offsets.size - 1):
        lo, hi = offsets[u], offsets[u + 1]
        m = 0
        at = lo
        while at < hi:
            width = _char_bytes(buf, at, hi)
            node = _spelled(buf, at, at + width, keys, children, token)
            if node < 0:  # no token: its bytes, each always a token
                for k in range(width):
                    start[m], size[m] = at + k, 1
                    node_of[m] = _spelled(buf, at + k, at + k + 1, keys, children, token)
                    m += 1
            else:
                start[m], size[m], node_of[m] = at, width, node
                m += 1
            at += width
        while m > 1:
            best, best_at, best_node = _UNREACHED, -1, np.int64(-1)
            for k in range(m - 1):
                node = _spelled(buf, start[k], start[k + 1] + size[k + 1], keys, children, token)
                if node >= 0 and logp[node] > best:
                    best, best_at, best_node = logp[node], k, node
            if best_at < 0:
                break
            size[best_at] += size[best_at + 1]
            node_of[best_at] = best_node
            for k in range(best_at + 1, m - 1):
                start[k], size[k], node_of[k] = start[k + 1], size[k + 1], node_of[k + 1]
            m -= 1
        for k in range(m):
            out[lo + k] = token[node_of[k]]
        counts[u] = m


class BestPair(Segmenter):
    """sentencepiece's BPE inference: the adjacent pair spelling the best-scored token first."""

    needs_scores = True

    def segment(self, vocabulary, buf, offsets, out):
        if not vocabulary.has_scores:
            raise ConfigError("segmenter 'best-pair' needs the tokens' scores, and this vocabulary has none "
                              "(choose another --segmenter)")
        longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
        start, size = np.zeros(longest + 1, dtype=np.int64), np.zeros(longest + 1, dtype=np.int64)
        node_of = np.zeros(longest + 1, dtype=np.int64)
        counts = np.zeros(offsets.size - 1, dtype=np.int64)
        best_pair(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, vocabulary.logp, start, size,
                  node_of, out, counts)
        return counts


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
