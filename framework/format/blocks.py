"""The block archive: a sequence of complete archives, one per block of the input.

Layout (version 3): magic ``b"CHKB"``, version byte, a LEB128 length and that many bytes of a
shared dictionary (a rules file with its own check, see :mod:`.rulesfile`; length 0: none),
then per block a LEB128 length, the block's LEB128 index (0, 1, ...) and a complete
single-block archive (its own header, checksum and check bytes, see :mod:`.container`; with a
shared dictionary it references it by hash); then a LEB128 0, the LEB128 number of blocks, the
LEB128 length of the whole decoded stream and its BLAKE2b-128. Each block checks itself; the
indexes and the end record tie the blocks to their places and the archive to its whole
content, so a block dropped, duplicated or moved (or all of them) is refused, naming the first
bad block. A reader needs one block in memory at a time; a missing end (a cut stream) is an
error. Versions 1 (no dictionary field) and 2 (no indexes, no end checksum) are still read.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import FormatError
from ..fileio import Readable
from .container import MAX_LENGTH, running_checksum
from .varint import varint

MAGIC = b"CHKB"
VERSION = 3
#: versions this reader understands; 1 has no dictionary field, 2 no indexes or end checksum
READABLE = (1, 2, 3)
#: a shared dictionary larger than this is refused (2^28 rules of 2 varints each would not fit)
MAX_DICTIONARY = 1 << 32
#: a block archive never holds a block larger than this (its header limits the rest)
MAX_BLOCK_ARCHIVE = 1 << 34
#: claimed lengths are read in pieces of this size, so a forged length costs no allocation
#: beyond the bytes actually present
_PIECE = 1 << 20


def stream_digest():
    """The running checksum of a decoded stream that the end record carries."""
    return running_checksum()


def start(dictionary: bytes = b"") -> bytes:
    """The archive's start; ``dictionary``: the bytes of a rules file every block references."""
    return MAGIC + bytes([VERSION]) + varint(len(dictionary)) + dictionary


def frame(index: int, archive: bytes) -> bytes:
    return varint(len(archive)) + varint(index) + archive


def end(count: int, length: int, digest: bytes) -> bytes:
    """The end record: the number of blocks, and the length and BLAKE2b-128 of all they decode to."""
    return varint(0) + varint(count) + varint(length) + digest


def _read_varint(stream: Readable, what: str) -> int:
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


def _read_exactly(stream: Readable, size: int, what: str) -> bytes:
    """``size`` bytes, read in pieces (a cut stream fails before a forged length is allocated)."""
    pieces, left = [], size
    while left:
        piece = stream.read(min(left, _PIECE))
        if not piece:
            raise FormatError(f"block archive cut short inside {what}")
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)


def read_start(stream: Readable, head: bytes = b"") -> tuple[int, bytes | None]:
    """(version, the shared dictionary's rules-file bytes or None); ``head``: bytes already
    read from the stream's start."""
    need = len(MAGIC) + 1 - len(head)
    head += stream.read(need) if need > 0 else b""
    if head[: len(MAGIC)] != MAGIC:
        raise FormatError("not a chunkpress block archive (bad magic bytes)")
    if len(head) <= len(MAGIC):
        raise FormatError("block archive cut short: version missing")
    version = head[len(MAGIC)]
    if version not in READABLE:
        raise FormatError(f"unsupported block archive version {version}")
    size = _read_varint(stream, "length of the shared dictionary") if version >= 2 else 0
    if size > MAX_DICTIONARY:
        raise FormatError(f"block archive: the shared dictionary claims {size:,} bytes")
    dictionary = _read_exactly(stream, size, "the shared dictionary")
    return version, dictionary or None


def read_frames(stream: Readable, version: int = VERSION, decoded=None) -> Iterator[tuple[int, bytes]]:
    """(index, archive) of every block, after :func:`read_start`. ``decoded()`` returns
    (length, BLAKE2b-128 digest) of what the blocks yielded so far decoded to; it is checked
    against the end record (version 3) when the end is reached."""
    index = 0
    while True:
        size = _read_varint(stream, f"length of block {index}")
        if size == 0:
            _read_end(stream, version, index, decoded)
            return
        if size > min(MAX_BLOCK_ARCHIVE, MAX_LENGTH):
            raise FormatError(f"block {index}: claims {size:,} bytes, more than a block may hold")
        if version >= 3:
            found = _read_varint(stream, f"index of block {index}")
            if found != index:
                raise FormatError(f"block archive corrupt: block {index} is missing or out of place "
                                  f"(block {found} stands there)")
        yield index, _read_exactly(stream, size, f"block {index}")
        index += 1


def _read_end(stream: Readable, version: int, index: int, decoded) -> None:
    count = _read_varint(stream, "block count")
    if count != index:
        raise FormatError(f"block archive corrupt: the end says {count} blocks, {index} were read "
                          f"(block {min(count, index)} is missing or extra)")
    if version >= 3:
        length = _read_varint(stream, "length of the decoded stream")
        digest = _read_exactly(stream, 16, "the end record")
        if decoded is not None and decoded() != (length, digest):
            raise FormatError("block archive corrupt: the blocks decode to other content than the archive "
                              "recorded (blocks dropped, repeated or moved)")
    # what follows (another archive, or bytes that are not one) is for the caller to judge
