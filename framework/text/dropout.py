"""BPE-dropout (Provilkov et al. 2020) as HF tokenizers samples it: each word's merges are
applied lowest rank first, leftmost first, and each merge taken from the queue is skipped with
probability ``p``; the skipped ones go back in the queue after the next merge taken, so a word
may end with fewer merges than its rules allow. That is HF's ``Word::merge_all`` with a
dropout, step for step (its queue, its check of expired entries, its re-insertion); only the
random numbers differ, drawn here from a seeded xorshift64* so that a seed gives the same
sample on every machine. Every occurrence of a word is sampled on its own, as HF does.
"""

from __future__ import annotations

import attrs
import numba
import numpy as np

from ..errors import ConfigError
from .encoder import rule_of_pair

_LOW = np.int64(0xFFFFFFFF)


@numba.njit(cache=True, forceinline=True)
def xorshift_uniform(state):
    """The next number in [0, 1) from the xorshift64* generator whose state is ``state[0]``."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return np.float64((x * np.uint64(2685821657736338717)) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, forceinline=True)
def _push(heap, n, key):
    """Push ``key`` on the min-heap ``heap[:n]``; returns the new size."""
    i = n
    heap[i] = key
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= heap[i]:
            break
        heap[parent], heap[i] = heap[i], heap[parent]
        i = parent
    return n + 1


@numba.njit(cache=True, forceinline=True)
def _pop(heap, n):
    """The least key of ``heap[:n]``, taken off (the heap is then ``heap[:n - 1]``)."""
    top = heap[0]
    n -= 1
    heap[0] = heap[n]
    i = 0
    while True:
        left = 2 * i + 1
        least = i
        if left < n and heap[left] < heap[least]:
            least = left
        if left + 1 < n and heap[left + 1] < heap[least]:
            least = left + 1
        if least == i:
            return top
        heap[least], heap[i] = heap[i], heap[least]
        i = least


@numba.njit(cache=True)
def dropout_words(buf, starts, keys, vals, ranks, p, state, out, out_len):
    """The symbols of each word ``buf[starts[w]:starts[w + 1]]`` (bytes) under the rules (their
    pair table ``keys, vals, ranks``) with merge dropout ``p``, into ``out`` from ``starts[w]``
    (a word has at most as many symbols as bytes), their number in ``out_len[w]``."""
    longest = 1
    for w in range(starts.size - 1):
        longest = max(longest, starts[w + 1] - starts[w])
    sym = np.empty(longest, dtype=np.int64)
    nxt = np.empty(longest, dtype=np.int64)
    prv = np.empty(longest, dtype=np.int64)
    alive = np.empty(longest, dtype=np.bool_)
    heap = np.empty(3 * longest, dtype=np.int64)  # the first pairs, and two for each merge
    skipped = np.empty(3 * longest, dtype=np.int64)
    for w in range(starts.size - 1):
        length = starts[w + 1] - starts[w]
        for k in range(length):
            sym[k] = buf[starts[w] + k]
            prv[k] = k - 1
            nxt[k] = k + 1 if k + 1 < length else -1
            alive[k] = True
        n = 0
        for k in range(length - 1):
            r = rule_of_pair(keys, vals, ranks, sym[k], sym[k + 1], 0)
            if r >= 0:
                n = _push(heap, n, (r << 32) | k)
        m = 0
        while n > 0:
            top = _pop(heap, n)
            n -= 1
            if xorshift_uniform(state) < p:
                skipped[m] = top
                m += 1
                continue
            for j in range(m):  # the skipped ones queue again once a merge is taken
                n = _push(heap, n, skipped[j])
            m = 0
            rank = top >> 32
            at = top & _LOW
            right = nxt[at]
            if not alive[at] or right < 0 or rule_of_pair(keys, vals, ranks, sym[at], sym[right], 0) != rank:
                continue  # an entry that a merge beside it made stale
            sym[at] = 256 + rank
            alive[right] = False
            nxt[at] = nxt[right]
            if nxt[at] >= 0:
                prv[nxt[at]] = at
            if prv[at] >= 0:
                r = rule_of_pair(keys, vals, ranks, sym[prv[at]], sym[at], 0)
                if r >= 0:
                    n = _push(heap, n, (r << 32) | prv[at])
            if nxt[at] >= 0:
                r = rule_of_pair(keys, vals, ranks, sym[at], sym[nxt[at]], 0)
                if r >= 0:
                    n = _push(heap, n, (r << 32) | at)
        count = 0
        k = 0
        while k >= 0 and length > 0:
            out[starts[w] + count] = sym[k]
            count += 1
            k = nxt[k]
        out_len[w] = count


def _splitmix64(value: int) -> int:
    """A seed spread over 64 bits (SplitMix64's finaliser), never 0 (xorshift's fixed point)."""
    z = (value + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) or 1


def seeded_state(seed) -> np.ndarray:
    """The generator's state for ``seed`` (None: one drawn from the system); ConfigError for a
    seed that is not a whole number from 0 up."""
    if seed is None:
        seed = int(np.random.default_rng().integers(0, 1 << 63))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed (--seed) must be a whole number from 0 up, not {seed!r}")
    return np.array([_splitmix64(seed & 0xFFFFFFFFFFFFFFFF)], dtype=np.uint64)


@attrs.frozen
class Dropout:
    """A dropout probability and the generator its samples draw from (advanced as they do)."""

    p: float
    state: np.ndarray

    @classmethod
    def of(cls, p, seed) -> Dropout:
        """ConfigError unless ``p`` is a probability; ``seed`` None draws one from the system."""
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ConfigError(f"dropout (--dropout) must be a probability from 0 to 1, not {p!r}")
        return cls(float(p), seeded_state(seed))

    def symbols(self, encoder, arr: np.ndarray, breaks: np.ndarray | None) -> np.ndarray:
        """The symbols of ``arr`` cut at ``breaks`` (None: one word), each word sampled (the
        ``encoder``'s rules)."""
        return each_word(arr, breaks, lambda starts, out, counts: dropout_words(
            arr, starts, encoder.keys, encoder.vals, encoder.ranks, self.p, self.state, out, counts))


def each_word(arr: np.ndarray, breaks: np.ndarray | None, sample) -> np.ndarray:
    """The symbols of every word of ``arr`` (cut at ``breaks``; None: one word) that
    ``sample(starts, out, counts)`` writes, word w's ``counts[w]`` of them from ``out[starts[w]]``
    (a word has at most as many symbols as bytes), in order."""
    starts = np.unique(np.concatenate([[0], np.flatnonzero(breaks) + 1 if breaks is not None else [],
                                       [arr.size]]).astype(np.int64))
    out = np.empty(arr.size, dtype=np.int64)
    counts = np.empty(starts.size - 1, dtype=np.int64)
    sample(starts, out, counts)
    lengths = np.diff(starts)
    inside = np.arange(arr.size) - np.repeat(starts[:-1], lengths)
    return out[inside < np.repeat(counts, lengths)]
