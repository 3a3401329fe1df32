"""The seed vocabulary of a top-down learner, as sentencepiece's unigram trainer makes it:
every character, and the most frequent substrings of the words (whole UTF-8 characters, at
most ``max_piece_bytes`` bytes, seen at least twice) by frequency times byte length.

Substrings are counted length by length in characters, a substring counted only where both
its shorter halves were frequent (so the work follows the frequent substrings), and only the
best ``seed_size`` are held from one length to the next.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np
from chunkpress.plugin import ConfigError, char_classes

#: the base of the polynomial hash of a byte string: h = h * HASH_BASE + (byte + 1), byte by byte
HASH_BASE = np.uint64(0x100000001B3)


#: ``ends``' mark of a position no longer substring starts at
_DONE = 255


@numba.njit(cache=True, forceinline=True)
def _prefix_hashes(buf, lo, hi, h):
    """``h[p]``: the polynomial hash of ``buf[lo:lo + p]``, so that bytes ``lo + a:lo + b``
    hash to ``h[b] - h[a] * HASH_BASE ** (b - a)`` (one word's, into a scratch array)."""
    h[0] = 0
    for p in range(lo, hi):
        h[p - lo + 1] = h[p - lo] * HASH_BASE + np.uint64(buf[p] + 1)


@numba.njit(cache=True, forceinline=True)
def hash_key(h, n):
    """A table key for a byte string of polynomial hash ``h`` and length ``n``: the two mixed,
    never 0 (an empty slot)."""
    x = h ^ (np.uint64(n) * np.uint64(0x9E3779B97F4A7C15))
    x = (x ^ (x >> np.uint64(29))) * np.uint64(0xC2B2AE3D27D4EB4F)
    return (x ^ (x >> np.uint64(32))) | np.uint64(1)


@numba.njit(cache=True, forceinline=True)
def _substring_key(h, powers, lo, hi):
    """:func:`hash_key` of the bytes ``lo:hi`` of a word whose prefix hashes are ``h``."""
    return hash_key(h[hi] - h[lo] * powers[hi - lo], hi - lo)


@numba.njit(cache=True)
def _table_find(keys, key):
    """The slot of ``key`` in an open-addressing table of uint64 keys (0: empty)."""
    mask = keys.size - 1
    i = np.int64(key & np.uint64(mask))
    while keys[i] != 0 and keys[i] != key:
        i = (i + 1) & mask
    return i


@numba.njit(cache=True)
def _count_level(buf, offsets, counts, char_len, reach, ends, h, powers, prev_keys, k, max_bytes, cap):
    """Count every substring of ``k`` whole characters and at most ``max_bytes`` bytes whose
    (k - 1)-character prefix and suffix are in ``prev_keys`` (a table of the frequent ones; none
    for k = 1). ``char_len[i]``: the bytes of the character that starts at i (0: none does);
    ``ends[i]``: the bytes of the (k - 1)-character substring at i (_DONE: past its word),
    moved on by one character here, so no level walks its k characters again; ``h``: scratch
    for a word's prefix hashes. Returns (keys, counts, an example start, its byte length,
    whether it is right-maximal) of those seen twice or more, and whether the table grew past
    ``cap`` entries (the caller then stops). A
    substring is right-maximal (a node of the words' suffix tree) unless every occurrence is
    followed by the same character within its word."""
    size = 1 << 16
    # a slot's key and count side by side (one cache line a count), the rest apart (written once)
    table = np.zeros((size, 2), dtype=np.uint64)
    where = np.zeros(size, dtype=np.int64)
    length = np.zeros(size, dtype=np.uint8)
    follows = np.zeros(size, dtype=np.uint32)  # the character after every occurrence so far (_MIXED: not one)
    used = 0
    for w in range(offsets.size - 1):
        lo_w, hi_w = offsets[w], offsets[w + 1]
        weight = np.uint64(counts[w])
        hashed = False
        for i in range(lo_w, hi_w):
            if char_len[i] == 0 or ends[i] == _DONE:  # not a character's first byte, or done with
                continue
            mid = i + np.int64(ends[i])
            ends[i] = _DONE
            if mid >= hi_w:
                continue
            j = mid + np.int64(char_len[mid])
            # a substring not counted here starts no counted longer one (its prefix was not
            # counted), so its position is done with: later levels skip it without a lookup
            if j - i > max_bytes or (reach.size > 0 and j - i > reach[i]):
                continue
            if not hashed:
                _prefix_hashes(buf, lo_w, hi_w, h)
                hashed = True
            if k > 1:
                prefix = _substring_key(h, powers, i - lo_w, mid - lo_w)
                if prev_keys[_table_find(prev_keys, prefix)] != prefix:
                    continue
                suffix = _substring_key(h, powers, i + np.int64(char_len[i]) - lo_w, j - lo_w)
                if prev_keys[_table_find(prev_keys, suffix)] != suffix:
                    continue
            ends[i] = j - i
            key = _substring_key(h, powers, i - lo_w, j - lo_w)
            s = _table_find(table[:, 0], key)
            after = _following(buf, char_len, j, hi_w)
            if table[s, 0] == 0:
                table[s, 0] = key
                where[s] = i
                length[s] = j - i
                follows[s] = after
                used += 1
            elif follows[s] != after:
                follows[s] = _MIXED
            table[s, 1] += weight
            if 4 * used > 3 * size:  # grow: linear probing stays short up to three quarters full
                size *= 2
                old_table, old_where, old_len, old_follows = table, where, length, follows
                table = np.zeros((size, 2), dtype=np.uint64)
                where = np.zeros(size, dtype=np.int64)
                length = np.zeros(size, dtype=np.uint8)
                follows = np.zeros(size, dtype=np.uint32)
                for t in range(old_table.shape[0]):
                    if old_table[t, 0] != 0:
                        u = _table_find(table[:, 0], old_table[t, 0])
                        table[u, 0], table[u, 1] = old_table[t, 0], old_table[t, 1]
                        where[u], length[u], follows[u] = old_where[t], old_len[t], old_follows[t]
                if used > cap:
                    empty = np.zeros(0, dtype=np.int64)
                    return table[:0, 0].copy(), empty, empty, empty, follows[:0] == 0, True
    kept = 0
    for t in range(table.shape[0]):
        if table[t, 0] != 0 and (table[t, 1] >= 2 or k == 1):
            kept += 1
    keys = np.empty(kept, dtype=np.uint64)
    found = np.empty(kept, dtype=np.int64)
    at = np.empty(kept, dtype=np.int64)
    spans = np.empty(kept, dtype=np.int64)
    maximal = np.empty(kept, dtype=np.bool_)
    kept = 0
    for t in range(table.shape[0]):
        if table[t, 0] != 0 and (table[t, 1] >= 2 or k == 1):
            keys[kept], found[kept], at[kept], spans[kept] = table[t, 0], np.int64(table[t, 1]), where[t], length[t]
            maximal[kept] = follows[t] == _MIXED or follows[t] == _WORD_END
            kept += 1
    return keys, found, at, spans, maximal, False


#: ``_following``'s answers besides a character (which is 2 and up): more than one character,
#: and a word's end
_MIXED, _WORD_END = 0, 1


@numba.njit(cache=True, forceinline=True)
def _following(buf, char_len, j, word_end):
    """What follows a substring that ends at ``j``: _WORD_END, or its next character's bytes
    as one number, plus 2 (a character is at most 4 bytes, below 0xF5 first: under 2**32 - 2)."""
    if j >= word_end:
        return np.uint32(_WORD_END)
    code = np.uint32(0)
    for p in range(j, j + np.int64(char_len[j])):
        code = (code << np.uint32(8)) | np.uint32(buf[p])
    return code + np.uint32(2)


def _key_table(keys: np.ndarray) -> np.ndarray:
    size = 1 << max(4, int(2 * keys.size).bit_length())
    table = np.zeros(size, dtype=np.uint64)
    _fill_table(table, keys)
    return table


@numba.njit(cache=True)
def _fill_table(table, keys):
    for key in keys:
        table[_table_find(table, key)] = key


def seed_pieces(buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, seed_size: int,
                max_piece_bytes: int = 16, right_maximal: bool = False,
                grouping: Callable[[np.ndarray], np.ndarray] | None = None):
    """(the pieces' bytes one after the other, where each starts, their seed scores, which are
    characters, where each occurs in ``buf``): every character, and the ``seed_size`` most
    frequent longer substrings by frequency times byte length; ``right_maximal``: only those
    that some occurrence ends a word with or that two characters follow, as sentencepiece's
    seeds are its suffix array's internal nodes (a substring always followed by the same
    character scores less than the longer one, which is as frequent). ``grouping``: gives per
    byte of ``buf`` the group of its character (:data:`ANY_GROUP` joins any,
    :data:`LEADING_ONLY` only starts a piece); a seed's characters are then all of one group
    (the groups are dropped before the counting begins)."""
    if not 1 <= max_piece_bytes <= 64:  # a substring's length is held in a byte
        raise ConfigError(f"max_piece_bytes {max_piece_bytes}: from 1 to 64")
    _, starts = char_classes(buf)
    char_len = _char_lengths(offsets, starts)
    del starts
    # a substring past its start's reach is no seed, nor is any longer one
    reach = np.zeros(0, dtype=np.uint8) if grouping is None else _reach(offsets, char_len, grouping(buf), max_piece_bytes)
    h = np.zeros(int(np.diff(offsets).max(initial=0)) + 1, dtype=np.uint64)
    powers = np.array([pow(int(HASH_BASE), k, 1 << 64) for k in range(max_piece_bytes + 2)], dtype=np.uint64)
    prev = np.zeros(16, dtype=np.uint64)
    ends = np.zeros(buf.size, dtype=np.uint8)  # the empty substring at each position
    cap = max(4 * seed_size, 1 << 20)
    # the characters, and the best seed_size longer substrings so far, in the order they were
    # found (so that ties fall as one stable sort of them all would let them fall)
    chars_where = chars_len = chars_count = None
    best_where, best_len, best_count = (np.zeros(0, dtype=np.int64) for _ in range(3))
    for k in range(1, max_piece_bytes + 1):
        keys, count, where, length, maximal, full = _count_level(buf, offsets, counts, char_len, reach, ends, h, powers, prev, k,
                                                        max_piece_bytes, cap)
        if full or keys.size == 0:
            break
        prev = _key_table(keys)
        if k == 1:
            chars_where, chars_len, chars_count = where.copy(), length.copy(), count.copy()
            continue
        if right_maximal:
            where, length, count = where[maximal], length[maximal], count[maximal]
        best_where = np.concatenate([best_where, where])
        best_len = np.concatenate([best_len, length])
        best_count = np.concatenate([best_count, count])
        del keys, count, where, length, maximal  # the level's table goes
        if best_count.size > seed_size:
            top = largest(best_count * best_len, seed_size)
            best_where, best_len, best_count = best_where[top], best_len[top], best_count[top]
    if chars_where is None:
        raise ConfigError("no text to learn from: the words are empty")
    del ends, char_len, reach, prev, h  # the counting's arrays go before the seeds are put together
    order = np.argsort(-(best_count * best_len), kind="stable")
    where = np.concatenate([chars_where, best_where[order]])
    length = np.concatenate([chars_len, best_len[order]])
    count = np.concatenate([chars_count, best_count[order]])
    del best_where, best_len, best_count, order
    chars = np.zeros(length.size, dtype=bool)
    chars[: chars_where.size] = True
    starts = np.zeros(length.size + 1, dtype=np.int64)
    np.cumsum(length, out=starts[1:])
    spell = gathered(buf, where, length, int(starts[-1]))
    weight = (count * length).astype(np.float64)
    return spell, starts, np.log(weight) - math.log(weight.sum()), chars, where


def largest(values: np.ndarray, k: int) -> np.ndarray:
    """The positions of the ``k`` largest ``values`` in ascending order, ties to the earliest:
    the first ``k`` of a stable sort by value, descending, as a set, found in linear time."""
    if values.size <= k:
        return np.arange(values.size)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    kth = np.partition(values, values.size - k)[values.size - k]
    above = np.flatnonzero(values > kth)
    return np.sort(np.concatenate([above, np.flatnonzero(values == kth)[: k - above.size]]))


@numba.njit(cache=True)
def gathered(buf, where, length, total):
    """The bytes ``buf[where[t]:where[t] + length[t]]`` of every t, one after the other."""
    out = np.empty(total, dtype=np.uint8)
    at = 0
    for t in range(where.size):
        for k in range(length[t]):
            out[at + k] = buf[where[t] + k]
        at += length[t]
    return out


#: a character's group in :func:`seed_pieces`: joins a piece of any group; only starts a piece
ANY_GROUP, LEADING_ONLY = -1, -2


@numba.njit(cache=True)
def _reach(offsets, char_len, groups, max_bytes):
    """For each character start i, how many bytes from i a piece may span: its characters of
    one group (see :func:`seed_pieces`), at most ``max_bytes`` and a character more."""
    out = np.zeros(char_len.size, dtype=np.uint8)
    for w in range(offsets.size - 1):
        lo, hi = offsets[w], offsets[w + 1]
        for i in range(lo, hi):
            if char_len[i] == 0:
                continue
            group = ANY_GROUP
            p = i
            while p < hi and p - i <= max_bytes:
                g = groups[p]
                if g == LEADING_ONLY:
                    if p > i:
                        break
                elif g != ANY_GROUP:
                    if group != ANY_GROUP and g != group:
                        break
                    group = g
                p += int(char_len[p])
            out[i] = min(p - i, max_bytes + 4)
    return out


@numba.njit(cache=True)
def _char_lengths(offsets, starts):
    """For each byte that starts a character, its bytes (the character ends within its word);
    0 for the other bytes."""
    out = np.zeros(starts.size, dtype=np.uint8)
    for w in range(offsets.size - 1):
        lo, hi = offsets[w], offsets[w + 1]
        p = lo
        while p < hi:
            q = p + 1
            while q < hi and not starts[q]:
                q += 1
            out[p] = q - p
            p = q
    return out
