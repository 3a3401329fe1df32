"""sentencepiece's precompiled character map, read and run as its ``normalizer.cc`` runs it.

The map is ``<trie size: u32 little-endian><double-array trie><replacement strings>``: a
darts-clone double array whose keys are UTF-8 sequences and whose values point at
NUL-terminated replacements. At each position the longest key that starts there is replaced;
where none does, one UTF-8 character is kept as it is, and a byte that starts no valid
character becomes U+FFFD (one byte consumed). With ``remove_extra_whitespaces``, spaces at
the start and end go and a run of them becomes one, as sentencepiece decides it: on each
replacement, not on the text.

A map read from a file is checked whole when it is loaded (every node reachable from the root
lies in the array, every value points at a terminated string), so the kernels never read
outside it.
"""

import numpy as np
from chunkpress.plugin import FormatError, kernel

#: the bytes of U+FFFD, which a byte that starts no valid character becomes
_REPLACEMENT = np.array(list("\ufffd".encode()), dtype=np.uint8)
#: U+2581, sentencepiece's space: the trailing white space it removes is either
_META = np.array(list("\u2581".encode()), dtype=np.uint8)


@kernel
def _offset(unit):
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


@kernel
def _check_trie(units, normalized, visited, stack):
    """0 where every node reachable from the root lies in ``units`` and every value points at a
    NUL-terminated string of ``normalized``, else -1 (a node shared by two keys is checked once)."""
    n = units.size
    if n == 0 or _offset(units[0]) >= n:
        return -1
    stack[0] = _offset(units[0])
    top = 1
    while top > 0:
        top -= 1
        base = stack[top]
        for c in range(256):
            child = base ^ c
            if child >= n:
                continue
            unit = units[child]
            if (unit & ((1 << 31) | 0xFF)) != c:
                continue
            if visited[child]:
                continue
            visited[child] = 1
            nxt = base ^ c ^ _offset(unit)
            if nxt >= n:
                return -1
            if (unit >> 8) & 1:
                value = units[nxt] & ((1 << 31) - 1)
                end = value
                while end < normalized.size and normalized[end] != 0:
                    end += 1
                if end >= normalized.size:
                    return -1
            if top >= stack.size:
                return -1
            stack[top] = nxt
            top += 1
    return 0


@kernel
def _longest_key(units, data, at, hi):
    """(key length, value) of the longest key of the trie that starts ``data[at:hi]``; (0, 0) for none."""
    node = _offset(units[0])
    best, value = 0, 0
    for i in range(at, hi):
        c = data[i]
        child = node ^ c
        if child >= units.size:
            break
        unit = units[child]
        if (unit & ((1 << 31) | 0xFF)) != c:
            break
        node = child ^ _offset(unit)
        if (unit >> 8) & 1:
            best, value = i + 1 - at, units[node] & ((1 << 31) - 1)
    return best, value


@kernel
def _utf8_length(data, at, hi):
    """The length of the valid UTF-8 character at ``at``, before ``hi`` (as sentencepiece's
    DecodeUTF8: no overlong forms, no surrogates, nothing past U+10FFFF), or 0."""
    b0 = data[at]
    if b0 < 0x80:
        return 1
    left = hi - at
    if (b0 & 0xE0) == 0xC0:
        need, cp = 2, b0 & 0x1F
    elif (b0 & 0xF0) == 0xE0:
        need, cp = 3, b0 & 0x0F
    elif (b0 & 0xF8) == 0xF0:
        need, cp = 4, b0 & 0x07
    else:
        return 0
    if left < need:
        return 0
    for k in range(1, need):
        if (data[at + k] & 0xC0) != 0x80:
            return 0
        cp = (cp << 6) | (data[at + k] & 0x3F)
    lowest = 0x80 if need == 2 else 0x800 if need == 3 else 0x10000
    if cp < lowest or (0xD800 <= cp < 0xE000) or cp > 0x10FFFF:
        return 0
    return need


@kernel
def _piece(units, normalized, data, at, hi):
    """What ``data[at:hi]`` starts with: (source, start, stop, bytes consumed), the source 0 for
    ``normalized`` (a key's replacement), 1 for ``data`` (a character kept), 2 for U+FFFD."""
    length, value = _longest_key(units, data, at, hi) if units.size else (0, 0)
    if length > 0:
        stop = value
        while normalized[stop] != 0:
            stop += 1
        return 0, value, stop, length
    kept = _utf8_length(data, at, hi)
    if kept == 0:
        return 2, 0, 3, 1
    return 1, at, at + kept, kept


@kernel
def _normalize_text(units, normalized, replacement, meta, data, lo, hi, remove_extra, prefix, out, w, origin, o):
    """``data[lo:hi]`` normalized into ``out`` from ``w`` (``prefix``: sentencepiece's dummy
    prefix first): the bytes written, or -1 where ``out`` is too short. ``origin[o + k]``: the
    offset in the text that its byte k came from, and after the last, where the text ends
    (sentencepiece's norm_to_orig). Spaces stay spaces (sentencepiece writes U+2581 for them;
    the tokenizer reads both alike)."""
    at, w0 = lo, w
    while remove_extra and at < hi:  # spaces at the start go
        source, start, stop, consumed = _piece(units, normalized, data, at, hi)
        if source == 2 or stop - start != 1 or (normalized if source == 0 else data)[start] != 32:
            break
        at += consumed
    if at >= hi:
        origin[o] = hi - lo
        return 0
    if prefix:
        out[w] = 32
        origin[o] = at - lo
        w += 1
    is_prev_space = remove_extra
    while at < hi:
        source, start, stop, consumed = _piece(units, normalized, data, at, hi)
        src = normalized if source == 0 else data if source == 1 else replacement
        if is_prev_space:  # a run of spaces is one
            while start < stop and src[start] == 32:
                start += 1
        if start < stop:
            if w + stop - start >= out.size:
                return -1
            for k in range(start, stop):
                out[w] = src[k]
                origin[o + w - w0] = at - lo
                w += 1
            is_prev_space = remove_extra and src[stop - 1] == 32
        at += consumed
    end = hi - lo
    if remove_extra:  # and spaces at the end, U+2581 among them
        while w > w0:
            if out[w - 1] == 32:
                w -= 1
            elif w - w0 >= 3 and out[w - 3] == meta[0] and out[w - 2] == meta[1] and out[w - 1] == meta[2]:
                w -= 3
            else:
                break
            end = origin[o + w - w0]
    origin[o + w - w0] = end
    return w - w0


@kernel
def _normalize_texts(units, normalized, replacement, meta, data, ends, remove_extra, prefix, out, origin, written):
    """Each text ``data[ends[k - 1]:ends[k]]`` as :func:`_normalize_text` gives it, one after
    another (text k's origins from ``written[k] + k``); ``written[k + 1]``: where text k's
    bytes end. False where ``out`` is too short."""
    written[0] = 0
    for k in range(ends.size):
        lo = ends[k - 1] if k else 0
        count = _normalize_text(units, normalized, replacement, meta, data, lo, ends[k], remove_extra, prefix, out,
                                written[k], origin, written[k] + k)
        if count < 0:
            return False
        written[k + 1] = written[k] + count
    return True


class CharsMap:
    """A precompiled character map, checked (FormatError naming what is wrong) and ready to run."""

    def __init__(self, blob: bytes):
        if not blob:  # identity: no replacements, only the UTF-8 check and the spaces
            self.units = np.zeros(0, dtype=np.int64)
            self.normalized = np.zeros(1, dtype=np.uint8)
            self.longest = _REPLACEMENT.size
            return
        if len(blob) <= 4:
            raise FormatError("precompiled character map: truncated (no trie)")
        size = int.from_bytes(blob[:4], "little")
        if size >= len(blob) - 4 or size < 4 or size % 4:
            raise FormatError(f"precompiled character map: its trie of {size:,} bytes does not fit its "
                              f"{len(blob):,} bytes")
        self.units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4).astype(np.int64)
        self.normalized = np.frombuffer(blob, dtype=np.uint8, offset=4 + size).copy()  # writable, as the text is
        n = self.units.size
        if _check_trie(self.units, self.normalized, np.zeros(n, dtype=np.uint8), np.zeros(n + 1, dtype=np.int64)) < 0:
            raise FormatError("precompiled character map: corrupt trie (a node or a replacement lies outside the map)")
        #: the most bytes one step writes (a replacement, or U+FFFD for one byte)
        self.longest = max(_REPLACEMENT.size, max(len(r) for r in self.normalized.tobytes().split(b"\0")))

    def normalize(self, texts: list[bytes], remove_extra_whitespaces: bool, dummy_prefix: bool) -> list[tuple]:
        """Each text as sentencepiece's normalizer gives it, with a space for each U+2581 it
        writes, and the offset in the text of each byte and of its end; all in one pass."""
        arr = np.frombuffer(b"".join(texts), dtype=np.uint8).copy()  # the kernels take one array type
        ends = np.cumsum([len(t) for t in texts], dtype=np.int64)
        written = np.zeros(len(texts) + 1, dtype=np.int64)
        room = 2 * arr.size + 64  # most text keeps its length
        while True:
            out = np.empty(room, dtype=np.uint8)
            origin = np.empty(room + len(texts), dtype=np.int64)
            if _normalize_texts(self.units, self.normalized, _REPLACEMENT, _META, arr, ends, remove_extra_whitespaces,
                                dummy_prefix, out, origin, written):
                break
            room = min(4 * room, self.longest * arr.size + 64)  # each step writes at most the longest
        data = out[:written[-1]].tobytes()
        bounds = written.tolist()
        return [(data[a:b], origin[a + k:b + k + 1]) for k, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False))]
