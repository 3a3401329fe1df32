"""The decompressor: every archive back to its bytes, whatever its framing.

As python-zstandard's ``ZstdDecompressor``: a :class:`Decompressor` holds the settings of
reading (a dictionary that archives may reference, a memory bound, a bound on the output) and
reads single archives, block archives, stored archives and any number of them one after the
other (their concatenation, as gzip, xz and zstd do): from bytes
(:meth:`~Decompressor.decompress`), from stream to stream (:meth:`~Decompressor.copy_stream`)
or as a file object (:meth:`~Decompressor.stream_reader`). A single archive is read up to its
end and no further, a block archive a block at a time, so memory stays that of one archive or
block whatever the input's length.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import BinaryIO

import numpy as np

from .blockmode import describe_stream, iter_blocks
from .compressor import rules_file
from .errors import FormatError
from .fileio import Readable
from .format import blocks, container
from .format.limits import bounded_memory, check_max_memory, memory_limit
from .format.lookahead import Lookahead
from .pipeline import decode_archive, inspect
from .plugin.registry import Registry


class Decompressor:
    """``rules``: the dictionary that archives made with ``rules_ref`` reference (a rules
    file's path or bytes, or a Tokenizer); ``max_memory``: each call's bound in bytes, checked
    before each allocation (FormatError past it; None: ``CHUNKPRESS_MAX_MEMORY`` or half the
    machine's memory; other threads keep their own bounds, and the process's limits are never
    changed); ``max_output_size``: refuse archives that decode to more bytes than this."""

    def __init__(self, *, rules=None, max_memory: int | None = None, max_output_size: int | None = None,
                 registry: Registry | None = None):
        check_max_memory(max_memory)
        if max_output_size is not None and (isinstance(max_output_size, bool) or not isinstance(max_output_size, int)
                                            or max_output_size < 0):
            raise FormatError(f"max_output_size must be a number of bytes, not {max_output_size!r}")
        tokenizer, _ = rules_file(rules, decoding=True)
        self.rules: np.ndarray | None = None if tokenizer is None else tokenizer.rules
        self.max_memory, self.max_output_size, self.registry = max_memory, max_output_size, registry

    def decompress(self, data) -> bytes:
        """The bytes of every archive in ``data``, one after the other; FormatError if anything
        does not verify."""
        return b"".join(self.pieces(io.BytesIO(bytes(data))))

    def copy_stream(self, source: Readable, dest, *, progress: Callable[[int], None] | None = None) -> int:
        """Decode every archive in ``source`` into ``dest`` (anything with ``write``; None: only
        check them, as ``-t``). Returns the bytes decoded. ``progress`` hears the blocks done."""
        total = 0
        for piece in self.pieces(source, progress):
            if dest is not None:
                dest.write(piece)
            total += len(piece)
        return total

    def stream_reader(self, source: Readable) -> io.BufferedReader:
        """A readable file object of the decoded bytes of the archives in ``source``, decoded
        one archive or block at a time as it is read."""
        return io.BufferedReader(DecompressionReader(self.pieces(source)))

    def pieces(self, source: Readable, progress: Callable[[int], None] | None = None) -> Iterator[bytes | bytearray]:
        """The decoded pieces (an archive, or a block) of every archive in ``source``, in order."""
        with bounded_memory(self.max_memory):
            limit = memory_limit()
        look = Lookahead(source)
        budget = [self.max_output_size]
        first = True
        while first or look.held or look.fill(len(blocks.MAGIC) + 1):
            if look.held < len(blocks.MAGIC) + 1:
                look.fill(len(blocks.MAGIC) + 1 - look.held)
            magic = bytes(look.buf[look.pos: look.pos + len(blocks.MAGIC)])
            if magic == blocks.MAGIC:
                yield from iter_blocks(look, b"", lambda archive, rules: self._decoded(archive, rules, budget),
                                       self.rules, progress)
            elif magic == container.MAGIC:
                with bounded_memory(self.max_memory):
                    archive = container.read_archive(look, limit, (blocks.MAGIC,))
                yield self._decoded(archive, self.rules, budget)
            elif first:
                raise FormatError("not a chunkpress archive (bad magic bytes)")
            else:
                raise FormatError("bytes that are not an archive follow the last archive")
            first = False

    def _decoded(self, archive: bytes, rules, budget: list) -> bytearray:
        """One single archive's bytes, within this call's bounds (``budget[0]``: the output
        bytes still allowed, None: no bound)."""
        with bounded_memory(self.max_memory):
            unpacked = container.unpack(archive)
            header, payload, _ = unpacked
            if budget[0] is not None:
                if header.length > budget[0]:
                    raise FormatError(f"the archives decode to more than max_output_size "
                                      f"({self.max_output_size:,} bytes)")
                budget[0] -= header.length
            if header.codec == container.STORED_CODEC and not header.params and header.rules is None:
                # the bytes as they are: no coder to load
                if len(payload) != header.length or container.checksum(payload) != header.blake2b:
                    raise FormatError("checksum mismatch: the archive is corrupt")
                return bytearray(payload)
            return decode_archive(archive, self.registry, rules, max_memory=self.max_memory, unpacked=unpacked).data()

    def describe(self, source: BinaryIO, per_block: bool = False) -> dict:
        """What ``inspect`` shows of the one archive in ``source``: its header and sizes by part;
        for a block archive, totals over the blocks (``per_block``: and each block's own, as
        ``"per_block"``)."""
        head = source.read(len(blocks.MAGIC) + 1)
        with bounded_memory(self.max_memory):
            if head[: len(blocks.MAGIC)] == blocks.MAGIC:
                info, each = describe_stream(source, head, lambda archive, rules: inspect(archive, self.registry, rules),
                                             self.rules)
                return {**info, "per_block": each} if per_block else info
            if head[: len(container.MAGIC)] != container.MAGIC:
                raise FormatError("not a chunkpress archive (bad magic bytes)")
            look = Lookahead(source, head)
            archive = container.read_archive(look, memory_limit())
            if look.held or look.fill(1):
                raise FormatError("bytes follow the archive (inspect reads one archive)")
            return inspect(archive, self.registry, self.rules)


class DecompressionReader(io.RawIOBase):
    """The decoded bytes of a sequence of pieces, as a raw readable stream."""

    def __init__(self, pieces: Iterator[bytes | bytearray]):
        self._pieces = pieces
        self._piece = memoryview(b"")
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._piece:
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._piece = memoryview(piece)
        n = min(len(buffer), len(self._piece))
        buffer[:n] = self._piece[:n]
        self._piece = self._piece[n:]
        self._read += n
        return n

    def tell(self) -> int:
        """Bytes read so far (decoded), as gzip's reader tells."""
        return self._read
