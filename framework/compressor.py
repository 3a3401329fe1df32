"""The compressor: one object that holds every setting and makes every framing decision.

As python-zstandard's ``ZstdCompressor``: a :class:`Compressor` is made once from a level or a
config (with overrides), a reused dictionary and the block settings, and then compresses bytes
(:meth:`~Compressor.compress`), streams (:meth:`~Compressor.copy_stream`) or writes through a
file object (:meth:`~Compressor.stream_writer`). ``chunkpress.compress``, ``chunkpress.open``,
the numcodecs and zarr codecs and the command line are a few lines over it.

What it decides, in one place:

* the pipeline: a level (default 5) or a config file, with overrides;
* single archive or block archive: blocks when asked for (a block size, workers, a scheduler),
  for streams of unknown length, for inputs over 256 MB, and for inputs whose single archive
  would not fit the memory limit (then in blocks that do);
* the dictionary: learned, reused from a rules file (stored, or referenced by hash), or shared by
  the blocks (given, or learned from the first block);
* per archive and per block, at a level: the chunk pipeline or, where it does not pay, the
  level's plain back end (the raw bytes through zstd or xz -9e, ``config.PLAIN``), decided
  from the data: an input up to 1 MB is coded both ways (-4 and -5 also with -6's pipeline,
  ``config.SMALL_INPUT_LEVEL``) and the smallest kept; a larger one by a 384 KB sample (three
  slices: start, middle, end): text keeps the level's pipeline, other data takes it where it
  beats the plain back end on the sample, else the smaller there of the plain back end and
  (-4, -5) -6's pipeline;
* at -7 ... -9, an input up to 16 KB is also compressed as the level below compresses it, and
  the smaller archive kept (``config.BELOW_TRIED``): so no level from -6 up is larger than the
  one below on a small text;
* at -6 ... -9, an input up to 1 MB is also compressed with the level's dictionary learned
  between runs of non-space instead of GPT-2's pre-tokens, and the smaller archive kept
  (``config.PRETOKENIZER_TRIED``): manuals, licences and source code want the former, prose the
  latter, and a sample cannot tell which;
* then the coder's archive or the bytes stored as they are (container version 2), whichever is
  smaller: no input grows by more than 33 bytes an archive (26 and the varint of its length).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .blockmode import (
    AUTO_BLOCK_THRESHOLD,
    DEFAULT_BLOCK_SIZE,
    MAX_BLOCK_SIZE,
    MIN_BLOCK_SIZE,
    STREAM_BLOCK_SIZE,
    BlockWriter,
    compress_stream,
)
from .config import (
    BELOW_TRIED,
    DICTIONARY_LEVEL,
    PRETOKENIZER_TRIED,
    SMALL_INPUT_LEVEL,
    SMALL_TEXT,
    compress_level,
    config_from_dict,
    plain_preset,
)
from .errors import ChunkpressError, ConfigError
from .fileio import Readable, read_input, read_rest
from .format import container
from .format.limits import FIT_BYTES_PER_BYTE, READ_BYTES_PER_BYTE, fits, most_that_fits, work_limit
from .pipeline import Pipeline
from .plugin.registry import Registry
from .text.unicodeclasses import unicode_version

#: worker processes take seconds to start: an input smaller than this runs in this one
PARALLEL_AT_LEAST = 8 << 20
#: blocks for workers are at least this large (smaller ones lose ratio for little speed)
PARALLEL_BLOCK = 4 << 20
#: an input up to this size is coded with the chunk pipeline and its plain fallback, and the
#: smaller archive kept; a larger one is decided by a trial on TRIAL_SLICES of TRIAL_SLICE bytes
TRIAL_WHOLE = 1 << 20
TRIAL_SLICE, TRIAL_SLICES = 128 << 10, 3


def rules_file(rules, decoding: bool = False):
    """(Tokenizer, the rules file's bytes) from a rules file's path, its bytes, or a Tokenizer;
    (None, None) for None. The bytes are the file's own, as a block archive stores them (a
    Tokenizer's are written afresh). ``decoding``: only to turn ids back into bytes."""
    if rules is None:
        return None, None
    from .text.tokenizer import Tokenizer  # defers numba's kernels of the tokenizer to a job that reuses rules

    if isinstance(rules, Tokenizer):
        return rules, rules.to_rules_file().to_bytes()
    if isinstance(rules, (bytes, bytearray, memoryview)):
        return Tokenizer.from_rules_file(bytes(rules), decoding=decoding), bytes(rules)
    if isinstance(rules, (str, Path)):
        data = read_input(str(rules), work_limit(READ_BYTES_PER_BYTE))  # /dev/zero is refused, not read
        try:
            return Tokenizer.from_rules_file(data, decoding=decoding), data
        except ChunkpressError as exc:
            raise type(exc)(f"{rules}: {exc}") from None
    raise ConfigError(f"rules must be a rules file's path or bytes, or a Tokenizer, not {type(rules).__name__}")


def check_block_size(value) -> int:
    """``value`` if it is a block size (a whole number of bytes from 1K to 16G), else ConfigError."""
    checked = _size_setting("block_size", value, MIN_BLOCK_SIZE, MAX_BLOCK_SIZE)
    if checked is None:
        raise ConfigError("block_size must be a whole number of bytes, not None")
    return checked


def _shapes_dictionary(overrides: dict, rules, rules_ref: bool, shared_dictionary: bool) -> bool:
    """Whether the settings ask for a dictionary: a reused or shared one, or overrides other
    than the coder that shape one (``max_rules = 0`` alone asks for none)."""
    limits = overrides.get("limits") or {}
    return (rules is not None or rules_ref or shared_dictionary
            or any(key not in ("coder", "limits") for key in overrides)
            or bool(limits.get("max_rules")) or limits.get("min_count") is not None)


def _size_setting(name: str, value, least: int, most: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise ConfigError(f"{name} must be a whole number from {least:,} to {most:,}, not {value!r}")
    return value


class Compressor:
    """Every compression setting, checked when made (an unknown plugin, a bad param or options
    that cannot go together fail here, not at the first byte):

    ``level`` (1 fastest ... 9 smallest) or ``config`` (a TOML path; neither: level 5), with
    overrides as keywords (``scorer=``, ``coder=``, ``pretokenizer=``, ``limits=``, or
    ``max_rules=`` and ``min_count=``); ``rules``: reuse a learned dictionary (a rules file's
    path or bytes, or a Tokenizer) instead of learning one, and ``rules_ref``: store only its
    hash; ``block_size``, ``workers`` (local processes), ``scheduler`` (a Dask address),
    ``shared_dictionary`` (the blocks share one dictionary learned from the first)."""

    def __init__(self, level: int | None = None, *, config=None, rules=None, rules_ref: bool = False,
                 block_size: int | None = None, workers: int | None = None, scheduler: str | None = None,
                 shared_dictionary: bool = False, max_rules: int | None = None, min_count: int | None = None,
                 registry: Registry | None = None, **overrides):
        if rules is not None and shared_dictionary:
            raise ConfigError("rules (--rules) already share a dictionary across the blocks; shared_dictionary "
                              "(--shared-dictionary) learns one from the first block instead: give one of them")
        if rules_ref and rules is None:
            raise ConfigError("rules_ref (--rules-ref) needs rules (--rules)")
        self.block_size = check_block_size(block_size) if block_size is not None else None
        self.workers = _size_setting("workers", workers, 0, 1024) or None
        self.scheduler, self.rules_ref, self.shared_dictionary = scheduler, bool(rules_ref), bool(shared_dictionary)
        limits = dict(overrides.pop("limits", None) or {})
        limits.update({k: v for k, v in (("max_rules", max_rules), ("min_count", min_count)) if v is not None})
        if limits:
            overrides["limits"] = limits
        at = compress_level(config, level)
        if at is not None and config is None and _shapes_dictionary(overrides, rules, rules_ref, shared_dictionary):
            at = DICTIONARY_LEVEL.get(at, at)
        self.pipeline = Pipeline.from_config(config, registry, level=at, **overrides)
        self.pipeline.build_coder()  # a coder that cannot be built (a missing package) fails now
        #: a level's plain back end, for data its chunk pipeline does not shrink better (a config,
        #: overrides or a reused dictionary say what to run: they get none)
        self.plain: Pipeline | None = None
        self.plain_executable: Pipeline | None = None
        self._small_input_level: int | None = None
        self._below_level: int | None = None
        self._level, self._pretokenizer_tried = at, None
        self._registry = registry
        if at is not None and config is None and not overrides and rules is None:
            # a plain back end that is the level's own pipeline (-1: zstd on the bytes) is no
            # alternative: trying it would code the input twice the same way
            self.plain, self.plain_executable = (
                None if plain.config == self.pipeline.config else plain
                for plain in (Pipeline(config_from_dict(plain_preset(at, x86), registry), registry)
                              for x86 in (False, True)))
            self._small_input_level = SMALL_INPUT_LEVEL.get(at)
            self._below_level = BELOW_TRIED.get(at)
            self._pretokenizer_tried = PRETOKENIZER_TRIED.get(at)
        self.tokenizer, self.dictionary = rules_file(rules)
        if rules_ref or shared_dictionary:
            self.pipeline.check_references_dictionary()

    def most_in_memory(self, most: int) -> int:
        """The longest input, up to ``most`` bytes, whose single archive (learning, and the
        level's coder's tables) fits the memory limit: at least 64 KiB."""
        return most_that_fits(self.pipeline.working_bytes, most)

    @functools.cached_property
    def small_input(self) -> Pipeline | None:
        """The pipeline inputs up to a megabyte also try (-4, -5: -6's), built when first
        needed: its coder's module loads compiled code, which a tiny input never needs."""
        if self._small_input_level is None:
            return None
        return Pipeline.from_config(None, self._registry, level=self._small_input_level)

    @functools.cached_property
    def other_pretokens(self) -> Pipeline | None:
        """The level's pipeline with the other pre-tokenizer, which inputs up to a megabyte
        also try (-6 ... -9: ``config.PRETOKENIZER_TRIED``), built when first needed."""
        if self._pretokenizer_tried is None:
            return None
        return Pipeline.from_config(None, self._registry, level=self._level, pretokenizer=self._pretokenizer_tried)

    @functools.cached_property
    def below(self) -> Compressor | None:
        """The level below's compressor, which inputs up to SMALL_TEXT also try (-7 ... -9),
        built when first needed."""
        return None if self._below_level is None else Compressor(self._below_level, registry=self._registry)

    def wants_blocks(self, size: int | None) -> bool:
        """Whether an input of ``size`` bytes (None: a stream of unknown length) is written as
        a block archive; ConfigError where the dictionary options say otherwise."""
        parallel = self.workers and (size is None or size >= PARALLEL_AT_LEAST)
        asked = bool(self.block_size or parallel or self.scheduler)
        if asked or (size is None and not self.rules_ref):
            blocks = True
        elif size is None:  # a single archive that references rules: read whole, within the memory limit
            blocks = False
        else:
            blocks = size > AUTO_BLOCK_THRESHOLD or not fits(self.pipeline.working_bytes, size)
        if blocks and self.rules_ref:
            raise ConfigError("rules_ref (--rules-ref) is for single archives; a block archive stores its shared "
                              "dictionary once" + ("" if asked else " (this input is written in blocks: it is "
                                                   "a stream, or too large for one archive in the memory limit)"))
        if not blocks and self.shared_dictionary:
            raise ConfigError("shared_dictionary (--shared-dictionary) is for block mode (give block_size, "
                              "--block-size)")
        return blocks

    def block_size_for(self, size: int | None) -> int:
        """The block size for an input of ``size`` bytes (None: a stream): the one given, else
        32 MB (16 MB for a stream), at most what fits the memory limit."""
        if self.block_size:
            return self.block_size
        default = DEFAULT_BLOCK_SIZE if size is not None else STREAM_BLOCK_SIZE
        if self.workers and size is not None:  # a block for each worker, at least PARALLEL_BLOCK
            default = min(default, max(PARALLEL_BLOCK, -(-size // self.workers)))
        return max(MIN_BLOCK_SIZE, self.most_in_memory(default))

    def compress(self, data, *, progress: Callable | None = None) -> bytes:
        """The archive of ``data``: a single archive, or a block archive (see
        :meth:`wants_blocks`). ``progress`` hears the learner (rules, N, bits) of a single
        archive."""
        data = bytes(data)
        if self.wants_blocks(len(data)):
            out = io.BytesIO()
            self._write_blocks(io.BytesIO(data), out, len(data), None)
            return out.getvalue()
        return self.archive_of(data, progress)

    def copy_stream(self, source: Readable, dest, *, size: int | None = None, rules_progress: Callable | None = None,
                    blocks_progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
        """Compress everything ``source`` holds into ``dest`` (anything with ``write``); ``size``:
        the source's length when known (a file), None for a stream. Returns (bytes read, bytes
        written). ``rules_progress`` hears the learner of a single archive, ``blocks_progress``
        (blocks, bytes) a block archive."""
        if self.wants_blocks(size):
            counted = _Counting(dest)
            return self._write_blocks(source, counted, size, blocks_progress), counted.written
        data = read_rest(source, "", b"", self.most_in_memory(work_limit(FIT_BYTES_PER_BYTE)))
        archive = self.archive_of(data, rules_progress)
        dest.write(archive)
        return len(data), len(archive)

    def stream_writer(self, dest, *, block_size: int = STREAM_BLOCK_SIZE) -> CompressionWriter:
        """A writable file object that compresses what it is given into ``dest``, as a block
        archive written as its blocks fill (memory: one block); closing it writes the end."""
        block_size = check_block_size(block_size)
        if self.rules_ref or self.shared_dictionary or self.tokenizer is not None:
            raise ConfigError("a stream writer learns each block's dictionary: rules, rules_ref and "
                              "shared_dictionary are for compress and copy_stream")
        return CompressionWriter(BlockWriter(compress_block, self, dest, block_size))

    def archive_of(self, data: bytes, progress: Callable | None = None, dictionary: bytes | None = None) -> bytes:
        """One archive of ``data``: the coder's, with the learned or reused dictionary (a shared
        ``dictionary`` of a block archive is referenced), or the bytes stored as they are where
        that is smaller."""
        if dictionary is not None:
            tokenizer, reference = _shared_tokenizer(dictionary), True
        else:
            tokenizer, reference = self.tokenizer, self.rules_ref
        plain = (self.plain_executable if is_executable(data) else self.plain) if tokenizer is None else None
        archive = _smaller_of(self.pipeline, data, tokenizer, reference, progress, plain,
                              lambda: self.small_input, lambda: self.other_pretokens)
        if len(data) <= SMALL_TEXT and tokenizer is None and self.below is not None:
            lower = self.below.archive_of(data)
            if len(lower) < len(archive):
                return lower
        return archive

    def _write_blocks(self, source: Readable, out, size: int | None, progress) -> int:
        dictionary = self.dictionary
        if self.shared_dictionary:
            first = source.read(self.block_size_for(size))
            dictionary = _learned_dictionary(self.pipeline, first)
            source = _Prefixed(first, source)
        remote = self.workers or self.scheduler
        return compress_stream(compress_block, self.pipeline.config.to_dict() if remote else self, source, out,
                               self.block_size_for(size), self.workers, self.scheduler, progress, dictionary)


def compress_block(block: bytes, settings, dictionary: bytes | None = None) -> bytes:
    """One block's archive, here with the compressor in hand, or in a Dask worker with a
    pipeline built from its config (a dict; plugins must be installed there): learned on its
    own, or coded with the shared ``dictionary`` (a rules file's bytes) that it references."""
    if isinstance(settings, Compressor):
        return settings.archive_of(block, dictionary=dictionary)
    pipe = Pipeline(config_from_dict(settings))
    return _smaller_of(pipe, block, _shared_tokenizer(dictionary) if dictionary is not None else None,
                       dictionary is not None, None)


def _smaller_of(pipe: Pipeline, data: bytes, tokenizer, reference: bool, progress, plain: Pipeline | None = None,
                small_input: Callable[[], Pipeline | None] = lambda: None,
                other_pretokens: Callable[[], Pipeline | None] = lambda: None) -> bytes:
    stored = container.stored_size(len(data))
    rules = tokenizer.rules if tokenizer is not None else np.zeros((0, 2), dtype=np.int64)
    if len(container.pack(pipe.header(rules, data, reference), b"")) > stored:
        # the coder's header alone is larger than the stored archive (a tiny input): store it
        # without learning or coding anything
        return container.pack_stored(data)
    if tokenizer is not None:
        archive = pipe.encode(tokenizer.rules, tokenizer.symbols(data), data, reference=reference)
    elif plain is not None:
        archive = _chunked_or_plain(pipe, plain, small_input, other_pretokens, data, progress)
    else:
        archive = pipe.compress(data, progress=progress)
    return archive if len(archive) <= stored else container.pack_stored(data)


def is_executable(data: bytes) -> bool:
    """Whether ``data`` starts as an x86 or x86-64 ELF file (a program, a shared library, a
    Python extension) or a Windows PE file does: machine code, which xz's x86 filter shrinks."""
    if data[:4] == b"\x7fELF" and len(data) >= 20:
        return int.from_bytes(data[18:20], "little" if data[5] == 1 else "big") in (3, 62)  # EM_386, EM_X86_64
    return data[:2] == b"MZ" and b"PE\0\0" in data[:4096]


def _sample(data: bytes) -> bytes:
    """TRIAL_SLICES slices of TRIAL_SLICE bytes, from the start, the middle and the end."""
    step = (len(data) - TRIAL_SLICE) // (TRIAL_SLICES - 1)
    return b"".join(data[i * step:i * step + TRIAL_SLICE] for i in range(TRIAL_SLICES))


def looks_like_text(sample: bytes) -> bool:
    """Whether ``sample`` reads as text: UTF-8 (a character cut at a slice's edge aside) with
    under 1% control bytes other than tab, line feed, form feed and carriage return."""
    bad = sample.decode("utf-8", errors="replace").count("\ufffd")
    controls = sum(sample.count(c) for c in range(32) if c not in (9, 10, 12, 13)) + sample.count(127)
    return bad <= 2 * TRIAL_SLICES and controls < len(sample) // 100


def _chunked_or_plain(pipe: Pipeline, plain: Pipeline, small_input_of: Callable[[], Pipeline | None],
                      other_pretokens_of: Callable[[], Pipeline | None], data: bytes, progress) -> bytes:
    """The archive of the level's pipeline, of its plain back end, of another level's pipeline
    (``small_input``) or of the level's with the other pre-tokenizer (``other_pretokens``),
    whichever the data favours: up to TRIAL_WHOLE bytes, all coded and the smallest kept (the
    first on a tie); above, decided on a sample: the level's pipeline for text or where it
    beats the plain back end there, else the smaller there of the plain and ``small_input``.
    ``small_input_of()`` and ``other_pretokens_of()`` build those pipelines (or None), each
    only where it is tried."""
    sample = _sample(data) if len(data) > TRIAL_WHOLE else b""
    if sample and looks_like_text(sample):
        # text is what chunks are for, and a sample undersells them: its dictionary is paid
        # for by a fraction of the input (on en_mix_10MB's sample xz wins, on the whole -5 does)
        return pipe.compress(data, progress=progress)
    small_input = small_input_of()
    if small_input is not None and not fits(small_input.working_bytes, len(data)):
        small_input = None  # its tables would not fit the memory limit
    if len(data) <= TRIAL_WHOLE:
        archives = [pipe.compress(data, progress=progress), plain.compress(data)]
        archives += [other.compress(data) for other in (small_input, other_pretokens_of()) if other is not None]
        return min(archives, key=len)
    raw = len(plain.compress(sample))
    if len(pipe.compress(sample)) <= raw:
        return pipe.compress(data, progress=progress)
    if small_input is not None and len(small_input.compress(sample)) < raw:
        return small_input.compress(data)
    return plain.compress(data)


@functools.lru_cache(maxsize=2)
def _shared_tokenizer(dictionary: bytes):
    """The shared dictionary, read and checked once per process, not once per block."""
    from .text.tokenizer import Tokenizer  # defers the tokenizer's kernels to jobs with a shared dictionary

    return Tokenizer.from_rules_file(dictionary)


def _learned_dictionary(pipe: Pipeline, sample: bytes) -> bytes:
    from .format.rulesfile import RulesFile  # numba (the rules' varints): a shared dictionary's job only

    rules = pipe.fit(sample, trace=False).rules
    return RulesFile.learned(rules, pipe.config.to_dict(), unicode=unicode_version(), length=len(sample),
                             blake2b=container.checksum(sample), learned_from="the first block").to_bytes()


class _Prefixed:
    """``head`` read again in front of the rest of ``stream``."""

    def __init__(self, head: bytes, stream):
        self.head, self.stream = head, stream

    def read(self, n: int = -1) -> bytes:
        if not self.head:
            return self.stream.read(n)
        if n < 0:
            out, self.head = self.head + self.stream.read(), b""
            return out
        out, self.head = self.head[:n], self.head[n:]
        return out


class _Counting:
    """A sink that counts what passes through it."""

    def __init__(self, sink):
        self.sink, self.written = sink, 0

    def write(self, data: bytes) -> None:
        self.sink.write(data)
        self.written += len(data)


class CompressionWriter(io.RawIOBase):
    """What :meth:`Compressor.stream_writer` returns: bytes written become a block archive;
    ``close`` writes its end (the destination stays open)."""

    def __init__(self, blocks: BlockWriter):
        self._blocks = blocks
        self._written = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if self.closed:  # the end record is written: a block after it would make the archive unreadable
            raise ValueError("write to a closed file")
        n = self._blocks.write(bytes(data))
        self._written += n
        return n

    def tell(self) -> int:
        """Bytes written so far (uncompressed), as gzip's writer tells."""
        return self._written

    def close(self) -> None:
        if not self.closed:
            try:
                self._blocks.close()
            finally:
                super().close()
