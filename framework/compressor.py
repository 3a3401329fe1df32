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
* per archive and per block, at a level: the ways its record in the level table
  (:mod:`chunkpress.levels`) gives for the data, each coded once and the smallest kept: the
  level's pipeline, its plain back end, its trials on small texts; the same decision here, in a
  worker process and on a Dask scheduler, which get the compressor's settings, not a pipeline;
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
from .config import SECTIONS, compress_level, config_from_dict
from .errors import ChunkpressError, ConfigError
from .fileio import Readable, read_input, read_rest
from .format import container
from .format.limits import FIT_BYTES_PER_BYTE, READ_BYTES_PER_BYTE, fits, most_that_fits, work_limit
from .levels import LEVELS, STORED, Level, plain_config, plan
from .pipeline import Pipeline
from .plugin.registry import Registry
from .text.unicodeclasses import unicode_version


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
    overrides as keywords (``scorer=``, ``coder=``, ``pretokenizer=``, ``learner=``,
    ``segmenter=``, ``limits=``, or ``max_rules=`` and ``min_count=``; a top-down ``learner``
    codes its own vocabulary, see :meth:`Pipeline.learned_tokenizer`); ``rules``: reuse a learned dictionary (a rules file's
    path or bytes, or a Tokenizer) instead of learning one, and ``rules_ref``: store only its
    hash; ``block_size``, ``workers`` (local processes), ``scheduler`` (a Dask address),
    ``shared_dictionary`` (the blocks share one dictionary learned from the first)."""

    def __init__(self, level: int | None = None, *, config=None, rules=None, rules_ref: bool = False,
                 block_size: int | None = None, workers: int | None = None, scheduler: str | None = None,
                 shared_dictionary: bool = False, max_rules: int | None = None, min_count: int | None = None,
                 registry: Registry | None = None, **overrides):
        unknown = sorted(set(overrides) - set(SECTIONS))
        if unknown:  # as python-zstandard: a misspelt setting is the caller's error, not a config's
            raise TypeError(f"Compressor() got an unexpected keyword argument {unknown[0]!r}")
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
            at = LEVELS[at].dictionary_level or at if at in LEVELS else at
        self.pipeline = Pipeline.from_config(config, registry, level=at, **overrides)
        self.pipeline.build_coder()  # a coder that cannot be built (a missing package) fails now
        self.pipeline.check_keeps_bytes()
        if self.pipeline.learns_top_down:
            self.pipeline.check_top_down(sized=False)  # a learner that cannot run here fails now, not at the data
        #: the level whose record decides how each input is coded; None where a config,
        #: overrides or a reused dictionary say what to run (it runs as said)
        self.level: Level | None = LEVELS[at] if at is not None and config is None and not overrides and \
            rules is None else None
        self._registry = registry
        self._ways: dict = {}
        self.tokenizer, self.dictionary = rules_file(rules)
        if self.tokenizer is not None and not self.tokenizer.keeps_bytes:  # it would code other bytes
            raise ConfigError(f"rules: their normalizer {self.tokenizer.normalizer!r} rewrites the text, and an "
                              "archive gives back its bytes: compress with rules that name none")
        if self.tokenizer is not None and "segmenter" in overrides:  # the rules cut text as told, not as recorded
            self.tokenizer = self.tokenizer.with_segmenter(self.pipeline.config.segmenter.name)
        if rules_ref or shared_dictionary:
            self.pipeline.check_references_dictionary()

    def __getstate__(self) -> dict:
        """What a worker process or a Dask worker needs to code blocks as this compressor does:
        the pipeline's config and the level that decides (plugins must be installed there)."""
        return {"config": self.pipeline.config.to_dict(), "level": None if self.level is None else self.level.number}

    def __setstate__(self, state: dict) -> None:
        self.pipeline = Pipeline(config_from_dict(state["config"]))
        self.level = None if state["level"] is None else LEVELS[state["level"]]
        self._registry, self._ways = None, {}
        self.tokenizer = self.dictionary = None
        self.block_size = self.workers = self.scheduler = None
        self.rules_ref = self.shared_dictionary = False

    def most_in_memory(self, most: int) -> int:
        """The longest input, up to ``most`` bytes, whose single archive (learning, and the
        level's coder's tables) fits the memory limit: at least 64 KiB."""
        return most_that_fits(self.pipeline.working_bytes, most)

    def way(self, way) -> Pipeline:
        """The pipeline of one of the level table's ways (:mod:`chunkpress.levels`), built when
        first needed: a trial's coder loads compiled code that most inputs never need."""
        if way not in self._ways:
            kind, number, arg = way
            plain = plain_config(LEVELS[number], arg) if kind == "plain" else None
            if plain is not None:
                built = Pipeline(config_from_dict(plain, self._registry), self._registry)
            elif self.level is not None and number == self.level.number and arg is None:
                built = self.pipeline
            else:
                extra = {"pretokenizer": arg} if arg is not None else {}
                built = Pipeline.from_config(None, self._registry, level=number, **extra)
            self._ways[way] = built
        return self._ways[way]

    def wants_blocks(self, size: int | None) -> bool:
        """Whether an input of ``size`` bytes (None: a stream of unknown length) is written as
        a block archive; ConfigError where the dictionary options say otherwise. Workers do not
        decide it: an archive is the same bytes whatever codes its blocks."""
        asked = bool(self.block_size or self.scheduler)  # workers share blocks; they make none
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

    def compressobj(self, *, block_size: int = STREAM_BLOCK_SIZE) -> CompressionObj:
        """As zlib's and python-zstandard's: ``compress(data)`` takes the input in pieces and
        gives back the archive's bytes as its blocks fill, ``flush()`` the rest and its end; the
        pieces joined are one block archive (what :meth:`stream_writer` writes)."""
        return CompressionObj(self, block_size)

    def archive_of(self, data: bytes, progress: Callable | None = None, dictionary: bytes | None = None) -> bytes:
        """One archive of ``data``: the coder's, with the learned or reused dictionary (a shared
        ``dictionary`` of a block archive is referenced), the smallest of the ways the level
        table gives (:func:`chunkpress.levels.plan`), or the bytes stored as they are where
        that is smaller. ``progress`` hears the learner of the first way coded."""
        data = bytes(data)
        if dictionary is not None:
            tokenizer, reference = _shared_tokenizer(dictionary), True
        else:
            tokenizer, reference = self.tokenizer, self.rules_ref
        stored = container.stored_size(len(data))
        rules = tokenizer.rules if tokenizer is not None else np.zeros((0, 2), dtype=np.int64)
        if len(container.pack(self.pipeline.header(rules, data, reference), b"")) > stored:
            # the coder's header alone is larger than the stored archive (a tiny input): store it
            # without learning or coding anything
            return container.pack_stored(data)
        archive: bytes | None
        if tokenizer is not None:
            archive = self.pipeline.encode(tokenizer.rules, tokenizer.symbols(data), data, reference=reference)
        elif self.level is None:
            archive = self.pipeline.compress(data, progress=progress)
        else:
            archive = self._smallest_way(data, progress)
        return archive if archive is not None and len(archive) <= stored else container.pack_stored(data)

    def _smallest_way(self, data: bytes, progress) -> bytes | None:
        """The smallest archive of the ways the level table gives for ``data`` (None: stored),
        each coded once; a way whose tables would not fit the memory limit is left out."""
        assert self.level is not None
        found = plan(self.level, data)
        if found.ways == (STORED,):
            return None
        ways = [w for i, w in enumerate(found.ways) if i == 0 or fits(self.way(w).working_bytes, len(data))]
        if found.sample is not None and len(ways) > 1:  # decided on the sample: one way, in full
            sample = found.sample
            ways = [min(ways, key=lambda w: len(self.way(w).compress(sample)))]
        if found.sample is None or ways[0][0] == "plain":  # the plain back end's other settings
            ways += [w for w in found.also if w not in ways and fits(self.way(w).working_bytes, len(data))]
        archives = [self.way(w).compress(data, progress=progress if i == 0 else None) for i, w in enumerate(ways)]
        return min(archives, key=len)

    def _write_blocks(self, source: Readable, out, size: int | None, progress) -> int:
        dictionary = self.dictionary
        if self.shared_dictionary:
            first = source.read(self.block_size_for(size))
            dictionary = _learned_dictionary(self.pipeline, first)
            source = _Prefixed(first, source)
        return compress_stream(compress_block, self, source, out, self.block_size_for(size), self.workers,
                               self.scheduler, progress, dictionary)


def compress_block(block: bytes, compressor: Compressor, dictionary: bytes | None = None) -> bytes:
    """One block's archive, as ``compressor`` codes it: here, or in a worker process or a Dask
    worker, where the compressor arrives as its settings (``Compressor.__getstate__``) and
    decides as it would here; learned on its own, or coded with the shared ``dictionary`` (a
    rules file's bytes) that it references."""
    return compressor.archive_of(block, dictionary=dictionary)


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


class CompressionObj:
    """What :meth:`Compressor.compressobj` returns: a stream writer into a buffer that each call
    empties."""

    def __init__(self, compressor: Compressor, block_size: int):
        self._sink = io.BytesIO()
        self._writer = compressor.stream_writer(self._sink, block_size=block_size)

    def _taken(self) -> bytes:
        out = self._sink.getvalue()
        self._sink.seek(0)
        self._sink.truncate()
        return out

    def compress(self, data) -> bytes:
        """The archive's bytes that ``data`` completes (often none: a block is written when full)."""
        self._writer.write(data)  # ValueError after flush, as the writer's after close
        return self._taken()

    def flush(self) -> bytes:
        """The rest of the archive: the last block and the end record; the object is then done."""
        if self._writer.closed:
            return b""
        self._writer.close()
        return self._taken()
