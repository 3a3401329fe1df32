"""Use a learned dictionary on new text: encode to symbol ids, decode back, measure, export.

Encoding applies the rules in order, each by left-to-right replacement, exactly as training did,
so encoding the training text gives back the training's final string. It replays the rules with
the engine's linked string (its merge kernel): the cost is proportional to the sites, not one pass per
rule. With a pre-tokenizer, every distinct pre-token is encoded once (an exact hash table over
its bytes) and the output is assembled by copying.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import numba
import numpy as np

from ..engine.codelength import PART_NAMES, parts_from_sum
from ..engine.linkedstring import LinkedString
from ..errors import ChunkpressError
from ..fileio import read_input, read_rest, write_output
from ..format.expand import expand, symbol_lengths
from ..format.limits import ENCODE_BYTES_PER_BYTE, READ_BYTES_PER_BYTE, bounded_memory, work_limit
from ..format.rulesfile import RulesFile
from ..plugin.base import BYTE_SYMBOLS, as_symbols
from ..version import __version__
from .hf import HFVocab, byte_to_unicode, from_hf_json, to_hf_json
from .pretokenize import check_name, pretoken_breaks
from .unicodeclasses import check_unicode_version, unicode_version
from .wordcounts import DEFAULT_SHARD_SIZE, DistinctWords, shards

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


@attrs.frozen(kw_only=True, eq=False)
class Encoding:
    """One encoded text, as HF's ``Encoding``: ``ids`` (int64 array), ``offsets`` (a (start,
    end) pair of byte offsets into the text per token; an added token spans its own bytes, a
    prefix space that ByteLevel inserted spans none) and ``tokens`` (HF's byte-level spelling of
    each token, added tokens as their text; built on first use)."""

    ids: np.ndarray
    offsets: np.ndarray  # (n, 2) int64
    _spell: Callable[[], list[str]] = attrs.field(repr=False)

    @property
    def tokens(self) -> list[str]:
        return self._spell()

    def __len__(self) -> int:
        return int(self.ids.size)


def _text_bytes(text) -> bytes:
    """str as UTF-8 (what HF tokenizes), bytes-like as it is."""
    return text.encode("utf-8") if isinstance(text, str) else bytes(as_symbols(text))


def _integer_ids(ids) -> np.ndarray:
    """``ids`` as int64, refusing what is not an integer (1.5 is not id 1, True is not id 1)."""
    found = np.asarray(ids)
    if found.size == 0:
        return np.zeros(0, dtype=np.int64)
    if found.dtype.kind not in "iu":
        raise ChunkpressError(f"token ids must be integers, not {found.dtype} values (such as {found.ravel()[0].item()!r})")
    return found.astype(np.int64).ravel()


class Tokenizer:
    """A learned dictionary used as a tokenizer: rules (R x 2) plus the pre-tokenizer it was
    trained with, and HF's numbering where it was imported from HF or trained with added tokens
    (``hf``): then ``encode`` and ``decode`` speak those ids, while ``symbols`` stays the
    dictionary's own string. ``meta``: the rest of its rules file, kept by ``save``."""

    def __init__(self, rules, pretokenizer: str = "none", hf=None, meta: RulesFile | None = None):
        self.rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        symbol_lengths(self.rules)  # validates: every rule refers to earlier symbols
        self.pretokenizer = check_name(pretokenizer)
        self.hf = hf
        self.meta = meta

    @classmethod
    def from_rules_file(cls, data: bytes, *, decoding: bool = False) -> Tokenizer:
        """From a rules file's bytes; FormatError if it is corrupt or its pre-tokenizer ran on
        other Unicode tables than this version's (unless only ``decoding``: ids to bytes)."""
        source = RulesFile.from_bytes(data)
        pre = source.pretokenizer
        if pre != "none" and not decoding:
            check_unicode_version(source.unicode)
        hf = HFVocab.from_meta(source.hf, BYTE_SYMBOLS + len(source.rules)) if source.hf is not None else None
        if hf is not None:
            hf.check_spellings(source.rules)
        return cls(source.rules, pre, hf, meta=source)

    @classmethod
    def from_file(cls, path, *, decoding: bool = False) -> Tokenizer:
        """Load a rules file (written by ``train``, ``import-hf`` or ``save``); errors name it."""
        path = Path(path)
        data = read_input(str(path), work_limit(READ_BYTES_PER_BYTE))  # /dev/zero is refused, not read
        try:
            return cls.from_rules_file(data, decoding=decoding)
        except ChunkpressError as exc:
            raise type(exc)(f"{path}: {exc}") from None

    @classmethod
    def from_hf_json(cls, text: str) -> Tokenizer:
        """From an HF tokenizers ``tokenizer.json`` of a byte-level BPE (its ids, added tokens
        and prefix space kept: ``encode`` then gives HF's ids); FormatError for what would
        tokenize otherwise (see :mod:`chunkpress.text.hf`)."""
        rules, pre, vocab = from_hf_json(text)
        meta = RulesFile.learned(rules, {"pretokenizer": {"name": pre}}, unicode_version(),
                                 imported_from="hf-tokenizers", hf=vocab.to_meta())
        return cls.from_rules_file(meta.to_bytes())  # what a later use would refuse is refused now

    def to_hf_json(self) -> str:
        """This dictionary as an HF tokenizers ``tokenizer.json`` (byte-level BPE) whose
        encoding equals :meth:`encode`'s."""
        return to_hf_json(self.rules, self.pretokenizer, self.hf)

    def to_rules_file(self) -> RulesFile:
        """This tokenizer as a rules file: its rules, pre-tokenizer (and the Unicode version it
        splits by), HF ids and added tokens, and what its source file recorded."""
        kept = self.meta.meta() if self.meta is not None else {"config": {"pretokenizer": {"name": self.pretokenizer}}}
        kept.update(rules=self.rules, hf=self.hf.to_meta() if self.hf is not None else None,
                    unicode=unicode_version() if self.pretokenizer != "none" else None,
                    chunkpress=kept.get("chunkpress") or __version__)
        return RulesFile(**kept)

    def save(self, path) -> None:
        """Write the rules file (replacing one there), atomically: a reader never sees half."""
        write_output(str(path), self.to_rules_file().to_bytes(), force=True)

    @property
    def vocab_size(self) -> int:
        return self.hf.size if self.hf is not None else BYTE_SYMBOLS + len(self.rules)

    def _rewriter(self, data: np.ndarray, breaks):
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
        keys, vals = self._ranks()
        _merge_short_words(buf, offsets, keys, vals, symbols, seg_len)
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

    def encode(self, text) -> Encoding:
        """Encode ``text`` (str, as UTF-8, or bytes): token ids (our symbols, or HF's ids for
        an imported tokenizer or one trained with added tokens), byte offsets and tokens."""
        data = _text_bytes(text)
        if self.hf is None:
            symbols = self.symbols(data)
            lengths = symbol_lengths(self.rules)[symbols]
            return self._encoding(symbols, symbols, lengths)
        texts, special, where, prefixed = self.hf.segments(data)
        buf = np.frombuffer(b"".join(texts), dtype=np.uint8)
        ends = np.cumsum([len(t) for t in texts], dtype=np.int64)
        # each text segment is pre-tokenized on its own, as HF does
        symbols = self._encode_words(buf, pretoken_breaks(buf, self.pretokenizer, pieces=ends))
        ids = self.hf.ids[symbols]
        if (ids < 0).any():
            at = int(np.argmax(ids < 0))
            raise ChunkpressError(f"byte 0x{int(symbols[at]):02x} has no id in this HF vocabulary "
                                  "(HF tokenizers would drop it)")
        lengths = symbol_lengths(self.rules)[symbols]
        # the symbols before each segment's end; a segment's first symbol holds its prefix space
        seg_symbols = np.searchsorted(np.cumsum(lengths), ends, side="right")
        firsts = np.concatenate([[0], seg_symbols[:-1]])
        lengths[firsts[np.array(prefixed, dtype=bool)]] -= 1
        # an added token goes after the symbols of the text segments before it
        before = np.concatenate([[0], seg_symbols])[where] if special else []
        contents = dict((i, len(c.encode())) for c, i in self.hf.special)
        return self._encoding(np.insert(ids, before, special).astype(np.int64),
                              np.insert(symbols, before, -1), np.insert(lengths, before, [contents[i] for i in special]))

    def _encoding(self, ids: np.ndarray, symbols: np.ndarray, lengths: np.ndarray) -> Encoding:
        ends = np.cumsum(lengths, dtype=np.int64)
        offsets = np.stack([ends - lengths, ends], axis=1) if ids.size else np.zeros((0, 2), dtype=np.int64)
        names = dict((i, c) for c, i in self.hf.special) if self.hf is not None else {}

        def spell() -> list[str]:
            table = byte_to_unicode()
            cache: dict = {}
            out = []
            for i, s in zip(ids.tolist(), symbols.tolist(), strict=False):
                if s < 0:
                    out.append(names[i])
                    continue
                if s not in cache:
                    cache[s] = "".join(table[b] for b in expand(self.rules, [s]))
                out.append(cache[s])
            return out

        return Encoding(ids=ids, offsets=offsets, spell=spell)

    def ids_of_stream(self, stream) -> Iterator[np.ndarray]:
        """The ids of everything ``stream`` (a binary file object) holds, as :meth:`encode`
        gives them for the whole, a piece at a time: pieces are cut where the pre-tokenizer
        breaks whatever surrounds them (:func:`~chunkpress.text.wordcounts.shards`), so memory
        stays that of a piece. Without a pre-tokenizer, or with HF's prefix space, the text is
        one piece. A piece longer than the memory limit allows is refused (InputError)."""
        limit = work_limit(ENCODE_BYTES_PER_BYTE)
        if self.pretokenizer == "none" or (self.hf is not None and self.hf.add_prefix_space):
            yield self.encode(read_rest(stream, "", b"", limit)).ids
            return
        special = tuple(content.encode() for content, _ in self.hf.special) if self.hf is not None else ()
        for piece in shards(stream, min(DEFAULT_SHARD_SIZE, limit), special, limit):
            yield self.encode(piece).ids

    def encode_batch(self, texts) -> list[Encoding]:
        """``encode`` of each text."""
        return [self.encode(text) for text in texts]

    def decode_bytes(self, ids, *, max_memory: int | None = None) -> bytes:
        """The bytes of ``ids``: see :meth:`decode`."""
        return self.decode(ids, max_memory=max_memory)

    def decode(self, ids, *, max_memory: int | None = None) -> bytes:
        """The bytes of ``ids`` (``.decode("utf-8")`` for text: a byte-level token may hold part
        of a character); ``max_memory``: this call's bound in bytes (FormatError before
        allocating past it; None: the default, see :mod:`chunkpress.format.limits`)."""
        ids = _integer_ids(ids)
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
        columns = [("m", np.int64), ("total_bits", np.int64), *[(p, np.int64) for p in PART_NAMES], ("N", np.int64)]
        rows = np.zeros(len(n_before), dtype=columns)
        parts = np.zeros(5, dtype=np.int64)
        for i in range(len(n_before)):
            m = BYTE_SYMBOLS + i
            parts_from_sum(m, int(n_before[i]), float(sums[i]), parts)
            rows[i] = (m, int(parts.sum()), *parts.tolist(), int(n_before[i]))
        return rows
