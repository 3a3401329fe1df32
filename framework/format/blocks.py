"""The block archive: a sequence of complete archives, one per block of the input.

Layout: magic ``b"CHKB"``, version byte (2), a LEB128 length and that many bytes of a shared
dictionary (a rules file with its own check, see :mod:`.rulesfile`; length 0: none), then per
block a LEB128 length and a complete single-block archive (its own header, checksum and check
bytes, see :mod:`.container`; with a shared dictionary it references it by hash), then a LEB128
0 and the LEB128 number of blocks. A reader needs one block in memory at a time, and a damaged
block is reported by its index; a missing end (a cut stream) is an error. Version 1 (no
dictionary field) is still read.
"""

from __future__ import annotations

from typing import BinaryIO, Iterator

from ..errors import FormatError
from .container import MAX_LENGTH
from .leb128 import encode_varints

MAGIC = b"CHKB"
VERSION = 2
#: versions this reader understands; 1 has no dictionary field
READABLE = (1, 2)
#: a shared dictionary larger than this is refused (2^28 rules of 2 varints each would not fit)
MAX_DICTIONARY = 1 << 32
#: a block archive never holds a block larger than this (its header limits the rest)
MAX_BLOCK_ARCHIVE = 1 << 34


def start(dictionary: bytes = b"") -> bytes:
    """The archive's start; ``dictionary``: the bytes of a rules file every block references."""
    return MAGIC + bytes([VERSION]) + encode_varints([len(dictionary)]) + dictionary


def frame(archive: bytes) -> bytes:
    return encode_varints([len(archive)]) + archive


def end(count: int) -> bytes:
    return encode_varints([0, count])


def _read_varint(stream: BinaryIO, what: str) -> int:
    value = shift = 0
    for _ in range(10):
        byte = stream.read(1)
        if not byte:
            raise FormatError(f"block archive cut short: {what} missing")
        value |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return value
        shift += 7
    raise FormatError(f"block archive corrupt: {what} is not a valid number")


def read_start(stream: BinaryIO, head: bytes = b"") -> bytes | None:
    """The shared dictionary's rules-file bytes (None: none); ``head``: bytes already read from
    the stream's start."""
    need = len(MAGIC) + 1 - len(head)
    head += stream.read(need) if need > 0 else b""
    if head[: len(MAGIC)] != MAGIC:
        raise FormatError("not a chunkpress block archive (bad magic bytes)")
    version = head[len(MAGIC)]
    if version not in READABLE:
        raise FormatError(f"unsupported block archive version {version}")
    size = _read_varint(stream, "length of the shared dictionary") if version >= 2 else 0
    if size > MAX_DICTIONARY:
        raise FormatError(f"block archive: the shared dictionary claims {size:,} bytes")
    dictionary = stream.read(size)
    if len(dictionary) != size:
        raise FormatError("block archive cut short inside the shared dictionary")
    return dictionary or None


def read_frames(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(index, archive) of every block, after :func:`read_start`."""
    index = 0
    while True:
        size = _read_varint(stream, f"length of block {index}")
        if size == 0:
            count = _read_varint(stream, "block count")
            if count != index or stream.read(1):
                raise FormatError(f"block archive corrupt: the end says {count} blocks, {index} were read, or bytes follow")
            return
        if size > min(MAX_BLOCK_ARCHIVE, MAX_LENGTH):
            raise FormatError(f"block {index}: claims {size:,} bytes, more than a block may hold")
        archive = stream.read(size)
        if len(archive) != size:
            raise FormatError(f"block archive cut short inside block {index}")
        yield index, archive
        index += 1
