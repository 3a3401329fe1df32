"""The ``cm`` coder: the chunk parse coded by context mixing, byte and chunk contexts together.

The rules are coded first (each part's bit length, then its top bits, adaptively); then the
text that the symbols spell is coded bit by bit by the compiled model in
:mod:`chunkpress.plugins.coders.cm_model` (orders 1-6, a word and a match model over the bytes, the open
chunk and the one or two chunks before it). With ``parse = "exact"`` a bit after each byte says,
where the dictionary leaves a choice, whether a new chunk starts there, and the decoder rebuilds
the very symbols; with ``parse = "longest"`` it returns the longest-match parse of the text.

Payload (codec ``chunkpress.cm.v1``): LEB128 ``N S R L``, then ``L`` bytes of coded rules, then
the coded text. ``N`` bytes of text, ``S`` symbols, ``R`` rules. The hash table's size is
``min(2^memory, 32 N rounded up to a power of two)`` bytes (at least 64 KiB): the ``memory``
param is in the archive header, so the decoder builds the same model.
"""

from __future__ import annotations

import mmap
import os

import attrs
import numba
import numpy as np

from ...plugin.hookspecs import hookimpl
from ...plugin.descriptors import CoderInfo
from ...errors import FormatError
from ...format.expand import _expand as expand_into
from ...format.expand import expand, symbol_lengths
from ...format.leb128 import decode_varints, encode_varints
from ...format.limits import check_allocation
from ...engine.kernels import call_interruptibly
from ...plugin.base import BYTE_SYMBOLS, Coder

from . import cm_model as cmm

#: the ablation of the study: which context groups the model uses
CONTEXTS = {"all": cmm.USE_BYTES | cmm.USE_CHUNKS, "bytes": cmm.USE_BYTES, "chunks": cmm.USE_CHUNKS}
_MAX_RULES = (1 << 31) - BYTE_SYMBOLS


@attrs.frozen(kw_only=True)
class CmParams:
    """``memory``: log2 of the largest hash table in bytes (the model uses about 1.3x this at
    most; smaller inputs get smaller tables). ``contexts``: all, bytes (no chunk contexts) or
    chunks (order 1 and the chunk contexts only). ``parse``: ``exact`` codes the chunk
    boundaries, so decoding returns the very symbols encoded; ``longest`` codes only the text
    and the rules (no bit per boundary), the chunk contexts follow the segmentation the model
    computes from the bytes, and decoding returns the longest-match parse of the text by the
    dictionary: the same text and rules, maybe other symbols."""

    memory: int = attrs.field(default=29, validator=[attrs.validators.instance_of(int), attrs.validators.ge(16),
                                                     attrs.validators.le(32)])
    contexts: str = attrs.field(default="all", validator=attrs.validators.in_(tuple(CONTEXTS)))
    parse: str = attrs.field(default="exact", validator=attrs.validators.in_(("exact", "longest")))


def _pow2_at_least(x: int) -> int:
    return 1 << max(0, int(x) - 1).bit_length()


#: most bits of the open chunk's key that select the third APM's table (small enough to stay
#: in cache: every bit reads it)
APM3_BITS = 10


def model_sizes(n: int, memory: int) -> dict:
    """Table sizes (entries) for a text of ``n`` bytes: a function of the header's fields only."""
    return {
        "hash_bytes": max(1 << 16, min(1 << memory, _pow2_at_least(32 * n))),
        "match": max(1 << 12, min(1 << 22, _pow2_at_least(n))),
        "boundary": max(1 << 12, min(1 << 22, _pow2_at_least(n))),
        # bits of the open chunk's key that pick the third APM's table
        "apm3_bits": max(2, min(APM3_BITS, n.bit_length() - 10)),
    }


def model_bytes(n: int, memory: int) -> int:
    """An upper bound on the memory the model allocates for ``n`` bytes of text, checked before
    decoding: its tables hold int32 entries, counted here at 8 bytes each."""
    s = model_sizes(n, memory)
    fixed = (8 * 2 * (cmm.N_HASHED * 256 + 64 * 256 + 256 + 33 * (256 + 65536 + (256 << s["apm3_bits"])))
             + 8 * cmm.N_INPUTS * (cmm.SET1 + 16 * 256) + 65536)
    return s["hash_bytes"] + 8 * s["match"] + 16 * s["boundary"] + fixed


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
        h[BYTE_SYMBOLS + k] = h[a] * _pow(cmm.CHUNK_BASE, lens[b]) + h[b]
    for s in range(m):
        keys[s] = cmm.chunk_key(h[s], lens[s])
    return keys, h


@numba.njit(cache=True)
def _prefix_keys(rules, lens, h, total):
    """Keys of every prefix of every symbol's spelling: the bytes, then for each rule (a, b) the
    spelling of a followed by each non-empty prefix of b's. ``total``: their number."""
    out = np.empty(total, dtype=np.uint64)
    for b in range(BYTE_SYMBOLS):
        out[b] = cmm.chunk_key(h[b], 1)
    n = BYTE_SYMBOLS
    one = np.zeros(1, dtype=np.int64)
    spelling = np.empty(total, dtype=np.uint8)
    for k in range(rules.shape[0]):
        hh = h[rules[k, 0]]
        length = lens[rules[k, 0]]
        one[0] = rules[k, 1]
        for j in range(expand_into(rules, one, lens, spelling)):
            hh = hh * cmm.CHUNK_BASE + np.uint64(spelling[j] + 1)
            length += 1
            out[n] = cmm.chunk_key(hh, length)
            n += 1
    return out


def _key_table(fill, keys: np.ndarray, *args, groups: bool = False) -> tuple:
    """A key table of ``keys``: ``(table, used)``, with ``groups`` also ``(start, count, pos)``
    (see :func:`_fill_groups`). ``table`` holds a random seed after its slots (see
    ``cm_model.table_slot``), so a crafted dictionary cannot aim its keys at one slot; the
    table has twice the keys' number of slots or more, and is rebuilt with a fresh seed and
    twice the slots while a probe or a run of occupied slots reaches ``MAX_PROBES``: every
    lookup's cost is bounded whatever the keys."""
    size = _pow2_at_least(2 * max(keys.size, 1))
    for _ in range(3):
        table = np.zeros(size + 1, dtype=np.uint64)
        table[size] = int.from_bytes(os.urandom(8), "little")
        used = np.zeros(size, dtype=np.uint8)
        extra = (np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64),
                 np.zeros(keys.size, dtype=np.int64)) if groups else ()
        if fill(keys, *args, table, used, *extra) and cmm.longest_run(used) < cmm.MAX_PROBES:
            return (table, used) + extra
        size *= 2
    raise FormatError("corrupt cm payload: the dictionary's chunk keys collide beyond any table")


@numba.njit(cache=True)
def _fill_set(keys, table, used):
    for key in keys:
        i = cmm.table_slot(table, used, key)
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
        i = cmm.table_slot(table, used, key)
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
        self.keys, self.used, self.start, self.size, self.pos = _key_table(_fill_groups, keys, order, groups=True)
        self.ids = order
        right = self.lens[rules[:, 1]] if len(rules) else self.lens[:0]
        # each length is checked first, so the sum cannot overflow
        total = max_prefixes + 1 if right.size and right.max() > max_prefixes else BYTE_SYMBOLS + int(right.sum())
        if total > max_prefixes:
            raise FormatError(f"the dictionary spells {total:,} prefixes, more than cm allows for this text "
                              f"({max_prefixes:,}); use fewer or shorter rules")
        self.prefix_keys, self.prefix_used = _key_table(_fill_set, _prefix_keys(rules, self.lens, h, total))

    def greedy_parse(self, text: np.ndarray) -> np.ndarray:
        """The longest-match parse; FormatError where it would walk more than
        :func:`_parse_budget` bytes past its matches (the encoder refuses such a dictionary)."""
        symbols = np.zeros(text.size, dtype=np.int64)
        stop = np.zeros(1, dtype=np.int64)
        count = call_interruptibly(cmm.greedy_parse, text, self.prefix_keys, self.prefix_used, self.keys, self.used,
                                   self.start, self.ids, symbols, _parse_budget(text.size), stop,
                                   stop=lambda: stop.__setitem__(0, 1))
        if count == -2:
            raise FormatError(f"the dictionary's prefixes run on far past its matches in this text: the "
                              f"longest-match parse would walk more than {_parse_budget(text.size):,} extra bytes "
                              "(cm with parse = 'exact' codes such a parse)")
        return symbols[:count]


def _parse_budget(n: int) -> int:
    """Bytes the longest-match parse of ``n`` bytes may walk past the matches it takes: learned
    dictionaries walk about one byte past each match (``examples/benchmarks/cm_bombs.py``)."""
    return 32 * n + (1 << 16)


def _max_prefixes(n: int) -> int:
    """The most dictionary prefixes cm builds for a text of ``n`` bytes (bounds its memory)."""
    return 16 * n + (1 << 20)


def _zeros(n: int, dtype) -> np.ndarray:
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


class Model:
    """The tables of one run of the model (fresh for every encode and decode)."""

    def __init__(self, n: int, memory: int):
        s = model_sizes(n, memory)
        self.ht = _zeros(s["hash_bytes"], np.uint8)
        self.t1 = np.zeros(1 << 16, dtype=np.uint8)
        first = np.full(256, 1 << 21, dtype=np.int32)  # each model's map starts at the states' own estimate
        first[: cmm.STATE_P.size] = cmm.STATE_P
        self.sm_p = np.tile(first, cmm.N_HASHED)
        self.sm_n = np.zeros(cmm.N_HASHED * 256, dtype=np.int32)
        self.mm_p = np.full(64 * 256 + 256, 1 << 21, dtype=np.int32)
        self.mm_n = np.zeros(self.mm_p.size, dtype=np.int32)
        self.mm_ht = _zeros(s["match"], np.int32)
        self.w1 = np.full((cmm.SET1, cmm.N_INPUTS), 1 << 14, dtype=np.int32)
        self.w2 = np.full((16 * 256, cmm.N_INPUTS), 1 << 14, dtype=np.int32)
        self.a1 = cmm.apm_table(256)
        self.a2 = cmm.apm_table(1 << 16)
        self.a3 = cmm.apm_table(256 << s["apm3_bits"])
        self.bd_p = np.full(s["boundary"], 1 << 21, dtype=np.int32)
        self.bd_n = np.zeros(s["boundary"], dtype=np.int32)
        self.bw = np.full((16, 4), 1 << 14, dtype=np.int32)

    def run(self, decode, text, starts, symbols, n_symbols, d: Dictionary, out, inp, flags, ac, coded_parse):
        chunks = cmm.Chunks(d.keys, d.used, d.start, d.size, d.ids, d.pos, d.prefix_keys, d.prefix_used)
        tables = cmm.Tables(self.ht, self.t1, self.sm_p, self.sm_n, self.mm_p, self.mm_n, self.mm_ht, self.w1, self.w2,
                            self.a1, self.a2, self.a3, self.bd_p, self.bd_n, self.bw)
        return call_interruptibly(cmm.code_text, decode, text, starts, symbols, n_symbols, chunks, tables,
                                  cmm.Stream(out, inp, ac), flags, coded_parse, stop=lambda: cmm.stop_coder(ac))


_EMPTY = np.zeros(0, dtype=np.uint8)
#: what the encoder reads: nothing, typed as the decoder's read-only input so both share one compilation
_NO_INPUT = np.frombuffer(b"", dtype=np.uint8)


def _code_rules(rules: np.ndarray) -> bytes:
    out = np.zeros(64 + 10 * rules.size, dtype=np.uint8)
    ac = cmm.coder_start(False, _NO_INPUT)
    p = np.full(cmm.RULE_CONTEXTS, 1 << 15, dtype=np.int64)
    cmm.code_rules(False, rules, BYTE_SYMBOLS, out, _NO_INPUT, ac, p, np.zeros(p.size, dtype=np.int64))
    cmm.coder_flush(ac, out)
    return out[: ac[4]].tobytes()


def _decode_rules(stream: bytes, r: int) -> np.ndarray:
    inp = np.frombuffer(stream, dtype=np.uint8)
    rules = np.zeros((r, 2), dtype=np.int64)
    ac = cmm.coder_start(True, inp)
    p = np.full(cmm.RULE_CONTEXTS, 1 << 15, dtype=np.int64)
    status = cmm.code_rules(True, rules, BYTE_SYMBOLS, _EMPTY, inp, ac, p, np.zeros(p.size, dtype=np.int64))
    if ac[5]:
        raise FormatError("corrupt cm payload: the rules section ends early")
    if status < 0:
        raise FormatError("corrupt cm payload: a rule refers to a symbol not defined before it")
    if ac[3] != inp.size:
        raise FormatError("corrupt cm payload: the rules section has trailing bytes")
    return rules


class CmCoder(Coder):
    """Context mixing over the chunk parse; see the module docstring for the format."""

    codec_id = "chunkpress.cm.v1"

    def __init__(self, params: CmParams):
        super().__init__(params)
        self.memory = params.memory
        self.flags = CONTEXTS[params.contexts]
        self.coded_parse = params.parse == "exact"

    def encode(self, rules, symbols, *, dictionary_size=None) -> bytes:
        rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        symbols = np.ascontiguousarray(symbols, dtype=np.int64)
        text = np.frombuffer(expand(rules, symbols), dtype=np.uint8).copy()
        n = text.size
        d = Dictionary(rules, _max_prefixes(n))
        if not self.coded_parse:
            symbols = d.greedy_parse(text)
        starts = np.zeros(n, dtype=np.uint8)
        if symbols.size:
            starts[np.cumsum(d.lens[symbols])[:-1]] = 1
        rule_stream = _code_rules(rules)
        capacity = n + n // 4 + 4096
        while True:
            out = np.zeros(capacity, dtype=np.uint8)
            ac = cmm.coder_start(False, _NO_INPUT)
            chunks = Model(n, self.memory).run(False, text, starts, symbols, symbols.size, d, out, _NO_INPUT,
                                               self.flags, ac, self.coded_parse)
            if chunks != (symbols.size if self.coded_parse else 0):
                raise FormatError(f"cm could not code this parse (status {chunks})")
            cmm.coder_flush(ac, out)
            if ac[4] <= capacity:
                break
            capacity = int(ac[4]) + 16
        head = encode_varints([n, symbols.size, len(rules), len(rule_stream)])
        return head + rule_stream + out[: ac[4]].tobytes()

    def _sections(self, payload: bytes, max_symbols: int | None):
        (n, s, r, size), pos = decode_varints(payload, 4)
        n, s, r, size = int(n), int(s), int(r), int(size)
        if max_symbols is not None and n > max_symbols:
            raise FormatError(f"corrupt cm payload: {n:,} bytes of text, more than the header's length")
        if s > n or (n > 0) != (s > 0):
            raise FormatError(f"corrupt cm payload: {s:,} symbols for {n:,} bytes")
        if r > _MAX_RULES:
            raise FormatError(f"corrupt cm payload: {r:,} rules")
        if size > len(payload) - pos:
            raise FormatError("payload truncated: the rules section extends past the end")
        return n, s, r, payload[pos : pos + size], payload[pos + size :]

    def decode(self, payload: bytes, *, dictionary_size=None, max_symbols: int | None = None):
        n, s, r, rule_stream, text_stream = self._sections(payload, max_symbols)
        # every coded bit costs at least log2(4096/4095) bits: a longer text is a forgery
        if n > 2900 * (len(text_stream) + 8):
            raise FormatError(f"corrupt cm payload: {len(text_stream):,} bytes cannot hold {n:,} bytes of text")
        check_allocation(f"{n:,} bytes of text and {r:,} rules",
                         n * 2 + 8 * s + 64 * (r + BYTE_SYMBOLS) + model_bytes(n, self.memory))
        rules = _decode_rules(rule_stream, r)
        d = Dictionary(rules, _max_prefixes(n))
        text = np.zeros(n, dtype=np.uint8)
        starts = np.zeros(n, dtype=np.uint8)
        symbols = np.zeros(s, dtype=np.int64)
        inp = np.frombuffer(text_stream, dtype=np.uint8)
        ac = cmm.coder_start(True, inp)
        chunks = Model(n, self.memory).run(True, text, starts, symbols, s, d, _EMPTY, inp, self.flags, ac,
                                           self.coded_parse)
        if ac[5]:
            raise FormatError("corrupt cm payload: the coded text ends early")
        if not self.coded_parse:
            symbols = d.greedy_parse(text)
            chunks = symbols.size
        if chunks != s:
            raise FormatError(f"corrupt cm payload: decoded {max(chunks, 0):,} chunks, expected {s:,}")
        if ac[3] != inp.size:
            raise FormatError("corrupt cm payload: trailing bytes after the coded text")
        return rules, symbols

    def describe(self, payload: bytes, rules, symbols) -> dict:
        """Bytes per part: the rules (with the counts) and the coded text with its boundaries."""
        _, _, _, rule_stream, text_stream = self._sections(payload, None)
        return {"dictionary_bytes": len(payload) - len(text_stream), "string_bytes": len(text_stream)}


@hookimpl
def register_coders():
    return [
        CoderInfo(
            name="cm", factory=CmCoder, params=CmParams, version="1",
            summary="context mixing over the text and its chunk parse (orders 1-6, word, match, chunk contexts)",
        ),
    ]
