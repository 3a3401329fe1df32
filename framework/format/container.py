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


def first_archive_length(data: bytes, *magics: bytes) -> int:
    """Length of the single archive at the start of ``data``, which may go on with other
    archives (``compress --stdout a b``, ``cat a.cpz b.cpz``): the shortest prefix ending where
    an archive (``MAGIC`` or one of ``magics``) starts, or at the end, whose check bytes verify.
    An archive does not record its length; the check bytes find it (a false split has odds of
    2^-32 per magic inside a payload, and the content checksum would still refuse it)."""
    starts = []
    for magic in (MAGIC, *magics):
        pos = data.find(magic, len(MAGIC) + 1 + CHECK_BYTES)
        while pos >= 0:
            starts.append(pos)
            pos = data.find(magic, pos + 1)
    for end in sorted(starts):
        if check_bytes(data[: end - CHECK_BYTES]) == data[end - CHECK_BYTES : end]:
            return end
    return len(data)


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
