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

from typing import NamedTuple

import numba
import numpy as np

# ---------------------------------------------------------------- squash / stretch (integers)

#: 4096 / (1 + exp(-x)) at x = -8, -7.5, ..., 8, rounded: the logistic function's knots.
_SQUASH_KNOTS = np.array(
    [1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048, 2550, 2994,
     3349, 3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095],
    dtype=np.int64,
)


@numba.njit(cache=True, inline="always")
def squash(d):
    """P(1) in 1/4096 for a logit ``d`` in 1/256 (range -2047..2047), by linear interpolation."""
    if d > 2047:
        return 4095
    if d < -2047:
        return 1
    w = d & 127
    k = (d >> 7) + 16
    return (_SQUASH_KNOTS[k] * (128 - w) + _SQUASH_KNOTS[k + 1] * w + 64) >> 7


def _stretch_table() -> np.ndarray:
    """Inverse of :func:`squash` over 0..4095 (the smallest logit that reaches each p)."""
    table = np.zeros(4096, dtype=np.int64)
    last = 0
    for d in range(-2047, 2048):
        p = squash(d)
        table[last : p + 1] = d
        last = p + 1
    table[last:] = 2047
    return table


STRETCH = _stretch_table()

# ---------------------------------------------------------------- bit-history states

#: Largest count of one bit allowed for each count (0..5) of the other: long runs are kept,
#: mixed histories are kept short so they adapt.
_COUNT_LIMIT = (40, 24, 12, 7, 5, 5)


def bit_history_states(count_limit: tuple[int, ...] = _COUNT_LIMIT) -> tuple[np.ndarray, np.ndarray]:
    """(next state [S, 2], initial P(1) in 1/2^22 [S]) of a (zeros, ones) count machine.

    A bit increments its own count and discounts the other (above 2 it is halved, plus one),
    so a state remembers recent history more than old; counts beyond ``count_limit`` (the
    largest count of one bit for each count of the other) are clamped. States are numbered by
    total count, so a state's number is also its priority when a hash slot is replaced. State 0
    is "nothing seen".
    """

    def allowed(n0, n1):
        lo, hi = min(n0, n1), max(n0, n1)
        return lo < len(count_limit) and hi <= count_limit[lo]

    def step(n0, n1, y):
        if y:
            n1, n0 = n1 + 1, (n0 if n0 <= 2 else n0 // 2 + 1)
        else:
            n0, n1 = n0 + 1, (n1 if n1 <= 2 else n1 // 2 + 1)
        while not allowed(n0, n1):
            if n0 > n1:
                n0 -= 1
            else:
                n1 -= 1
        return n0, n1

    seen, frontier = {(0, 0)}, [(0, 0)]
    while frontier:
        nxt = []
        for s in frontier:
            for y in (0, 1):
                t = step(*s, y)
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    order = sorted(seen, key=lambda s: (s[0] + s[1], s[0]))
    number = {s: i for i, s in enumerate(order)}
    assert len(order) <= 256
    nex = np.zeros((len(order), 2), dtype=np.uint8)
    init = np.zeros(len(order), dtype=np.int64)
    for s, i in number.items():
        nex[i, 0] = number[step(*s, 0)]
        nex[i, 1] = number[step(*s, 1)]
        init[i] = ((2 * s[1] + 1) << 22) // (2 * (s[0] + s[1]) + 2)
    return nex, init


NEXT_STATE, STATE_P = bit_history_states()

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
#: errors (times MIX_RATE) at or below this leave the weights as they are
MIX_SKIP = 16 * 64
SET1 = 11 * 8
_APM_STEPS = 33
#: rate table: 65536 / (n + 1.5), the step of an adaptive probability seen n times
_RATE = np.array([(65536 * 2) // (2 * n + 3) for n in range(1024)], dtype=np.int64)

_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_K3 = np.uint64(0x165667B19E3779F9)
_S29 = np.uint64(29)
_S32 = np.uint64(32)
_S24 = np.uint64(24)
_B8 = np.uint64(8)
_M8 = np.uint64(0xFF)
_ONE = np.uint64(1)
_Z = np.uint64(0)

#: base of the polynomial string hash that names chunks: H(xy) = H(x) * B^|y| + H(y)
CHUNK_BASE = np.uint64(0x100000001B3)


@numba.njit(cache=True, inline="always")
def mix64(x):
    x = (x ^ (x >> _S29)) * _K2
    x = (x ^ (x >> _S32)) * _K3
    return x ^ (x >> _S29)


@numba.njit(cache=True, inline="always")
def chunk_key(h, length):
    """The name of a spelled string: its polynomial hash and its length, mixed."""
    return mix64(h + np.uint64(length) * _K1)


@numba.njit(cache=True, inline="always")
def _ctx(tag, a, b):
    return mix64((a * _K1 + b) ^ (np.uint64(tag) * _K3))


@numba.njit(cache=True, inline="always")
def slot_mask(ht):
    """The hash table ``ht``'s 16-byte slots, less one: ``hv``'s bits picking a slot."""
    return np.uint64((ht.size >> 4) - 1)


@numba.njit(cache=True, inline="always")
def slot_hash(ctx, c0):
    """Context hash ``ctx`` at node ``c0`` (the bits coded so far after a leading 1, a slot's
    worth at a time): the key of the slot for the next 4 bits."""
    return mix64(ctx + np.uint64(c0) * _K2)


@numba.njit(cache=True, inline="always")
def slot_base(hv, mask):
    """Offset of the first of hashed context ``hv``'s 3 candidate slots (one 64-byte line)."""
    return np.int64((hv >> _S32) & mask) << 4


@numba.njit(cache=True, inline="always")
def _slot(ht, hv, mask):
    """Offset of the 16-byte slot for hashed context ``hv``: one of 3 slots in a 64-byte line,
    the one whose checksum matches, else the lowest-priority one, cleared."""
    chk = np.uint8((hv >> _S24) & _M8)
    base = slot_base(hv, mask)
    if ht[base] == chk:
        return base
    b1 = base ^ 16
    if ht[b1] == chk:
        return b1
    b2 = base ^ 32
    if ht[b2] == chk:
        return b2
    best = base
    if ht[b1 + 1] < ht[best + 1]:
        best = b1
    if ht[b2 + 1] < ht[best + 1]:
        best = b2
    for k in range(16):
        ht[best + k] = 0
    ht[best] = chk
    return best


# ---------------------------------------------------------------- binary arithmetic coder
# state: x1, x2, x (decoder), in_pos, out_pos, overrun flag

_X1, _X2, _X, _IN, _OUT, _BAD = 0, 1, 2, 3, 4, 5


def stop_coder(ac) -> None:
    """Stop a coding loop running on another thread: it checks the overrun flag at every byte
    or chunk (and returns as if its input had run out)."""
    ac[_BAD] = 1


@numba.njit(cache=True)
def coder_start(decode, inp):
    ac = np.zeros(6, dtype=np.int64)
    ac[_X2] = 0xFFFFFFFF
    if decode:
        for _ in range(4):
            ac[_X] = (ac[_X] << 8) | _next_byte(ac, inp)
    return ac


@numba.njit(cache=True, inline="always")
def _next_byte(ac, inp):
    pos = ac[_IN]
    ac[_IN] = pos + 1
    if pos < inp.size:
        return np.int64(inp[pos])
    ac[_BAD] = 1  # a valid stream never reads past its end
    return 0


@numba.njit(cache=True, inline="always")
def code_bit(decode, ac, out, inp, bit, p):
    """Code ``bit`` (or decode and return it) with P(1) = p / 4096, p in 1..4095."""
    x1 = ac[_X1]
    x2 = ac[_X2]
    r = x2 - x1
    xmid = x1 + (r >> 12) * p + (((r & 0xFFF) * p) >> 12)
    if decode:
        bit = 1 if ac[_X] <= xmid else 0
    if bit:
        x2 = xmid
    else:
        x1 = xmid + 1
    while ((x1 ^ x2) & 0xFF000000) == 0:
        if not decode:
            o = ac[_OUT]
            if o < out.size:
                out[o] = np.uint8(x2 >> 24)
            ac[_OUT] = o + 1
        else:
            ac[_X] = ((ac[_X] << 8) & 0xFFFFFFFF) | _next_byte(ac, inp)
        x1 = (x1 << 8) & 0xFFFFFFFF
        x2 = ((x2 << 8) & 0xFFFFFFFF) | 255
    ac[_X1] = x1
    ac[_X2] = x2
    return bit


@numba.njit(cache=True)
def coder_flush(ac, out):
    """Write x1's 4 bytes: the decoder then reads exactly what was written."""
    x1 = ac[_X1]
    for k in range(4):
        o = ac[_OUT]
        if o < out.size:
            out[o] = np.uint8((x1 >> (24 - 8 * k)) & 0xFF)
        ac[_OUT] = o + 1


# ---------------------------------------------------------------- adaptive probabilities


@numba.njit(cache=True, inline="always")
def _adapt(p, n, i, y, limit):
    """Move p[i] (P(1) in 1/2^22) toward y by 1/(n + 1.5): fast at first, then stationary."""
    c = n[i]
    p[i] += (((y << 22) - p[i]) * _RATE[c]) >> 16
    if c < limit:
        n[i] = c + 1


@numba.njit(cache=True, inline="always")
def _apm(t, ctx, pr):
    """An adaptive map from (context, input probability) to probability: returns (p, index of
    the nearer knot to update). A knot is one int32, P(1) in 1/2^22 above an 8-bit count: a
    context's 33 knots span three cache lines (half the misses of a pair per knot)."""
    s = (STRETCH[pr] + 2048) * (_APM_STEPS - 1)
    lo = s >> 12
    w = s & 4095
    i = ctx * _APM_STEPS + lo
    p = ((np.int64(t[i]) >> 18) * (4096 - w) + (np.int64(t[i + 1]) >> 18) * w) >> 12
    return p, (i + 1 if w >= 2048 else i)


def apm_table(contexts: int) -> np.ndarray:
    """Each context's knots start on the identity map, counted as 6 observations."""
    knots = np.array([squash((k - 16) * 128) for k in range(_APM_STEPS)], dtype=np.int32) << 10
    return np.tile((knots << 8) | 6, contexts)


@numba.njit(cache=True, inline="always")
def _adapt_apm(t, i, y):
    """Move knot ``i`` toward bit ``y`` by 1/(count + 1.5); P stays in [0, 2^22), so 30 bits."""
    v = np.int64(t[i])
    c = v & 255
    p = v >> 8
    p += (((y << 22) - p) * _RATE[c]) >> 16
    t[i] = (p << 8) | min(c + 1, 255)


# ---------------------------------------------------------------- the text model


#: the longest run of occupied slots a key table may hold, and so the most probes of any lookup:
#: a table whose keys cluster more (a hash flood) is rebuilt larger with another random seed
MAX_PROBES = 64


@numba.njit(cache=True, inline="always")
def table_slot(keys, used, key):
    """Slot of ``key`` in an open-addressing key table: where it is, or the empty slot where it
    goes; -1 after :data:`MAX_PROBES` occupied slots. ``used`` has a power of 2 of slots and
    ``keys[used.size]`` holds the table's random seed, so the slots of a crafted dictionary's
    keys cannot be predicted (which keys a table holds, and so every lookup's answer, does not
    depend on the seed: the archive is the same)."""
    mask = np.uint64(used.size - 1)
    i = np.int64(mix64(key ^ keys[used.size]) & mask)
    for _ in range(MAX_PROBES):
        if not used[i] or keys[i] == key:
            return i
        i = np.int64((np.uint64(i) + _ONE) & mask)
    return -1


@numba.njit(cache=True)
def _lookup(keys, used, key):
    """Slot of ``key`` in a key table, or -1."""
    i = table_slot(keys, used, key)
    return i if i >= 0 and used[i] else -1


@numba.njit(cache=True)
def longest_run(used):
    """The longest run of occupied slots (cyclic): a lookup probes at most this many plus one."""
    size = used.size
    best = run = 0
    for k in range(2 * size):
        if used[k % size]:
            run += 1
            if run > best:
                best = run
                if best >= size:
                    return best
        else:
            run = 0
    return best


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
    while (256 << apm3_bits) * _APM_STEPS < tables.a3.shape[0]:
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
        if stream.ac[_BAD]:
            return -4  # read past the end of the payload: corrupt, stop now
        c1 = np.int64(hist & _M8)
        _set_contexts(ctx, hist, word, prev_word, open_key, prev1, prev2, use_bytes, use_chunks)
        # the third APM sees the open chunk (or, without chunk contexts, the word)
        a3_ctx = np.int64(mix64((open_key if use_chunks else word) + _K3) >> np.uint64(64 - apm3_bits))
        chunk_state = (min(open_len, 7) * 2 + (1 if open_in_dict else 0)) if use_chunks else 0
        expected = np.int64(text[m_ptr]) if m_len > 0 else np.int64(-1)
        byte = np.int64(text[i]) if not decode else np.int64(0)
        byte, expected = _code_byte(decode, byte, c1, expected, m_len, a3_ctx, chunk_state, ctx, active, n_active,
                                    work, tables, stream)
        if decode:
            text[i] = byte
        start = _boundary(decode, i, byte, starts, open_h, open_len, open_key, open_in_dict, prev1, hist,
                          coded_parse, chunks, tables, stream)
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
        open_in_dict = _lookup(chunks.keys, chunks.used, open_key) >= 0
        hist, word, prev_word = _histories(hist, word, prev_word, byte)
        m_ptr, m_len = _follow_match(text, i, byte, hist, expected, m_ptr, m_len, tables.mm_ht, mmask)
    if n > 0 and coded_parse:
        if not open_in_dict:
            return -3
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


@numba.njit(cache=True, inline="always")
def _set_contexts(ctx, hist, word, prev_word, open_key, prev1, prev2, use_bytes, use_chunks):
    """The hashed contexts of the next byte: byte orders, words, and the chunk contexts."""
    if use_bytes:
        ctx[O2] = _ctx(2, hist & np.uint64(0xFFFF), _Z)
        ctx[O3] = _ctx(3, hist & np.uint64(0xFFFFFF), _Z)
        ctx[O4] = _ctx(4, hist & np.uint64(0xFFFFFFFF), _Z)
        ctx[O6] = _ctx(6, hist & np.uint64(0xFFFFFFFFFFFF), _Z)
        ctx[WORD] = _ctx(7, word, _Z)
        ctx[O5] = _ctx(5, hist & np.uint64(0xFFFFFFFFFF), _Z)
        ctx[WORD2] = _ctx(14, word, prev_word)
    if use_chunks:
        ctx[CHUNK0] = _ctx(8, open_key, _Z)
        ctx[CHUNK1] = _ctx(9, open_key, prev1)
        ctx[CHUNK2] = _ctx(10, open_key, prev1 * _K1 + prev2)


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
                ptr[m] = _slot(t.ht, slot_hash(ctx[m], c0), hmask)
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
        dot1 = 0
        dot2 = 0
        for k in range(N_INPUTS):
            dot1 += tx[k] * t.w1[s1, k]
            dot2 += tx[k] * t.w2[s2, k]
        dot1 = max(-2047, min(2047, dot1 >> 16))
        dot2 = max(-2047, min(2047, dot2 >> 16))
        p1 = squash(dot1)
        p2 = squash(dot2)
        pm = squash((dot1 + dot2) >> 1)
        pa1, ia1 = _apm(t.a1, c0, pm)
        pa2, ia2 = _apm(t.a2, i1 & 0xFFFF, pm)
        pa3, ia3 = _apm(t.a3, (a3_ctx << 8) | c0, pm)
        p = (pm + pa1 + pa2 + pa3 + 2) >> 2
        p = max(1, min(4095, p))
        # ---- code
        bit = (byte >> j) & 1
        bit = code_bit(decode, stream.ac, stream.out, stream.inp, bit, p)
        # ---- learn
        y = np.int64(bit)
        t.t1[i1] = NEXT_STATE[sidx, y]
        _adapt(t.sm_p, t.sm_n, sidx, y, 1023)
        for a in range(n_active):
            m = active[a]
            s = st[m]
            t.ht[ptr[m] + nib] = NEXT_STATE[s, y]
            _adapt(t.sm_p, t.sm_n, (m << 8) + s, y, SM_LIMIT)
        _adapt(t.mm_p, t.mm_n, mctx, y, 1023)
        # a mixer that was nearly right learns nothing worth the time
        e1 = ((y << 12) - p1) * MIX_RATE
        if e1 > MIX_SKIP or e1 < -MIX_SKIP:
            for k in range(N_INPUTS):
                t.w1[s1, k] += (tx[k] * e1) >> 16
        e2 = ((y << 12) - p2) * MIX_RATE
        if e2 > MIX_SKIP or e2 < -MIX_SKIP:
            for k in range(N_INPUTS):
                t.w2[s2, k] += (tx[k] * e2) >> 16
        _adapt_apm(t.a1, ia1, y)
        _adapt_apm(t.a2, ia2, y)
        _adapt_apm(t.a3, ia3, y)
        c0 = (c0 << 1) | bit
    return np.int64(c0 & 255), expected


@numba.njit(cache=True, inline="always")
def _boundary(decode, i, byte, starts, open_h, open_len, open_key, open_in_dict, prev1, hist, coded_parse,
              chunks, tables, stream):
    """Does a chunk start at byte i (1) or not (0)? Coded where the dictionary leaves a choice
    and the parse is coded; -1 for an encoder's parse the dictionary cannot explain."""
    grown_h = open_h * CHUNK_BASE + np.uint64(byte + 1)
    is_prefix = _lookup(chunks.prefix_keys, chunks.prefix_used, chunk_key(grown_h, open_len + 1)) >= 0
    if i == 0:
        return 1
    if not coded_parse:
        return 0 if is_prefix else 1
    if not is_prefix:  # the open chunk cannot go on: it must end here
        if not decode and not starts[i]:
            return -1
        return 1
    if not open_in_dict:
        if not decode and starts[i]:
            return -1
        return 0
    t = tables
    bmask = np.uint64(t.bd_p.size - 1)
    b = np.uint64(byte)
    j0 = np.int64(_ctx(11, open_key, b) & bmask)
    j1 = np.int64(_ctx(12, open_key * _K1 + prev1, b) & bmask)
    j2 = np.int64(_ctx(13, hist & np.uint64(0xFFFFFF), b) & bmask)
    x0 = STRETCH[t.bd_p[j0] >> 10]
    x1 = STRETCH[t.bd_p[j1] >> 10]
    x2 = STRETCH[t.bd_p[j2] >> 10]
    bs = min(open_len, 15)
    d = (x0 * t.bw[bs, 0] + x1 * t.bw[bs, 1] + x2 * t.bw[bs, 2] + 256 * t.bw[bs, 3]) >> 16
    pb = max(1, min(4095, squash(max(-2047, min(2047, d)))))
    start = np.int64(starts[i]) if not decode else 0
    start = code_bit(decode, stream.ac, stream.out, stream.inp, start, pb)
    y = np.int64(start)
    _adapt(t.bd_p, t.bd_n, j0, y, 255)
    _adapt(t.bd_p, t.bd_n, j1, y, 255)
    _adapt(t.bd_p, t.bd_n, j2, y, 255)
    e = ((y << 12) - pb) * MIX_RATE
    t.bw[bs, 0] += (x0 * e) >> 16
    t.bw[bs, 1] += (x1 * e) >> 16
    t.bw[bs, 2] += (x2 * e) >> 16
    t.bw[bs, 3] += (256 * e) >> 16
    return np.int64(start)


@numba.njit(cache=True, inline="always")
def _histories(hist, word, prev_word, byte):
    """The last 8 bytes, and the current and previous words (lower-cased letters)."""
    hist = (hist << _B8) | np.uint64(byte)
    byte_l = byte + 32 if 65 <= byte <= 90 else byte
    if 97 <= byte_l <= 122:
        word = (word + np.uint64(byte_l)) * _K1
    elif word != _Z:
        prev_word = word
        word = np.uint64(0)
    return hist, word, prev_word


@numba.njit(cache=True, inline="always")
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
        return -2
    slot = _lookup(chunks.keys, chunks.used, key)
    if slot < 0:
        return -3
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
            return -3
        index = value
    if decode:
        symbols[chunk] = chunks.group_ids[chunks.group_start[slot] + index]
    return chunk + 1


@numba.njit(cache=True, nogil=True)
def greedy_parse(text, prefix_keys, prefix_used, keys, used, group_start, group_ids, symbols, budget, stop):
    """The longest-match parse of ``text`` by the dictionary (the first id of each spelling):
    what the decoder returns when the parse was not coded. Returns the number of symbols, or -2
    when the bytes walked past each chosen match add up to more than ``budget``: a dictionary
    whose prefixes run on far beyond its matches (``a`` x N with the rules a^k b) would make
    the parse quadratic, and the encoder refuses it the same way; -3 when the calling thread set
    ``stop[0]`` (an interrupt), which the parse checks every 4,096 symbols."""
    n = text.size
    count = 0
    i = 0
    overshoot = 0
    while i < n:
        if (count & 4095) == 0 and stop[0]:
            return -3
        h = np.uint64(0)
        best_slot = -1
        best_len = 0
        k = i
        while k < n:
            h = h * CHUNK_BASE + np.uint64(text[k] + 1)
            key = chunk_key(h, k - i + 1)
            if _lookup(prefix_keys, prefix_used, key) < 0:
                break
            slot = _lookup(keys, used, key)
            if slot >= 0:
                best_slot = slot
                best_len = k - i + 1
            k += 1
        if best_slot < 0:  # every byte is a symbol: cannot happen with a valid dictionary
            return -1
        overshoot += k - i - best_len
        if overshoot > budget:
            return -2
        if count < symbols.size:
            symbols[count] = group_ids[group_start[best_slot]]
        count += 1
        i += best_len
    return count


# ---------------------------------------------------------------- the rules


@numba.njit(cache=True)
def code_rules(decode, rules, base, out, inp, ac, p, n):
    """Code (or decode into) ``rules``: rule k's parts are ids below ``base + k``. An id is coded
    as its bit length (a binary tree, in the context of the side and of the left part's length
    or the previous left length), then every bit below the leading one in the context of the
    bits above it (hashed): an adaptive model of which ids are used, as skewed as they are.
    Returns 0, or -1 when a decoded id is not below its rule's id."""
    mask = np.uint64(RULE_HASHED - 1)
    last_left = 0
    for k in range(rules.shape[0]):
        if ac[_BAD]:  # past the end of the section: the counts are forged, stop now
            return -1
        limit = base + k
        left_nb = 0
        for side in range(2):
            v = rules[k, side] if not decode else 0
            nb = 0
            if not decode:
                x = v
                while x > 0:
                    nb += 1
                    x >>= 1
            node = 1
            ctx = (side * 64 + (left_nb if side else last_left)) * 64
            for q in range(4, -1, -1):
                bit = code_bit(decode, ac, out, inp, (nb >> q) & 1, _prob(p, ctx + node))
                _learn(p, n, ctx + node, bit)
                node = node * 2 + bit
            nb = node - 32
            value = 1 if nb > 0 else 0
            for q in range(nb - 2, -1, -1):
                if q >= nb - 1 - RULE_TOP_BITS:
                    cx = RULE_TREE + np.int64(mix64(np.uint64(((side * 32 + nb) << 40) | value)) & mask)
                    bit = code_bit(decode, ac, out, inp, (v >> q) & 1, _prob(p, cx))
                    _learn(p, n, cx, bit)
                else:
                    bit = code_bit(decode, ac, out, inp, (v >> q) & 1, 2048)
                value = (value << 1) | bit
            if decode:
                if value >= limit:
                    return -1
                rules[k, side] = value
            if side == 0:
                left_nb = min(nb, 63)
        last_left = left_nb
    return 0


RULE_TREE = 64 * 64 * 2
#: how many bits below an id's leading one are modelled (the rest are close to uniform)
RULE_TOP_BITS = 6
RULE_HASHED = 1 << 20
RULE_CONTEXTS = RULE_TREE + RULE_HASHED


@numba.njit(cache=True, inline="always")
def _prob(p, i):
    return max(1, min(4095, p[i] >> 4))


@numba.njit(cache=True, inline="always")
def _learn(p, n, i, bit):
    c = n[i]
    p[i] += (((bit << 16) - p[i]) * _RATE[c]) >> 16
    if c < 60:
        n[i] = c + 1
