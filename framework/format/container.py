"""The archive container: a self-describing header in front of a coder's payload.

Layout of version 3, what chunkpress writes::

    magic     4 bytes   b"CHKP"
    version   1 byte    container format version (3)
    length    varint    original bytes
    blake2b   16 bytes  BLAKE2b-128 of the original
    header    three compact values (:mod:`.compactvalue`): the codec id, the coder params (a
              map), and null or, when the dictionary is referenced, {"blake2b", "count"}
    payload   the coder's bytes
    check     4 bytes   BLAKE2b-32 of everything before it

Version 1 (read, no longer written) held the same fields as canonical JSON (sorted keys, no
spaces) after a varint of its length: ``{"codec", "params", "length", "blake2b" (hex),
"rules"}`` (what each version costs: ``FORMATS.md``).

Version 2, *stored*, holds the bytes as they are, for data no coder shrinks (random or already
compressed bytes, tiny inputs): magic, the version byte (2), the varint length, the bytes, their
BLAKE2b-128, and the check: 26 bytes beside the data. It reads as an archive of codec
:data:`STORED_CODEC` with no params.

``decompress`` needs nothing but this: the codec id picks the coder, the params rebuild it, and
the length and checksum verify the result. The trailing check catches any flipped, truncated or
appended byte before a decoder runs.
"""

from __future__ import annotations

import hashlib
import io
import json

import attrs
import numpy as np

from ..errors import FormatError, InputError
from . import compactvalue
from .limits import MAX_LENGTH
from .lookahead import PIECE, Lookahead
from .varint import read_varint, varint

MAGIC = b"CHKP"
#: the container version written (3: compact header); 1 (JSON header) is still read
VERSION = 3
JSON_HEADER = 1
#: the container version of a stored archive, and the codec id it reads as
STORED = 2
STORED_CODEC = "chunkpress.stored.v1"
READABLE = (JSON_HEADER, STORED, VERSION)
CHECK_BYTES = 4
#: Version 1's JSON headers larger than this are refused before parsing.
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
        """The header as version 3 writes it, from the length on."""
        return (varint(self.length) + bytes.fromhex(self.blake2b)
                + compactvalue.dumps(self.codec) + compactvalue.dumps(self.params) + compactvalue.dumps(self.rules))

    def to_json(self) -> bytes:
        """The header as version 1 wrote it (canonical JSON)."""
        fields = attrs.asdict(self)
        if fields["rules"] is None:
            del fields["rules"]
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def stored_size(length: int) -> int:
    """The size of the stored archive of ``length`` bytes."""
    return len(MAGIC) + 1 + len(varint(length)) + length + CHECKSUM_BYTES + CHECK_BYTES


def pack_stored(data: bytes) -> bytes:
    """The stored archive of ``data`` (version 2)."""
    body = (MAGIC + bytes([STORED]) + varint(len(data)) + bytes(data)
            + hashlib.blake2b(data, digest_size=CHECKSUM_BYTES).digest())
    return body + check_bytes(body)


def pack(header: Header, payload: bytes) -> bytes:
    body = MAGIC + bytes([VERSION]) + header.to_bytes() + payload
    return body + check_bytes(body)


def pack_json_header(header: Header, payload: bytes) -> bytes:
    """The archive as container version 1 wrote it (for tests that old archives keep reading)."""
    head = header.to_json()
    body = MAGIC + bytes([JSON_HEADER]) + varint(len(head)) + head + payload
    return body + check_bytes(body)


def read_archive(source: Lookahead, limit: int | None = None, magics: tuple[bytes, ...] = ()) -> bytes:
    """The single archive at the front of ``source``, taken off it: an archive does not record
    its length, so it ends at the first place where another archive (``MAGIC`` or one of
    ``magics``) starts and whose check bytes verify the bytes before it, else at the stream's
    end (``compress --stdout a b``, ``cat a.cpz b.cpz``; a false split has odds of 2^-32 per
    magic inside a payload, and the content checksum would still refuse it). Linear in the bytes
    read: one running hash, copied at each place a magic starts, the places found in order and
    no further than the end. FormatError once the archive is longer than ``limit`` bytes (the
    memory it may take)."""
    buf = source.buf
    digest = hashlib.blake2b(digest_size=CHECK_BYTES)
    hashed = source.pos  # buf[source.pos:hashed] is in digest
    scan = source.pos + len(MAGIC) + 1 + CHECK_BYTES  # the earliest place another archive may start
    window = 256  # looked through, doubling: a small archive costs little, whatever follows it
    ended = False
    while True:
        while not ended and scan + window > len(buf) and (limit is None or source.held <= limit):
            ended = not source.fill(PIECE if limit is None else max(1, min(PIECE, limit + 1 - source.held)))
        stop = min(len(buf), scan + window)
        for end in sorted(p for magic in (MAGIC, *magics) for p in _finds(buf, magic, scan, stop)):
            digest.update(memoryview(buf)[hashed: end - CHECK_BYTES])
            hashed = end - CHECK_BYTES
            if digest.copy().digest() == buf[hashed:end]:
                return source.take(end - source.pos)
        if stop == len(buf):
            if ended:
                return source.take(source.held)
            if limit is not None and source.held > limit:
                raise InputError(f"more than {limit:,} bytes in a single archive, the memory limit "
                                 "(max_memory, or set CHUNKPRESS_MAX_MEMORY to raise it)")
        scan = max(scan, stop - len(MAGIC) + 1)  # a magic may straddle the window's end
        window = min(2 * window, PIECE)


def _finds(buf: bytearray, magic: bytes, start: int, stop: int):
    """Every place in ``buf[start:stop]`` where ``magic`` starts and ends."""
    pos = buf.find(magic, start, stop)
    while pos >= 0:
        yield pos
        pos = buf.find(magic, pos + 1, stop)


def first_archive_length(data: bytes, *magics: bytes) -> int:
    """Length of the single archive at the start of ``data`` (see :func:`read_archive`)."""
    return len(read_archive(Lookahead(io.BytesIO(data)), magics=magics))


def unpack(archive: bytes) -> tuple[Header, bytes, int]:
    """(header, payload, header size in bytes); FormatError on anything malformed."""
    if len(archive) < len(MAGIC) + 2 or archive[: len(MAGIC)] != MAGIC:
        raise FormatError("not a chunkpress archive (bad magic bytes)")
    version = archive[len(MAGIC)]
    if version not in READABLE:
        raise FormatError(f"unsupported container version {version} (this chunkpress reads "
                          f"{', '.join(map(str, READABLE))})")
    if len(archive) < len(MAGIC) + 2 + CHECK_BYTES or check_bytes(archive[:-CHECK_BYTES]) != archive[-CHECK_BYTES:]:
        raise FormatError("archive is corrupt, truncated or extended (check bytes do not match)")
    archive = archive[:-CHECK_BYTES]
    if version == STORED:
        return _unpack_stored(archive)
    header, pos = _compact_header(archive) if version == VERSION else _json_header(archive)
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
    return header, archive[pos:], pos + CHECK_BYTES


def _compact_header(body: bytes) -> tuple[Header, int]:
    """Version 3's header (the check bytes cut) and where the payload starts."""
    length, pos = read_varint(body, len(MAGIC) + 1)
    if pos + CHECKSUM_BYTES > len(body):
        raise FormatError("archive truncated inside its header")
    digest = body[pos: pos + CHECKSUM_BYTES].hex()
    codec, pos = compactvalue.loads(body, pos + CHECKSUM_BYTES)
    params, pos = compactvalue.loads(body, pos)
    rules, pos = compactvalue.loads(body, pos)
    return Header(codec=codec, params=params, length=length, blake2b=digest, rules=rules), pos


def _json_header(body: bytes) -> tuple[Header, int]:
    """Version 1's header (the check bytes cut) and where the payload starts."""
    hlen, pos = read_varint(body, len(MAGIC) + 1)
    if hlen > MAX_HEADER_BYTES or pos + hlen > len(body):
        raise FormatError("archive truncated or header length corrupt")
    try:
        raw = json.loads(body[pos : pos + hlen])
        header = Header(**raw)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"corrupt archive header: {exc}") from None
    except RecursionError:  # JSON nested deeper than Python's parser goes
        raise FormatError("corrupt archive header: nested too deeply") from None
    return header, pos + hlen


def _unpack_stored(body: bytes) -> tuple[Header, bytes, int]:
    """A stored archive (its check bytes already verified and cut) as a header and payload."""
    length, pos = read_varint(body, len(MAGIC) + 1)
    if pos + length + CHECKSUM_BYTES != len(body):
        raise FormatError("stored archive corrupt: its length does not match its size")
    digest = body[pos + length:]
    header = Header(codec=STORED_CODEC, params={}, length=int(length), blake2b=digest.hex())
    return header, body[pos: pos + length], pos + CHECKSUM_BYTES + CHECK_BYTES
