"""The Python API: fit a pipeline on bytes, compress, decompress, inspect.

    >>> import chunkpress.pipeline as cp
    >>> pipe = cp.Pipeline.from_config()                     # mdl + linked + combinatorial
    >>> result = pipe.fit(open("alice29.txt", "rb").read())  # rules, symbols, trace
    >>> archive = pipe.compress(open("alice29.txt", "rb").read())
    >>> cp.decode_archive(archive).data() == open("alice29.txt", "rb").read()
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs
import numpy as np

from .config import ComponentConfig, PipelineConfig, default_config, load_config, params_dict
from .contract import BYTE_SYMBOLS, DELETES_NOTHING, LEARNS_BY_MERGES, NO_PRETOKENIZER, OPENS_NOTHING, Coder, as_symbols
from .errors import ChunkpressError, ConfigError, FormatError
from .firstcompile import started_ahead
from .format import container
from .format.limits import BYTES_PER_SYMBOL, FIT_BYTES_PER_BYTE, bounded_memory, check_allocation, decoding_memory_cap
from .plugin.registry import ROLES, Registry, build_params, default_registry

if TYPE_CHECKING:
    from .engine.learner import FitResult
    from .text.wordcounts import DistinctWords

# The engine, the pre-tokenizers and the expansion are numba kernels: this module imports them
# where a pipeline learns or decodes, so that building one (checking a config, storing a tiny
# input) loads no compiled code.


class Pipeline:
    """A configured scorer + rewriter + coder. Components are built from the registry once."""

    def __init__(self, config: PipelineConfig, registry: Registry | None = None):
        self.config = config
        self.registry = registry or default_registry()
        self._infos = {role: self.registry.get(role, config.name_of(role)) for role in ROLES}

    @classmethod
    def from_config(cls, path=None, registry: Registry | None = None, level: int | None = None, **overrides) -> Pipeline:
        """From a TOML file (None: built-in defaults) or a compression ``level`` (1 fastest to 9
        smallest), with overrides such as ``scorer="repair", limits={"max_rules": 4096}``."""
        registry = registry or default_registry()
        return cls(load_config(path, registry, overrides, level), registry)

    def _build(self, role: str):
        return self._infos[role].build(getattr(self.config, role).params)

    @functools.cached_property
    def normalizer(self):
        """The configured normalizer (a :class:`~chunkpress.contract.Normalizer`)."""
        return self._infos["normalizer"].build()

    def check_keeps_bytes(self) -> None:
        """ConfigError where the normalizer rewrites text: an archive gives back its input's bytes."""
        if not self.normalizer.lossless:
            raise ConfigError(f"normalizer {self.config.normalizer!r} rewrites the text, and an archive gives back "
                              "its bytes: compress takes no normalizer (tokenizers and train do)")

    def build_coder(self) -> Coder:
        """The configured coder (an optional package it needs is reported here)."""
        return self._build("coder")

    def working_bytes(self, length: int) -> int:
        """What compressing ``length`` bytes holds at most: learning the dictionary beside what
        the coder prepares meanwhile (:meth:`Coder.prepare`), or, once the learner's memory is
        freed, coding (the coder's tables and the text with its symbols, at most one a byte)."""
        coder = self._sizing_coder
        learning = FIT_BYTES_PER_BYTE * length + int(coder.prepared_bytes(length))
        coding = int(coder.working_bytes(length)) + (1 + BYTES_PER_SYMBOL) * length
        return max(learning, coding)

    @functools.cached_property
    def _sizing_coder(self) -> Coder:
        return self.build_coder()

    def _scorer(self):
        """The configured scorer; a ConfigError when nothing would stop the run: a scorer with
        no stop rule of its own (pmi, spmi) merges until every word is one symbol (an archive
        larger than its input), so it needs max_rules or min_count."""
        scorer = self._build("scorer")
        limits = self.config.limits
        if (scorer.stop is None and scorer.min_merge_count < 2 and limits.max_rules is None
                and limits.min_count < 2):
            raise ConfigError(
                f"scorer {self.config.scorer.name!r} has no stop rule of its own: set limits.max_rules "
                "or limits.min_count (--max-rules / --min-count)"
            )
        return scorer

    def policies(self) -> tuple:
        """(boundary policy or None when it opens nothing by its kind, deletion policy or None)."""
        boundary = self._build("boundary") if self.config.boundary.name != OPENS_NOTHING else None
        deletion = self._build("deletion") if self.config.deletion.name != DELETES_NOTHING else None
        return boundary, deletion

    def fit(self, data, trace: bool = True, progress: Callable | None = None, breaks=None) -> FitResult:
        """Learn a dictionary on ``data``: rules, final symbols and the per-step trace.
        ``breaks`` overrides the configured pre-tokenizer's boundaries."""
        from .engine.learner import fit  # numba: see the module's imports
        from .text.characters import classes_kept  # numba
        from .text.pretokenize import pretoken_breaks  # numba
        from .text.units import opening_steps, openings  # numba
        from .text.wordcounts import distinct_units  # numba

        arr = as_symbols(data)
        rewriter = self._build("rewriter")
        boundary, deletion = self.policies()
        with classes_kept():  # the pre-tokenizer's and the boundary policy's
            words = None
            if breaks is None:
                breaks = pretoken_breaks(arr, self.config.pretokenizer)
                if breaks is not None and rewriter.supports_weights:
                    # train on each distinct pre-token (or unit of pre-tokens a boundary policy may
                    # join) once, weighted by its count: no pair crosses one, so the counts, rules
                    # and trace are those of the whole text (as HF tokenizers trains BPE), at the
                    # cost of the distinct words only
                    words = distinct_units(boundary, arr, breaks)
                    breaks = None  # a byte a position: the words hold their own
            steps = opening_steps(boundary, arr, breaks) if breaks is not None else None
        if words is not None:
            result = self.fit_words(words, trace, progress, rewriter)
            del rewriter  # its string, about 40 bytes a word byte, is not needed any more
            return self._assembled(words, result)
        return fit(arr, self._scorer(), rewriter, self.config.limits, breaks=breaks, trace=trace, progress=progress,
                   openings=openings(steps), deletion=deletion)

    @staticmethod
    def _segments(words: DistinctWords, result: FitResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where each of ``words`` lies in ``result.symbols`` (its first symbol and how many),
        from ``result`` of training on ``words``; and each symbol's length in bytes."""
        from .arrays import searchsorted_ascending  # numba: see the module's imports
        from .format.expand import symbol_lengths  # numba

        # symbols never cross a word, so their byte offsets land on every word start
        lengths = symbol_lengths(result.rules)
        ends = np.cumsum(lengths[result.symbols])
        seg_start = searchsorted_ascending(ends, words.offsets[:-1], side="right")
        seg_len = np.diff(np.concatenate([seg_start, [result.symbols.size]]))
        return seg_start, seg_len, lengths

    @staticmethod
    def _assembled(words: DistinctWords, result: FitResult) -> FitResult:
        """``result`` of training on ``words`` with the symbols of the whole text."""
        seg_start, seg_len, _ = Pipeline._segments(words, result)
        return attrs.evolve(result, symbols=words.assemble(result.symbols, seg_start, seg_len))

    def fit_words(self, words, trace: bool = True, progress: Callable | None = None, rewriter=None,
                  symbols: bool = True) -> FitResult:
        """Learn a dictionary from word counts (:class:`~chunkpress.text.wordcounts.WordCounts`):
        each distinct word once, weighted by its count, so rules and trace are those of the
        counted text. ``symbols`` in the result are those of the distinct words. Words counted
        for a boundary policy that joins pre-tokens are its units (``count_stream(boundary=)``),
        with their steps, which the learning takes: ``words.steps`` is None after it (twice the
        size of the units' bytes, and not needed once read; a later fit splits the units again,
        to the same breaks). ``symbols`` False: the result's string is left empty (rules,
        counts and trace are what a rules file needs)."""
        from .engine.learner import fit  # numba: see the module's imports

        rewriter = rewriter or self._build("rewriter")
        if not rewriter.supports_weights:
            raise ConfigError(f"rewriter {self.config.rewriter.name!r} cannot train on word counts (no weights)")
        boundary, deletion = self.policies()
        if boundary is not None:
            return self._fit_units(words, boundary, deletion, trace, progress, rewriter, symbols)
        return fit(words.buf, self._scorer(), rewriter, self.config.limits, breaks=words.breaks, trace=trace,
                   progress=progress, weights=_word_weights(words), deletion=deletion, symbols=symbols)

    def _fit_units(self, units, boundary, deletion, trace: bool, progress, rewriter, symbols: bool) -> FitResult:
        """Learning on ``units`` (word counts of runs of pre-tokens that ``boundary`` joins
        later). Without deletions, in the engine's linked string, a run that gives the rules and
        trace of one over the units at the cost of the distinct pre-tokens up to the first
        opening: it starts on the pre-tokens inside the units, counted as words (no pair crosses
        a pre-token before then, so their counts are the units'), and at the first opening
        regroups its string into the units (:class:`~.engine.events.Regroup`: each pre-token of
        each unit a copy of its word as merged so far, weighted by the unit's count)."""
        # numba kernels, all of them: see the module's imports
        from .engine.events import Regroup
        from .engine.learner import fit
        from .text.units import openings, unit_boundaries
        from .text.wordcounts import DistinctWords

        text = units.buf.view()
        text.flags.writeable = False  # as counting read the text: the kernels' compiled read-only kind
        taken, units.steps = units.steps, None  # taken: see fit_words
        breaks, steps = unit_boundaries(boundary, text, units.offsets, self.config.pretokenizer, taken)
        del taken
        inner, opened = None, []
        if deletion is None and rewriter.linked_string() is not None:
            inner = DistinctWords(text, breaks, within=units, token_counts=_weighted(units), keep_ends=True)
            opened = openings(steps[inner.ends])  # each boundary named by the pre-token it follows
            inner.ends = None
        if not opened or opened[0].at == 0:  # one run over the units (no words first)
            return fit(units.buf, self._scorer(), rewriter, self.config.limits, breaks=breaks, trace=trace,
                       progress=progress, weights=_word_weights(units), openings=openings(steps), deletion=deletion,
                       symbols=symbols)
        assert inner is not None  # openings are found only among the inner pre-tokens
        del breaks
        del steps
        # handed over, not kept here: fit lets go of the words and breaks once its string holds its
        # own copies, and of the regroup and each opening once done
        handed = {"data": inner.buf, "breaks": inner.breaks, "weights": _word_weights(inner), "openings": opened,
                  "regroup": Regroup(at=opened[0].at, tokens=inner.ids, word_starts=inner.offsets[:-1],
                                     weights=inner.token_counts)}
        first = opened[0].at
        del inner, opened
        result = fit(handed.pop("data"), self._scorer(), rewriter, self.config.limits, breaks=handed.pop("breaks"),
                     trace=trace, progress=progress, weights=handed.pop("weights"), openings=handed.pop("openings"),
                     regroup=handed.pop("regroup"), symbols=symbols)
        if len(result.rules) >= first or not symbols:  # regrouped: its string is the units'
            return result
        # stopped before the first opening: its string is the words' (counted again: rare)
        inner = DistinctWords(text, unit_boundaries(boundary, text, units.offsets, self.config.pretokenizer)[0])
        return attrs.evolve(result, symbols=inner.assemble(result.symbols, *self._segments(inner, result)[:2]))

    def check_references_dictionary(self) -> None:
        """ConfigError unless this pipeline's coder can write archives that reference a dictionary."""
        if not self._infos["coder"].implementation().references_dictionary:
            able = ", ".join(n for n in self.registry.names("coder")
                             if getattr(self.registry.get("coder", n).implementation(), "references_dictionary", False))
            raise ConfigError(f"coder {self._infos['coder'].name!r} cannot reference an external dictionary; "
                              f"coders that can: {able}")

    def header(self, rules: np.ndarray, original: bytes, reference: bool = False) -> container.Header:
        """The archive header for ``original`` coded with ``rules`` (``reference``: named by
        hash and size, not held)."""
        ref = None
        if reference:
            self.check_references_dictionary()
            ref = {"blake2b": container.rules_digest(rules), "count": len(rules)}
        return container.Header(codec=self._infos["coder"].codec_id, params=params_dict(self.config.coder.params),
                                length=len(original), blake2b=container.checksum(bytes(original)), rules=ref)

    def encode(self, rules: np.ndarray, symbols: np.ndarray, original: bytes, reference: bool = False,
               coder: Coder | None = None) -> bytes:
        """Archive bytes for an already fitted (rules, symbols) of ``original``. With
        ``reference`` the archive names the dictionary (hash and size) instead of holding it,
        and decompressing needs the same rules."""
        coder = coder or self._build("coder")
        header = self.header(rules, original, reference)
        if reference:
            payload = coder.encode(np.zeros((0, 2), dtype=np.int64), symbols, dictionary_size=256 + len(rules))
        else:
            payload = coder.encode(rules, symbols)
        return container.pack(header, payload)

    @property
    def learns_top_down(self) -> bool:
        """Whether the configured learner is a top-down one (a registered :class:`Learner`),
        not the merge engine that the scorer and the rewriter drive."""
        return not self._infos["learner"].implementation().bottom_up

    @property
    def replays_merges(self) -> bool:
        """Whether the configured segmenter replays the learned rules (the default), not a
        search of the vocabulary."""
        return self._infos["segmenter"].implementation().replays_merges

    def check_top_down(self, sized: bool = True) -> None:
        """ConfigError unless the top-down learner can run with this config (``sized``: the
        vocabulary's size must be given, as ``train`` needs; compressing finds one)."""
        name = self.config.learner.name
        if self.config.pretokenizer == NO_PRETOKENIZER:
            raise ConfigError(f"learner {name!r} learns from word counts: give a pre-tokenizer (--pretokenizer "
                              "metaspace, as sentencepiece splits, or gpt2)")
        if self.config.boundary.name != OPENS_NOTHING or self.config.deletion.name != DELETES_NOTHING:
            raise ConfigError(f"learner {name!r} learns top-down: boundary and deletion policies steer merges")
        if sized and self.config.limits.max_rules is None:
            raise ConfigError(f"learner {name!r}: give the vocabulary's size (--vocab-size)")

    def compress(self, data, progress: Callable | None = None) -> bytes:
        self.check_keeps_bytes()
        data = bytes(data)
        coder = self._build("coder")  # a missing optional package is reported before the learning, not after
        if self.config.limits.max_rules == 0 and coder.codes_bytes:  # nothing to learn
            return self.encode(np.zeros((0, 2), dtype=np.int64), as_symbols(data), data, coder=coder)
        coder.prepare(len(data))
        if self.learns_top_down:
            tokenizer = self.learned_tokenizer(data, progress)
            return self.encode(tokenizer.rules, tokenizer.symbols(data), data, coder=coder)
        result = self.fit(data, trace=False, progress=progress)
        return self.encode(result.rules, self.segmented(result, data), data, coder=coder)

    def learned_tokenizer(self, data: bytes, progress: Callable | None = None):
        """The top-down learner's vocabulary of ``data`` (its word counts under the configured
        pre-tokenizer, the whole text one piece, as :meth:`compress` then cuts it), as a
        :class:`~chunkpress.text.tokenizer.Tokenizer` cutting text with the learner's segmenter
        (or the configured one, where one is). Without ``max_rules`` it learns as many tokens as
        the merge engine, driven by the configured scorer, learns from the same text."""
        from .text.tokenizer import Tokenizer  # numba: the segmenters' kernels
        from .text.training import learn_top_down, text_words  # numba: the learners, the engine, the pre-tokenizers

        self.check_top_down(sized=False)
        pipe = self
        if self.config.limits.max_rules is None:
            merge_engine = attrs.evolve(self.config, learner=ComponentConfig(name=LEARNS_BY_MERGES, params=None))
            merges = Pipeline(merge_engine, self.registry)
            learned = len(merges.fit(data, trace=False, progress=progress).rules)
            pipe = Pipeline(attrs.evolve(self.config, limits=attrs.evolve(self.config.limits, max_rules=max(1, learned))),
                            self.registry)
        words = text_words(pipe, data)
        rules_file, _, _ = learn_top_down(pipe, words, [("<data>", len(data), container.checksum(data))])
        tokenizer = Tokenizer.from_rules_file(rules_file.to_bytes())
        return tokenizer if self.replays_merges else tokenizer.with_segmenter(self.config.segmenter.name)

    def segmented(self, result: FitResult, data: bytes) -> np.ndarray:
        """The symbols ``data`` is coded as: the learner's own string, or where the config names
        another segmenter, ``data`` cut by it in the learned vocabulary (the likelihood
        segmenter scoring each token by its count in the learner's string)."""
        if self.replays_merges:
            return result.symbols
        from .text.tokenizer import Tokenizer, estimated_scores  # numba: the segmenters' kernels

        counts = np.bincount(result.symbols, minlength=BYTE_SYMBOLS + len(result.rules))
        boundary, _ = self.policies()
        tokenizer = Tokenizer(result.rules, self.config.pretokenizer, deletions=result.deletions, boundary=boundary,
                              segmenter=self.config.segmenter.name, scores=estimated_scores(counts))
        return tokenizer.symbols(data)


def _coder_info(header: container.Header, registry: Registry):
    """The registry's entry for the header's codec (FormatError for one not installed),
    without importing the coder's module."""
    try:
        return registry.coder_for_id(header.codec)
    except ChunkpressError as exc:
        raise FormatError(str(exc)) from None


def _coder_for(header: container.Header, registry: Registry, info=None) -> Coder:
    info = info or _coder_info(header, registry)
    try:
        params = build_params(registry, "coder", info.name, header.params, where="archive header")
        return info.build(params)
    except ChunkpressError as exc:
        raise FormatError(str(exc)) from None


@attrs.frozen(kw_only=True, eq=False)
class DecodedArchive:
    """An archive unpacked and decoded once: what decompress, inspect and studies all use."""

    header: container.Header
    payload: bytes
    header_bytes: int
    archive_bytes: int
    coder: Coder
    rules: np.ndarray
    symbols: np.ndarray
    #: the decode call's memory bound (None: the default), which ``data()`` keeps to
    max_memory: int | None = None

    def data(self) -> bytearray:
        """The original bytes (in a buffer: no second copy), verified against the header's checksum."""
        from .format.expand import expand  # numba: see the module's imports

        with bounded_memory(self.max_memory):
            data = expand(self.rules, self.symbols, max_length=self.header.length, buffer=True)
        if container.checksum(data) != self.header.blake2b:
            raise FormatError("checksum mismatch: the archive is corrupt")
        return data

    def describe(self) -> dict:
        """Header fields, rule and symbol counts, and sizes by part (the coder's describe)."""
        return _description(self.header, self.archive_bytes, self.header_bytes, self.payload, self.coder,
                            self.rules, self.symbols, len(self.symbols))


def _description(header: container.Header, archive_bytes: int, header_bytes: int, payload: bytes, coder: Coder,
                 rules: np.ndarray, symbols: np.ndarray | None, symbol_count: int) -> dict:
    """What inspect says of an archive: its header's fields, ``rules`` and ``symbol_count``, and
    the sizes by part that ``coder`` reads from the payload (``symbols``: None where the archive
    was not decoded, as a coder that ``describes_from_payload`` allows)."""
    info = {
        "codec": header.codec, "params": header.params, "original_bytes": header.length, "blake2b": header.blake2b,
        "archive_bytes": archive_bytes, "header_bytes": header_bytes, "payload_bytes": len(payload),
        "rules": len(rules), "dictionary_size": BYTE_SYMBOLS + len(rules), "symbols": symbol_count,
    }
    if header.rules is not None:
        info["referenced_rules"] = header.rules["count"]
    info.update(coder.describe(payload, rules, symbols))
    if header.length:
        info["bits_per_byte"] = 8 * archive_bytes / header.length
    return info


def decode_archive(archive: bytes, registry: Registry | None = None, rules: np.ndarray | None = None, *,
                   max_memory: int | None = None, unpacked=None) -> DecodedArchive:
    """Unpack and decode an archive once, validated. ``rules``: the dictionary an archive
    references (FormatError if it is needed and missing or not the one named). ``max_memory``:
    this call's bound in bytes (FormatError before allocating past it; None: the default, see
    :mod:`chunkpress.format.limits`). ``unpacked``: ``container.unpack(archive)``, if the
    caller has it already."""
    with bounded_memory(max_memory):
        decoded = _decode(unpacked or container.unpack(archive), len(archive), registry or default_registry(), rules)
    return attrs.evolve(decoded, max_memory=max_memory)


def _decode(unpacked, archive_bytes: int, registry: Registry, rules) -> DecodedArchive:
    header, payload, header_bytes = unpacked
    dictionary_size = None
    if header.rules is not None:
        if rules is None:
            raise FormatError(
                f"this archive references a dictionary of {header.rules['count']:,} rules "
                f"(blake2b {header.rules['blake2b']}); pass it with --rules"
            )
        rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
        if len(rules) != header.rules["count"] or container.rules_digest(rules) != header.rules["blake2b"]:
            raise FormatError("the rules given are not the dictionary this archive references "
                              f"(blake2b {header.rules['blake2b']})")
        dictionary_size = BYTE_SYMBOLS + len(rules)
    # the output and at most one 8-byte symbol per output byte: refuse before allocating
    check_allocation(f"{header.length:,} bytes of output", (1 + BYTES_PER_SYMBOL) * header.length + len(payload))
    info = _coder_info(header, registry)
    # the program's helper: the coder's loop compiles while its modules load and the rules decode
    started_ahead(info.name, registry)
    coder = _coder_for(header, registry, info)
    if dictionary_size is not None and not coder.references_dictionary:
        raise FormatError(f"codec {header.codec} cannot use an external dictionary, but the header names one")
    try:
        with decoding_memory_cap():
            # each symbol stands for at least one byte: the header's length bounds the string
            stored, symbols = coder.decode(payload, dictionary_size=dictionary_size, max_symbols=header.length)
        if header.rules is None:
            rules = stored
    except ChunkpressError:
        raise
    except MemoryError:
        raise FormatError(f"corrupt payload for codec {header.codec}: it asks for more memory than the limit") from None
    except Exception as exc:  # a coder bug or corrupt payload must not escape as a crash
        raise FormatError(f"corrupt payload for codec {header.codec}: {type(exc).__name__}: {exc}") from None
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    if len(rules):  # cyclic or future rules are refused here, for inspect as for decompress
        from .format.expand import symbol_lengths  # numba: imported after the helper starts

        symbol_lengths(rules)
    return DecodedArchive(
        header=header, payload=payload, header_bytes=header_bytes, archive_bytes=archive_bytes, coder=coder,
        rules=rules, symbols=symbols if getattr(symbols, "dtype", None) == np.uint8 else np.asarray(symbols, dtype=np.int64),
    )


def inspect(archive: bytes, registry: Registry | None = None, rules: np.ndarray | None = None, *,
            max_memory: int | None = None) -> dict:
    """Header fields, rule and symbol counts, and sizes by part. An archive that references a
    dictionary is described from its header alone unless ``rules`` are given."""
    unpacked = container.unpack(archive)
    header, payload, header_bytes = unpacked
    if header.rules is not None and rules is None:  # the payload alone cannot be decoded
        return {"codec": header.codec, "params": header.params, "original_bytes": header.length,
                "archive_bytes": len(archive), "header_bytes": header_bytes, "payload_bytes": len(payload),
                "referenced_rules": header.rules["count"], "rules_blake2b": header.rules["blake2b"]}
    registry = registry or default_registry()
    coder = _coder_for(header, registry)
    if coder.describes_from_payload and header.rules is None:  # bytes, no rules: nothing to decode
        return _description(header, len(archive), header_bytes, payload, coder, np.zeros((0, 2), dtype=np.int64),
                            None, header.length)
    with bounded_memory(max_memory):
        return _decode(unpacked, len(archive), registry, rules).describe()


__all__ = ["Pipeline", "DecodedArchive", "inspect", "decode_archive", "default_config"]


def _weighted(words) -> bool:
    """Whether some word is seen more than once: else weights (8 bytes a position) would be
    the largest array of the run and say nothing (one long pre-token, as in periodic text)."""
    return bool(words.counts.size) and int(words.counts.max()) > 1


def _word_weights(words):
    """Each byte of ``words`` weighted by its word's count, or None (see :func:`_weighted`)."""
    return words.position_weights() if _weighted(words) else None
