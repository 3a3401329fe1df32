"""The compiled context-mixing model behind the ``cm`` coder: predictors, mixer, APMs, coder.

Everything that decides a coded bit is integer arithmetic (no floating point, no fastmath), so
an archive decodes identically on any CPU. The encoder and the decoder run the same function,
``code_text``, with a flag: each bit is predicted, then coded or decoded, then learned from, in
the same order on both sides.

What is coded, per byte ``b_i`` of the text (the chunks' spellings, concatenated):

1. its 8 bits, most significant first, each predicted by mixing these models in the logistic
   (stretch) domain:
   * byte contexts: orders 1 to 6 over the bytes before ``b_i``, a word context (the
     lower-cased letters since the last non-letter), the word before it with the current one,
     and a match model (the byte that followed
     the last occurrence of the 6 bytes before ``b_i``);
   * chunk contexts: the open chunk (the bytes since the last chunk start: the spelled prefix
     and, through its length, the position inside the chunk), the previous chunk with the open
     one, and the two previous chunks with the open one (chunk orders 1 and 2).
   Each context is hashed into one table of 16-byte slots, one per context and nibble (lpaq's
   layout: a checksum byte, then the 15 bit histories of that nibble's binary tree); a bit
   history is an 8-bit state of a (zeros, ones) count machine built by ``bit_history_states``,
   mapped to a probability by an adaptive table per model. Two mixers (their weight sets picked
   by the context order seen and by the chunk state) are averaged, then refined by three APMs
   (on the partial byte, the last byte, and the open chunk).
2. with ``parse = "exact"``, whether a new chunk starts at ``b_i``. The bit is coded *after*
   the byte, so it is predicted from the open chunk and ``b_i`` together (after "the" and " ",
   a chunk end is nearly certain); it is not coded at all where the dictionary leaves no choice
   (the open chunk is not a dictionary chunk, or cannot be extended by ``b_i``). When a chunk
   closes and several symbols spell the same string, the symbol's index among them is coded.
   With ``parse = "longest"`` nothing but the bytes is coded: both sides segment the text the
   same way from the bytes alone (a chunk goes on while it is still a prefix of a dictionary
   chunk), and the decoder returns the longest-match parse of the text.

Why this order: the decoder knows every context as it needs it (all come from bytes already
decoded and from boundaries already decoded), the text is modelled at the byte level so a rare
chunk is still predicted from its spelling, and the chunk parse costs only the boundary bits
the models cannot predict (or none, with the longest-match parse). Coding chunk ids instead
(one decision among thousands per chunk) would lose the spelling, and a rare chunk would cost
its full id.

Payload bounds: the coder's probability is clamped to [1, 4095] / 4096, so each byte costs at
least 8 log2(4096/4095) bits; a decoder that needs bytes past the payload's end stops with an
error instead of inventing zeros, so decoding time is bounded by the payload's size.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numba
import numpy as np

from .mixing.apm import APM_STEPS, apm_predict, apm_update
from .mixing.arithmetic import AC, code_bit
from .mixing.hashing import B8, CHUNK_BASE, K1, K3, M8, ZERO, chunk_key, context_hash, lookup, mix64
from .mixing.logistic import STRETCH, squash
from .mixing.mixer import mix_dot, mix_learn
from .mixing.slots import find_slot, slot_hash, slot_mask
from .mixing.states import NEXT_STATE, adapt

# ---------------------------------------------------------------- layout constants

#: model inputs, in mixer order
O1, O2, O3, O4, O6, WORD, O5, WORD2, CHUNK0, CHUNK1, CHUNK2, N_HASHED = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
#: the mixer's inputs: the 11 context models, the match model twice, and a bias
N_INPUTS = N_HASHED + 3
#: ``flags`` bits: which groups of contexts are used (the ablation of the study)
USE_BYTES, USE_CHUNKS = 1, 2
MATCH_MIN = 6
#: how many observations a bit-history probability averages over at most
SM_LIMIT = 1023
#: the mixers' learning rate (error in 1/4096 times this, weights in 1/65536)
MIX_RATE = 16
#: errors (in 1/4096) at or below this leave the weights as they are
MIX_SKIP = 64
SET1 = 11 * 8


class Status(enum.IntEnum):
    """What :func:`code_text` returns instead of a count of chunks when it stops early."""

    #: a chunk boundary the dictionary cannot explain (the encoder's parse is not the dictionary's)
    UNEXPLAINED_BOUNDARY = -1
    #: more chunks than the header says
    TOO_MANY_CHUNKS = -2
    #: the text ends inside a chunk that is not the dictionary's
    OPEN_CHUNK_AT_END = -3
    #: the decoder read past the payload's end, or the caller stopped the loop
    INPUT_ENDED = -4


class Tables(NamedTuple):
    """The model's learned state, fresh for every encode and decode (``cm.Model`` allocates it)."""

    ht: np.ndarray  # hashed contexts: 16-byte slots of bit histories (lpaq's layout)
    t1: np.ndarray  # order 1: a bit history per (last byte, partial byte)
    sm_p: np.ndarray  # state maps: a probability per (model, bit history) ...
    sm_n: np.ndarray  # ... and how often it was seen
    mm_p: np.ndarray  # the match model's probabilities, by match length and expected bit ...
    mm_n: np.ndarray  # ... and counts
    mm_ht: np.ndarray  # match model: the last position after each hashed 6-byte context
    w1: np.ndarray  # mixer 1's weight sets, picked by the context order seen
    w2: np.ndarray  # mixer 2's weight sets, picked by the chunk state
    a1: np.ndarray  # APM on the partial byte
    a2: np.ndarray  # APM on the last byte and the partial byte
    a3: np.ndarray  # APM on the open chunk (or the word)
    bd_p: np.ndarray  # chunk-boundary model: probabilities of three hashed contexts ...
    bd_n: np.ndarray  # ... and counts
    bw: np.ndarray  # chunk-boundary mixer weights, by the open chunk's length


class Chunks(NamedTuple):
    """The dictionary as the model sees it: chunk spellings hashed to slots of open tables."""

    keys: np.ndarray  # spelling key per slot
    used: np.ndarray  # slot in use
    group_start: np.ndarray  # per slot: where its symbols (same spelling) start in group_ids
    group_size: np.ndarray  # per slot: how many symbols spell it
    group_ids: np.ndarray  # the symbols, grouped by spelling
    group_pos: np.ndarray  # per symbol: its index within its group
    prefix_keys: np.ndarray  # every prefix of a chunk's spelling ...
    prefix_used: np.ndarray  # ... in a table of its own


class Stream(NamedTuple):
    """The arithmetic coder's side: ``out`` (encoder), ``inp`` (decoder), ``ac`` its state."""

    out: np.ndarray
    inp: np.ndarray
    ac: np.ndarray


class Work(NamedTuple):
    """Per-model scratch of one bit: slot offsets, bit histories, stretched inputs."""

    ptr: np.ndarray
    st: np.ndarray
    tx: np.ndarray


@numba.njit(cache=True, nogil=True)
def code_text(decode, text, starts, symbols, n_symbols, chunks, tables, stream, flags, coded_parse):
    """Code (encoder) or decode ``text`` and, with ``coded_parse``, its chunk parse. Encoder:
    ``starts[i]`` is 1 where a chunk starts and ``symbols`` holds the parse. Decoder: both are
    filled in. Returns the number of chunks, or -1 (a boundary the dictionary cannot explain),
    -2 (more chunks than the header says), -3 (the text ends inside a non-dictionary chunk),
    -4 (the decoder read past the payload's end).

    Without ``coded_parse`` no boundary is coded: the chunk contexts follow the segmentation
    both sides compute from the bytes alone, a chunk going on while it is still a prefix of
    some dictionary chunk (maximal munch, no look-ahead). Returns 0."""
    apm3_bits = 0  # the third APM's table holds 256 << apm3_bits contexts
    while (256 << apm3_bits) * APM_STEPS < tables.a3.shape[0]:
        apm3_bits += 1
    n = text.size
    mmask = np.uint64(tables.mm_ht.size - 1)
    use_bytes = (flags & USE_BYTES) != 0
    use_chunks = (flags & USE_CHUNKS) != 0
    ctx = np.zeros(N_HASHED, dtype=np.uint64)
    work = Work(np.zeros(N_HASHED, dtype=np.int64), np.zeros(N_HASHED, dtype=np.int64),
                np.zeros(N_INPUTS, dtype=np.int64))
    active, n_active = _active_models(use_bytes, use_chunks)
    hist = np.uint64(0)  # the last 8 bytes
    word = np.uint64(0)
    prev_word = np.uint64(0)
    open_h = np.uint64(0)  # polynomial hash of the open chunk
    open_len = 0
    open_key = chunk_key(open_h, 0)
    open_in_dict = False
    prev1 = np.uint64(0)
    prev2 = np.uint64(0)
    chunk = 0
    m_ptr = 0
    m_len = 0
    for i in range(n):
        if stream.ac[AC.OVERRUN]:
            return Status.INPUT_ENDED  # read past the end of the payload (or stopped): stop now
        c1 = np.int64(hist & M8)
        _set_contexts(ctx, hist, word, prev_word, open_key, prev1, prev2, use_bytes, use_chunks)
        # the third APM sees the open chunk (or, without chunk contexts, the word)
        a3_ctx = np.int64(mix64((open_key if use_chunks else word) + K3) >> np.uint64(64 - apm3_bits))
        chunk_state = (min(open_len, 7) * 2 + (1 if open_in_dict else 0)) if use_chunks else 0
        expected = np.int64(text[m_ptr]) if m_len > 0 else np.int64(-1)
        byte = np.int64(text[i]) if not decode else np.int64(0)
        byte, expected = _code_byte(decode, byte, c1, expected, m_len, a3_ctx, chunk_state, ctx, active, n_active,
                                    work, tables, stream)
        if decode:
            text[i] = byte
        start = _boundary(decode, i, byte, starts, open_h, open_len, open_key, open_in_dict, prev1, hist,
                          coded_parse, chunks, tables, stream, work)
        if start < 0:
            return start
        if start:
            if i > 0 and coded_parse:
                chunk = _close(decode, chunk, n_symbols, symbols, open_key, chunks, stream)
                if chunk < 0:
                    return chunk
            if decode:
                starts[i] = 1
            prev2 = prev1
            prev1 = open_key
            open_h = np.uint64(0)
            open_len = 0
        open_h = open_h * CHUNK_BASE + np.uint64(byte + 1)
        open_len += 1
        open_key = chunk_key(open_h, open_len)
        open_in_dict = lookup(chunks.keys, chunks.used, open_key) >= 0
        hist, word, prev_word = _histories(hist, word, prev_word, byte)
        m_ptr, m_len = _follow_match(text, i, byte, hist, expected, m_ptr, m_len, tables.mm_ht, mmask)
    if n > 0 and coded_parse:
        if not open_in_dict:
            return Status.OPEN_CHUNK_AT_END
        chunk = _close(decode, chunk, n_symbols, symbols, open_key, chunks, stream)
    return chunk


@numba.njit(cache=True, inline="always")
def _active_models(use_bytes, use_chunks):
    """The hashed models in use (order 1 has a table of its own): their indices and count."""
    active = np.zeros(N_HASHED, dtype=np.int64)
    n_active = 0
    for m in range(1, N_HASHED):
        if (m < CHUNK0 and use_bytes) or (m >= CHUNK0 and use_chunks):
            active[n_active] = m
            n_active += 1
    return active, n_active


@numba.njit(cache=True, forceinline=True)
def _set_contexts(ctx, hist, word, prev_word, open_key, prev1, prev2, use_bytes, use_chunks):
    """The hashed contexts of the next byte: byte orders, words, and the chunk contexts."""
    if use_bytes:
        ctx[O2] = context_hash(2, hist & np.uint64(0xFFFF), ZERO)
        ctx[O3] = context_hash(3, hist & np.uint64(0xFFFFFF), ZERO)
        ctx[O4] = context_hash(4, hist & np.uint64(0xFFFFFFFF), ZERO)
        ctx[O6] = context_hash(6, hist & np.uint64(0xFFFFFFFFFFFF), ZERO)
        ctx[WORD] = context_hash(7, word, ZERO)
        ctx[O5] = context_hash(5, hist & np.uint64(0xFFFFFFFFFF), ZERO)
        ctx[WORD2] = context_hash(14, word, prev_word)
    if use_chunks:
        ctx[CHUNK0] = context_hash(8, open_key, ZERO)
        ctx[CHUNK1] = context_hash(9, open_key, prev1)
        ctx[CHUNK2] = context_hash(10, open_key, prev1 * K1 + prev2)


@numba.njit(cache=True)
def _code_byte(decode, byte, c1, expected, m_len, a3_ctx, chunk_state, ctx, active, n_active, work, tables, stream):
    """The byte's 8 bits, most significant first, each predicted (contexts, match model, two
    mixers, three APMs), coded or decoded, then learned from. Returns (the byte, the match
    model's expected byte, -1 once a bit disagreed)."""
    t = tables
    ptr, st, tx = work
    hmask = slot_mask(t.ht)
    c0 = 1
    for j in range(7, -1, -1):
        if j == 7 or j == 3:
            for a in range(n_active):
                m = active[a]
                ptr[m] = find_slot(t.ht, slot_hash(ctx[m], c0), hmask)
        nib = (1 << (3 - (j & 3))) | (c0 & ((1 << (3 - (j & 3))) - 1))
        # ---- predict
        i1 = (c1 << 8) | c0
        st[O1] = t.t1[i1]
        sidx = st[O1]
        tx[O1] = STRETCH[t.sm_p[sidx] >> 10]
        order = 0
        for a in range(n_active):
            m = active[a]
            s = np.int64(t.ht[ptr[m] + nib])
            st[m] = s
            tx[m] = STRETCH[t.sm_p[(m << 8) + s] >> 10]
            if s != 0 and m >= O2 and m <= O5 and m != WORD:
                order += 1
        # match model: expected bit while the predicted byte agrees with the bits so far
        if expected >= 0 and ((expected + 256) >> (j + 1)) == c0:
            eb = (expected >> j) & 1
            lq = m_len if m_len < 16 else 16 + min((m_len - 16) >> 2, 15)
            mctx = ((lq * 2 + eb) << 8) | c1
            tx[N_HASHED + 1] = (2 * eb - 1) * min(m_len, 32) * 32
            order = 6 + (m_len >= 8) + (m_len >= 12) + (m_len >= 16) + (m_len >= 32)
        else:
            expected = -1
            mctx = 64 * 256 + c0
            tx[N_HASHED + 1] = 0
        tx[N_HASHED] = STRETCH[t.mm_p[mctx] >> 10]
        tx[N_HASHED + 2] = 256
        s1 = order + 11 * (c1 >> 5)
        s2 = (chunk_state << 8) | c0
        dot1 = mix_dot(tx, t.w1, s1, N_INPUTS)
        dot2 = mix_dot(tx, t.w2, s2, N_INPUTS)
        p1 = squash(dot1)
        p2 = squash(dot2)
        pm = squash((dot1 + dot2) >> 1)
        pa1, ia1 = apm_predict(t.a1, c0, pm)
        pa2, ia2 = apm_predict(t.a2, i1 & 0xFFFF, pm)
        pa3, ia3 = apm_predict(t.a3, (a3_ctx << 8) | c0, pm)
        p = (pm + pa1 + pa2 + pa3 + 2) >> 2
        p = max(1, min(4095, p))
        # ---- code
        bit = (byte >> j) & 1
        bit = code_bit(decode, stream.ac, stream.out, stream.inp, bit, p)
        # ---- learn
        y = np.int64(bit)
        t.t1[i1] = NEXT_STATE[sidx, y]
        adapt(t.sm_p, t.sm_n, sidx, y, 1023)
        for a in range(n_active):
            m = active[a]
            s = st[m]
            t.ht[ptr[m] + nib] = NEXT_STATE[s, y]
            adapt(t.sm_p, t.sm_n, (m << 8) + s, y, SM_LIMIT)
        adapt(t.mm_p, t.mm_n, mctx, y, 1023)
        # a mixer that was nearly right learns nothing worth the time
        mix_learn(tx, t.w1, s1, y, p1, N_INPUTS, MIX_RATE, MIX_SKIP)
        mix_learn(tx, t.w2, s2, y, p2, N_INPUTS, MIX_RATE, MIX_SKIP)
        apm_update(t.a1, ia1, y)
        apm_update(t.a2, ia2, y)
        apm_update(t.a3, ia3, y)
        c0 = (c0 << 1) | bit
    return np.int64(c0 & 255), expected


@numba.njit(cache=True, forceinline=True)
def _boundary(decode, i, byte, starts, open_h, open_len, open_key, open_in_dict, prev1, hist, coded_parse,
              chunks, tables, stream, work):
    """Does a chunk start at byte i (1) or not (0)? Coded where the dictionary leaves a choice
    and the parse is coded; -1 for an encoder's parse the dictionary cannot explain."""
    grown_h = open_h * CHUNK_BASE + np.uint64(byte + 1)
    is_prefix = lookup(chunks.prefix_keys, chunks.prefix_used, chunk_key(grown_h, open_len + 1)) >= 0
    if i == 0:
        return 1
    if not coded_parse:
        return 0 if is_prefix else 1
    if not is_prefix:  # the open chunk cannot go on: it must end here
        if not decode and not starts[i]:
            return Status.UNEXPLAINED_BOUNDARY
        return 1
    if not open_in_dict:
        if not decode and starts[i]:
            return Status.UNEXPLAINED_BOUNDARY
        return 0
    t = tables
    bmask = np.uint64(t.bd_p.size - 1)
    b = np.uint64(byte)
    j0 = np.int64(context_hash(11, open_key, b) & bmask)
    j1 = np.int64(context_hash(12, open_key * K1 + prev1, b) & bmask)
    j2 = np.int64(context_hash(13, hist & np.uint64(0xFFFFFF), b) & bmask)
    tx = work.tx  # free between bytes: the boundary mixer's four inputs
    tx[0] = STRETCH[t.bd_p[j0] >> 10]
    tx[1] = STRETCH[t.bd_p[j1] >> 10]
    tx[2] = STRETCH[t.bd_p[j2] >> 10]
    tx[3] = 256
    bs = min(open_len, 15)
    pb = squash(mix_dot(tx, t.bw, bs, 4))
    start = np.int64(starts[i]) if not decode else 0
    start = code_bit(decode, stream.ac, stream.out, stream.inp, start, pb)
    y = np.int64(start)
    adapt(t.bd_p, t.bd_n, j0, y, 255)
    adapt(t.bd_p, t.bd_n, j1, y, 255)
    adapt(t.bd_p, t.bd_n, j2, y, 255)
    mix_learn(tx, t.bw, bs, y, pb, 4, MIX_RATE, 0)  # every error is learned (it is never 0)
    return np.int64(start)


@numba.njit(cache=True, forceinline=True)
def _histories(hist, word, prev_word, byte):
    """The last 8 bytes, and the current and previous words (lower-cased letters)."""
    hist = (hist << B8) | np.uint64(byte)
    byte_l = byte + 32 if 65 <= byte <= 90 else byte
    if 97 <= byte_l <= 122:
        word = (word + np.uint64(byte_l)) * K1
    elif word != ZERO:
        prev_word = word
        word = np.uint64(0)
    return hist, word, prev_word


@numba.njit(cache=True, forceinline=True)
def _follow_match(text, i, byte, hist, expected, m_ptr, m_len, mm_ht, mmask):
    """Match model: follow the match while its byte came, else look one up by the last
    MATCH_MIN bytes (and remember where they were seen). Returns (pointer, length)."""
    if m_len > 0:
        if expected >= 0 and np.int64(text[m_ptr]) == byte:
            m_ptr += 1
            m_len += 1
        else:
            m_len = 0
    if i + 1 >= MATCH_MIN:
        hm = np.int64(mix64(hist & np.uint64(0xFFFFFFFFFFFF)) & mmask)
        if m_len == 0:
            cand = mm_ht[hm]
            if cand > 0:
                k = 0
                while k < 32 and cand - 1 - k >= 0 and text[cand - 1 - k] == text[i - k]:
                    k += 1
                if k >= MATCH_MIN:
                    m_len = k
                    m_ptr = cand
        mm_ht[hm] = i + 1
    if m_len > 65535:
        m_len = 65535
    return m_ptr, m_len


@numba.njit(cache=True)
def _close(decode, chunk, n_symbols, symbols, key, chunks, stream):
    """The open chunk ends: its symbol (and, among symbols with the same spelling, its index)."""
    if chunk >= n_symbols:
        return Status.TOO_MANY_CHUNKS
    slot = lookup(chunks.keys, chunks.used, key)
    if slot < 0:
        return Status.OPEN_CHUNK_AT_END
    g = chunks.group_size[slot]
    index = 0
    if not decode:
        index = chunks.group_pos[symbols[chunk]]
    if g > 1:
        width = 0
        while (1 << width) < g:
            width += 1
        value = 0
        for q in range(width - 1, -1, -1):
            value = (value << 1) | code_bit(decode, stream.ac, stream.out, stream.inp, (index >> q) & 1, 2048)
        if value >= g:
            return Status.OPEN_CHUNK_AT_END
        index = value
    if decode:
        symbols[chunk] = chunks.group_ids[chunks.group_start[slot] + index]
    return chunk + 1


