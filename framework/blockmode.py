"""Block mode: inputs of any size in bounded memory, blocks in parallel.

The input is read block by block (cut after the last newline before ``block_size``, so words and
lines stay whole), each block is compressed on its own by the configured pipeline and written as
a frame of a block archive (:mod:`.format.blocks`); decompression streams block by block. With
``workers`` or ``scheduler`` the blocks run as Dask distributed tasks, at most two per worker in
flight, and are written in order: the archive is byte-identical whatever runs it. Memory per
worker is that of one block (about 100 bytes per input byte with the default pipeline).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from typing import BinaryIO, Callable, Iterator

from .errors import ChunkpressError, ConfigError, FormatError, UnverifiedWarning
from .format import blocks
from .parallel import ordered_map

#: inputs larger than this use block mode by default (one run holds ~100 B per input byte)
AUTO_BLOCK_THRESHOLD = 256 << 20
#: the default block size: about 3 GB per worker with the default pipeline
DEFAULT_BLOCK_SIZE = 32 << 20
#: the default for a stream of unknown length (stdin, a FIFO): 300 MB of zeros from a pipe
#: peaks at 0.85 GB with 16 MB blocks, 1.52 GB with 32 MB ones
STREAM_BLOCK_SIZE = 16 << 20


def check_dictionary_options(*, rules: bool, rules_ref: bool, shared_dictionary: bool, blocks: bool | None,
                             spell: Callable[[str], str] = str) -> None:
    """Refuse the dictionary options that cannot go together (``blocks``: whether the input is
    coded in blocks, None before that is known). ``spell`` names an option as its caller shows
    it: ``rules_ref`` in Python, ``--rules-ref`` on the command line."""
    if rules and shared_dictionary:
        raise ConfigError(f"{spell('rules')} already shares a dictionary across the blocks; "
                          f"{spell('shared_dictionary')} learns one from the first block instead: give one of them")
    if rules_ref and not rules:
        raise ConfigError(f"{spell('rules_ref')} needs {spell('rules')}")
    if blocks and rules_ref:
        raise ConfigError(f"{spell('rules_ref')} is for single archives; a block archive stores its shared "
                          "dictionary once")
    if blocks is False and shared_dictionary:
        raise ConfigError(f"{spell('shared_dictionary')} is for block mode (give {spell('block_size')})")


def wants_blocks(size: int | None, *, block_size=None, workers=None, scheduler=None, rules_ref: bool = False) -> bool:
    """Block mode when asked for (a block size, workers, a scheduler), and by default for inputs
    above the threshold and for streams (``size`` None: stdin, a FIFO, a device), whose length
    is not known, so that no input can exhaust memory. One place for the command line and
    ``chunkpress.compress``."""
    if block_size or workers or scheduler:
        return True
    if size is None:  # a single archive that references rules is read whole, within the memory limit
        return not rules_ref
    return size > AUTO_BLOCK_THRESHOLD


def default_block_size(size: int | None) -> int:
    """The block size when none is given: smaller for a stream of unknown length."""
    return DEFAULT_BLOCK_SIZE if size is not None else STREAM_BLOCK_SIZE


def split_blocks(stream: BinaryIO, block_size: int) -> Iterator[bytes]:
    """Blocks of at most ``block_size`` bytes, each ending after a newline where there is one."""
    carry = b""
    while True:
        chunk = stream.read(block_size - len(carry))
        data = carry + chunk
        if not chunk:
            if data:
                yield data
            return
        if len(data) < block_size:
            carry = data
            continue
        cut = _cut(data, block_size)
        yield data[:cut]
        carry = data[cut:]


def _cut(data, block_size: int) -> int:
    """Where a full block of ``data`` ends: after its last newline, else at ``block_size``."""
    return data.rfind(b"\n", 0, block_size) + 1 or block_size


class _Frames:
    """A block archive written to ``out``: the start (with a shared ``dictionary``) when made,
    a frame per :meth:`add`, and the end record (count, length, digest) by :meth:`close`."""

    def __init__(self, out, dictionary: bytes | None = None):
        self.out = out
        self.count = self.total = 0
        self.digest = blocks.stream_digest()
        out.write(blocks.start(dictionary or b""))

    def add(self, block: bytes, archive: bytes) -> None:
        self.out.write(blocks.frame(self.count, archive))
        self.digest.update(block)
        self.count, self.total = self.count + 1, self.total + len(block)

    def close(self) -> int:
        self.out.write(blocks.end(self.count, self.total, self.digest.digest()))
        return self.total


def _compress_block(block: bytes, pipe, dictionary: bytes | None = None) -> bytes:
    """One block, here with the pipeline in hand, or in a Dask worker with a pipeline built from
    its config (a dict; plugins must be installed there): learned on its own, or coded with the
    shared ``dictionary`` (a rules file) that its archive references."""
    from .pipeline import Pipeline
    from .config import config_from_dict

    if isinstance(pipe, dict):
        pipe = Pipeline(config_from_dict(pipe))
    if dictionary is None:
        return pipe.compress(block)
    tokenizer = _shared_tokenizer(dictionary)
    return pipe.encode(tokenizer.rules, tokenizer.symbols(block), block, reference=True)


@functools.lru_cache(maxsize=2)
def _shared_tokenizer(dictionary: bytes):
    """The shared dictionary, read and checked once per process, not once per block."""
    from .text.tokenizer import Tokenizer

    return Tokenizer.from_rules_file(dictionary)


def compress_stream(pipe, stream: BinaryIO, out, block_size: int, workers: int | None = None,
                    scheduler: str | None = None, progress: Callable[[int, int], None] | None = None,
                    dictionary: bytes | None = None, learn_dictionary: bool = False) -> int:
    """Write the block archive of ``stream`` to ``out`` (an object with ``write``). Returns the
    number of input bytes. Every block learns its own dictionary, or all share one, stored once
    at the start: ``dictionary`` (a rules file's bytes) or, with ``learn_dictionary``, the one
    the pipeline learns from the first block (a sample of the input)."""
    if dictionary is not None or learn_dictionary:
        pipe.check_references_dictionary()  # before any learning
    blocks_in = split_blocks(stream, block_size)
    if learn_dictionary:
        first = next(blocks_in, b"")
        dictionary = _learned_dictionary(pipe, first)
        blocks_in = itertools.chain([first] if first else [], blocks_in)
    frames = _Frames(out, dictionary)
    ahead = list(itertools.islice(blocks_in, 2))
    if len(ahead) < 2:  # one block: local workers would only add their start-up (seconds) to the work
        workers = None
    blocks_in = itertools.chain(ahead, blocks_in)
    remote = workers or scheduler
    for block, archive in ordered_map(_compress_block, blocks_in, pipe.config.to_dict() if remote else pipe,
                                      workers=workers, scheduler=scheduler, broadcast=(dictionary,)):
        frames.add(block, archive)
        if progress:
            progress(frames.count, frames.total)
    return frames.close()


def _learned_dictionary(pipe, sample: bytes) -> bytes:
    from .format.container import checksum
    from .format.rulesfile import RulesFile

    rules = pipe.fit(sample, trace=False).rules
    return RulesFile.learned(rules, pipe.config.to_dict(), length=len(sample), blake2b=checksum(sample),
                             learned_from="the first block").to_bytes()


def unverified_order(version: int) -> str:
    return (f"block archive version {version} records no block order (version 3 does): blocks dropped, repeated or "
            "moved in it cannot be detected")


def _read_start(stream: BinaryIO, head: bytes, rules):
    """(version, the shared dictionary's bytes or None, the rules every block uses: ``rules``
    if given, else the shared dictionary's, else None)."""
    from .format.rulesfile import RulesFile

    version, dictionary = blocks.read_start(stream, head)
    if version < 3:
        warnings.warn(UnverifiedWarning(unverified_order(version)), stacklevel=3)
    if dictionary is not None and rules is None:
        try:
            rules = RulesFile.from_bytes(dictionary).rules
        except ChunkpressError as exc:
            raise FormatError(f"the shared dictionary: {exc}") from None
    return version, dictionary, rules


def decompress_stream(stream: BinaryIO, out, head: bytes = b"", registry=None, rules=None,
                      progress: Callable[[int], None] | None = None) -> int:
    """Decode a block archive block by block into ``out``; a damaged block is named by index.
    ``progress`` hears the number of blocks written after each."""
    return _write_all(_iter_blocks(stream, head, registry, rules, progress), out)


def _iter_blocks(stream: BinaryIO, head: bytes, registry, rules, progress) -> Iterator[bytes | bytearray]:
    """Each block of a block archive, decoded; the end record is checked after the last."""
    from .pipeline import decode_archive

    version, dictionary, rules = _read_start(stream, head, rules)
    total = 0
    digest = blocks.stream_digest()
    for index, archive in blocks.read_frames(stream, version, lambda: (total, digest.digest())):
        try:
            data = decode_archive(archive, registry, rules).data()
        except ChunkpressError as exc:
            raise FormatError(f"block {index}: {exc}") from None
        digest.update(data)
        total += len(data)
        yield data
        if progress:
            progress(index + 1)


def _write_all(pieces: Iterator[bytes | bytearray], out) -> int:
    total = 0
    for piece in pieces:
        out.write(piece)
        total += len(piece)
    return total


def decompress_members(stream: BinaryIO, out, head: bytes = b"", registry=None, rules=None,
                       progress: Callable[[int], None] | None = None, limit: int | None = None) -> int:
    """Decode every archive in ``stream``, one after another, into ``out``: concatenated
    archives (single or block) decode to the concatenation, as gzip, xz and zstd do. A block
    archive is decoded block by block; a single archive is read whole (at most ``limit``
    bytes). Returns the bytes written; FormatError on anything that is not an archive."""
    return _write_all(iter_members(stream, head, registry, rules, progress, limit), out)


def iter_members(stream: BinaryIO, head: bytes = b"", registry=None, rules=None,
                 progress: Callable[[int], None] | None = None,
                 limit: int | None = None) -> Iterator[bytes | bytearray]:
    """The decoded pieces of every archive in ``stream`` (a block at a time), in order: what
    :func:`decompress_members` writes and ``chunkpress.open`` reads. A single archive is read
    up to its end and no further (at most ``limit`` bytes), so what follows it streams too."""
    from .format import container
    from .pipeline import decode_archive

    first = True
    head += stream.read(max(0, len(blocks.MAGIC) + 1 - len(head)))
    while first or head:
        magic = head[: len(blocks.MAGIC)]
        if magic == blocks.MAGIC:
            yield from _iter_blocks(stream, head, registry, rules, progress)
            head = b""
        elif magic == container.MAGIC:
            archive, head = container.read_archive(stream, head, limit, (blocks.MAGIC,))
            yield decode_archive(archive, registry, rules).data()
        elif first:
            raise FormatError("not a chunkpress archive (bad magic bytes)")
        else:
            raise FormatError("bytes that are not an archive follow the last archive")
        first = False
        head += stream.read(max(0, len(blocks.MAGIC) + 1 - len(head)))


class BlockWriter:
    """Bytes pushed in, a block archive written out as the blocks fill: the incremental form of
    :func:`compress_stream` (blocks cut the same way, compressed here), for ``chunkpress.open``."""

    def __init__(self, pipe, out, block_size: int):
        self.pipe, self.block_size = pipe, block_size
        self.pending = bytearray()
        self.frames = _Frames(out)

    def write(self, data) -> int:
        self.pending += data
        while len(self.pending) >= self.block_size:
            cut = _cut(self.pending, self.block_size)
            self._block(bytes(self.pending[:cut]))
            del self.pending[:cut]
        return len(data)

    def close(self) -> None:
        if self.pending:
            self._block(bytes(self.pending))
            self.pending.clear()
        self.frames.close()

    def _block(self, block: bytes) -> None:
        self.frames.add(block, _compress_block(block, self.pipe))


def describe_stream(stream: BinaryIO, head: bytes = b"", registry=None, rules=None) -> tuple[dict, list[dict]]:
    """What ``inspect`` shows of a block archive: totals over the blocks, and each block's own
    description (as for a single archive), read one block at a time."""
    from .pipeline import inspect

    version, dictionary, rules = _read_start(stream, head, rules)
    per_block = []
    for index, archive in blocks.read_frames(stream, version):
        try:
            per_block.append(inspect(archive, registry, rules))
        except ChunkpressError as exc:
            raise FormatError(f"block {index}: {exc}") from None
    if stream.read(1):
        raise FormatError("block archive corrupt: bytes follow its end (inspect reads one archive)")
    original = sum(b["original_bytes"] for b in per_block)
    size = stream.tell() if stream.seekable() else None
    summary = {
        "format": f"block archive (version {version})",
        "block_order": "recorded" if version >= 3 else "not recorded (cannot be verified)",
        "blocks": len(per_block),
        "codecs": ", ".join(sorted({b["codec"] for b in per_block})) or "-",
        "original_bytes": original,
        "shared_dictionary_bytes": len(dictionary or b""),
        "shared_dictionary_rules": 0 if rules is None else len(rules),
        "block_archive_bytes": sum(b["archive_bytes"] for b in per_block),
    }
    if size is not None:
        summary["archive_bytes"] = size
        if original:
            summary["bits_per_byte"] = 8 * size / original
    return summary, per_block
