"""Export a dictionary to the HF ``tokenizers`` JSON format, and import one from it.

A dictionary cut by its merges exports as a byte-level BPE
whose merges are our rules in order, so HF's segmentation equals ``chunkpress encode``: HF
applies merges by rank, leftmost first, within each pre-token, and since no merge can create a
pair of a lower rank, that is the same as applying the rules one after the other, left to right.

An import keeps what HF numbers and matches on its own (:class:`HFVocab`, saved in the rules
file): HF's id of every token (HF numbers the byte tokens in the order of its alphabet, not by
byte value), the added tokens (``<|endoftext|>``: matched whole in the raw text before
pre-tokenizing, never split into bytes) and ByteLevel's ``add_prefix_space``. So ``encode`` of an
imported tokenizer gives HF's ids (``encode(text, add_special_tokens=False)``: post-processor
templates are not applied) and ``decode`` gives HF's ``decode(ids, skip_special_tokens=False)``.
What would tokenize differently is refused with a one-line error: a normalizer, BPE dropout,
subword prefixes or suffixes, ``ignore_merges``, added tokens that strip spaces or match single
words only, and pre-tokenizers other than those below.

Pre-tokenizers: ``gpt2`` -> ByteLevel with its regex (our splitter gives the same pre-tokens,
checked on all the corpora), ``none`` -> ByteLevel without regex (the whole text is one word),
``whitespace`` -> Split on white-space runs, then ByteLevel.
``tokenizers`` is only needed to *use* the file, not to write or read it.
"""

from __future__ import annotations

import functools
import json
import re

import attrs
import numpy as np

from ..contract import BYTE_SYMBOLS, NO_NORMALIZER, NO_PRETOKENIZER
from ..errors import ChunkpressError, FormatError
from ..format.expand import expand, expand_with_extras, symbol_lengths
from ..format.limits import check_allocation
from .hftemplate import pair_template_of, template_of
from .pretokenizers import built, names, pretokenizer, registered

#: how much less likely than the least likely token a byte that no token covers is, in a
#: vocabulary read or learned with scores (sentencepiece's penalty for an unknown character)
UNKNOWN_BELOW = 10.0
#: HF ids are u32; ours must stay below this to be written as u32 id files
MAX_HF_ID = (1 << 31) - 1
_WHITESPACE_SPLIT = {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Isolated", "invert": False}


def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters (a fresh dict each call)."""
    return dict(_byte_chars())


@functools.cache
def _byte_chars() -> tuple[tuple[int, str], ...]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    kept = set(printable)
    others = [b for b in range(256) if b not in kept]
    return (*((b, chr(b)) for b in printable), *((b, chr(256 + n)) for n, b in enumerate(others)))


#: HFVocab's flags and bounds, each written to a rules file only where set
_FLAGS = ("prefix_always", "longest_in_bytes", "space_mark", "leading_spaces_dropped", "unknown_words", "cleanup")
_BOUNDS = ("longest_word", "fused_id")
#: what HF's WordPiece decoder's cleanup replaces in each token, a space put before it; a space
#: is only ever at a token's start, so in the text these are the same
_CLEANUP = ((b" .", b"."), (b" ?", b"?"), (b" !", b"!"), (b" ,", b","))


@functools.lru_cache(maxsize=16)
def _added_pattern(special: tuple) -> re.Pattern:
    """The added tokens' contents, longest first at each place, as HF finds them (made once)."""
    contents = sorted({c.encode() for c, _ in special}, key=len, reverse=True)
    return re.compile(b"|".join(re.escape(c) for c in contents))


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@attrs.frozen(kw_only=True, eq=False)
class HFVocab:
    """HF's view of an imported dictionary: ``ids[s]`` is HF's id of our symbol s (-1 where HF's
    vocabulary lacks a byte, or where a symbol only spells a longer token of a vocabulary learned
    top-down), ``special`` the added tokens as (content, id), matched whole
    (longest first) in the raw text, and ``add_prefix_space``: ByteLevel puts a space before
    every text segment that does not start with one."""

    ids: np.ndarray
    special: tuple[tuple[str, int], ...] = ()
    add_prefix_space: bool = False
    #: sentencepiece's dummy prefix: ``decode`` takes a space off the first token, and with
    #: ``add_prefix_space`` the space goes before every text, even one that starts with a space
    #: (without it, the normalizer puts it there)
    prefix_always: bool = False
    #: HF's WordPiece ``max_input_chars_per_word``: a longer pre-token is HF's unknown token,
    #: which no id of ours stands for, so such a text is refused (None: no bound)
    longest_word: int | None = None
    #: whether HF's pre-tokens are spelled a character per byte (ByteLevel), so that
    #: :attr:`longest_word` counts bytes, not UTF-8 characters
    longest_in_bytes: bool = False
    #: whether a ``▁`` in the text is a space, as sentencepiece and HF's Metaspace make it one
    #: before their model sees the text
    space_mark: bool = False
    #: HF's Unigram ``unk_id``: HF fuses a run of tokens with this id into one, which no ids of
    #: ours do, so such a text is refused (None: no unknown piece)
    fused_id: int | None = None
    #: sentencepiece's unknown piece, (id, piece, the text it decodes to), in a model without
    #: byte fallback: a run of bytes that no token covers is one token with this id (None:
    #: every byte has an id, so every text comes back)
    unknown: tuple[int, str, str] | None = attrs.field(default=None, converter=lambda v: None if v is None else tuple(v))
    #: with :attr:`prefix_always`: ``decode`` takes the space off every token until one gives
    #: text, not off the first alone (sentencepiece's decoding where extra white space is removed)
    leading_spaces_dropped: bool = False
    #: with :attr:`unknown`: a word that any of its bytes has no id for, or longer than
    #: :attr:`longest_word` characters, is one unknown token (WordPiece's [UNK] for the word)
    unknown_words: bool = False
    #: HF's post-processor: the added tokens, (content, id), put before and after a text when
    #: ``encode`` adds special tokens (HF's default), as BERT's [CLS] ... [SEP]
    template: tuple = ((), ())
    #: its template for a pair of texts: (kind, content, id, type id) items, kind ``A`` and
    #: ``B`` the texts, ``T`` an added token (:mod:`chunkpress.text.hftemplate`); empty for none
    pair_template: tuple = ()
    #: HF's WordPiece decoder: tokens joined by spaces (an added token too), and a space
    #: before . ? ! , taken away (its ``cleanup``)
    cleanup: bool = False
    #: how ``Encoding.tokens`` spells a token, as its source's vocabulary does: ``bytes``
    #: (GPT-2's byte characters, ByteLevel's), ``metaspace`` (a space as ``▁``), or
    #: ``wordpiece`` (a word's first piece without its space, the rest after ``##``)
    spelled_as: str = attrs.field(default="bytes", validator=attrs.validators.in_(("bytes", "metaspace", "wordpiece")))

    def __attrs_post_init__(self):
        model = self.ids[self.ids >= 0].tolist()
        added = [i for _, i in self.special]
        if self.unknown is not None and self.unknown[0] not in added:  # WordPiece's [UNK] is an added token too
            added.append(self.unknown[0])
        used = model + added
        # an added token may have the id of the model's token of the same text (HF gives "Alice"
        # that id when BPE learned it too): :meth:`check_spellings` checks the text
        if len(set(model)) != len(model) or len(set(added)) != len(added):
            raise FormatError("HF vocabulary: two tokens share an id")
        if any(i < 0 or i > MAX_HF_ID for i in used) or (self.ids < -1).any():
            raise FormatError(f"HF vocabulary: ids must lie in [0, {MAX_HF_ID}]")
        if any(not content for content, _ in self.special):
            raise FormatError("HF vocabulary: an added token is empty")

    def check_spellings(self, rules: np.ndarray) -> None:
        """FormatError unless every added token that shares its id with a token of the model
        spells the same bytes (so either decodes the id alike)."""
        by_id = {int(i): s for s, i in enumerate(self.ids.tolist()) if i >= 0}
        for content, i in self.special:
            if i in by_id and expand(rules, [by_id[i]]) != content.encode():
                raise FormatError(f"HF vocabulary: added token {content!r} has id {i}, which the model gives to "
                                  f"{expand(rules, [by_id[i]])!r}")

    @property
    def size(self) -> int:
        """One past the largest id (HF's ``get_vocab_size(with_added_tokens=True)`` when the ids
        are dense, as a trained tokenizer's are)."""
        return 1 + max([int(self.ids.max(initial=-1))] + [i for _, i in self.special] +
                       ([self.unknown[0]] if self.unknown is not None else []))

    def to_meta(self) -> dict:
        out = {"ids": self.ids.tolist(), "special": [list(s) for s in self.special],
               "add_prefix_space": self.add_prefix_space}
        # each written only where set: other files stay as before
        for key in (*_FLAGS, *_BOUNDS):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.unknown is not None:
            out["unknown"] = list(self.unknown)
        if self.template != ((), ()):
            out["template"] = [[list(t) for t in side] for side in self.template]
        if self.spelled_as != "bytes":
            out["spelled_as"] = self.spelled_as
        if self.pair_template:
            out["pair_template"] = [list(item) for item in self.pair_template]
        return out

    @classmethod
    def from_meta(cls, meta, n_symbols: int) -> HFVocab:
        """Read back ``to_meta``'s dict, checking every type (the rules file is untrusted)."""
        def pair(t) -> bool:
            return isinstance(t, list) and len(t) == 2 and isinstance(t[0], str) and is_int(t[1])

        ok = isinstance(meta, dict) and isinstance(meta.get("ids"), list) and isinstance(meta.get("special"), list)
        ok = ok and isinstance(meta.get("add_prefix_space"), bool) and len(meta["ids"]) == n_symbols
        ok = ok and all(is_int(i) and -1 <= i <= MAX_HF_ID for i in meta["ids"]) and all(map(pair, meta["special"]))
        ok = ok and all(isinstance(meta.get(key, False), bool) for key in _FLAGS)
        ok = ok and all(is_int(meta.get(key, 0)) and 0 <= meta.get(key, 0) <= MAX_HF_ID for key in _BOUNDS)
        unknown = meta.get("unknown", [0, "", ""]) if isinstance(meta, dict) else None
        ok = ok and isinstance(unknown, list) and len(unknown) == 3 and is_int(unknown[0]) and \
            0 <= unknown[0] <= MAX_HF_ID and all(isinstance(t, str) for t in unknown[1:])
        template = meta.get("template", [[], []]) if isinstance(meta, dict) else None
        ok = ok and isinstance(template, list) and len(template) == 2 and \
            all(isinstance(side, list) and all(map(pair, side)) for side in template)
        ok = ok and meta.get("spelled_as", "bytes") in ("bytes", "metaspace", "wordpiece")
        paired = meta.get("pair_template", []) if isinstance(meta, dict) else None
        ok = ok and isinstance(paired, list) and all(
            isinstance(t, list) and len(t) == 4 and t[0] in ("A", "B", "T") and isinstance(t[1], str)
            and is_int(t[2]) and is_int(t[3]) for t in paired)
        if not ok or template is None:
            raise FormatError(f"rules file: corrupt HF vocabulary (expected 'ids' for all {n_symbols} symbols, "
                              "'special' as [content, id] pairs and a boolean 'add_prefix_space')")
        return cls(ids=np.array(meta["ids"], dtype=np.int64), special=tuple((c, i) for c, i in meta["special"]),
                   add_prefix_space=meta["add_prefix_space"], unknown=meta.get("unknown"),
                   template=tuple(tuple((c, i) for c, i in side) for side in template),
                   spelled_as=meta.get("spelled_as", "bytes"), pair_template=tuple(map(tuple, paired or [])),
                   **{key: meta[key] for key in (*_FLAGS, *_BOUNDS) if key in meta})

    def added_spans(self, data: bytes) -> list[tuple[int, int]]:
        """Where the added tokens are in ``data``, longest first at each place, as HF finds them."""
        return [m.span() for m in _added_pattern(self.special).finditer(data)] if self.special else []

    def segments(self, data: bytes) -> tuple[list[bytes], list[int], list[int], list[bool]]:
        """The text between added tokens, as ByteLevel sees it (with the prefix space), the
        added tokens' ids, for each how many text segments come before it, and for each text
        segment whether a prefix space was put before it."""
        if not self.special:  # the text whole (most texts: no call below per text)
            if not data:
                return [], [], [], []
            put = self.add_prefix_space and (self.prefix_always or not data.startswith(b" "))
            return [b" " + data if put else data], [], [], [put]
        prefixed: list[bool] = []
        texts: list[bytes] = []
        where: list[int] = []
        found: list[int] = []
        cuts = [(0, 0, -1)]
        if self.special:
            by_content = {c.encode(): i for c, i in self.special}
            cuts += [(m.start(), m.end(), by_content[m.group()]) for m in _added_pattern(self.special).finditer(data)]
        cuts.append((len(data), len(data), -1))
        for (_, start, special), (end, _, _) in zip(cuts, cuts[1:], strict=False):
            if special >= 0:
                where.append(len(texts))
                found.append(special)
            if end > start:
                text = data[start:end]
                prefixed.append(self.add_prefix_space and (self.prefix_always or not text.startswith(b" ")))
                texts.append(b" " + text if prefixed[-1] else text)
        return texts, found, where, prefixed

    def check_as_hf(self, buf: np.ndarray, breaks: np.ndarray | None, ids: np.ndarray) -> None:
        """ChunkpressError where HF would not give ``ids`` for ``buf`` cut at ``breaks``: a
        pre-token of more than :attr:`longest_word` characters (HF: one unknown token), or
        two :attr:`fused_id` tokens in a row (HF: one token)."""
        if self.fused_id is not None and ids.size > 1:
            twice = np.flatnonzero((ids[1:] == self.fused_id) & (ids[:-1] == self.fused_id))
            if twice.size:
                raise ChunkpressError(f"tokens {int(twice[0])} and {int(twice[0]) + 1} both have the unknown "
                                      f"piece's id {self.fused_id}: HF's Unigram fuses them into one token, which "
                                      "loses bytes, so this text is not encoded")
        if self.longest_word is None or buf.size <= self.longest_word or self.unknown_words:
            return  # (a longer word is the unknown token, :meth:`fuse_unknown_words`)
        starts = np.arange(1, buf.size + 1) if self.longest_in_bytes else \
            np.cumsum((buf & 0xC0) != 0x80, dtype=np.int64)  # characters up to each byte
        ends = np.flatnonzero(breaks) if breaks is not None else np.zeros(0, dtype=np.int64)
        ends = np.union1d(ends, [buf.size - 1])
        chars = np.diff(np.concatenate([[0], starts[ends]]))
        if chars.max() > self.longest_word:
            raise ChunkpressError(f"a word of {int(chars.max()):,} characters: HF's WordPiece gives a word longer "
                                  f"than max_input_chars_per_word = {self.longest_word} its unknown token, which "
                                  "loses bytes, so this text is not encoded")

    def fuse_unknown(self, ids: np.ndarray, symbols: np.ndarray, lengths: np.ndarray, ends: np.ndarray):
        """``ids``, ``symbols``, ``lengths`` and the segments' ``ends`` (symbols before each) with
        every run of tokens that have no id, within one segment, made one :attr:`unknown` token
        (symbol -1) of their bytes, as sentencepiece gives one ``<unk>`` for a run of unknown
        characters; ChunkpressError naming the byte where the model has no unknown piece."""
        missing = ids < 0
        if self.unknown is None:
            at = int(np.argmax(missing))
            raise ChunkpressError(f"byte 0x{int(symbols[at]):02x} has no id in this HF vocabulary "
                                  "(HF tokenizers would drop it)")
        going_on = missing.copy()
        going_on[1:] &= missing[:-1]
        going_on[0] = False
        going_on[ends[(ends > 0) & (ends < ids.size)]] = False  # no run goes on into the next segment
        heads = np.flatnonzero(~going_on)
        kept = np.cumsum(~going_on)
        fused = np.where(missing[heads], self.unknown[0], ids[heads])
        return (fused, np.where(missing[heads], -1, symbols[heads]), np.add.reduceat(lengths, heads),
                np.where(ends > 0, kept[np.maximum(ends - 1, 0)], 0))

    def fuse_unknown_words(self, ids: np.ndarray, symbols: np.ndarray, lengths: np.ndarray, ends: np.ndarray,
                           buf: np.ndarray, breaks: np.ndarray | None):
        """As :meth:`fuse_unknown`, by words (:attr:`unknown_words`): each word of ``buf`` cut at
        ``breaks`` that holds a token without id, or more than :attr:`longest_word` characters
        (its leading space aside), is one unknown token, as WordPiece gives [UNK] for it."""
        starts = np.concatenate([[0], np.flatnonzero(breaks) + 1]) if breaks is not None else np.zeros(1, np.int64)
        starts = starts[starts < buf.size]
        word = np.searchsorted(starts, np.cumsum(lengths) - lengths, side="right") - 1
        bad = np.zeros(starts.size, dtype=bool)
        bad[word[ids < 0]] = True
        if self.longest_word is not None and starts.size:
            leads = np.add.reduceat(((buf & 0xC0) != 0x80).astype(np.int64), starts) - (buf[starts] == 32)
            bad |= leads > self.longest_word
        if not bad.any():
            return ids, symbols, lengths, ends
        going_on = bad[word].copy()
        going_on[1:] &= word[1:] == word[:-1]
        going_on[0] = False
        heads = np.flatnonzero(~going_on)
        kept = np.cumsum(~going_on)
        unknown = bad[word[heads]]
        unknown_id = self.unknown[0] if self.unknown is not None else -1
        return (np.where(unknown, unknown_id, ids[heads]), np.where(unknown, -1, symbols[heads]),
                np.add.reduceat(lengths, heads), np.where(ends > 0, kept[np.maximum(ends - 1, 0)], 0))

    def symbols_of(self, ids: np.ndarray) -> np.ndarray:
        """Our symbol for each HF id in ``ids``: -1 for none, -2 for an added token. A binary
        search over the ids in use, so the work and memory follow the vocabulary, not its
        largest id (a crafted id of 2^28 would otherwise size a table of 2 GB)."""
        mapped = np.flatnonzero(self.ids >= 0)
        keys = np.concatenate([self.ids[mapped], np.array([i for _, i in self.special], dtype=np.int64)])
        values = np.concatenate([mapped, np.full(len(self.special), -2, dtype=np.int64)])
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        if keys.size == 0:
            return np.full(ids.shape, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(keys, ids), keys.size - 1)
        return np.where(keys[at] == ids, values[at], -1)

    def decode(self, rules: np.ndarray, ids: np.ndarray) -> bytes:
        """HF's ``decode(ids, skip_special_tokens=False)``: the bytes of every token, added tokens
        as their text."""
        if ids.size and (ids.min() < 0 or ids.max() >= self.size):
            raise FormatError(f"ids must lie in [0, {self.size}); got {ids.min()}..{ids.max()}")
        symbols = self.symbols_of(ids)
        unknown = ids == self.unknown[0] if self.unknown is not None else np.zeros(ids.shape, dtype=bool)
        if (symbols[~unknown] == -1).any():
            missing = (symbols == -1) & ~unknown
            raise FormatError(f"id {int(ids[np.argmax(missing)])} is in no token of this vocabulary")
        # WordPiece's decoder puts a space before every token that does not continue a word
        extras = [(" " if self.cleanup else "").encode() + c.encode() for c, _ in self.special]
        if self.unknown is not None:  # the unknown piece stands as the last extra
            symbols[unknown] = -1 - len(extras)
            extras.append(self.unknown[2].encode())
        added = symbols == -2
        if added.any():  # added token k stands as -1 - k
            order = np.argsort([i for _, i in self.special], kind="stable")
            added_ids = np.array([self.special[k][1] for k in order], dtype=np.int64)
            symbols[added] = -1 - order[np.searchsorted(added_ids, ids[added])]
        data = expand_with_extras(rules, symbols, extras)
        if not self.prefix_always:
            return data
        lead = 0  # tokens of one space each, all dropped
        if self.leading_spaces_dropped:
            others = np.flatnonzero(symbols != ord(" "))
            lead = int(others[0]) if others.size else symbols.size
        if lead < symbols.size and (symbols[lead] >= 0 or self.cleanup) and data[lead:lead + 1] == b" ":
            lead += 1  # and the space that starts the next token of the model
        data = data[lead:]
        for dirty, clean in _CLEANUP if self.cleanup else ():
            data = data.replace(dirty, clean)
        return data


def _split(pattern: str) -> dict:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


def byte_level_pre_tokenizer(name: str, add_prefix_space: bool = False, units: str | None = None) -> dict:
    """HF's pre-tokenizer for ours (``units``: a boundary policy's instead): GPT-2's is
    ByteLevel's own regex; one with an HF pattern (tiktoken's) is HF's Split by it; the others
    split by what ``_WHITESPACE_SPLIT`` or nothing splits, then ByteLevel."""
    pattern = units if units is not None else pretokenizer(name).hf_pattern
    byte_level = {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": True,
                  "use_regex": name == "gpt2" and units is None}
    if pattern is not None:
        return {"type": "Sequence", "pretokenizers": [_split(pattern), byte_level]}
    if name == "whitespace":
        return {"type": "Sequence", "pretokenizers": [_WHITESPACE_SPLIT, byte_level]}
    return byte_level


def pre_tokenizer_name(pre) -> tuple[str, bool]:
    """(our pre-tokenizer, add_prefix_space) for an HF pre_tokenizer, or a FormatError."""
    if isinstance(pre, dict) and pre.get("type") == "Sequence":
        steps = pre.get("pretokenizers")
        if (isinstance(steps, list) and len(steps) == 2 and isinstance(steps[1], dict)
                and steps[1].get("type") == "ByteLevel" and not steps[1].get("use_regex", True)):
            prefix = bool(steps[1].get("add_prefix_space", False))
            if steps[0] == _WHITESPACE_SPLIT:
                return "whitespace", prefix
            by_pattern = {pretokenizer(n).hf_pattern: n for n in names() if pretokenizer(n).hf_pattern is not None}
            found = by_pattern.get(steps[0].get("pattern", {}).get("Regex")) if isinstance(steps[0], dict) \
                and isinstance(steps[0].get("pattern"), dict) else None
            if found is not None and steps[0] == _split(steps[0]["pattern"]["Regex"]):
                return found, prefix
    elif isinstance(pre, dict) and pre.get("type") == "ByteLevel":
        return ("gpt2" if pre.get("use_regex", True) else NO_PRETOKENIZER), bool(pre.get("add_prefix_space", False))
    kind = pre.get("type") if isinstance(pre, dict) else pre
    raise FormatError(f"pre-tokenizer {str(kind)[:40]!r} has no chunkpress equivalent; expected ByteLevel "
                      "(with or without its regex), or a Split on \\s+ or on a registered pre-tokenizer's pattern "
                      "(tiktoken's) then ByteLevel")


def to_hf_json(rules: np.ndarray, pretokenizer: str = NO_PRETOKENIZER, vocab: HFVocab | None = None,
               units: str | None = None, dropout: float | None = None, normalizer: dict | None = None) -> str:
    """A tokenizer.json for ``rules``: ids are our symbol ids, or HF's own where the dictionary
    was imported (``vocab``), with its added tokens and prefix space; ``units``: a regex that
    cuts text into a boundary policy's units (a boundary policy's ``hf_units``), which replaces
    the pre-tokenizer's (HF applies every merge by rank within a unit: a policy's contract is
    that no rule learned before a boundary opens matches across it)."""
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    # every token's string is held about four times (token, vocabulary, merges, JSON), at up to
    # 4 bytes a character: a few doubling rules must not grow without bound
    spelled = float(symbol_lengths(rules).astype(np.float64).sum())  # no int64 wrap on crafted lengths
    check_allocation(f"an HF vocabulary spelling {spelled:,.0f} bytes", int(min(16 * spelled, 2.0**62)))
    table = byte_to_unicode()
    tokens = [table[b] for b in range(BYTE_SYMBOLS)]
    seen = {t: i for i, t in enumerate(tokens)}
    for r, (a, b) in enumerate(rules.tolist()):
        token = tokens[a] + tokens[b]
        if token in seen:
            raise FormatError(
                f"rules {seen[token] - BYTE_SYMBOLS} and {r} both stand for {expand(rules, [BYTE_SYMBOLS + r])!r}: "
                "an HF BPE vocabulary needs distinct strings"
            )
        seen[token] = BYTE_SYMBOLS + r
        tokens.append(token)
    ids = vocab.ids.tolist() if vocab is not None else range(len(tokens))
    special = vocab.special if vocab is not None else ()
    added = added_tokens_json(special)
    model = {
        "type": "BPE", "dropout": dropout, "unk_token": None, "continuing_subword_prefix": None,
        "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
        "vocab": {**{c: i for c, i in special}, **{t: i for t, i in zip(tokens, ids, strict=False) if i >= 0}},
        "merges": [f"{tokens[a]} {tokens[b]}" for a, b in rules.tolist()],
    }
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": normalizer,
        "pre_tokenizer": byte_level_pre_tokenizer(pretokenizer, vocab is not None and vocab.add_prefix_space, units),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": model,
    }
    return json.dumps(doc, ensure_ascii=False)


def segmenter_of(hf_model: str) -> str:
    """The registered segmenter that cuts text as HF's model ``hf_model`` does (its ``hf_model``)."""
    for name in registered("segmenter"):
        if built("segmenter", name).hf_model == hf_model:
            return name
    raise FormatError(f"no installed segmenter cuts text as HF's {hf_model} model does")


def normalizer_name(normalizer) -> str:
    """The registered normalizer that rewrites text as HF's ``normalizer`` does (``none`` for
    none); FormatError for one that none does."""
    if normalizer is None:
        return NO_NORMALIZER
    for name in registered("normalizer"):
        if built("normalizer", name).hf_normalizer == normalizer:
            return name
    kind = normalizer.get("type") if isinstance(normalizer, dict) else normalizer
    raise FormatError(f"normalizer {str(kind)[:40]!r} is not supported: chunkpress reads "
                      f"{', '.join(n for n in registered('normalizer') if n != NO_NORMALIZER)} and none")


def _check_tokenizes_as_we_do(doc: dict, model: dict) -> None:
    """Refuse every setting under which HF would give other ids than our replay of its merges."""
    if model.get("type") != "BPE":
        raise FormatError(f"only BPE models can be imported, not {model.get('type')!r}")
    normalizer_name(doc.get("normalizer"))
    for key in ("dropout", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise FormatError(f"BPE {key} = {model[key]!r} is not supported")
    if model.get("ignore_merges"):
        raise FormatError("BPE ignore_merges = true is not supported: chunkpress always applies the merges")


def added_tokens_json(special) -> list[dict]:
    """HF's ``added_tokens`` for ``special`` ((content, id) pairs): each matched whole, as it
    is in the raw text, and a special token (what :func:`added_tokens_of` reads back)."""
    return [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
             "special": True} for c, i in special]


def added_tokens_of(doc: dict) -> tuple[tuple[str, int], ...]:
    added = doc.get("added_tokens") or []
    if not isinstance(added, list):
        raise FormatError("added_tokens is not a list")
    out = []
    for token in added:
        if not (isinstance(token, dict) and isinstance(token.get("content"), str) and token["content"]
                and is_int(token.get("id"))):
            raise FormatError(f"added token {token!r} needs a non-empty 'content' and an integer 'id'")
        for key in ("lstrip", "rstrip", "single_word"):
            if token.get(key):
                raise FormatError(f"added token {token['content']!r}: {key} = true is not supported")
        out.append((token["content"], token["id"]))
    return tuple(out)


def parse_tokenizer_json(text: str) -> tuple[dict, dict]:
    """(the document, its model) of an HF tokenizer.json, checked to be one."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise FormatError("not an HF tokenizer.json: nested too deeply") from None
    except ValueError as exc:
        raise FormatError(f"not an HF tokenizer.json: not JSON ({exc})") from None
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        raise FormatError("not an HF tokenizer.json: no 'model' object")
    kind = model.get("type", "BPE")
    if kind not in ("BPE", "Unigram", "WordPiece"):
        raise FormatError(f"an HF tokenizer.json of a {str(kind)[:40]!r} model: import-hf reads BPE, Unigram and "
                          "WordPiece models")
    model.setdefault("type", "BPE")
    return doc, model


def from_hf_json(text: str) -> tuple[np.ndarray, str, HFVocab]:
    """(rules, pretokenizer, HF's ids and added tokens) from a byte-level BPE tokenizer.json."""
    doc, model = parse_tokenizer_json(text)
    if model["type"] != "BPE":
        raise FormatError(f"a {model['type']} model: read it with searched_from_hf")
    return from_hf_bpe(doc, model)


def from_hf_bpe(doc: dict, model: dict) -> tuple[np.ndarray, str, HFVocab]:
    """:func:`from_hf_json` of a parsed document."""
    merges, vocab = model.get("merges"), model.get("vocab")
    if not (isinstance(vocab, dict) and isinstance(merges, list)):
        raise FormatError("not an HF tokenizer.json with a BPE model: its 'vocab' must be an object and its "
                          "'merges' a list")
    _check_tokenizes_as_we_do(doc, model)
    pre, add_prefix_space = pre_tokenizer_name(doc.get("pre_tokenizer"))
    special = added_tokens_of(doc)
    table = byte_to_unicode()
    symbol = {table[b]: b for b in range(BYTE_SYMBOLS)}
    ids = [vocab.get(table[b], -1) for b in range(BYTE_SYMBOLS)]  # -1: a byte HF's vocabulary lacks
    rules = []
    for i, merge in enumerate(merges):
        pair = merge.split(" ") if isinstance(merge, str) else merge
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise FormatError(f"merge {i} is not two tokens: {merge!r}")
        left, right = pair
        if left not in symbol or right not in symbol:
            raise FormatError(f"merge {i} ({left!r}, {right!r}) uses a token that no earlier merge or byte makes")
        rules.append((symbol[left], symbol[right]))
        symbol.setdefault(left + right, BYTE_SYMBOLS + i)
        if symbol[left + right] != BYTE_SYMBOLS + i:
            raise FormatError(f"merge {i} makes {left + right!r} a second time")
        if left + right not in vocab:
            raise FormatError(f"merge {i} makes {left + right!r}, which the vocabulary lacks")
        ids.append(vocab[left + right])
    # integers that fit (HFVocab checks which ids may be missing, as when a rules file is read)
    if not all(is_int(i) and -1 <= i <= MAX_HF_ID for i in ids):
        raise FormatError(f"vocabulary ids must be integers in [0, {MAX_HF_ID}]")
    hf = HFVocab(ids=np.array(ids, dtype=np.int64), special=special, add_prefix_space=add_prefix_space,
                 template=template_of(doc), pair_template=pair_template_of(doc))
    rules_array = np.array(rules, dtype=np.int64).reshape(-1, 2)
    hf.check_spellings(rules_array)
    return rules_array, pre, hf
