"""Unigram LM training (Kudo 2018), as sentencepiece's trainer runs it
(``unigram_model_trainer.cc``), on a text's word counts, so that its work and memory follow the
distinct words, not the sentences:

* **seeds**: every character (they are never pruned), and the most frequent substrings of the
  words (whole UTF-8 characters, at most ``max_piece_bytes`` bytes, seen at least twice), by
  frequency times length, up to ``seed_size``; counted length by length, a substring counted
  only where both its shorter halves were frequent;
* **EM**: the expected count of each piece in each word's lattice (forward-backward), then
  sentencepiece's Bayesian M step: a piece whose expected count is under a half goes, the others
  get ``digamma(count) - digamma(total)``; ``sub_iterations`` rounds between prunings;
* **pruning**: each piece's loss is what the likelihood would lose if its occurrences in the
  Viterbi paths were replaced by the second-best segmentation of the piece itself; the pieces
  with the least loss go, ``shrinking`` of the rest kept a round, until 1.1 times the size;
* the final pieces: every character, then the best by score, up to the size.

The pieces are byte strings of whole characters; the 256 bytes stay tokens besides (a byte that
is no character the pieces hold is as unlikely as the least likely piece, less 10, as
sentencepiece's unknown), so every text can be cut.
"""

from __future__ import annotations

import math

import attrs
import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, ConfigError, Learner, Vocabulary, char_classes, trie_child

#: sentencepiece's: an expected count under this drops a piece in the M step
EXPECTED_AT_LEAST = 0.5
#: sentencepiece's: prune until the pieces are this many times the size, then keep the best
PRUNE_TO = 1.1
#: sentencepiece's: how much less likely than the least likely piece a rare character is
CHARACTER_BELOW = 1e-4
_BASE = np.uint64(0x100000001B3)
_NEG = -1e300


@attrs.frozen(kw_only=True)
class UnigramParams:
    """sentencepiece's defaults: a million seeds, pieces of up to 16 bytes, three quarters kept
    a round, two EM rounds between prunings."""

    seed_size: int = attrs.field(default=1_000_000, validator=attrs.validators.ge(1))
    max_piece_bytes: int = attrs.field(default=16, validator=[attrs.validators.ge(2), attrs.validators.le(64)])
    shrinking: float = attrs.field(default=0.75, validator=[attrs.validators.gt(0), attrs.validators.lt(1)])
    sub_iterations: int = attrs.field(default=2, validator=attrs.validators.ge(1))


# -- seeds ---------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _prefix_hashes(buf):
    """``h[p]``: the polynomial hash of ``buf[:p]``, so that bytes ``lo:hi`` hash to
    ``h[hi] - h[lo] * _BASE ** (hi - lo)``."""
    h = np.zeros(buf.size + 1, dtype=np.uint64)
    for p in range(buf.size):
        h[p + 1] = h[p] * _BASE + np.uint64(buf[p] + 1)
    return h


@numba.njit(cache=True, forceinline=True)
def _substring_key(h, powers, lo, hi):
    """A key for the bytes ``lo:hi``: their hash and length, mixed, never 0 (an empty slot)."""
    a = h[hi] - h[lo] * powers[hi - lo]
    x = a ^ (np.uint64(hi - lo) * np.uint64(0x9E3779B97F4A7C15))
    x = (x ^ (x >> np.uint64(29))) * np.uint64(0xC2B2AE3D27D4EB4F)
    return (x ^ (x >> np.uint64(32))) | np.uint64(1)


@numba.njit(cache=True)
def _table_find(keys, key):
    """The slot of ``key`` in an open-addressing table of uint64 keys (0: empty)."""
    mask = keys.size - 1
    i = np.int64(key & np.uint64(mask))
    while keys[i] != 0 and keys[i] != key:
        i = (i + 1) & mask
    return i


@numba.njit(cache=True)
def _count_level(buf, offsets, counts, next_char, h, powers, prev_keys, k, max_bytes, cap):
    """Count every substring of ``k`` whole characters and at most ``max_bytes`` bytes whose
    (k - 1)-character prefix and suffix are in ``prev_keys`` (a table of the frequent ones; none
    for k = 1). Returns (keys, counts, an example start, its byte length) of those seen twice or
    more, and whether the table grew past ``cap`` entries (the caller then stops)."""
    size = 1 << 16
    keys = np.zeros(size, dtype=np.uint64)
    found = np.zeros(size, dtype=np.int64)
    where = np.zeros(size, dtype=np.int64)
    length = np.zeros(size, dtype=np.int64)
    used = 0
    for w in range(offsets.size - 1):
        lo_w, hi_w = offsets[w], offsets[w + 1]
        for i in range(lo_w, hi_w):
            if next_char[i] < 0:  # not a character's first byte
                continue
            j = i
            mid = i
            whole = True
            for c in range(k):
                if j >= hi_w:
                    whole = False
                    break
                if c == k - 1:
                    mid = j
                j = next_char[j]
            if not whole or j - i > max_bytes:
                continue
            if k > 1:
                prefix = _substring_key(h, powers, i, mid)
                if prev_keys[_table_find(prev_keys, prefix)] != prefix:
                    continue
                suffix = _substring_key(h, powers, next_char[i], j)
                if prev_keys[_table_find(prev_keys, suffix)] != suffix:
                    continue
            key = _substring_key(h, powers, i, j)
            s = _table_find(keys, key)
            if keys[s] == 0:
                keys[s] = key
                where[s] = i
                length[s] = j - i
                used += 1
            found[s] += counts[w]
            if 2 * used > size:  # grow
                size *= 2
                old_keys, old_found, old_where, old_len = keys, found, where, length
                keys = np.zeros(size, dtype=np.uint64)
                found = np.zeros(size, dtype=np.int64)
                where = np.zeros(size, dtype=np.int64)
                length = np.zeros(size, dtype=np.int64)
                for t in range(old_keys.size):
                    if old_keys[t] != 0:
                        u = _table_find(keys, old_keys[t])
                        keys[u], found[u], where[u], length[u] = old_keys[t], old_found[t], old_where[t], old_len[t]
                if used > cap:
                    return keys[:0], found[:0], where[:0], length[:0], True
    kept = 0
    for t in range(keys.size):
        if keys[t] != 0 and (found[t] >= 2 or k == 1):
            keys[kept], found[kept], where[kept], length[kept] = keys[t], found[t], where[t], length[t]
            kept += 1
    return keys[:kept], found[:kept], where[:kept], length[:kept], False


def _key_table(keys: np.ndarray) -> np.ndarray:
    size = 1 << max(4, int(2 * keys.size).bit_length())
    table = np.zeros(size, dtype=np.uint64)
    _fill_table(table, keys)
    return table


@numba.njit(cache=True)
def _fill_table(table, keys):
    for key in keys:
        table[_table_find(table, key)] = key


def seed_pieces(buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, params: UnigramParams):
    """(the pieces' bytes one after the other, where each starts, their seed scores, which are
    characters): every character, and the ``seed_size`` most frequent longer substrings by
    frequency times byte length."""
    _, starts = char_classes(buf)
    next_char = _next_chars(buf, offsets, starts)
    h = _prefix_hashes(buf)
    powers = np.array([pow(int(_BASE), k, 1 << 64) for k in range(params.max_piece_bytes + 2)], dtype=np.uint64)
    found_where, found_len, found_count = [], [], []
    prev = np.zeros(16, dtype=np.uint64)
    cap = max(4 * params.seed_size, 1 << 20)
    for k in range(1, params.max_piece_bytes + 1):
        keys, count, where, length, full = _count_level(buf, offsets, counts, next_char, h, powers, prev, k,
                                                        params.max_piece_bytes, cap)
        if full or keys.size == 0:
            break
        found_where.append(where)
        found_len.append(length)
        found_count.append(count)
        prev = _key_table(keys)
    where, length, count = (np.concatenate(x) for x in (found_where, found_len, found_count))
    chars = np.zeros(length.size, dtype=bool)
    chars[: found_len[0].size] = True
    longer = np.flatnonzero(~chars)
    order = longer[np.argsort(-(count[longer] * length[longer]), kind="stable")][: params.seed_size]
    keep = np.concatenate([np.flatnonzero(chars), order])
    starts = np.zeros(keep.size + 1, dtype=np.int64)
    np.cumsum(length[keep], out=starts[1:])
    spell = gathered(buf, where[keep], length[keep], int(starts[-1]))
    weight = (count[keep] * length[keep]).astype(np.float64)
    return spell, starts, np.log(weight) - math.log(weight.sum()), chars[keep]


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


@numba.njit(cache=True)
def _next_chars(buf, offsets, starts):
    """For each byte that starts a character, where the next character starts (within its
    word); -1 for the other bytes."""
    out = np.full(buf.size, -1, dtype=np.int64)
    for w in range(offsets.size - 1):
        lo, hi = offsets[w], offsets[w + 1]
        p = lo
        while p < hi:
            q = p + 1
            while q < hi and not starts[q]:
                q += 1
            out[p] = q
            p = q
    return out


# -- EM ------------------------------------------------------------------------------------------


@numba.njit(cache=True, forceinline=True)
def _logadd(a, b):
    if a < b:
        a, b = b, a
    if b <= _NEG:
        return a
    return a + math.log1p(math.exp(b - a))


#: a word up to this many bytes is summed in probabilities, not their logs: its best path is
#: at least e^-700 likely (pieces of a byte or more, each at least e^-40), which a double holds
LINEAR_BYTES = 256


@numba.njit(cache=True)
def _e_step(buf, offsets, counts, keys, children, token, logp, prob, expected, alpha, beta):
    """Each piece's expected count over the words' lattices (forward-backward), into
    ``expected``; returns the counts' log-likelihood. A word up to LINEAR_BYTES is summed in
    probabilities (``prob``: exp(logp)), a longer one in logs."""
    objective = 0.0
    for w in range(offsets.size - 1):
        lo = offsets[w]
        n = offsets[w + 1] - lo
        linear = n <= LINEAR_BYTES
        for j in range(n + 1):
            alpha[j] = 0.0 if linear else _NEG
            beta[j] = 0.0 if linear else _NEG
        alpha[0] = 1.0 if linear else 0.0
        for i in range(n):
            if (alpha[i] == 0.0) if linear else (alpha[i] <= _NEG):
                continue
            node = np.int64(0)
            for k in range(i, n):
                node = trie_child(keys, children, node, buf[lo + k])
                if node < 0:
                    break
                if token[node] >= 0:
                    if linear:
                        alpha[k + 1] += alpha[i] * prob[node]
                    else:
                        alpha[k + 1] = _logadd(alpha[k + 1], alpha[i] + logp[node])
        if (alpha[n] == 0.0) if linear else (alpha[n] <= _NEG):
            continue  # no path: a character that is no piece (never, while every character is one)
        beta[n] = 1.0 if linear else 0.0
        for i in range(n - 1, -1, -1):
            node = np.int64(0)
            for k in range(i, n):
                node = trie_child(keys, children, node, buf[lo + k])
                if node < 0:
                    break
                if token[node] >= 0:
                    if linear:
                        beta[i] += prob[node] * beta[k + 1]
                    else:
                        beta[i] = _logadd(beta[i], logp[node] + beta[k + 1])
        c = counts[w]
        z = alpha[n]
        objective += c * (math.log(z) if linear else z)
        for i in range(n):
            if (alpha[i] == 0.0) if linear else (alpha[i] <= _NEG):
                continue
            node = np.int64(0)
            for k in range(i, n):
                node = trie_child(keys, children, node, buf[lo + k])
                if node < 0:
                    break
                t = token[node]
                if t >= 0:
                    if linear:
                        expected[t] += c * alpha[i] * prob[node] * beta[k + 1] / z
                    else:
                        expected[t] += c * math.exp(alpha[i] + logp[node] + beta[k + 1] - z)
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
        scores[t] = _digamma(max(expected[t], 1e-6)) - logsum if keep[t] else _NEG


# -- pruning -------------------------------------------------------------------------------------


@numba.njit(cache=True)
def viterbi_counts(buf, offsets, counts, keys, children, token, logp, freq, inverted, seen, score, back_len, back_tok):
    """Each piece's count in the words' Viterbi paths (``freq``) and the count of the words
    whose path holds it (``inverted``: sentencepiece's F, before its normalisation)."""
    for w in range(offsets.size - 1):
        lo = offsets[w]
        n = offsets[w + 1] - lo
        score[0] = 0.0
        for j in range(1, n + 1):
            score[j] = _NEG
            back_len[j] = 0
        for i in range(n):
            if score[i] <= _NEG:
                continue
            node = np.int64(0)
            for k in range(i, n):
                node = trie_child(keys, children, node, buf[lo + k])
                if node < 0:
                    break
                t = token[node]
                if t < 0:
                    continue
                s = score[i] + logp[node]
                j = k + 1
                if s > score[j] or (s == score[j] and j - i > back_len[j]):
                    score[j], back_len[j], back_tok[j] = s, j - i, t
        j = n
        while j > 0 and back_len[j] > 0:
            t = back_tok[j]
            freq[t] += counts[w]
            if seen[t] != w:
                seen[t] = w
                inverted[t] += counts[w]
            j -= back_len[j]


@numba.njit(cache=True)
def second_best(spell, starts, alive, keys, children, token, logp, node_of, own, alt_first, alt_pieces, score,
                 back_len, back_tok):
    """For each living piece t: the best segmentation of its own bytes without the piece
    itself (``alt_pieces[alt_first[t]:alt_first[t + 1]]``, empty where there is none), and
    ``own[t]``: whether the piece itself is its bytes' best segmentation (else Viterbi never
    takes it)."""
    used = 0
    for t in range(starts.size - 1):
        alt_first[t] = used
        if not alive[t]:
            continue
        lo = starts[t]
        n = starts[t + 1] - lo
        score[0] = 0.0
        for j in range(1, n + 1):
            score[j] = _NEG
            back_len[j] = 0
        for i in range(n):
            if score[i] <= _NEG:
                continue
            node = np.int64(0)
            for k in range(i, n):
                node = trie_child(keys, children, node, spell[lo + k])
                if node < 0:
                    break
                u = token[node]
                if u < 0 or (i == 0 and k == n - 1):  # the piece itself is left out
                    continue
                s = score[i] + logp[node]
                j = k + 1
                if s > score[j] or (s == score[j] and j - i > back_len[j]):
                    score[j], back_len[j], back_tok[j] = s, j - i, u
        own[t] = score[n] <= logp[node_of[t]]
        j = n
        while j > 0 and back_len[j] > 0:
            alt_pieces[used] = back_tok[j]
            used += 1
            j -= back_len[j]
    alt_first[starts.size - 1] = used


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


@numba.njit(cache=True)
def nodes_of(spell, starts, keys, children):
    """Each piece's node in the trie."""
    out = np.zeros(starts.size - 1, dtype=np.int64)
    for t in range(starts.size - 1):
        node = np.int64(0)
        for k in range(starts[t], starts[t + 1]):
            node = trie_child(keys, children, node, spell[k])
        out[t] = node
    return out


@numba.njit(cache=True)
def _apply(nodes, ids, alive, scores, token, logp):
    """The trie's tokens and scores as the pieces ``ids`` (at ``nodes``) now are: a dead piece
    ends no token."""
    for k in range(ids.size):
        t = ids[k]
        token[nodes[k]] = t if alive[t] else -1
        logp[nodes[k]] = scores[t]


def train_unigram(buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, vocab_size: int,
                  params: UnigramParams = UnigramParams()) -> tuple[list[bytes], np.ndarray]:
    """(the pieces, their log-probabilities) of a Unigram LM over the words
    ``buf[offsets[w]:offsets[w + 1]]`` seen ``counts[w]`` times, with ``vocab_size`` tokens in
    all: the 256 bytes and the pieces that are not single bytes. The seeds' trie is built once;
    a pruned piece only stops ending a token in it."""
    if vocab_size <= BYTE_SYMBOLS:
        raise ConfigError(f"vocab_size (--vocab-size) {vocab_size}: the 256 byte tokens come first, so it must "
                          f"exceed 256")
    spell, starts, scores, required = seed_pieces(buf, offsets, np.asarray(counts, dtype=np.int64), params)
    counts = np.asarray(counts, dtype=np.float64)
    n = starts.size - 1
    beyond = np.diff(starts) > 1
    longest = max(int(np.diff(offsets).max(initial=0)), int(np.diff(starts).max(initial=0))) + 1
    alpha, beta, score = np.zeros(longest + 1), np.zeros(longest + 1), np.zeros(longest + 1)
    back_len, back_tok = np.zeros(longest + 1, dtype=np.int64), np.zeros(longest + 1, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    target = math.floor(PRUNE_TO * (vocab_size - BYTE_SYMBOLS))  # pieces beyond the bytes
    while True:
        # a round's trie holds the living pieces alone: a small trie stays in the cache
        ids = np.flatnonzero(alive)
        lengths = starts[ids + 1] - starts[ids]
        sub_starts = np.zeros(ids.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=sub_starts[1:])
        sub_spell = gathered(spell, starts[ids], lengths, int(sub_starts[-1]))
        trie = Vocabulary.of_spellings(sub_spell, sub_starts, ids, scores[ids])
        keys, children, token, logp = trie.keys, trie.children, trie.token, trie.logp
        node_of = np.zeros(n, dtype=np.int64)
        node_of[ids] = nodes_of(sub_spell, sub_starts, keys, children)
        for _ in range(params.sub_iterations):
            expected = np.zeros(n)
            _e_step(buf, offsets, counts, keys, children, token, logp, np.exp(logp), expected, alpha, beta)
            alive &= (expected >= EXPECTED_AT_LEAST) | required
            _m_step(expected, alive, scores)
            _apply(node_of[ids], ids, alive, scores, token, logp)
        if int((alive & beyond).sum()) <= target:
            break
        freq, inverted, seen = np.zeros(n), np.zeros(n), np.full(n, -1, dtype=np.int64)
        viterbi_counts(buf, offsets, counts, keys, children, token, logp, freq, inverted, seen, score, back_len,
                        back_tok)
        own, alt_first = np.zeros(n, dtype=bool), np.zeros(n + 1, dtype=np.int64)
        alt_pieces = np.zeros(int(starts[-1]) + 1, dtype=np.int64)
        second_best(spell, starts, alive, keys, children, token, logp, node_of, own, alt_first, alt_pieces, score,
                     back_len, back_tok)
        loss = np.full(n, -np.inf)
        _losses(alive, required, beyond, own, alt_first, alt_pieces, freq, inverted, counts.sum(), loss)
        candidates = np.flatnonzero(alive & beyond)
        size = max(target, math.floor(params.shrinking * candidates.size))
        candidates = candidates[loss[candidates] > -np.inf]  # never in a Viterbi path: gone, as in sentencepiece
        kept = np.zeros(n, dtype=bool)
        kept[candidates[np.argsort(-loss[candidates], kind="stable")][:size]] = True
        alive &= kept | ~beyond
    # the final pieces: every character, then the best by score, up to the size
    budget = vocab_size - BYTE_SYMBOLS
    chosen = np.flatnonzero(alive & required & beyond)
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

    def learn(self, buf, offsets, counts, vocab_size, bottom_up):
        return train_unigram(buf, offsets, counts, vocab_size, self.params)
