"""Block archives written and read: inputs of any size in bounded memory, blocks in parallel.

The input is read block by block (cut after the last newline before ``block_size``, so words and
lines stay whole), each block is compressed on its own by a function the caller gives (the
compressor's, see :mod:`chunkpress.compressor`) and written as a frame of a block archive
(:mod:`.format.blocks`); reading streams block by block. With ``workers`` or ``scheduler`` the
blocks run as Dask distributed tasks, at most two per worker in flight, and are written in
order: the archive is byte-identical whatever runs it. Memory per worker is that of one block.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from .errors import ChunkpressError, FormatError, UnverifiedWarning
from .fileio import Readable
from .format import blocks
from .parallel import ordered_map

#: inputs larger than this use block mode by default (one run holds ~60 B per input byte)
AUTO_BLOCK_THRESHOLD = 256 << 20
#: the default block size: about 2 GB per worker with the levels
DEFAULT_BLOCK_SIZE = 32 << 20
#: the default for a stream of unknown length (stdin, a FIFO): 300 MB of zeros from a pipe
#: peaks at 0.85 GB with 16 MB blocks, 1.52 GB with 32 MB ones
STREAM_BLOCK_SIZE = 16 << 20
#: the smallest and the largest block
MIN_BLOCK_SIZE = 1 << 10
MAX_BLOCK_SIZE = 16 << 30

def parse_size(text: str) -> int:
    """A block size written as digits with an optional fraction and K, M or G (32M, 1.5G,
    500000); ValueError for anything else, or outside 1K to 16G."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    match = re.fullmatch(r"(\d{1,12}(?:\.\d{1,6})?)([KMGkmg]?)", text.strip())
    if not match:
        raise ValueError(f"not a size: {text!r} (use e.g. 32M, 1G, 500000)")
    value = int(float(match.group(1)) * units[match.group(2).upper()])
    if not MIN_BLOCK_SIZE <= value <= MAX_BLOCK_SIZE:
        raise ValueError(f"a block size must lie between 1K and 16G, not {text}")
    return value


#: what compresses one block: ``compress_block(block, settings, dictionary)`` -> its archive; a
#: module-level function, so that Dask can run it in a worker
CompressBlock = Callable[[bytes, Any, "bytes | None"], bytes]


def split_blocks(stream: Readable, block_size: int) -> Iterator[bytes]:
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


def compress_stream(compress_block: CompressBlock, settings, stream: Readable, out, block_size: int,
                    workers: int | None = None, scheduler: str | None = None,
                    progress: Callable[[int, int], None] | None = None, dictionary: bytes | None = None) -> int:
    """Write the block archive of ``stream`` to ``out`` (an object with ``write``), each block's
    archive made by ``compress_block(block, settings, dictionary)``, here or in Dask workers
    (``settings`` must then pickle). ``dictionary``: the bytes of a rules file that every block
    shares, stored once at the start. ``progress`` hears (blocks, input bytes) after each block.
    Returns the number of input bytes."""
    frames = _Frames(out, dictionary)
    blocks_in = split_blocks(stream, block_size)
    ahead = list(itertools.islice(blocks_in, 2))
    if len(ahead) < 2:  # one block: local workers would only add their start-up (seconds) to the work
        workers = None
    for block, archive in ordered_map(compress_block, itertools.chain(ahead, blocks_in), settings,
                                      workers=workers, scheduler=scheduler, broadcast=(dictionary,)):
        frames.add(block, archive)
        if progress:
            progress(frames.count, frames.total)
    return frames.close()


class BlockWriter:
    """Bytes pushed in, a block archive written out as the blocks fill: the incremental form of
    :func:`compress_stream` (blocks cut the same way, compressed here)."""

    def __init__(self, compress_block: CompressBlock, settings, out, block_size: int):
        self.compress_block, self.settings, self.block_size = compress_block, settings, block_size
        self.pending = bytearray()
        self.frames = _Frames(out)

    def write(self, data) -> int:
        self.pending += data
        while len(self.pending) >= self.block_size:
            cut = _cut(self.pending, self.block_size)
            self._block(bytes(self.pending[:cut]))
            del self.pending[:cut]
        return len(data)

    def close(self) -> int:
        if self.pending:
            self._block(bytes(self.pending))
            self.pending.clear()
        return self.frames.close()

    def _block(self, block: bytes) -> None:
        self.frames.add(block, self.compress_block(block, self.settings, None))


def unverified_order(version: int) -> str:
    return (f"block archive version {version} records no block order (version 3 does): blocks dropped, repeated or "
            "moved in it cannot be detected")


def read_start(stream: Readable, head: bytes, rules):
    """(version, the shared dictionary's bytes or None, the rules every block uses: ``rules``
    if given, else the shared dictionary's, else None). Versions 1 and 2 are read with an
    :class:`~chunkpress.errors.UnverifiedWarning`."""
    version, dictionary = blocks.read_start(stream, head)
    if version < 3:
        warnings.warn(UnverifiedWarning(unverified_order(version)), stacklevel=3)
    if dictionary is not None and rules is None:
        try:
            from .format.rulesfile import RulesFile  # numba (the rules' varints): shared dictionaries only

            rules = RulesFile.from_bytes(dictionary).rules
        except ChunkpressError as exc:
            raise FormatError(f"the shared dictionary: {exc}") from None
    return version, dictionary, rules


def iter_blocks(stream: Readable, head: bytes, decode: Callable[[bytes, Any], bytes | bytearray], rules=None,
                progress: Callable[[int], None] | None = None) -> Iterator[bytes | bytearray]:
    """Each block of the block archive in ``stream`` (``head``: its first bytes, already read),
    decoded by ``decode(archive, rules)``; a damaged block is named by its index, and the end
    record is checked after the last. ``progress`` hears the blocks done."""
    version, _, rules = read_start(stream, head, rules)
    total = 0
    digest = blocks.stream_digest()
    # the end record is checked against what the blocks decoded to when it is reached
    for index, archive in blocks.read_frames(stream, version, lambda: (total, digest.digest())):  # noqa: B023
        try:
            data = decode(archive, rules)
        except ChunkpressError as exc:
            raise FormatError(f"block {index}: {exc}") from None
        digest.update(data)
        total += len(data)
        yield data
        if progress:
            progress(index + 1)


def describe_stream(stream: BinaryIO, head: bytes, describe: Callable[[bytes, Any], dict],
                    rules=None) -> tuple[dict, list[dict]]:
    """What ``inspect`` shows of a block archive: totals over the blocks, and each block's own
    description (``describe(archive, rules)``), read one block at a time."""
    version, dictionary, rules = read_start(stream, head, rules)
    per_block = []
    for index, archive in blocks.read_frames(stream, version):
        try:
            per_block.append(describe(archive, rules))
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
