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
from chunkpress.plugin import ConfigError, Segmenter, long_kernel, trie_child


@long_kernel
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


@long_kernel
def best_path(buf, offsets, keys, children, token, logp, by_likelihood, score, back_len, back_tok, out, counts):
    """The best path through each unit: the highest sum of log-probabilities (``by_likelihood``)
    or the fewest tokens (each scores -1); at each end position ties go to the longest last
    token. ``score``, ``back_len`` and ``back_tok``: scratch of the longest unit's length + 1.
    A position is reached once ``back_len`` names its last token, whatever the scores: the
    search ends and cuts every unit however small, infinite or NaN they are (a position no
    token reaches, which the bytes always being tokens rules out, is cut as its byte)."""
    for u in range(offsets.size - 1):
        lo = offsets[u]
        n = offsets[u + 1] - lo
        score[0] = 0.0
        back_len[0] = 1
        for j in range(1, n + 1):
            back_len[j] = 0
        for i in range(n):
            if back_len[i] == 0:
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
                if back_len[j] == 0 or s > score[j] or (s == score[j] and j - i > back_len[j]):
                    score[j] = s
                    back_len[j] = j - i
                    back_tok[j] = t
        for j in range(1, n + 1):
            if back_len[j] == 0:
                back_len[j] = 1
                back_tok[j] = buf[lo + j - 1]
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


@long_kernel
def sentencepiece_path(buf, offsets, keys, children, token, logp, unknown, score, back_len, back_tok, out, counts):
    """sentencepiece's Viterbi: each unit is a whole text, the path's score a float32 sum taken
    left to right (so ties break as its rounding does), a step starts only where a
    character starts, a token no likelier than ``unknown`` is no piece, and a character that
    starts no piece of one character is one unknown node of score ``unknown``, cut as its
    bytes. At each end the first best path found stays: ties go to the longest last token.
    It gives sentencepiece's ids on every line checked; in one text of many thousand tokens,
    whose sum grows large, a rare tie still breaks otherwise (the benchmark's notes).
    Scratch as :func:`best_path`'s, ``score`` float32."""
    for u in range(offsets.size - 1):
        lo = offsets[u]
        n = offsets[u + 1] - lo
        score[0] = np.float32(0.0)
        for j in range(1, n + 1):
            back_len[j] = 0
        i = 0
        while i < n:
            lead = buf[lo + i]
            width = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4  # its OneCharLen
            width = min(width, n - i)
            whole = False
            node = np.int64(0)
            for k in range(i, n):
                node = trie_child(keys, children, node, buf[lo + k])
                if node < 0:
                    break
                t = token[node]
                if t < 0 or logp[node] <= unknown:
                    continue
                j = k + 1
                whole = whole or j - i == width
                s = np.float32(logp[node]) + score[i]
                if back_len[j] == 0 or s > score[j]:
                    score[j] = s
                    back_len[j] = j - i
                    back_tok[j] = t
            if not whole:
                j = i + width
                s = np.float32(unknown) + score[i]
                if back_len[j] == 0 or s > score[j]:
                    score[j] = s
                    back_len[j] = j - i
                    back_tok[j] = -1  # its bytes
            i += width
        m = 0
        j = n
        while j > 0:
            m += back_len[j] if back_tok[j] < 0 else 1
            j -= back_len[j]
        counts[u] = m
        j = n
        while j > 0:
            if back_tok[j] < 0:
                for b in range(j - 1, j - 1 - back_len[j], -1):
                    m -= 1
                    out[lo + m] = buf[lo + b]
            else:
                m -= 1
                out[lo + m] = back_tok[j]
            j -= back_len[j]


@long_kernel
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


@long_kernel
def _spelled(buf, lo, hi, keys, children, token):
    """The trie node of the token spelled by ``buf[lo:hi]``, or -1."""
    node = np.int64(0)
    for k in range(lo, hi):
        node = trie_child(keys, children, node, buf[k])
        if node < 0:
            return np.int64(-1)
    return node if token[node] >= 0 else np.int64(-1)


@long_kernel
def _before(h_score, h_left, a, b):
    """Whether agenda entry ``a`` comes out before ``b``: the higher score, then the leftmost."""
    return h_score[a] > h_score[b] or (h_score[a] == h_score[b] and h_left[a] < h_left[b])


@long_kernel
def _agenda_swap(h_score, h_left, h_right, h_size, a, b):
    h_score[a], h_score[b] = h_score[b], h_score[a]
    h_left[a], h_left[b] = h_left[b], h_left[a]
    h_right[a], h_right[b] = h_right[b], h_right[a]
    h_size[a], h_size[b] = h_size[b], h_size[a]


@long_kernel
def _agenda_push(agenda, h_score, h_left, h_right, h_size, score, left, right, size):
    """Add the pair (symbols ``left``, ``right`` spelling ``size`` bytes, ``score``) to the
    agenda of ``agenda`` entries (a binary heap); returns the new count."""
    k = agenda
    h_score[k], h_left[k], h_right[k], h_size[k] = score, left, right, size
    while k > 0:
        parent = (k - 1) >> 1
        if not _before(h_score, h_left, k, parent):
            break
        _agenda_swap(h_score, h_left, h_right, h_size, k, parent)
        k = parent
    return agenda + 1


@long_kernel
def _agenda_pop(agenda, h_score, h_left, h_right, h_size):
    """Move the agenda's first entry to slot ``agenda - 1`` (the heap then holds one fewer)."""
    last = agenda - 1
    _agenda_swap(h_score, h_left, h_right, h_size, 0, last)
    k = 0
    while True:
        child = 2 * k + 1
        if child >= last:
            break
        if child + 1 < last and _before(h_score, h_left, child + 1, child):
            child += 1
        if not _before(h_score, h_left, child, k):
            break
        _agenda_swap(h_score, h_left, h_right, h_size, k, child)
        k = child


@long_kernel
def _offer_pair(buf, keys, children, token, logp, start, size, left, right, agenda, h_score, h_left, h_right,
                h_size):
    """Put the pair of symbols ``left`` and ``right`` on the agenda where a token spells it."""
    if left < 0 or right < 0:
        return agenda
    node = _spelled(buf, start[left], start[right] + size[right], keys, children, token)
    if node < 0 or not logp[node] == logp[node]:  # no token, or no score to rank it by
        return agenda
    return _agenda_push(agenda, h_score, h_left, h_right, h_size, logp[node], left, right, size[left] + size[right])


@long_kernel
def best_pair(buf, offsets, keys, children, token, logp, start, size, node_of, links, h_score, h_left, h_right,
              h_size, out, counts):
    """sentencepiece's BPE inference, unit by unit, as sentencepiece runs it: the adjacent
    pairs that spell a token on an agenda (a heap, best score first, then leftmost); the first
    is joined unless a join since has changed either side (its spelled length tells), and the
    new symbol's pairs with its neighbours go on the agenda. A unit of n symbols costs
    O(n log n) lookups. ``start``/``size``/``node_of``: scratch of the longest unit's length
    (each symbol's first byte, its bytes, its trie node), ``links``: two rows of it (each
    symbol's left and right neighbour, -1 for none); ``h_*``: the agenda, three times that."""
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
        for k in range(m):
            links[0, k], links[1, k] = k - 1, k + 1 if k + 1 < m else -1
        agenda = 0
        for k in range(m - 1):
            agenda = _offer_pair(buf, keys, children, token, logp, start, size, k, k + 1, agenda, h_score, h_left,
                                 h_right, h_size)
        while agenda > 0:
            _agenda_pop(agenda, h_score, h_left, h_right, h_size)
            agenda -= 1
            left, right, spelled = h_left[agenda], h_right[agenda], h_size[agenda]
            if size[left] == 0 or size[right] == 0 or size[left] + size[right] != spelled:
                continue  # a side was joined since: stale
            size[left] = spelled
            node_of[left] = _spelled(buf, start[left], start[left] + spelled, keys, children, token)
            size[right] = 0
            links[1, left] = links[1, right]
            if links[1, right] >= 0:
                links[0, links[1, right]] = left
            agenda = _offer_pair(buf, keys, children, token, logp, start, size, links[0, left], left, agenda, h_score,
                                 h_left, h_right, h_size)
            agenda = _offer_pair(buf, keys, children, token, logp, start, size, left, links[1, left], agenda, h_score,
                                 h_left, h_right, h_size)
        n = 0
        k = 0 if m > 0 else -1
        while k >= 0:
            out[lo + n] = token[node_of[k]]
            n += 1
            k = links[1, k]
        counts[u] = n


def _scored(vocabulary, segmenter: str) -> None:
    """ConfigError where ``vocabulary`` has no scores for ``segmenter`` to read."""
    if not vocabulary.has_scores:
        raise ConfigError(f"segmenter {segmenter!r} needs the tokens' log-probabilities, and this vocabulary has "
                          "none (train with this version, or choose another --segmenter)")


def _path_scratch(offsets, dtype=np.float64):
    """A best-path search's scratch for units up to the longest one: scores (``dtype``), the
    back links' lengths and tokens, and each unit's count of tokens."""
    longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
    return (np.zeros(longest + 1, dtype=dtype), np.zeros(longest + 1, dtype=np.int64),
            np.zeros(longest + 1, dtype=np.int64), np.zeros(offsets.size - 1, dtype=np.int64))


class BestPair(Segmenter):
    """sentencepiece's BPE inference: the adjacent pair spelling the best-scored token first."""

    needs_scores = True

    def segment(self, vocabulary, buf, offsets, out):
        _scored(vocabulary, "best-pair")
        longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
        start, size, node_of = np.zeros((3, longest + 1), dtype=np.int64)
        links = np.zeros((2, longest + 1), dtype=np.int64)
        h_score = np.zeros(3 * (longest + 1))
        h_left, h_right, h_size = np.zeros((3, 3 * (longest + 1)), dtype=np.int64)
        counts = np.zeros(offsets.size - 1, dtype=np.int64)
        best_pair(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, vocabulary.logp, start, size,
                  node_of, links, h_score, h_left, h_right, h_size, out, counts)
        return counts


class LongestPrefix(Segmenter):
    """WordPiece's MaxMatch: the longest token that starts what is left of the unit."""

    hf_model = "WordPiece"

    def segment(self, vocabulary, buf, offsets, out):
        counts = np.zeros(offsets.size - 1, dtype=np.int64)
        longest_prefix(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, out, counts)
        return counts


class FewestTokens(Segmenter):
    """The fewest tokens (a shortest path), ties to the longest last token: PathPiece's."""

    by_likelihood = False

    def segment(self, vocabulary, buf, offsets, out):
        score, back_len, back_tok, counts = _path_scratch(offsets)
        best_path(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, vocabulary.logp,
                  self.by_likelihood, score, back_len, back_tok, out, counts)
        return counts


class SentencepieceLikelihood(Segmenter):
    """sentencepiece's unigram inference to the bit (:func:`sentencepiece_path`): the texts
    whole, float32 sums; an unknown character scores as the least likely tokens (the
    vocabulary's stand-ins for bytes that are no piece, which ``import-spm`` scores there)."""

    needs_scores = True
    samples_lattice = True  # its lattice is Unigram's: sampling draws from it as from ``likelihood``'s
    whole_text = True

    def segment(self, vocabulary, buf, offsets, out):
        _scored(vocabulary, "likelihood-f32")
        score, back_len, back_tok, counts = _path_scratch(offsets, np.float32)
        unknown = float(vocabulary.logp[vocabulary.token >= 0].min()) if (vocabulary.token >= 0).any() else 0.0
        sentencepiece_path(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, vocabulary.logp,
                           unknown, score, back_len, back_tok, out, counts)
        return counts


class Likelihood(FewestTokens):
    """The most likely tokens under their log-probabilities: Unigram LM's Viterbi."""

    by_likelihood = True
    needs_scores = True
    samples_lattice = True
    hf_model = "Unigram"

    def segment(self, vocabulary, buf, offsets, out):
        _scored(vocabulary, "likelihood")
        return super().segment(vocabulary, buf, offsets, out)
