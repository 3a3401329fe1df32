"""The archive container: a self-describing header in front of a coder's payload.

Layout::

    magic     4 bytes   b"CHKP"
    version   1 byte    container format version (1)
    hlen      varint    length of the header
    header    hlen bytes of canonical JSON (sorted keys, no spaces):
                {"codec": codec id, "params": coder params, "length": original bytes,
                 "blake2b": hex BLAKE2b-128 of the original,
                 "rules": {"blake2b", "count"} only when the dictionary is referenced}
    payload   the coder's bytes
    check     4 bytes   BLAKE2b-32 of everything before it

``decompress`` needs nothing but this: the codec id picks the coder, the params rebuild it, and
the length and checksum verify the result. The trailing check catches any flipped, truncated or
appended byte before a decoder runs.
"""

from __future__ import annotations

import hashlib
import io
import json

import attrs

from ..errors import FormatError
from .leb128 import decode_varints, encode_varints

from .limits import MAX_LENGTH

MAGIC = b"CHKP"
VERSION = 1
CHECK_BYTES = 4
#: Headers larger than this are refused before parsing.
MAX_HEADER_BYTES = 1 << 16


def check_bytes(data: bytes) -> bytes:
    """The trailing BLAKE2b-32 of archives and rules files: any flipped, cut or added byte shows."""
    return hashlib.blake2b(data, digest_size=CHECK_BYTES).digest()


#: the bytes of chunkpress's content checksums (archives, rules files, studies' input hashes)
CHECKSUM_BYTES = 16


def running_checksum():
    """A BLAKE2b-128 to feed piece by piece (``update``); ``hexdigest()`` is :func:`checksum`'s."""
    return hashlib.blake2b(digest_size=CHECKSUM_BYTES)


def checksum(data: bytes | bytearray | memoryview) -> str:
    """BLAKE2b-128 of ``data``, in hex: the one content checksum (headers, rules files, studies)."""
    digest = running_checksum()
    digest.update(data)
    return digest.hexdigest()


def rules_digest(rules) -> str:
    """The checksum of a dictionary's rules (int64 little-endian): what a reference names."""
    import numpy as np

    return checksum(np.ascontiguousarray(rules, dtype="<i8").tobytes())


@attrs.frozen(kw_only=True)
class Header:
    codec: str
    params: dict
    length: int
    blake2b: str
    #: Set when the archive references an external dictionary instead of holding it:
    #: {"blake2b": rules_digest(rules), "count": number of rules}.
    rules: dict | None = None

    def to_bytes(self) -> bytes:
        fields = attrs.asdict(self)
        if fields["rules"] is None:
            del fields["rules"]
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def pack(header: Header, payload: bytes) -> bytes:
    head = header.to_bytes()
    body = MAGIC + bytes([VERSION]) + encode_varints([len(head)]) + head + payload
    return body + check_bytes(body)


#: how much of a stream :func:`read_archive` takes at a time
_READ_PIECE = 1 << 20


def read_archive(stream, head: bytes = b"", limit: int | None = None, magics: tuple[bytes, ...] = ()) -> tuple[bytes, bytes]:
    """(the single archive at the start of ``stream``, the bytes read past its end): an
    archive does not record its length, so it ends at the first place where another archive
    (``MAGIC`` or one of ``magics``) starts and whose check bytes verify the bytes before it,
    else at the stream's end (``compress --stdout a b``, ``cat a.cpz b.cpz``; a false split has
    odds of 2^-32 per magic inside a payload, and the content checksum would still refuse it).
    Linear in the bytes read: one running hash, copied at each place a magic starts, so bytes
    full of magics cost no more than others. Reads a piece at a time and stops at the archive's
    end; ``head``: bytes already read from the stream. FormatError once the archive is longer
    than ``limit`` bytes (the memory it may take)."""
    starts = (MAGIC, *magics)
    digest = hashlib.blake2b(digest_size=CHECK_BYTES)
    buf = bytearray(head)
    hashed = 0  # buf[:hashed] is in digest
    scan = len(MAGIC) + 1 + CHECK_BYTES  # the earliest place another archive may start
    while True:
        ends = sorted(pos for magic in starts for pos in _finds(buf, magic, scan))
        for end in ends:
            digest.update(memoryview(buf)[hashed: end - CHECK_BYTES])
            hashed = end - CHECK_BYTES
            if digest.copy().digest() == buf[hashed:end]:
                return bytes(buf[:end]), bytes(buf[end:])
        scan = max(scan, len(buf) - len(MAGIC) + 1)  # a magic may straddle the next piece
        if limit is not None and len(buf) > limit:
            raise FormatError(f"a single archive longer than {limit:,} bytes, the memory limit "
                              "(max_memory, or set CHUNKPRESS_MAX_MEMORY to raise it)")
        piece = stream.read(_READ_PIECE if limit is None else max(1, min(_READ_PIECE, limit + 1 - len(buf))))
        if not piece:
            return bytes(buf), b""
        buf += piece


def _finds(data, magic: bytes, start: int):
    pos = data.find(magic, start)
    while pos >= 0:
        yield pos
        pos = data.find(magic, pos + 1)


def first_archive_length(data: bytes, *magics: bytes) -> int:
    """Length of the single archive at the start of ``data`` (see :func:`read_archive`)."""
    return len(read_archive(io.BytesIO(data), magics=magics)[0])


def unpack(archive: bytes) -> tuple[Header, bytes, int]:
    """(header, payload, header size in bytes); FormatError on anything malformed."""
    if len(archive) < len(MAGIC) + 2 or archive[: len(MAGIC)] != MAGIC:
        raise FormatError("not a chunkpress archive (bad magic bytes)")
    version = archive[len(MAGIC)]
    if version != VERSION:
        raise FormatError(f"unsupported container version {version} (this chunkpress reads {VERSION})")
    if len(archive) < len(MAGIC) + 2 + CHECK_BYTES or check_bytes(archive[:-CHECK_BYTES]) != archive[-CHECK_BYTES:]:
        raise FormatError("archive is corrupt, truncated or extended (check bytes do not match)")
    archive = archive[:-CHECK_BYTES]
    (hlen,), pos = decode_varints(archive, 1, len(MAGIC) + 1)
    if hlen > MAX_HEADER_BYTES or pos + hlen > len(archive):
        raise FormatError("archive truncated or header length corrupt")
    try:
        raw = json.loads(archive[pos : pos + hlen])
        header = Header(**raw)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"corrupt archive header: {exc}") from None
    except RecursionError:  # JSON nested deeper than Python's parser goes
        raise FormatError("corrupt archive header: nested too deeply") from None
    if (
        not isinstance(header.codec, str)
        or not isinstance(header.params, dict)
        or type(header.length) is not int  # JSON true is a bool, not a length
        or not 0 <= header.length <= MAX_LENGTH
        or not isinstance(header.blake2b, str)
        or not (header.rules is None or (isinstance(header.rules, dict) and set(header.rules) == {"blake2b", "count"}
                                         and type(header.rules["count"]) is int and 0 <= header.rules["count"] < 1 << 31))
    ):
        raise FormatError("corrupt archive header: a field has the wrong type or range")
    return header, archive[pos + hlen :], pos + hlen + CHECK_BYTES
