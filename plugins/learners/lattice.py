"""The lattice of a vocabulary over a text's words: every (position, token) edge, read off the
vocabulary's trie once, so that the passes of a pruning round (forward-backward, Viterbi)
follow flat arrays instead of walking the trie at every position again; and the searches a
pruning round makes on the tokens' own spellings.
"""

from __future__ import annotations

import attrs
import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, ConfigError, Vocabulary, trie_child

from .seeds import gathered

#: no path (a log-probability below every real one)
NEG = -1e300


def sizes_down(vocab_sizes) -> list[int]:
    """The tokens beyond the 256 bytes of each of ``vocab_sizes``, each once, largest first: the
    sizes a pruning run passes on its way down. ConfigError for a size not above the bytes."""
    for size in vocab_sizes:
        if size <= BYTE_SYMBOLS:
            raise ConfigError(f"vocab_size (--vocab-size) {size}: the 256 byte tokens come first, so it must "
                              "exceed 256")
    return sorted({size - BYTE_SYMBOLS for size in vocab_sizes}, reverse=True)


def spelled(pieces: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of ``pieces`` one after the other, and where each starts (the last entry: the
    end)."""
    starts = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in pieces], out=starts[1:])
    return np.frombuffer(b"".join(pieces), dtype=np.uint8), starts


def trie_of(spell: np.ndarray, starts: np.ndarray, ids: np.ndarray, scores: np.ndarray):
    """(the trie of the pieces ``ids``, each ``spell[starts[t]:starts[t + 1]]`` with its score in
    ``scores``, aligned with ``ids``; their bytes one after the other; where each starts): a
    pruning round's trie of the pieces still alive."""
    lengths = starts[ids + 1] - starts[ids]
    sub_starts = np.zeros(ids.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=sub_starts[1:])
    sub_spell = gathered(spell, starts[ids], lengths, int(sub_starts[-1]))
    return Vocabulary.of_spellings(sub_spell, sub_starts, ids, scores), sub_spell, sub_starts


@numba.njit(cache=True)
def _lattice_size(buf, offsets, keys, children, token, stride):
    """How many (position, piece) edges every ``stride``-th word's lattice has."""
    edges = 0
    for w in range(0, offsets.size - 1, stride):
        hi = offsets[w + 1]
        for i in range(offsets[w], hi):
            node = np.int64(0)
            for k in range(i, hi):
                node = trie_child(keys, children, node, buf[k])
                if node < 0:
                    break
                if token[node] >= 0:
                    edges += 1
    return edges


@numba.njit(cache=True)
def _fill_lattice(buf, offsets, keys, children, token, first, span, piece):
    """The edges of every position ``p`` of ``buf``: ``span[e]`` bytes of piece ``piece[e]``
    for e in ``first[p]:first[p + 1]``, shortest first. Returns (edges, span, piece): the
    arrays given, or larger ones (by half) where they were too small."""
    edges = 0
    for w in range(offsets.size - 1):
        hi = offsets[w + 1]
        for i in range(offsets[w], hi):
            first[i] = edges
            node = np.int64(0)
            for k in range(i, hi):
                node = trie_child(keys, children, node, buf[k])
                if node < 0:
                    break
                if token[node] >= 0:
                    if edges == span.size:
                        size = span.size + span.size // 2 + 1024
                        grown_span = np.empty(size, dtype=span.dtype)
                        grown_piece = np.empty(size, dtype=piece.dtype)
                        grown_span[:edges] = span[:edges]
                        grown_piece[:edges] = piece[:edges]
                        span, piece = grown_span, grown_piece
                    span[edges] = k - i + 1
                    piece[edges] = token[node]
                    edges += 1
    first[buf.size] = edges
    return edges, span, piece


#: every how many words the edges are counted to size the lattice before it is filled
SAMPLE_STRIDE = 16


@attrs.frozen(kw_only=True, eq=False)
class Lattice:
    """Every word's lattice, read off the trie once a round: the E steps and the Viterbi pass
    then follow flat arrays instead of walking the trie at every position again."""

    first: np.ndarray  # int32 (int64 past 2**31 edges), a position's edges start here (one past the end: the last)
    span: np.ndarray  # uint8, an edge's bytes
    piece: np.ndarray  # int32, an edge's piece

    @classmethod
    def of(cls, buf, offsets, vocabulary: Vocabulary) -> Lattice:
        """The lattice of the words under ``vocabulary``, sized from a sample of the words
        (one walk of the trie a position, not two) and grown if the sample fell short."""
        sampled = _lattice_size(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token, SAMPLE_STRIDE)
        capacity = sampled * SAMPLE_STRIDE * 9 // 8 + 1024
        for index in (np.int32, np.int64):  # int32 while it holds every edge's number
            first = np.zeros(buf.size + 1, dtype=index)
            edges, span, piece = _fill_lattice(buf, offsets, vocabulary.keys, vocabulary.children, vocabulary.token,
                                               first, np.empty(capacity, dtype=np.uint8), np.empty(capacity, dtype=np.int32))
            if edges < 2**31:
                break
        return cls(first=first, span=span[:edges], piece=piece[:edges])

    def keep(self, alive: np.ndarray) -> Lattice:
        """The lattice without the edges of the pieces that are no longer ``alive``: a later
        round's lattice, with no trie walked again. Compacted in place (a kept edge never moves
        later), so a round holds one lattice."""
        edges = _kept_edges(self.first, self.span, self.piece, alive)
        return Lattice(first=self.first, span=self.span[:edges], piece=self.piece[:edges])


@numba.njit(cache=True)
def _kept_edges(first, span, piece, alive):
    edges = 0
    start = first[0]
    for p in range(first.size - 1):
        end = first[p + 1]
        first[p] = edges
        for e in range(start, end):
            if alive[piece[e]]:
                span[edges] = span[e]
                piece[edges] = piece[e]
                edges += 1
        start = end
    first[first.size - 1] = edges
    return edges


@numba.njit(cache=True, forceinline=True)
def _best_path(first, span, piece, logp, lo, n, whole_left_out, score, back_len, back_tok):
    """The most likely path through the lattice's positions ``lo`` to ``lo + n`` (edges that end
    past it are not taken; with ``whole_left_out``, neither is one edge spanning all of it):
    ``score[n]``, and each position's last edge in ``back_len``/``back_tok``. A piece at
    ``NEG`` is dead; ties go to the longest last piece."""
    score[0] = 0.0
    for j in range(1, n + 1):
        score[j] = NEG
        back_len[j] = 0
    for i in range(n):
        if score[i] <= NEG:
            continue
        for e in range(first[lo + i], first[lo + i + 1]):
            j = i + span[e]
            if j > n:
                break  # shortest first: the rest end past it too
            t = piece[e]
            if logp[t] <= NEG or (whole_left_out and i == 0 and j == n):
                continue
            s = score[i] + logp[t]
            if s > score[j] or (s == score[j] and j - i > back_len[j]):
                score[j], back_len[j], back_tok[j] = s, j - i, t
    return score[n]


@numba.njit(cache=True)
def viterbi_counts(offsets, counts, first, span, piece, logp, freq, inverted, seen, score, back_len, back_tok):
    """Each piece's count in the words' Viterbi paths over their lattices (``freq``; a piece at
    ``NEG`` is dead) and the count of the words whose path holds it (``inverted``:
    sentencepiece's F, before its normalisation). Ties go to the longest last piece."""
    for w in range(offsets.size - 1):
        lo = offsets[w]
        n = offsets[w + 1] - lo
        _best_path(first, span, piece, logp, lo, n, False, score, back_len, back_tok)
        j = n
        while j > 0 and back_len[j] > 0:
            t = back_tok[j]
            freq[t] += counts[w]
            if seen[t] != w:
                seen[t] = w
                inverted[t] += counts[w]
            j -= back_len[j]


@numba.njit(cache=True)
def second_best_in_lattice(where, starts, wanted, first, span, piece, logp, own, alt_first, alt_pieces, score,
                           back_len, back_tok):
    """For each ``wanted`` piece t: the best segmentation of its own bytes without the piece
    itself (``alt_pieces[alt_first[t]:alt_first[t + 1]]``, empty where there is none), and
    ``own[t]``: whether the piece itself is its bytes' best segmentation (else Viterbi never
    takes it). Read off the lattice: piece t occurs at ``where[t]`` in the words, so the edges
    there that end within it are the pieces its bytes hold (a piece at ``NEG`` in ``logp`` is
    dead), shortest first as a walk of the trie finds them."""
    used = 0
    for t in range(starts.size - 1):
        alt_first[t] = used
        if not wanted[t]:
            continue
        n = starts[t + 1] - starts[t]
        own[t] = _best_path(first, span, piece, logp, where[t], n, True, score, back_len, back_tok) <= logp[t]
        j = n
        while j > 0 and back_len[j] > 0:
            alt_pieces[used] = back_tok[j]
            used += 1
            j -= back_len[j]
    alt_first[starts.size - 1] = used


@numba.njit(cache=True)
def occurrences(first, piece, n_pieces):
    """A position where each piece occurs in the words (its first edge's), -1 where none."""
    where = np.full(n_pieces, -1, dtype=np.int64)
    for p in range(first.size - 1):
        for e in range(first[p], first[p + 1]):
            if where[piece[e]] < 0:
                where[piece[e]] = p
    return where
