"""Use a learned dictionary on new text: encode to symbol ids, decode back, measure, export.

Encoding applies the rules in order, each by left-to-right replacement, exactly as training did,
so encoding the training text gives back the training's final string. It replays the rules with
the engine's linked string (its merge kernel): the cost is proportional to the sites, not one pass per
rule. With a pre-tokenizer, every distinct pre-token is encoded once (an exact hash table over
its bytes) and the output is assembled by copying.
"""

from __future__ import annotations

import numba
import numpy as np

from ..engine.codelength import parts_from_sum, PART_NAMES
from ..errors import ChunkpressError, FormatError
from ..format.expand import expand, symbol_lengths
from ..format.limits import bounded_memory
from .pretokenize import check_name, pretoken_breaks
from .wordcounts import DistinctWords
from ..plugin.base import BYTE_SYMBOLS, as_symbols


#: Words up to this many bytes are merged in a small array (lowest rank first); longer ones
#: are replayed with the engine's linked string, whose cost does not grow with the square of the length.
SHORT_WORD = 64


@numba.njit(cache=True)
def _rank_table(rules):
    """Open-addressing table (s0, s1) -> rule index, for merging by rank."""
    size = 1
    while size < 2 * rules.shape[0] + 2:
        size *= 2
    keys = np.full(size, -1, dtype=np.int64)
    vals = np.zeros(size, dtype=np.int64)
    for r in range(rules.shape[0]):
        key = (rules[r, 0] << 32) | rules[r, 1]
        i = ((key * np.int64(-7046029254386353131)) >> 20) & (size - 1)
        while keys[i] != -1 and keys[i] != key:
            i = (i + 1) & (size - 1)
        if keys[i] == -1:  # a repeated rule never fires: keep the first
            keys[i] = key
            vals[i] = r
    return keys, vals


@numba.njit(cache=True, inline="always")
def _rank(keys, vals, a, b):
    key = (a << 32) | b
    mask = keys.size - 1
    i = ((key * np.int64(-7046029254386353131)) >> 20) & mask
    while True:
        k = keys[i]
        if k == key:
            return vals[i]
        if k == -1:
            return -1
        i = (i + 1) & mask


@numba.njit(cache=True)
def _merge_short_words(buf, offsets, keys, vals, out, out_len):
    """Encode each word of at most SHORT_WORD bytes by merging its lowest-rank adjacent pair,
    leftmost first, until none is left: the same result as applying the rules in order, left to
    right (no merge creates a pair of a lower rank). Longer words get out_len -1."""
    w = np.empty(SHORT_WORD, dtype=np.int64)
    for u in range(offsets.size - 1):
        length = offsets[u + 1] - offsets[u]
        if length > SHORT_WORD:
            out_len[u] = -1
            continue
        for k in range(length):
            w[k] = buf[offsets[u] + k]
        while length > 1:
            best = -1
            at = -1
            for p in range(length - 1):
                r = _rank(keys, vals, w[p], w[p + 1])
                if r >= 0 and (best < 0 or r < best):
                    best = r
                    at = p
            if best < 0:
                break
            w[at] = 256 + best
            for p in range(at + 1, length - 1):
                w[p] = w[p + 1]
            length -= 1
        for k in range(length):
            out[offsets[u] + k] = w[k]
        out_len[u] = length


class Tokenizer:
    """A learned dictionary used as a tokenizer: rules (R x 2) plus the pre-tokenizer it was
    trained with, and HF's numbering where it was imported from HF (``hf``): then ``encode``
    and ``decode`` speak HF's ids, while ``symbols`` stays the dictionary's own string."""

    def __init__(self, rules, pretokenizer: str = "none", hf=None):
        self.rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        symbol_lengths(self.rules)  # validates: every rule refers to earlier symbols
        self.pretokenizer = check_name(pretokenizer)
        self.hf = hf

    @classmethod
    def from_rules_file(cls, data: bytes) -> "Tokenizer":
        from ..format.rulesfile import load_rules
        from .hf import HFVocab

        rules, meta = load_rules(data)
        config = meta.get("config", {})
        pre = config.get("pretokenizer", {}) if isinstance(config, dict) else None
        if not isinstance(pre, dict) or not isinstance(pre.get("name", "none"), str):
            raise FormatError("rules file: corrupt metadata ('config' must name a pre-tokenizer as config.pretokenizer.name)")
        pre = pre.get("name", "none")
        hf = HFVocab.from_meta(meta["hf"], BYTE_SYMBOLS + len(rules)) if "hf" in meta else None
        return cls(rules, pre, hf)

    @property
    def vocab_size(self) -> int:
        return self.hf.size if self.hf is not None else BYTE_SYMBOLS + len(self.rules)

    def _rewriter(self, data: np.ndarray, breaks):
        from ..engine.linkedstring import LinkedString

        string = LinkedString()
        string.load(data, breaks)
        return string

    def _ranks(self):
        if not hasattr(self, "_rank_cache"):
            self._rank_cache = _rank_table(self.rules)
        return self._rank_cache

    def _replay(self, arr: np.ndarray) -> np.ndarray:
        rewriter = self._rewriter(arr, None)
        rewriter.replay(self.rules)
        return rewriter.symbols().astype(np.int64)

    def _encode_words(self, arr: np.ndarray, breaks) -> np.ndarray:
        """The rules applied to ``arr`` within the words that ``breaks`` delimits (None: one word)."""
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if breaks is None:
            return self._replay(arr)
        words = DistinctWords(arr, breaks)
        buf, offsets = words.buf, words.offsets
        symbols = np.empty(buf.size, dtype=np.int64)  # word u's symbols start at offsets[u]
        seg_len = np.empty(offsets.size - 1, dtype=np.int64)
        _merge_short_words(buf, offsets, *self._ranks(), symbols, seg_len)
        for u in np.flatnonzero(seg_len < 0):  # long words: replay with the linked string
            word = self._replay(buf[offsets[u] : offsets[u + 1]])
            symbols[offsets[u] : offsets[u] + word.size] = word
            seg_len[u] = word.size
        return words.assemble(symbols, offsets[:-1], seg_len)

    def symbols(self, data) -> np.ndarray:
        """The dictionary's symbols for ``data`` (int64): what training gives on the same text,
        and what an archive codes."""
        arr = as_symbols(data)
        return self._encode_words(arr, pretoken_breaks(arr, self.pretokenizer))

    def encode(self, data) -> np.ndarray:
        """Token ids of ``data`` (int64): our symbols, or HF's ids for an imported tokenizer."""
        if self.hf is None:
            return self.symbols(data)
        texts, special, where = self.hf.segments(bytes(as_symbols(data)))
        buf = np.frombuffer(b"".join(texts), dtype=np.uint8)
        breaks = np.zeros(buf.size, dtype=np.bool_)
        ends = np.cumsum([len(t) for t in texts], dtype=np.int64)
        for text, end in zip(texts, ends.tolist()):  # each segment pre-tokenized on its own, as HF does
            inner = pretoken_breaks(np.frombuffer(text, dtype=np.uint8), self.pretokenizer)
            if inner is not None:
                breaks[end - len(text) : end] = inner
            breaks[end - 1] = True
        symbols = self._encode_words(buf, breaks)
        ids = self.hf.ids[symbols]
        if (ids < 0).any():
            at = int(np.argmax(ids < 0))
            raise ChunkpressError(f"byte 0x{int(symbols[at]):02x} has no id in this HF vocabulary "
                                  "(HF tokenizers would drop it)")
        # an added token goes after the symbols of the text segments before it
        seg_symbols = np.searchsorted(np.cumsum(symbol_lengths(self.rules)[symbols]), ends, side="right")
        before = np.concatenate([[0], seg_symbols])[where] if special else []
        return np.insert(ids, before, special).astype(np.int64)

    def decode(self, ids, *, max_memory: int | None = None) -> bytes:
        """The bytes of ``ids``; ``max_memory``: this call's bound in bytes (FormatError before
        allocating past it; None: the default, see :mod:`chunkpress.format.limits`)."""
        ids = np.asarray(ids, dtype=np.int64)
        with bounded_memory(max_memory):
            if self.hf is not None:
                return self.hf.decode(self.rules, ids)
            if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
                raise ChunkpressError(f"symbol ids must lie in [0, {self.vocab_size}); got {ids.min()}..{ids.max()}")
            return expand(self.rules, ids)

    def code_length_curve(self, data) -> np.ndarray:
        """Held-out code length of ``data`` under the first r rules, for r = 0 .. R: a table with
        m, N and the five parts (counts and string from ``data``'s own counts; the rules charged
        once, as in training)."""
        arr = as_symbols(data)
        rewriter = self._rewriter(arr, pretoken_breaks(arr, self.pretokenizer))
        n_before, sums = rewriter.replay(self.rules, record=True)
        rows = np.zeros(len(n_before), dtype=[("m", np.int64), ("total_bits", np.int64), *[(p, np.int64) for p in PART_NAMES], ("N", np.int64)])
        parts = np.zeros(5, dtype=np.int64)
        for i in range(len(n_before)):
            m = BYTE_SYMBOLS + i
            parts_from_sum(m, int(n_before[i]), float(sums[i]), parts)
            rows[i] = (m, int(parts.sum()), *parts.tolist(), int(n_before[i]))
        return rows
