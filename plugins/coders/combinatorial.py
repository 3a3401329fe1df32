"""The combinatorial codec: the MDL model of "Information Theoretic Chunking", written for real.

Every part the ``mdl`` scorer counts is coded, in this order, by one exact range coder:

1. ``E(R)``: the Elias-delta code of R + 1 (bits coded with probability 1/2 each);
2. the rules: rule r's two parts, each uniform in base 256 + r;
3. ``E(N)``: the Elias-delta code of N + 1;
4. the counts k_0 .. k_{m-1} as a stars-and-bars composition: the N stars and m - 1 bars are
   coded as a two-type urn (P(star) = stars left / items left), which costs exactly
   log2 C(N + m - 1, m - 1);
5. the string with the urn model: P(s) = k_s left / symbols left, counts decremented after
   each symbol, which costs exactly log2(N! / prod k_i!).

Ranking the combinatorial objects is the same as coding with these probabilities, so the payload
is the model's code length plus the coder's precision loss: the range stays in [2^48, 2^56), so
a symbol out of a total T loses at most T / 2^48 bits, plus a 2-byte flush.

Codec ``chunkpress.combinatorial.v1``. The payload is the range coder's bytes, without its
always-zero first byte and without trailing zero bytes: a decoder reading past the end reads
zeros. The encoding is canonical, and the decoder checks it by encoding its result again.
"""

from __future__ import annotations

import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, Coder, FormatError, bit_length_scalar, code_length

_WINDOW = np.uint64(56)
_MASK = np.uint64((1 << 56) - 1)
_BOT = np.uint64(1 << 48)
_CARRY = np.uint64(1 << 56)
_TOP_BYTE = np.uint64(0xFF << 48)
_EIGHT = np.uint64(8)
_FF = np.uint64(0xFF)

# encoder/decoder state in a small uint64 array: low/code, range, cache, cache_size, pos
_LOW, _RANGE, _CACHE, _CSIZE, _POS = 0, 1, 2, 3, 4


@numba.njit(cache=True, forceinline=True)
def _shift_low(st, out):
    low = st[_LOW]
    if low < _TOP_BYTE or low >= _CARRY:
        carry = low >> _WINDOW
        temp = st[_CACHE]
        while True:
            out[st[_POS]] = np.uint8((temp + carry) & _FF)
            st[_POS] += np.uint64(1)
            temp = _FF
            st[_CSIZE] -= np.uint64(1)
            if st[_CSIZE] == 0:
                break
        st[_CACHE] = (low >> np.uint64(48)) & _FF
    st[_CSIZE] += np.uint64(1)
    st[_LOW] = (low << _EIGHT) & _MASK


@numba.njit(cache=True, inline="always")
def _encode(st, out, start, size, total):
    r = st[_RANGE] // np.uint64(total)
    st[_LOW] += r * np.uint64(start)
    st[_RANGE] = r * np.uint64(size)
    while st[_RANGE] < _BOT:
        st[_RANGE] <<= _EIGHT
        _shift_low(st, out)


@numba.njit(cache=True)
def _flush(st, out):
    # pick the value in [low, low + range) with the most trailing zero bytes, then emit only the
    # bytes above them: the decoder reads zeros past the end
    low = st[_LOW]
    high = low + st[_RANGE] - np.uint64(1)
    shift = np.uint64(48)
    while True:
        step = np.uint64(1) << shift
        value = (low + step - np.uint64(1)) & ~(step - np.uint64(1))
        if value <= high or shift == 0:
            break
        shift -= _EIGHT
    st[_LOW] = value
    for _ in range(8 - int(shift) // 8):
        _shift_low(st, out)


@numba.njit(cache=True)
def _encode_elias(st, out, x):
    """Elias-delta code of x + 1: len(L) - 1 zeros, L in binary, then x + 1 below its top bit."""
    v = x + 1
    length = bit_length_scalar(v)
    ll = bit_length_scalar(length)
    for _ in range(ll - 1):
        _encode(st, out, 0, 1, 2)
    for i in range(ll - 1, -1, -1):
        _encode(st, out, (length >> i) & 1, 1, 2)
    for i in range(length - 2, -1, -1):
        _encode(st, out, (v >> i) & 1, 1, 2)


@numba.njit(cache=True)
def _fenwick_build(counts):
    n = counts.size
    tree = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        tree[i + 1] += counts[i]
        j = i + 1 + ((i + 1) & -(i + 1))
        if j <= n:
            tree[j] += tree[i + 1]
    return tree


@numba.njit(cache=True, inline="always")
def _fenwick_prefix(tree, i):
    """Sum of counts[0:i]."""
    s = 0
    while i > 0:
        s += tree[i]
        i -= i & -i
    return s


@numba.njit(cache=True, inline="always")
def _fenwick_add(tree, i, delta):
    i += 1
    while i < tree.size:
        tree[i] += delta
        i += i & -i


@numba.njit(cache=True, forceinline=True)
def _fenwick_find(tree, target, top):
    """Largest i with prefix(i) <= target, and prefix(i): the symbol whose interval holds target."""
    pos = 0
    rem = target
    step = top
    while step > 0:
        nxt = pos + step
        if nxt < tree.size and tree[nxt] <= rem:
            pos = nxt
            rem -= tree[nxt]
        step >>= 1
    return pos, target - rem


@numba.njit(cache=True, inline="always")
def _mark(st, marks, k):
    """Bits committed so far: bytes out, pending bytes, and the 56 - log2(range) bits of low."""
    marks[k] = 8.0 * (st[_POS] + st[_CSIZE]) - 8.0 + 56.0 - np.log2(float(st[_RANGE]))


@numba.njit(cache=True)
def encode_kernel(rules, symbols, m, out, marks):
    """Encode; ``marks[k]`` receives the bits written after part k (m, rules, N, counts, string)."""
    st = np.zeros(5, dtype=np.uint64)
    st[_RANGE] = _MASK
    st[_CSIZE] = 1
    r_count = rules.shape[0]
    _encode_elias(st, out, r_count)
    _mark(st, marks, 0)
    for r in range(r_count):
        base = BYTE_SYMBOLS + r
        _encode(st, out, rules[r, 0], 1, base)
        _encode(st, out, rules[r, 1], 1, base)
    _mark(st, marks, 1)
    n = symbols.size
    _encode_elias(st, out, n)
    _mark(st, marks, 2)
    counts = np.zeros(m, dtype=np.int64)
    for i in range(n):
        counts[symbols[i]] += 1
    # stars and bars: for each symbol but the last, its stars then a bar
    stars = n
    bars = m - 1
    for s in range(m - 1):
        for _ in range(counts[s]):
            _encode(st, out, 0, stars, stars + bars)
            stars -= 1
        _encode(st, out, stars, bars, stars + bars)
        bars -= 1
    _mark(st, marks, 3)
    tree = _fenwick_build(counts)
    left = n
    for i in range(n):
        s = symbols[i]
        _encode(st, out, _fenwick_prefix(tree, s), counts[s], left)
        counts[s] -= 1
        _fenwick_add(tree, s, -1)
        left -= 1
    _mark(st, marks, 4)
    _flush(st, out)
    return st[_POS]


@numba.njit(cache=True, inline="always")
def _next_byte(buf, st):
    p = st[_POS]
    st[_POS] += np.uint64(1)
    if p < buf.size:
        return np.uint64(buf[p])
    return np.uint64(0)


@numba.njit(cache=True, inline="always")
def _decode_freq(st, total):
    r = st[_RANGE] // np.uint64(total)
    v = st[_LOW] // r
    if v >= np.uint64(total):
        v = np.uint64(total - 1)
    return np.int64(v), r


@numba.njit(cache=True, inline="always")
def _decode_update(st, buf, r, start, size):
    st[_LOW] -= r * np.uint64(start)
    st[_RANGE] = r * np.uint64(size)
    while st[_RANGE] < _BOT:
        st[_LOW] = ((st[_LOW] << _EIGHT) | _next_byte(buf, st)) & _MASK
        st[_RANGE] <<= _EIGHT


@numba.njit(cache=True)
def _decode_bit(st, buf):
    v, r = _decode_freq(st, 2)
    _decode_update(st, buf, r, v, 1)
    return v


@numba.njit(cache=True)
def _decode_elias(st, buf):
    """Returns x (the coded value is x + 1), or -1 if the code is malformed."""
    zeros = 0
    while _decode_bit(st, buf) == 0:
        zeros += 1
        if zeros > 6:
            return -1
    length = 1
    for _ in range(zeros):
        length = (length << 1) | _decode_bit(st, buf)
    if length > 62:
        return -1
    v = 1
    for _ in range(length - 1):
        v = (v << 1) | _decode_bit(st, buf)
    return v - 1


@numba.njit(cache=True)
def decode_header(buf, st):
    """Start decoding: returns R (or -1)."""
    st[_RANGE] = _MASK
    st[_LOW] = 0
    st[_POS] = 0
    for _ in range(8):  # the encoder's leading zero byte, then the 7-byte window
        st[_LOW] = ((st[_LOW] << _EIGHT) | _next_byte(buf, st)) & _MASK
    return _decode_elias(st, buf)


@numba.njit(cache=True)
def decode_rules(buf, st, rules):
    for r in range(rules.shape[0]):
        base = BYTE_SYMBOLS + r
        for side in range(2):
            v, rr = _decode_freq(st, base)
            _decode_update(st, buf, rr, v, 1)
            rules[r, side] = v
    return _decode_elias(st, buf)


@numba.njit(cache=True)
def decode_string(buf, st, m, out):
    n = out.size
    counts = np.zeros(m, dtype=np.int64)
    stars = n
    bars = m - 1
    s = 0
    while bars > 0:
        v, r = _decode_freq(st, stars + bars)
        if v < stars:
            _decode_update(st, buf, r, 0, stars)
            counts[s] += 1
            stars -= 1
        else:
            _decode_update(st, buf, r, stars, bars)
            bars -= 1
            s += 1
    counts[m - 1] += stars
    tree = _fenwick_build(counts)
    top = 1
    while top * 2 < tree.size:
        top *= 2
    left = n
    for i in range(n):
        v, r = _decode_freq(st, left)
        sym, start = _fenwick_find(tree, v, top)
        _decode_update(st, buf, r, start, counts[sym])
        out[i] = sym
        counts[sym] -= 1
        _fenwick_add(tree, sym, -1)
        left -= 1
    return st[_POS]


class CombinatorialCoder(Coder):
    """Exact coder of the MDL model (see the module docstring)."""

    codec_id = "chunkpress.combinatorial.v1"
    references_dictionary = True

    def encode(self, rules, symbols, *, dictionary_size: int | None = None) -> bytes:
        """``dictionary_size``: the string uses an external dictionary of that size (``rules``
        is then empty): the counts and the string are coded over it."""
        return self._encode(rules, symbols, dictionary_size)[0]

    def _encode(self, rules, symbols, dictionary_size=None):
        rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        symbols = np.ascontiguousarray(symbols, dtype=np.int64)
        m = BYTE_SYMBOLS + len(rules) if dictionary_size is None else int(dictionary_size)
        if symbols.size and (symbols.min() < 0 or symbols.max() >= m):
            raise ValueError("the string uses a symbol outside the dictionary")
        # generous bound: no coded decision costs more than 8 bytes
        out = np.zeros(64 + 8 * (len(rules) * 2 + 128) + 8 * (symbols.size * 2 + m) + 64, dtype=np.uint8)
        marks = np.zeros(5)
        size = encode_kernel(rules, symbols, m, out, marks)
        # the first byte is always 0; trailing zero bytes are implied (the decoder reads zeros
        # past the end), so a canonical payload never ends in one
        return out[1:size].tobytes().rstrip(b"\x00"), marks

    def decode(self, payload: bytes, *, dictionary_size: int | None = None, max_symbols: int | None = None):
        buf = np.frombuffer(b"\x00" + bytes(payload), dtype=np.uint8)
        st = np.zeros(5, dtype=np.uint64)
        r = decode_header(buf, st)
        # every rule costs at least 16 bits (two parts in base >= 256)
        if r < 0 or r > 8 * len(payload) // 16 + 1:
            raise FormatError("corrupt combinatorial payload: impossible rule count")
        rules = np.zeros((r, 2), dtype=np.int64)
        n = decode_rules(buf, st, rules)
        limit = max_symbols if max_symbols is not None else 1 << 40
        if n < 0 or n > limit:
            raise FormatError(f"corrupt combinatorial payload: string length {n} beyond the limit {limit}")
        symbols = np.zeros(n, dtype=np.int64)
        m = BYTE_SYMBOLS + r if dictionary_size is None else int(dictionary_size)
        if dictionary_size is not None and r:
            raise FormatError("combinatorial payload holds rules although the dictionary is external")
        used = decode_string(buf, st, m, symbols)
        # the encoding is canonical: a payload is valid only if it is exactly what the encoder
        # writes for what it decodes to (this refuses appended or altered trailing bytes,
        # which the decoder's 7-byte lookahead would otherwise absorb)
        again, marks = self._encode(rules, symbols, dictionary_size)
        if used < buf.size or again != bytes(payload):
            raise FormatError("combinatorial payload is not canonical (trailing or altered bytes)")
        self._marks = (again, marks)  # describe() of this payload needs no second encode
        return rules, symbols

    def describe(self, payload: bytes, rules, symbols) -> dict:
        """The five parts as the model predicts them for the decoded content, and the bits
        actually written (the marks of the decoder's canonical check)."""
        m = BYTE_SYMBOLS + len(rules)
        parts = code_length(m, len(symbols), np.bincount(symbols, minlength=m))
        held = getattr(self, "_marks", None)
        marks = held[1] if held is not None and held[0] == bytes(payload) else self._encode(rules, symbols)[1]
        written = np.diff(np.concatenate([[0.0], marks]))
        out: dict[str, object] = {}
        for name, w in zip(("m_bits", "rules_bits", "n_bits", "counts_bits", "string_bits"), written, strict=False):
            out[f"{name} (model / written)"] = f"{getattr(parts, name):,} / {w:,.1f}"
        out["dictionary_bytes"] = (written[0] + written[1]) / 8  # rule count and rules, as written
        out["model_total_bits"] = parts.total_bits
        out["written_bits"] = 8 * len(payload)
        out["written_minus_model_bits"] = 8 * len(payload) - parts.total_bits
        return out
