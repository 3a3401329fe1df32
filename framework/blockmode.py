"""Block mode: inputs of any size in bounded memory, blocks in parallel.

The input is read block by block (cut after the last newline before ``block_size``, so words and
lines stay whole), each block is compressed on its own by the configured pipeline and written as
a frame of a block archive (:mod:`.format.blocks`); decompression streams block by block. With
``workers`` or ``scheduler`` the blocks run as Dask distributed tasks, at most two per worker in
flight, and are written in order: the archive is byte-identical whatever runs it. Memory per
worker is that of one block (about 100 bytes per input byte with the default pipeline).
"""

from __future__ import annotations

from typing import BinaryIO, Callable, Iterator

from .errors import ChunkpressError, FormatError
from .format import blocks
from .parallel import dask_client

#: inputs larger than this use block mode by default (one run holds ~100 B per input byte)
AUTO_BLOCK_THRESHOLD = 256 << 20
#: the default block size: about 3 GB per worker with the default pipeline
DEFAULT_BLOCK_SIZE = 32 << 20


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
        cut = data.rfind(b"\n") + 1
        if cut <= 0:
            cut = len(data)
        yield data[:cut]
        carry = data[cut:]


def _compress_block(config: dict, block: bytes) -> bytes:
    """One block, in this process or a Dask worker (plugins must be installed there)."""
    from .pipeline import Pipeline
    from .config import config_from_dict

    return Pipeline(config_from_dict(config)).compress(block)


def _compressed_blocks(pipe, stream: BinaryIO, block_size: int, workers, scheduler) -> Iterator[tuple[int, bytes]]:
    """(input bytes, archive) of every block, in order: here, or on Dask workers with at most
    two blocks per worker in flight."""
    if not (workers or scheduler):
        for block in split_blocks(stream, block_size):
            yield len(block), pipe.compress(block)
        return
    config = pipe.config.to_dict()
    with dask_client(workers, scheduler) as client:
        limit = 2 * max(1, len(client.scheduler_info()["workers"]))
        pending: list = []
        for block in split_blocks(stream, block_size):
            pending.append((len(block), client.submit(_compress_block, config, block, pure=False)))
            if len(pending) >= limit:
                size, future = pending.pop(0)
                yield size, future.result()
        for size, future in pending:
            yield size, future.result()


def compress_stream(pipe, stream: BinaryIO, out, block_size: int, workers: int | None = None,
                    scheduler: str | None = None, progress: Callable[[int, int], None] | None = None) -> int:
    """Write the block archive of ``stream`` to ``out`` (an object with ``write``). Returns the
    number of input bytes."""
    out.write(blocks.start())
    total = count = 0
    for size, archive in _compressed_blocks(pipe, stream, block_size, workers, scheduler):
        out.write(blocks.frame(archive))
        total, count = total + size, count + 1
        if progress:
            progress(count, total)
    out.write(blocks.end(count))
    return total


def decompress_stream(stream: BinaryIO, out, head: bytes = b"", registry=None, rules=None,
                      progress: Callable[[int], None] | None = None) -> int:
    """Decode a block archive block by block into ``out``; a damaged block is named by index.
    ``progress`` hears the number of blocks written after each."""
    from .pipeline import decode_archive

    total = 0
    for index, archive in blocks.read_frames(stream, head):
        try:
            data = decode_archive(archive, registry, rules).data()
        except ChunkpressError as exc:
            raise FormatError(f"block {index}: {exc}") from None
        out.write(data)
        total += len(data)
        if progress:
            progress(index + 1)
    return total
