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

import attrs
import numpy as np
from chunkpress.plugin import (
    BYTE_SYMBOLS,
    Coder,
    FormatError,
    call_interruptibly,
    check_allocation,
    decode_varints,
    encode_varints,
    expand,
)

from . import cm_model as cmm
from .dictionary import Dictionary, decode_rules, encode_rules, max_prefixes, pow2_at_least, zeros
from .mixing.apm import apm_table
from .mixing.arithmetic import AC, NO_INPUT, NO_OUTPUT, coder_flush, coder_start, stop_coder
from .mixing.states import STATE_P

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


#: most bits of the open chunk's key that select the third APM's table (small enough to stay
#: in cache: every bit reads it)
APM3_BITS = 10


def model_sizes(n: int, memory: int) -> dict:
    """Table sizes (entries) for a text of ``n`` bytes: a function of the header's fields only."""
    return {
        "hash_bytes": max(1 << 16, min(1 << memory, pow2_at_least(32 * n))),
        "match": max(1 << 12, min(1 << 22, pow2_at_least(n))),
        "boundary": max(1 << 12, min(1 << 22, pow2_at_least(n))),
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


class Model:
    """The tables of one run of the model (fresh for every encode and decode)."""

    def __init__(self, n: int, memory: int):
        s = model_sizes(n, memory)
        self.ht = zeros(s["hash_bytes"], np.uint8)
        self.t1 = np.zeros(1 << 16, dtype=np.uint8)
        first = np.full(256, 1 << 21, dtype=np.int32)  # each model's map starts at the states' own estimate
        first[: STATE_P.size] = STATE_P
        self.sm_p = np.tile(first, cmm.N_HASHED)
        self.sm_n = np.zeros(cmm.N_HASHED * 256, dtype=np.int32)
        self.mm_p = np.full(64 * 256 + 256, 1 << 21, dtype=np.int32)
        self.mm_n = np.zeros(self.mm_p.size, dtype=np.int32)
        self.mm_ht = zeros(s["match"], np.int32)
        self.w1 = np.full((cmm.SET1, cmm.N_INPUTS), 1 << 14, dtype=np.int32)
        self.w2 = np.full((16 * 256, cmm.N_INPUTS), 1 << 14, dtype=np.int32)
        self.a1 = apm_table(256)
        self.a2 = apm_table(1 << 16)
        self.a3 = apm_table(256 << s["apm3_bits"])
        self.bd_p = np.full(s["boundary"], 1 << 21, dtype=np.int32)
        self.bd_n = np.zeros(s["boundary"], dtype=np.int32)
        self.bw = np.full((16, 4), 1 << 14, dtype=np.int32)

    def run(self, decode, text, starts, symbols, n_symbols, d: Dictionary, out, inp, flags, ac, coded_parse):
        chunks = cmm.Chunks(d.keys, d.used, d.start, d.size, d.ids, d.pos, d.prefix_keys, d.prefix_used)
        tables = cmm.Tables(self.ht, self.t1, self.sm_p, self.sm_n, self.mm_p, self.mm_n, self.mm_ht, self.w1, self.w2,
                            self.a1, self.a2, self.a3, self.bd_p, self.bd_n, self.bw)
        return call_interruptibly(cmm.code_text, decode, text, starts, symbols, n_symbols, chunks, tables,
                                  cmm.Stream(out, inp, ac), flags, coded_parse, stop=lambda: stop_coder(ac))


class CmCoder(Coder):
    """Context mixing over the chunk parse; see the module docstring for the format."""

    codec_id = "chunkpress.cm.v1"
    #: the hash table (32 bytes a byte of text up to 2^memory), match and boundary tables
    working_bytes_per_byte = 64

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
        d = Dictionary(rules, max_prefixes(n))
        if not self.coded_parse:
            symbols = d.greedy_parse(text)
        starts = np.zeros(n, dtype=np.uint8)
        if symbols.size:
            starts[np.cumsum(d.lens[symbols])[:-1]] = 1
        rule_stream = encode_rules(rules)
        capacity = n + n // 4 + 4096
        while True:
            out = np.zeros(capacity, dtype=np.uint8)
            ac = coder_start(False, NO_INPUT)
            chunks = Model(n, self.memory).run(False, text, starts, symbols, symbols.size, d, out, NO_INPUT,
                                               self.flags, ac, self.coded_parse)
            if chunks != (symbols.size if self.coded_parse else 0):
                raise FormatError(f"cm could not code this parse (status {chunks})")
            coder_flush(ac, out)
            if ac[AC.OUT] <= capacity:
                break
            capacity = int(ac[AC.OUT]) + 16
        head = encode_varints([n, symbols.size, len(rules), len(rule_stream)])
        return head + rule_stream + out[: ac[AC.OUT]].tobytes()

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
        rules = decode_rules(rule_stream, r)
        d = Dictionary(rules, max_prefixes(n))
        text = np.zeros(n, dtype=np.uint8)
        starts = np.zeros(n, dtype=np.uint8)
        symbols = np.zeros(s, dtype=np.int64)
        inp = np.frombuffer(text_stream, dtype=np.uint8)
        ac = coder_start(True, inp)
        chunks = Model(n, self.memory).run(True, text, starts, symbols, s, d, NO_OUTPUT, inp, self.flags, ac,
                                           self.coded_parse)
        if ac[AC.OVERRUN]:
            raise FormatError("corrupt cm payload: the coded text ends early")
        if not self.coded_parse:
            symbols = d.greedy_parse(text)
            chunks = symbols.size
        if chunks != s:
            raise FormatError(f"corrupt cm payload: decoded {max(chunks, 0):,} chunks, expected {s:,}")
        if ac[AC.IN] != inp.size:
            raise FormatError("corrupt cm payload: trailing bytes after the coded text")
        return rules, symbols

    def describe(self, payload: bytes, rules, symbols) -> dict:
        """Bytes per part: the rules (with the counts) and the coded text with its boundaries."""
        _, _, _, rule_stream, text_stream = self._sections(payload, None)
        return {"dictionary_bytes": len(payload) - len(text_stream), "string_bytes": len(text_stream)}
