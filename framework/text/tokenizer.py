"""Use a learned dictionary on new text, as HF ``tokenizers`` users hold one: encode to ids,
decode back to str, batches, the vocabulary; plus measures and export.

Encoding parses exactly as training did (:mod:`.encoder`: the rules in order, with the deletions
and boundary openings of training), so encoding the training text gives back the training's
final string. With a pre-tokenizer, every distinct unit (pre-token, or run of pre-tokens a
boundary policy joins) is encoded once (an exact hash table over its bytes) and the output is
assembled by copying.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from ..contract import (
    BYTE_SYMBOLS,
    NO_NORMALIZER,
    NO_PRETOKENIZER,
    OPENS_NOTHING,
    REPLAYS_MERGES,
    BoundaryPolicy,
    Segmenter,
    as_symbols,
)
from ..engine.events import deletion_steps
from ..engine.interruptible import call_interruptibly
from ..errors import ChunkpressError, ConfigError, FormatError, InputError, PluginError
from ..fileio import read_input, read_rest, write_output
from ..format.expand import expand, symbol_lengths
from ..format.limits import ENCODE_BYTES_PER_BYTE, READ_BYTES_PER_BYTE, bounded_memory, work_limit
from ..format.rulesfile import RulesFile
from ..plugin.registry import build_params, default_registry
from ..version import __version__
from . import imports
from .characters import classes_kept
from .dropout import Dropout
from .encoder import NEVER, Encoder
from .encoding import Encoding, char_offsets, spaces_for_marks
from .hf import HFVocab, byte_to_unicode, to_hf_json
from .hfbert import to_hf_bert
from .hfencodings import hf_encodings, normalized_around_added, speller
from .hfsearched import to_hf_searched
from .pretokenize import check_name, pretoken_breaks
from .pretokenizers import built
from .shaping import Padding, Truncation, shaped
from .unicodeclasses import check_unicode_version, unicode_version
from .unigramsampling import sampler
from .units import inside_units
from .vocabulary import Vocabulary
from .wordcounts import DEFAULT_SHARD_SIZE, DistinctWords, distinct_units, shards

#: trie steps (bytes times the longest token) from which a search runs where an interrupt can
#: stop it: some tens of milliseconds at least
_INTERRUPTIBLE_STEPS = 1 << 24

#: sentencepiece's white space, U+2581, in UTF-8
_META_SPACE = "\u2581".encode()


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


def estimated_scores(counts, vocabulary=None) -> np.ndarray:
    """Log-probabilities from a training text's symbol counts (``vocabulary``'s, or all), add-one
    smoothed: a token the training left unused is unlikely, not impossible."""
    found = np.asarray(counts, dtype=np.float64)
    if vocabulary is not None:
        found = found[np.asarray(vocabulary, dtype=np.int64)]
    return np.log(found + 1.0) - np.log(found.sum() + found.size)


def built_normalizer(name: str, params: dict | None):
    """The normalizer ``name`` with a rules file's ``params`` (none: its defaults, built once)."""
    if not params:
        return built("normalizer", name)
    registry = default_registry()
    return registry.get("normalizer", name).build(build_params(registry, "normalizer", name, params, where="its config"))


def boundary_policy(config: dict):
    """The boundary policy a rules file's config names (None for the default, which opens
    nothing), built from the registry; FormatError when it is not installed or its params are bad."""
    raw = config.get("boundary")
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not isinstance(raw.get("params", {}), dict):
        raise FormatError("rules file: corrupt metadata (config.boundary must be {name, params})")
    if raw["name"] == OPENS_NOTHING:
        return None
    registry = default_registry()
    try:
        params = build_params(registry, "boundary", raw["name"], raw.get("params"), where="rules file")
        return registry.get("boundary", raw["name"]).build(params)
    except (ConfigError, ChunkpressError) as exc:
        raise FormatError(str(exc)) from None


class Tokenizer:
    """A learned dictionary used as a tokenizer: rules (R x 2) plus the pre-tokenizer it was
    trained with, the symbols it deleted (``deletions``, D x 2: the rule after which, the
    symbol) and its boundary policy (``boundary``), and HF's numbering where it was imported
    from HF or trained with added tokens (``hf``): then ``encode`` and ``decode`` speak those
    ids, while ``symbols`` stays the dictionary's own string. ``segmenter``: how it cuts text
    (a registered segmenter's name: ``merges`` replays the rules as training did; the others
    search the ``vocabulary``, the token symbols, every symbol not deleted by default, with
    each token's log-probability in ``scores`` where known). ``meta``: the rest of its rules
    file, kept by ``save``."""

    def __init__(self, rules, pretokenizer: str = NO_PRETOKENIZER, hf=None, meta: RulesFile | None = None, *,
                 deletions=None, boundary: BoundaryPolicy | None = None, segmenter: str = REPLAYS_MERGES,
                 vocabulary=None, scores=None, normalizer: str = NO_NORMALIZER, normalizer_params: dict | None = None):
        self.rules = np.ascontiguousarray(rules, dtype=np.int64).reshape(-1, 2)
        symbol_lengths(self.rules)  # validates: every rule refers to earlier symbols
        self.deletions = np.zeros((0, 2), dtype=np.int64) if deletions is None else \
            np.ascontiguousarray(deletions, dtype=np.int64).reshape(-1, 2)
        deletion_steps(self.rules, self.deletions)  # validates: in order, of symbols made and unused after
        self.pretokenizer = check_name(pretokenizer)
        if boundary is not None and self.pretokenizer == NO_PRETOKENIZER:
            raise ConfigError("a boundary policy opens pre-token boundaries: give a pre-tokenizer")
        self.boundary = boundary
        self.hf = hf
        self.meta = meta
        self.segmenter = segmenter
        self.vocabulary = None if vocabulary is None else np.asarray(vocabulary, dtype=np.int64)
        self.scores = None if scores is None else np.asarray(scores, dtype=np.float64)
        self._segmenter()  # an unknown segmenter is refused now, naming what is installed
        self.normalizer, self.normalizer_params = normalizer, normalizer_params
        #: HF's truncation and padding, off until enabled (:meth:`enable_truncation`, :meth:`enable_padding`)
        self.truncation: Truncation | None = None
        self.padding: Padding | None = None
        self._rewrite = built_normalizer(normalizer, normalizer_params)  # an unknown one is refused now
        #: whether the text is cut as it is (no normalizer rewrites it), as an archive needs
        self.keeps_bytes: bool = self._rewrite.lossless
        #: whether ``decode`` gives back every text ``encode`` is given: its bytes kept, and no
        #: byte an unknown piece stands for
        self.is_lossless: bool = self.keeps_bytes and (hf is None or hf.unknown is None)
        #: whether its segmenter cuts by the tokens' scores (a sweep gives each size its own)
        self.cuts_by_scores: bool = self._segmenter().needs_scores
        if self._replays() and self.vocabulary is not None:
            raise ConfigError("a vocabulary narrower than the rules' symbols cannot replay the rules' merges: give "
                              "a segmenter that searches it (longest-prefix, fewest-tokens, likelihood)")

    @classmethod
    def from_rules_file(cls, data: bytes, *, decoding: bool = False, segmenter: str | None = None) -> Tokenizer:
        """From a rules file's bytes; FormatError if it is corrupt or its pre-tokenizer ran on
        other Unicode tables than this version's (unless only ``decoding``: ids to bytes).
        ``segmenter``: another way to cut text than the file records."""
        source = RulesFile.from_bytes(data)
        pre = source.pretokenizer
        if pre != NO_PRETOKENIZER and not decoding:
            check_unicode_version(source.unicode)
        hf = HFVocab.from_meta(source.hf, BYTE_SYMBOLS + len(source.rules)) if source.hf is not None else None
        if hf is not None:
            hf.check_spellings(source.rules)
        boundary = None if decoding else boundary_policy(source.config)
        scores = None if source.scores is None else np.asarray(source.scores, dtype=np.float64)
        if scores is None and source.counts is not None:  # a merge-learned vocabulary: its training counts
            scores = estimated_scores(source.counts, source.vocabulary)
        try:
            found = cls(source.rules, pre, hf, meta=source, deletions=source.deletion_table, boundary=boundary,
                        segmenter=source.segmenter or REPLAYS_MERGES, vocabulary=source.vocabulary, scores=scores,
                        normalizer=source.normalizer, normalizer_params=source.normalizer_params)
        except (ConfigError, PluginError) as exc:
            raise FormatError(f"rules file: {exc}") from None
        return found.with_segmenter(segmenter)

    def with_segmenter(self, segmenter: str | None) -> Tokenizer:
        """This tokenizer cutting text with ``segmenter`` instead (None: itself)."""
        if segmenter is None or segmenter == self.segmenter:
            return self
        return Tokenizer(self.rules, self.pretokenizer, self.hf, self.meta, deletions=self.deletions, boundary=self.boundary,
                         segmenter=segmenter, vocabulary=self.vocabulary, scores=self.scores, normalizer=self.normalizer,
                         normalizer_params=self.normalizer_params)

    @classmethod
    def from_file(cls, path, *, decoding: bool = False, segmenter: str | None = None) -> Tokenizer:
        """Load a rules file (written by ``train``, ``import-hf`` or ``save``); errors name it."""
        path = Path(path)
        data = read_input(str(path), work_limit(READ_BYTES_PER_BYTE))  # /dev/zero is refused, not read
        try:
            found = cls.from_rules_file(data, decoding=decoding)
        except ChunkpressError as exc:
            raise type(exc)(f"{path}: {exc}") from None
        found = found.with_segmenter(segmenter)  # a segmenter given is the caller's: errors name it
        if not decoding and not found._replays():
            try:  # built now, so that a vocabulary no search can take is refused naming its file
                found._searched()
            except ChunkpressError as exc:
                raise type(exc)(f"{path}: {exc}") from None
        return found

    @classmethod
    def from_hf_json(cls, text: str) -> Tokenizer:
        """From an HF tokenizers ``tokenizer.json``: a byte-level BPE, a Unigram or a WordPiece
        model (its ids, added tokens and prefix space kept: ``encode`` then gives HF's ids);
        FormatError for what would tokenize otherwise (see :mod:`chunkpress.text.hf`)."""
        return cls.from_rules_file(imports.rules_of_hf_json(text))  # what a later use would refuse is refused now

    @classmethod
    def from_tiktoken_file(cls, path, pretokenizer: str | None = None) -> Tokenizer:
        """A tiktoken ranks file (``.tiktoken``; '-': stdin) as a tokenizer whose ``encode``
        gives tiktoken's ``encode_ordinary`` ids (:mod:`chunkpress.text.tiktokenfile`), its text
        split by ``pretokenizer`` (None: ``cl100k`` or ``o200k``, told by the number of ranks of
        tiktoken's published encodings); errors name the file."""
        return cls.from_rules_file(imports.rules_of_tiktoken_file(path, pretokenizer))

    @classmethod
    def from_hf_file(cls, path) -> Tokenizer:
        """:meth:`from_hf_json` of the file at ``path`` ('-': stdin); errors name it (InputError
        for a file that is not UTF-8 text, FormatError for one that is no tokenizer we read)."""
        data = read_input(str(path), work_limit(READ_BYTES_PER_BYTE))
        try:
            return cls.from_hf_json(data.decode("utf-8", errors="strict"))
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text (byte {exc.start}), so not a tokenizer.json") from None
        except ChunkpressError as exc:
            raise FormatError(f"{path}: {exc}") from None

    @classmethod
    def from_spm_file(cls, path) -> Tokenizer:
        """A sentencepiece model (``.model``; '-': stdin) as a tokenizer whose ``encode`` gives
        sentencepiece's ids (:mod:`chunkpress.text.spm`); errors name the file."""
        data = imports.rules_of_spm_file(path)  # its errors name the file
        try:
            return cls.from_rules_file(data)
        except ChunkpressError as exc:
            raise FormatError(f"{path}: {exc}") from None

    def to_hf_json(self, dropout: float | None = None) -> str:
        """This dictionary as an HF ``tokenizer.json`` whose encoding is :meth:`encode`'s (with
        ``dropout`` too); FormatError for one HF cannot express (a deletion: HF's BPE cannot undo a merge)."""
        if dropout is not None:  # what encode samples, as its checks say
            self.encode(b"", dropout=dropout, seed=0)
        if self.deletions.size:
            raise FormatError(f"this dictionary deleted {len(self.deletions):,} symbols (Picky BPE): HF's BPE "
                              "applies every merge and cannot split a token back, so no tokenizer.json encodes as it does")
        rewrite = None if self.keeps_bytes else self._rewrite.hf_normalizer
        if self.hf is not None and self.hf.spelled_as == "wordpiece":  # BERT's, read by import-hf
            symbols = self._live()
            return to_hf_bert([expand(self.rules, [s]) for s in symbols.tolist()], self.hf.ids[symbols].tolist(),
                              self.hf, rewrite)
        if not self.keeps_bytes and (rewrite is None or not self._replays()):
            raise FormatError(f"normalizer {self.normalizer!r}: no HF normalizer is written for it with this model")
        if not self._replays():
            symbols = self._live()
            ids = self.hf.ids[symbols] if self.hf is not None else symbols
            scores = self.scores if self.vocabulary is not None or self.scores is None else self.scores[symbols]
            return to_hf_searched([expand(self.rules, [s]) for s in symbols.tolist()], ids.tolist(), self.segmenter,
                                  self._segmenter().hf_model, self.pretokenizer,
                                  None if scores is None else scores.tolist(), self.hf)
        units = None
        if self.boundary is not None:
            units = self.boundary.hf_units(self.pretokenizer)
            if units is None:
                raise FormatError(f"boundary policy {type(self.boundary).__name__} over the {self.pretokenizer!r} "
                                  "pre-tokenizer has no HF pre-tokenizer that cuts text as it does")
        return to_hf_json(self.rules, self.pretokenizer, self.hf, units=units, dropout=dropout, normalizer=rewrite)

    def to_rules_file(self) -> RulesFile:
        """This tokenizer as a rules file: its rules, deletions, pre-tokenizer (and its Unicode
        version), HF ids, added tokens and what its source file recorded."""
        kept: dict = self.meta.meta() if self.meta is not None else {"config": {"pretokenizer": {"name": self.pretokenizer}}}
        if self.meta is None and self.normalizer != NO_NORMALIZER:
            kept["config"]["normalizer"] = {"name": self.normalizer,
                                            **({"params": self.normalizer_params} if self.normalizer_params else {})}
        kept.update(rules=self.rules, hf=self.hf.to_meta() if self.hf is not None else None,
                    unicode=unicode_version() if self.pretokenizer != NO_PRETOKENIZER else None,
                    chunkpress=kept.get("chunkpress") or __version__,
                    deletions=self.deletions.tolist() if self.deletions.size else None,
                    segmenter=None if self._replays() else self.segmenter,
                    vocabulary=self.vocabulary.tolist() if self.vocabulary is not None else None,
                    scores=self.scores.tolist() if self.scores is not None and kept.get("counts") is None else None)
        return RulesFile(**kept)

    def save(self, path) -> None:
        """Write the rules file (replacing one there), atomically: a reader never sees half."""
        write_output(str(path), self.to_rules_file().to_bytes(), force=True)

    # -- the vocabulary, as HF's Tokenizer gives it ------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """One past the largest id."""
        return self.hf.size if self.hf is not None else BYTE_SYMBOLS + len(self.rules)

    def _live(self) -> np.ndarray:
        """Our symbols in the vocabulary: the ones it names, or the bytes and every rule's
        symbol not deleted."""
        if self.vocabulary is not None:
            return self.vocabulary
        live = np.ones(BYTE_SYMBOLS + len(self.rules), dtype=bool)
        live[self.deletions[:, 1]] = False
        return np.flatnonzero(live)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """Token (HF's byte-level spelling; an added token as its text) -> id."""
        table = byte_to_unicode()
        symbols = self._live()
        ids = self.hf.ids[symbols] if self.hf is not None else symbols
        spelled = [expand(self.rules, [s]) for s in symbols.tolist()]
        vocab = {"".join(table[b] for b in spelling): int(i) for spelling, i in zip(spelled, ids.tolist(), strict=True)
                 if i >= 0}
        if with_added_tokens and self.hf is not None:
            vocab.update({content: i for content, i in self.hf.special})
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """The tokens in the vocabulary (HF's count: deleted symbols are not in it)."""
        symbols = self._live()
        model = int((self.hf.ids[symbols] >= 0).sum()) if self.hf is not None else symbols.size
        added = len({i for _, i in self.hf.special} - set(self.hf.ids[symbols].tolist())) if self.hf is not None else 0
        return model + (added if with_added_tokens else 0)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab().get(token)

    def id_to_token(self, id: int) -> str | None:
        if not hasattr(self, "_by_id"):
            self._by_id = {i: t for t, i in self._vocab().items()}
        return self._by_id.get(int(id))

    def _vocab(self) -> dict[str, int]:
        if not hasattr(self, "_vocab_cache"):
            self._vocab_cache = self.get_vocab()
        return self._vocab_cache

    def __repr__(self) -> str:
        extra = [f"pretokenizer={self.pretokenizer!r}"]
        if self.deletions.size:
            extra.append(f"deleted={len(self.deletions)}")
        if self.boundary is not None:
            extra.append(f"boundary={type(self.boundary).__name__}")
        if self.hf is not None and self.hf.special:
            extra.append(f"added_tokens={[c for c, _ in self.hf.special]!r}")
        return f"Tokenizer(vocab_size={self.get_vocab_size()}, rules={len(self.rules)}, {', '.join(extra)})"

    # -- encoding ----------------------------------------------------------------------------------
    def _encoder(self) -> Encoder:
        if not hasattr(self, "_encoder_cache"):
            self._encoder_cache = Encoder(self.rules, self.deletions, self.boundary)
        return self._encoder_cache

    def _replays(self) -> bool:
        """Whether the segmenter replays the rules' merges (not a search of the vocabulary)."""
        return self._segmenter().replays_merges

    def _segmenter(self) -> Segmenter:
        if not hasattr(self, "_segmenter_cache"):
            registry = default_registry()
            self._segmenter_cache = registry.get("segmenter", self.segmenter).build()
        return self._segmenter_cache

    def _searched(self) -> Vocabulary:
        """The vocabulary as segmenters search it, built on first use."""
        if not hasattr(self, "_searched_cache"):
            symbols = self.vocabulary if self.vocabulary is not None else self._live()
            scores = self.scores
            if scores is not None and self.vocabulary is None:
                scores = scores[symbols]
            self._searched_cache = Vocabulary.of(self.rules, symbols, scores)
        return self._searched_cache

    def _encode_words(self, arr: np.ndarray, breaks, piece_ends=None, sampling=None) -> np.ndarray:
        """The dictionary's symbols for ``arr`` cut at ``breaks`` (None: one word); the ends of
        independent pieces (``piece_ends``) are never opened by the boundary policy; with
        ``sampling``, each word sampled (:mod:`.dropout`, :mod:`.unigramsampling`)."""
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if sampling is not None:
            return sampling.symbols(self._encoder() if isinstance(sampling, Dropout) else self._searched(), arr, breaks)
        if not self._replays():
            return self._segment_words(arr, breaks, piece_ends)
        encoder = self._encoder()
        if breaks is None:
            return encoder.replay(arr)
        words = distinct_units(self.boundary, arr, breaks, piece_ends)
        buf, offsets = words.buf, words.offsets
        gaps = np.zeros(buf.size, dtype=np.int64)
        if words.steps is not None:  # each unit split as in training (units.inside_units)
            inner, opened = inside_units(self.boundary, buf, offsets, self.pretokenizer, words.steps)
            gaps[inner] = NEVER
            for opening in opened:
                gaps[opening.positions] = opening.at
        gaps[offsets[1:] - 1] = NEVER
        symbols, seg_len = encoder.encode_units(buf, offsets, gaps)
        return words.assemble(symbols, offsets[:-1], seg_len)

    def _segment_words(self, arr: np.ndarray, breaks, piece_ends) -> np.ndarray:
        """As :meth:`_encode_words`, by the segmenter: each distinct unit (a pre-token, or the
        run of them the boundary policy may join) searched once in the vocabulary."""
        segmenter = self._segmenter()
        if segmenter.whole_text:  # its units are the texts, cut only where one ends
            breaks = pretoken_breaks(arr, NO_PRETOKENIZER, pieces=piece_ends) if piece_ends is not None else None
        if breaks is None:
            words = DistinctWords(arr, np.zeros(arr.size, dtype=bool))
        else:
            words = distinct_units(self.boundary, arr, breaks, piece_ends)
        out = np.empty(words.buf.size, dtype=np.int64)
        segment, searched = segmenter.segment, self._searched()
        if words.buf.size * searched.longest >= _INTERRUPTIBLE_STEPS:
            # on a helper thread, so that Ctrl-C and SIGTERM stop it (the kernels release the GIL)
            counts = call_interruptibly(segment, searched, words.buf, words.offsets, out)
        else:  # a short search: a thread per call would cost more than the search (a line at a time)
            counts = segment(searched, words.buf, words.offsets, out)
        return words.assemble(out, words.offsets[:-1], np.asarray(counts, dtype=np.int64))

    def symbols(self, data, *, lines: bool = False) -> np.ndarray:
        """The dictionary's symbols for ``data`` (int64): what training gives on the same text,
        and what an archive codes. ``lines``: with a pre-tokenizer, each line (its newline
        included) is pre-tokenized on its own, as ``train`` counts a file's words."""
        arr = as_symbols(data if self._rewrite.lossless else self._rewrite.normalize(bytes(data)))
        lines = lines and self.pretokenizer != NO_PRETOKENIZER
        ends = np.unique(np.concatenate([np.flatnonzero(arr == 10) + 1, [arr.size]])) if lines else None
        with classes_kept():  # the pre-tokenizer's and the boundary policy's
            return self._encode_words(arr, pretoken_breaks(arr, self.pretokenizer, lines=lines), piece_ends=ends)

    def encode(self, text, pair=None, *, add_special_tokens: bool = True, **sampling) -> Encoding:
        """Encode ``text`` (str, as UTF-8, or bytes): token ids (our symbols, or HF's ids), offsets
        (characters for a str, bytes for bytes; into the text as given where the normalizer says
        where its bytes came from, else into the normalized text) and tokens. Sampling from
        ``seed``: ``dropout`` (BPE-dropout), or ``alpha`` and ``nbest_size`` (Unigram, as sentencepiece)."""
        return self.encode_batch([text if pair is None else (text, pair)], add_special_tokens=add_special_tokens,
                                 **sampling)[0]

    def encode_batch(self, texts, *, add_special_tokens: bool = True, **sampling) -> list:
        """``encode`` of each text in one pass, each pre-tokenized on its own, their distinct units
        encoded once (sampled, every word on its own); truncated and padded where that is
        enabled (:meth:`enable_truncation`, :meth:`enable_padding`)."""
        pairs = any(isinstance(t, tuple) for t in texts)
        if self.truncation is None and self.padding is None and not pairs:
            return self._encoded(texts, add_special_tokens, **sampling)
        templated = self.hf is not None and add_special_tokens
        flat = [part for t in texts for part in (t if isinstance(t, tuple) else (t,))]
        done = iter(self._encoded(flat, False, **sampling))
        found = [tuple(next(done) for _ in t) if isinstance(t, tuple) else next(done) for t in texts]
        # without its tokens, a pair still takes the post-processor's type ids (RoBERTa's are all 0)
        pair = tuple(item for item in (self.hf.pair_template if self.hf is not None else ()) if templated or item[0] != "T")
        return shaped(found, self.hf.template if templated else ((), ()), self.truncation, self.padding, pair)

    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        """As HF's: ``encode`` keeps at most ``max_length`` tokens, the post-processor's among
        them (the first, or with ``direction`` left the last). One text: every strategy is the same."""
        if stride or strategy not in ("longest_first", "only_first", "only_second"):
            raise ConfigError("truncation: a stride (overflowing windows) and pairs are not supported")
        self.truncation = Truncation(max_length=max_length, direction=direction)

    def no_truncation(self) -> None:
        self.truncation = None

    def enable_padding(self, **settings) -> None:
        """As HF's (``direction``, ``pad_id``, ``pad_type_id``, ``pad_token``, ``length``,
        ``pad_to_multiple_of``): ``encode_batch`` pads each text to the longest, or ``length``."""
        self.padding = Padding(**settings)

    def no_padding(self) -> None:
        self.padding = None

    def _encoded(self, texts, add_special_tokens: bool, *, dropout: float | None = None, alpha: float | None = None,
                 nbest_size: int | None = None, seed: int | None = None) -> list[Encoding]:
        sampling = sampler(self._replays() and not self.deletions.size and self.boundary is None,
                           self._segmenter().samples_lattice, dropout, alpha, nbest_size, seed)
        given = [_text_bytes(t) for t in texts]
        rewritten: list[tuple[bytes, np.ndarray | None]]
        if self._rewrite.lossless:
            rewritten = [(t, None) for t in given]
        elif self.hf is not None and self.hf.special:  # HF normalizes the text between its added tokens
            rewritten = normalized_around_added(self._rewrite, self.hf, given)
        else:
            rewritten = self._rewrite.normalize_batch(given)
        if not rewritten:
            return []
        if self.hf is not None and self.hf.space_mark:  # as sentencepiece and HF's Metaspace read it
            rewritten = [spaces_for_marks(d, origin) if _META_SPACE in d else (d, origin) for d, origin in rewritten]
        datas = [d for d, _ in rewritten]
        origins = [(origin, t.encode() if isinstance(t, str) else None) if origin is not None else None
                   for (_, origin), t in zip(rewritten, texts, strict=True)]
        if self.hf is not None:
            return self._encode_hf(datas, texts, sampling, origins, add_special_tokens)
        ends = np.cumsum([len(d) for d in datas], dtype=np.int64)
        arr = np.frombuffer(b"".join(datas), dtype=np.uint8)
        with classes_kept():  # the pre-tokenizer's and the boundary policy's
            breaks = pretoken_breaks(arr, self.pretokenizer, pieces=ends) \
                if len(datas) > 1 or self.pretokenizer != NO_PRETOKENIZER else None
            symbols = self._encode_words(arr, breaks, piece_ends=ends, sampling=sampling)
        lengths = symbol_lengths(self.rules)[symbols]
        stops = np.cumsum(lengths, dtype=np.int64)
        cut = np.searchsorted(stops, ends, side="right").tolist()  # no symbol crosses a text's end
        # every offset at once, from the batch's start (numpy per text costs more than the
        # encoding); each encoding takes its text's start off when its offsets are read
        begins = [0, *ends[:-1].tolist()]
        spans = np.stack([stops - lengths, stops], axis=1)
        firsts = [0, *cut[:-1]]
        chars, char_begins = spans, begins
        if any(isinstance(t, str) for t in texts) and symbols.size:
            chars = char_offsets(arr, lengths)  # the symbols tile the texts
            # a text's first character: that of its first symbol (an empty text has none to offset)
            char_begins = chars[np.minimum(firsts, symbols.size - 1), 0].tolist()
        spell = speller(self.rules, self.hf)
        return [Encoding(symbols, spans, spell, symbols, first, last, begin, *aligned) if aligned is not None
                else Encoding(symbols, chars, spell, symbols, first, last, char_begin) if isinstance(text, str)
                else Encoding(symbols, spans, spell, symbols, first, last, begin)
                for text, first, last, char_begin, begin, aligned in zip(texts, firsts, cut, char_begins, begins, origins,
                                                                          strict=True)]

    def _encode_hf(self, datas: list[bytes], texts, sampling, origins, add_special_tokens: bool) -> list[Encoding]:
        """HF's ids of each text, all in one pass: each text cut at its added tokens, each
        segment (with its prefix space) pre-tokenized on its own, as HF does."""
        cut = [self.hf.segments(data) for data in datas]
        pieces = [piece for segments, *_ in cut for piece in segments]
        buf = np.frombuffer(b"".join(pieces), dtype=np.uint8)
        ends = np.cumsum([len(t) for t in pieces], dtype=np.int64)
        with classes_kept():  # the pre-tokenizer's and the boundary policy's
            # a search of whole texts needs no pre-tokens, unless HF bounds a word's length
            whole = self._segmenter().whole_text and sampling is None and self.hf.longest_word is None
            breaks = None if whole else pretoken_breaks(buf, self.pretokenizer, pieces=ends)
            symbols = self._encode_words(buf, breaks, piece_ends=ends, sampling=sampling)
        batch = {"buf": buf, "breaks": breaks, "symbols": symbols, "ends": ends, "cut": cut}
        return hf_encodings(self.hf, self.rules, batch, datas, texts, origins, add_special_tokens)

    def ids_of_stream(self, stream, *, seed: int | None = None, **sampling) -> Iterator[np.ndarray]:
        """The ids of everything ``stream`` (a binary file object) holds, as :meth:`encode`
        gives them for the whole, a piece at a time: pieces are cut where the pre-tokenizer
        breaks whatever surrounds them (:func:`~chunkpress.text.wordcounts.shards`; with a
        boundary policy, at line breaks), so memory stays that of a piece. Without a
        pre-tokenizer, or with HF's prefix space, the text is one piece. A piece longer than the
        memory limit allows is refused (InputError). ``sampling`` as :meth:`encode`'s, piece k from ``seed + k``."""
        limit = work_limit(ENCODE_BYTES_PER_BYTE)
        sampling = {k: v for k, v in sampling.items() if v is not None}
        seed = seed if seed is not None or not sampling else int(np.random.default_rng().integers(0, 1 << 62))
        if self.pretokenizer == NO_PRETOKENIZER or (self.hf is not None and self.hf.add_prefix_space):
            pieces: Iterable[bytes] = [read_rest(stream, "", b"", limit)]
        else:
            special = tuple(content.encode() for content, _ in self.hf.special) if self.hf is not None else ()
            pieces = shards(stream, min(DEFAULT_SHARD_SIZE, limit), special, limit,
                            newline_only=self.boundary is not None, pretokenizer=self.pretokenizer)
        for k, piece in enumerate(pieces):
            yield self.encode(piece, seed=None if seed is None else seed + k, **sampling).id_array

    # -- decoding ----------------------------------------------------------------------------------
    def decode(self, ids, skip_special_tokens: bool = True, *, max_memory: int | None = None) -> str:
        """The text of ``ids`` (UTF-8; a byte sequence that is not, as a byte-level token may
        hold part of a character, becomes U+FFFD, as HF decodes); added tokens are left out
        unless ``skip_special_tokens`` is False. ``decode_bytes`` gives the exact bytes."""
        return self.decode_bytes(ids, skip_special_tokens, max_memory=max_memory).decode("utf-8", errors="replace")

    def decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        """``decode`` of each sequence of ids."""
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    def decode_bytes(self, ids, skip_special_tokens: bool = False, *, max_memory: int | None = None) -> bytes:
        """The bytes of ``ids``, added tokens as their text (unless ``skip_special_tokens``);
        ``max_memory``: this call's bound in bytes (FormatError before allocating past it;
        None: the default, see :mod:`chunkpress.format.limits`)."""
        ids = _integer_ids(ids)
        with bounded_memory(max_memory):
            if self.hf is not None:
                if skip_special_tokens and self.hf.special:
                    ids = ids[~np.isin(ids, [i for _, i in self.hf.special])]
                return self.hf.decode(self.rules, ids)
            if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
                raise ChunkpressError(f"symbol ids must lie in [0, {self.vocab_size}); got {ids.min()}..{ids.max()}")
            return expand(self.rules, ids)

    def code_length_curve(self, data) -> np.ndarray:
        """Held-out code length of ``data`` under the first r rules, for r = 0 .. R: a table with
        m, N and the five parts (counts and string from ``data``'s own counts; the rules charged
        once, as in training)."""
        from .heldout import code_length_curve  # the engine's linked string and its replay

        return code_length_curve(self.rules, self.pretokenizer, self._encoder().steps, self.boundary, data)
