"""The dictionary as the context-mixing coders see it (``cm`` and ``chunk-cm``): every
spelling named by a key, tables from a key to the symbols that spell it and of every prefix of
a spelling, the longest-match parse, and the rules coded by a small adaptive model.

Every table has a random seed and bounded probes (:mod:`.mixing.hashing`), and the parse a
budget of bytes walked past its matches, so no crafted dictionary makes a lookup or the parse
slow; the dictionary's prefixes are bounded by the text's length (:func:`max_prefixes`).
"""

from __future__ import annotations

import enum
import mmap
import os
import threading

import numba
import numpy as np
from chunkpress.plugin import BYTE_SYMBOLS, FormatError, call_interruptibly, expand_into, symbol_lengths

from .mixing.arithmetic import AC, NO_INPUT, NO_OUTPUT, code_bit, coder_flush, coder_start
from .mixing.hashing import CHUNK_BASE, MAX_PROBES, chunk_key, longest_run, lookup, mix64, table_slot
from .mixing.states import RATE


class Status(enum.IntEnum):
    """What the parse and the rules' decoder return instead of a count when they stop early."""

    #: the parse: a byte no symbol spells (not with a valid dictionary); the rules: a decoded
    #: id not below its rule's, or the section ran out
    CORRUPT = -1
    #: the parse walked more than its budget past its matches
    OVER_BUDGET = -2
    #: the calling thread asked the parse to stop (an interrupt)
    STOPPED = -3


def pow2_at_least(x: int) -> int:
    return 1 << max(0, int(x) - 1).bit_length()


@numba.njit(cache=True)
def _pow(base, e):
    result = np.uint64(1)
    while e > 0:
        if e & 1:
            result *= base
        base *= base
        e >>= 1
    return result


@numba.njit(cache=True)
def _symbol_keys(rules, lens):
    """The chunk key (spelling hash and length) of every symbol id, from the rules."""
    m = BYTE_SYMBOLS + rules.shape[0]
    h = np.zeros(m, dtype=np.uint64)
    keys = np.zeros(m, dtype=np.uint64)
    for b in range(BYTE_SYMBOLS):
        h[b] = np.uint64(b + 1)
    for k in range(rules.shape[0]):
        a = rules[k, 0]
        b = rules[k, 1]
        h[BYTE_SYMBOLS + k] = h[a] * _pow(CHUNK_BASE, lens[b]) + h[b]
    for s in range(m):
        keys[s] = chunk_key(h[s], lens[s])
    return keys, h


@numba.njit(cache=True)
def _prefix_keys(rules, lens, h, total):
    """Keys of every prefix of every symbol's spelling: the bytes, then for each rule (a, b) the
    spelling of a followed by each non-empty prefix of b's. ``total``: their number."""
    out = np.empty(total, dtype=np.uint64)
    for b in range(BYTE_SYMBOLS):
        out[b] = chunk_key(h[b], 1)
    n = BYTE_SYMBOLS
    one = np.zeros(1, dtype=np.int64)
    spelling = np.empty(total, dtype=np.uint8)
    for k in range(rules.shape[0]):
        hh = h[rules[k, 0]]
        length = lens[rules[k, 0]]
        one[0] = rules[k, 1]
        for j in range(expand_into(rules, one, lens, spelling)):
            hh = hh * CHUNK_BASE + np.uint64(spelling[j] + 1)
            length += 1
            out[n] = chunk_key(hh, length)
            n += 1
    return out


def key_table(fill, keys: np.ndarray, *args, groups: bool = False) -> tuple:
    """A key table of ``keys``: ``(table, used)``, with ``groups`` also ``(start, count, pos)``
    (see :func:`_fill_groups`). ``table`` holds a random seed after its slots (see
    ``cm_model.table_slot``), so a crafted dictionary cannot aim its keys at one slot; the
    table has twice the keys' number of slots or more, and is rebuilt with a fresh seed and
    twice the slots while a probe or a run of occupied slots reaches ``MAX_PROBES``: every
    lookup's cost is bounded whatever the keys."""
    size = pow2_at_least(2 * max(keys.size, 1))
    for _ in range(3):
        table = np.zeros(size + 1, dtype=np.uint64)
        table[size] = int.from_bytes(os.urandom(8), "little")
        used = np.zeros(size, dtype=np.uint8)
        extra = (np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64),
                 np.zeros(keys.size, dtype=np.int64)) if groups else ()
        if fill(keys, *args, table, used, *extra) and longest_run(used) < MAX_PROBES:
            return (table, used) + extra
        size *= 2
    raise FormatError("corrupt cm payload: the dictionary's chunk keys collide beyond any table")


def key_set(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A key table of ``keys`` (``(table, used)``): which keys are in it, answered by
    :func:`~.mixing.hashing.lookup`."""
    return key_table(_fill_set, keys)


@numba.njit(cache=True)
def _fill_set(keys, table, used):
    for key in keys:
        i = table_slot(table, used, key)
        if i < 0:
            return False
        used[i] = 1
        table[i] = key
    return True


@numba.njit(cache=True)
def _fill_groups(keys, order, table, used, start, count, pos):
    """Key -> group of symbol ids that share the spelling, sorted by id (``start`` and ``count``
    in ``order``); and each id's index in its group (``pos``, by id)."""
    for r in range(keys.size):
        s = order[r]
        key = keys[s]
        i = table_slot(table, used, key)
        if i < 0:
            return False
        if not used[i]:
            used[i] = 1
            table[i] = key
            start[i] = r
        pos[s] = count[i]
        count[i] += 1
    return True


class Dictionary:
    """The rules as the model sees them: a table from a spelling's key to its symbols."""

    def __init__(self, rules: np.ndarray, max_prefixes: int):
        self.rules = rules
        self.lens = symbol_lengths(rules)
        keys, h = _symbol_keys(rules, self.lens)
        order = np.argsort(keys, kind="stable").astype(np.int64)
        self.keys, self.used, self.start, self.size, self.pos = key_table(_fill_groups, keys, order, groups=True)
        self.ids = order
        right = self.lens[rules[:, 1]] if len(rules) else self.lens[:0]
        # each length is checked first, so the sum cannot overflow
        total = max_prefixes + 1 if right.size and right.max() > max_prefixes else BYTE_SYMBOLS + int(right.sum())
        if total > max_prefixes:
            raise FormatError(f"the dictionary spells {total:,} prefixes, more than cm allows for this text "
                              f"({max_prefixes:,}); use fewer or shorter rules")
        self.prefix_keys, self.prefix_used = key_set(_prefix_keys(rules, self.lens, h, total))

    def greedy_parse(self, text: np.ndarray) -> np.ndarray:
        """The longest-match parse; FormatError where it would walk more than
        :func:`parse_budget` bytes past its matches (the encoder refuses such a dictionary)."""
        symbols = np.zeros(text.size, dtype=np.int64)
        stop = np.zeros(1, dtype=np.int64)
        count = call_interruptibly(greedy_parse, text, self.prefix_keys, self.prefix_used, self.keys, self.used,
                                   self.start, self.ids, symbols, parse_budget(text.size), stop,
                                   stop=lambda: stop.__setitem__(0, 1))
        if count == Status.OVER_BUDGET:
            raise FormatError(f"the dictionary's prefixes run on far past its matches in this text: the "
                              f"longest-match parse would walk more than {parse_budget(text.size):,} extra bytes "
                              "(cm with parse = 'exact' codes such a parse)")
        return symbols[:count]


def parse_budget(n: int) -> int:
    """Bytes the longest-match parse of ``n`` bytes may walk past the matches it takes: learned
    dictionaries walk about one byte past each match (``examples/benchmarks/cm_bombs.py``)."""
    return 32 * n + (1 << 16)


def max_prefixes(n: int) -> int:
    """The most dictionary prefixes cm builds for a text of ``n`` bytes (bounds its memory)."""
    return 16 * n + (1 << 20)


def zeros(n: int, dtype) -> np.ndarray:
    """Zeroed memory for a large table read at random: on Linux in huge pages where the kernel
    allows them (one TLB entry per 2 MB instead of per 4 KB: the model's lookups miss the TLB
    far less). The contents, and so the archive, are the same either way."""
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes >= 1 << 22 and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            region = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            region.madvise(mmap.MADV_HUGEPAGE)
            return np.frombuffer(region, dtype=dtype)
        except (OSError, ValueError):
            pass
    return np.zeros(n, dtype=dtype)


class ZeroedAhead:
    """Large tables (name: (entries, dtype)) allocated now (:func:`zeros`) and faulted in by a
    thread of their own, so that the kernel zeroes their memory on another core while the
    caller does other work (chunk-cm: while the dictionary is learned) rather than while a
    model waits on its first lookups.

        ahead = ZeroedAhead({"ht": (1 << 29, np.uint8)})
        ...                                    # other work
        ht = ahead.take("ht", 1 << 28, np.uint8)   # its front; a new table where none fits
    """

    def __init__(self, sizes: dict[str, tuple[int, type]]):
        self._tables = {name: zeros(entries, dtype) for name, (entries, dtype) in sizes.items()}
        self._thread = threading.Thread(target=self._touch, name="zeroed ahead", daemon=True)
        self._thread.start()

    def _touch(self) -> None:
        for table in self._tables.values():
            touch_pages(table.view(np.uint8))

    def take(self, name: str, entries: int, dtype) -> np.ndarray:
        """The table ``name`` of ``entries`` zeroes, once: the one made ahead where it is large
        enough, else a new one."""
        self._thread.join()
        table = self._tables.pop(name, None)
        if table is not None and table.dtype == dtype and table.size >= entries:
            return table[:entries]
        return zeros(entries, dtype)


@numba.njit(cache=True, nogil=True)
def touch_pages(table):
    """Writes a zero into each 4 KB page of ``table`` (uint8), so that the kernel maps and
    zeroes its memory now, without the GIL, rather than at the model's first lookups."""
    for i in range(0, table.size, 4096):
        table[i] = 0


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
            return Status.STOPPED
        h = np.uint64(0)
        best_slot = -1
        best_len = 0
        k = i
        while k < n:
            h = h * CHUNK_BASE + np.uint64(text[k] + 1)
            key = chunk_key(h, k - i + 1)
            if lookup(prefix_keys, prefix_used, key) < 0:
                break
            slot = lookup(keys, used, key)
            if slot >= 0:
                best_slot = slot
                best_len = k - i + 1
            k += 1
        if best_slot < 0:  # every byte is a symbol: cannot happen with a valid dictionary
            return Status.CORRUPT
        overshoot += k - i - best_len
        if overshoot > budget:
            return Status.OVER_BUDGET
        if count < symbols.size:
            symbols[count] = group_ids[group_start[best_slot]]
        count += 1
        i += best_len
    return count


def encode_rules(rules: np.ndarray) -> bytes:
    out = np.zeros(64 + 10 * rules.size, dtype=np.uint8)
    ac = coder_start(False, NO_INPUT)
    p = np.full(RULE_CONTEXTS, 1 << 15, dtype=np.int64)
    code_rules(False, rules, BYTE_SYMBOLS, out, NO_INPUT, ac, p, np.zeros(p.size, dtype=np.int64))
    coder_flush(ac, out)
    return out[: ac[AC.OUT]].tobytes()


def decode_rules(stream: bytes, r: int) -> np.ndarray:
    inp = np.frombuffer(stream, dtype=np.uint8)
    rules = np.zeros((r, 2), dtype=np.int64)
    ac = coder_start(True, inp)
    p = np.full(RULE_CONTEXTS, 1 << 15, dtype=np.int64)
    status = code_rules(True, rules, BYTE_SYMBOLS, NO_OUTPUT, inp, ac, p, np.zeros(p.size, dtype=np.int64))
    if ac[AC.OVERRUN]:
        raise FormatError("corrupt cm payload: the rules section ends early")
    if status < 0:
        raise FormatError("corrupt cm payload: a rule refers to a symbol not defined before it")
    if ac[AC.IN] != inp.size:
        raise FormatError("corrupt cm payload: the rules section has trailing bytes")
    return rules


# ---------------------------------------------------------------- the rules

#: the rules' contexts: the bit-length trees, then the hashed top bits below the leading one
RULE_TREE = 64 * 64 * 2
#: how many bits below an id's leading one are modelled (the rest are close to uniform)
RULE_TOP_BITS = 6
RULE_HASHED = 1 << 20
RULE_CONTEXTS = RULE_TREE + RULE_HASHED


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
        if ac[AC.OVERRUN]:  # past the end of the section: the counts are forged, stop now
            return Status.CORRUPT
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
                    bit = code_bit(decode, ac, out, inp, (v >> q) & 1, np.int64(2048))  # typed as the others
                value = (value << 1) | bit
            if decode:
                if value >= limit:
                    return Status.CORRUPT
                rules[k, side] = value
            if side == 0:
                left_nb = min(nb, 63)
        last_left = left_nb
    return 0


@numba.njit(cache=True, inline="always")
def _prob(p, i):
    return max(1, min(4095, p[i] >> 4))


@numba.njit(cache=True, inline="always")
def _learn(p, n, i, bit):
    c = n[i]
    p[i] += (((bit << 16) - p[i]) * RATE[c]) >> 16
    if c < 60:
        n[i] = c + 1
