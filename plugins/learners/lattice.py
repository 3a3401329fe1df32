"""The lattice of a vocabulary over a text's words, found once for a pruning run (each position's
pieces, as one chain of prefixes), so that the passes of its rounds (forward-backward, Viterbi)
follow arrays instead of looking the pieces up at every position again; and the searches a
pruning round makes on the pieces' own spellings.
"""

from __future__ import annotations

import attrs
import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, ConfigError, Vocabulary

from .seeds import HASH_BASE, gathered, hash_key

#: no path (a log-probability below every real one)
NEG = -1e300


#: the longest piece a learner takes from a BPE vocabulary it starts from: its work grows with
#: a word's bytes times the longest piece, and merges over one long run of a byte reach pieces
#: as long as the run. A longer word is cut into pieces of at most this, as any word is.
LONGEST_START_PIECE = 256


def start_pieces(pieces) -> list[bytes]:
    """The distinct pieces beyond the bytes, of at most :data:`LONGEST_START_PIECE` bytes,
    shortest first (then by their bytes)."""
    return sorted({p for p in pieces if 1 < len(p) <= LONGEST_START_PIECE}, key=lambda p: (len(p), p))


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


def spellings_of(spell: np.ndarray, starts: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of the pieces ``ids`` (each ``spell[starts[t]:starts[t + 1]]``) one after the
    other, and where each starts (the last entry: the end)."""
    lengths = starts[ids + 1] - starts[ids]
    sub_starts = np.zeros(ids.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=sub_starts[1:])
    return gathered(spell, starts[ids], lengths, int(sub_starts[-1])), sub_starts


def trie_of(spell: np.ndarray, starts: np.ndarray, ids: np.ndarray, scores: np.ndarray):
    """(the trie of the pieces ``ids``, each ``spell[starts[t]:starts[t + 1]]`` with its score in
    ``scores``, aligned with ``ids``; their bytes one after the other; where each starts): a
    pruning round's trie of the pieces still alive."""
    sub_spell, sub_starts = spellings_of(spell, starts, ids)
    return Vocabulary.of_spellings(sub_spell, sub_starts, ids, scores), sub_spell, sub_starts


@numba.njit(cache=True, forceinline=True)
def _found(keys, ids, spell, starts, key, buf, lo, n):
    """The piece spelled ``buf[lo:lo + n]`` (hashed to ``key``), or -1: keys that collide are
    told apart by their bytes."""
    mask = keys.size - 1
    s = np.int64(key & np.uint64(mask))
    while keys[s] != 0:
        if keys[s] == key:
            t = ids[s]
            if starts[t + 1] - starts[t] == n:
                same = True
                for k in range(n):
                    if spell[starts[t] + k] != buf[lo + k]:
                        same = False
                        break
                if same:
                    return t
        s = (s + 1) & mask
    return -1


@numba.njit(cache=True)
def _chains(buf, offsets, spell, starts, top, shorter, length):
    """Fills ``top`` (per byte of the words: the longest piece the word's bytes from there
    begin with), ``shorter`` (per piece: the longest piece that is a proper prefix of it) and
    ``length`` (per piece: its bytes), looking each prefix up in a hash table of the pieces,
    longest first; a piece's first two bytes bound how long a prefix is looked up at all."""
    n_pieces = starts.size - 1
    size = 16
    while 3 * size < 4 * n_pieces:  # at most three quarters full: linear probing stays short
        size *= 2
    keys = np.zeros(size, dtype=np.uint64)
    ids = np.full(size, -1, dtype=np.int32)
    longest_after = np.zeros(1 << 16, dtype=np.int32)  # by first two bytes: the longest such piece
    longest = 1
    for t in range(n_pieces):
        lo, n = starts[t], starts[t + 1] - starts[t]
        length[t] = n
        longest = max(longest, n)
        if n >= 2:
            pair = np.int64(spell[lo]) << 8 | np.int64(spell[lo + 1])
            longest_after[pair] = max(longest_after[pair], n)
        h = np.uint64(0)
        for k in range(lo, lo + n):
            h = h * HASH_BASE + np.uint64(spell[k] + 1)
        s = np.int64(hash_key(h, n) & np.uint64(size - 1))
        while keys[s] != 0:
            s = (s + 1) & (size - 1)
        keys[s], ids[s] = hash_key(h, n), t
    prefix = np.zeros(longest + 1, dtype=np.uint64)  # the polynomial hash of each prefix
    for t in range(n_pieces):
        lo, n = starts[t], starts[t + 1] - starts[t]
        for k in range(n):
            prefix[k + 1] = prefix[k] * HASH_BASE + np.uint64(spell[lo + k] + 1)
        shorter[t] = -1
        for m in range(n - 1, 0, -1):
            u = _found(keys, ids, spell, starts, hash_key(prefix[m], m), spell, lo, m)
            if u >= 0:
                shorter[t] = u
                break
    for w in range(offsets.size - 1):
        hi = offsets[w + 1]
        for i in range(offsets[w], hi):
            reach = 1
            if hi - i >= 2:
                reach = min(hi - i, max(1, longest_after[np.int64(buf[i]) << 8 | np.int64(buf[i + 1])]))
            for k in range(reach):
                prefix[k + 1] = prefix[k] * HASH_BASE + np.uint64(buf[i + k] + 1)
            top[i] = -1
            for m in range(reach, 0, -1):
                u = _found(keys, ids, spell, starts, hash_key(prefix[m], m), buf, i, m)
                if u >= 0:
                    top[i] = u
                    break
    top[buf.size] = -1


@numba.njit(cache=True, forceinline=True)
def _living(shorter, alive, t):
    """``t`` if it lives, else the longest living piece that is a proper prefix of it (-1: none)."""
    while t >= 0 and not alive[t]:
        t = shorter[t]
    return t


@numba.njit(cache=True)
def _keep_living(top, shorter, alive):
    # in any order: a link not yet moved on still points to a prefix, which the walk passes
    for t in range(shorter.size):
        shorter[t] = _living(shorter, alive, shorter[t])
    for p in range(top.size):
        top[p] = _living(shorter, alive, top[p])


@numba.njit(cache=True)
def _renumber(top, shorter, length, alive):
    """(shorter, length) of the living pieces, numbered in their order, and ``top`` so numbered
    in place; every link already points to a living piece (or none)."""
    number = np.full(alive.size, -1, dtype=np.int32)
    living = 0
    for t in range(alive.size):
        if alive[t]:
            number[t] = living
            living += 1
    new_shorter = np.empty(living, dtype=np.int32)
    new_length = np.empty(living, dtype=np.int32)
    for t in range(alive.size):
        if alive[t]:
            new_shorter[number[t]] = number[shorter[t]] if shorter[t] >= 0 else -1
            new_length[number[t]] = length[t]
    for p in range(top.size):
        if top[p] >= 0:
            top[p] = number[top[p]]
    return new_shorter, new_length


@attrs.frozen(kw_only=True, eq=False)
class Lattice:
    """Every word's lattice. A position's edges are the pieces its word's bytes from there begin
    with, and those are prefixes of one another: one chain, from the position's longest piece
    to each piece's longest proper prefix among the pieces. So the lattice is a piece a byte
    and a link a piece, where a list of (position, piece) edges would be ten times larger."""

    top: np.ndarray  # int32 per byte of the words (and one past the end): its longest piece, -1 for none
    shorter: np.ndarray  # int32 per piece: its longest proper prefix among the pieces, -1 for none
    length: np.ndarray  # int32 per piece: its bytes

    @classmethod
    def of(cls, buf, offsets, spell: np.ndarray, starts: np.ndarray) -> Lattice:
        """The lattice of the words ``buf[offsets[w]:offsets[w + 1]]`` under the pieces
        ``spell[starts[t]:starts[t + 1]]`` (distinct)."""
        n = starts.size - 1
        top = np.empty(buf.size + 1, dtype=np.int32)
        shorter, length = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
        _chains(buf, offsets, spell, np.asarray(starts, dtype=np.int64), top, shorter, length)
        return cls(top=top, shorter=shorter, length=length)

    def keep(self, alive: np.ndarray) -> Lattice:
        """The lattice without the pieces that are no longer ``alive``: a position's chain then
        starts at its longest living piece and passes over the dead ones. In place, so a run
        holds one lattice."""
        _keep_living(self.top, self.shorter, alive)
        return self

    def renumbered(self, alive: np.ndarray) -> Lattice:
        """The lattice of the ``alive`` pieces alone, numbered in their order (the others are
        gone): ``top`` moved on in place, a piece's arrays that many entries long."""
        self.keep(alive)
        shorter, length = _renumber(self.top, self.shorter, self.length, alive)
        return Lattice(top=self.top, shorter=shorter, length=length)


@numba.njit(cache=True, forceinline=True)
def _best_path(top, shorter, length, logp, lo, n, whole_left_out, score, back_len, back_tok):
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
        t = top[lo + i]
        while t >= 0:  # a position reaches each end once, so the order of its edges is no matter
            j = i + length[t]
            if j <= n and logp[t] > NEG and not (whole_left_out and i == 0 and j == n):
                s = score[i] + logp[t]
                if s > score[j] or (s == score[j] and j - i > back_len[j]):
                    score[j], back_len[j], back_tok[j] = s, j - i, t
            t = shorter[t]
    return score[n]


@numba.njit(cache=True)
def viterbi_counts(offsets, counts, top, shorter, length, logp, freq, inverted, seen, score, back_len, back_tok):
    """Each piece's count in the words' Viterbi paths over their lattices (``freq``; a piece at
    ``NEG`` is dead) and the count of the words whose path holds it (``inverted``:
    sentencepiece's F, before its normalisation). Ties go to the longest last piece."""
    for w in range(offsets.size - 1):
        lo = offsets[w]
        n = offsets[w + 1] - lo
        _best_path(top, shorter, length, logp, lo, n, False, score, back_len, back_tok)
        j = n
        while j > 0 and back_len[j] > 0:
            t = back_tok[j]
            freq[t] += counts[w]
            if seen[t] != w:
                seen[t] = w
                inverted[t] += counts[w]
            j -= back_len[j]


@numba.njit(cache=True)
def second_best_in_lattice(where, starts, wanted, top, shorter, length, logp, own, alt_first, alt_pieces, score,
                           back_len, back_tok):
    """For each ``wanted`` piece t: the best segmentation of its own bytes without the piece
    itself (``alt_pieces[alt_first[t]:alt_first[t + 1]]``, empty where there is none), and
    ``own[t]``: whether the piece itself is its bytes' best segmentation (else Viterbi never
    takes it). Read off the lattice: piece t occurs at ``where[t]`` in the words, so the edges
    there that end within it are the pieces its bytes hold (a piece at ``NEG`` in ``logp`` is
    dead)."""
    used = 0
    for t in range(starts.size - 1):
        alt_first[t] = used
        if not wanted[t]:
            continue
        n = starts[t + 1] - starts[t]
        own[t] = _best_path(top, shorter, length, logp, where[t], n, True, score, back_len, back_tok) <= logp[t]
        j = n
        while j > 0 and back_len[j] > 0:
            alt_pieces[used] = back_tok[j]
            used += 1
            j -= back_len[j]
    alt_first[starts.size - 1] = used


@numba.njit(cache=True)
def occurrences(top, shorter, n_pieces):
    """A position where each piece occurs in the words (its first), -1 where none."""
    where = np.full(n_pieces, -1, dtype=np.int64)
    for p in range(top.size):
        t = top[p]
        while t >= 0:
            if where[t] < 0:
                where[t] = p
            t = shorter[t]
    return where
