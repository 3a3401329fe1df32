"""The rules file: a learned dictionary saved on its own, to inspect or reuse.

Layout: magic ``b"CPRL"``, version byte (2), varint length of a JSON metadata object (the
config that learned it, input length and checksum), varint R, then the 2R rule parts as
varints (rule r creates symbol 256 + r from two earlier symbols), then a BLAKE2b-32 of all the
bytes before it (as archives end), so a flipped byte is refused instead of decoding to other
text. Version 1 files (the same without the check) are still read.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import FormatError
from .container import CHECK_BYTES, check_bytes
from .expand import symbol_lengths
from .leb128 import decode_varints, encode_varints

MAGIC = b"CPRL"
VERSION = 2
#: versions this reader understands; 1 has no trailing check
READABLE = (1, 2)


def dump_rules(rules: np.ndarray, meta: dict) -> bytes:
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    head = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    body = MAGIC + bytes([VERSION]) + encode_varints([len(head)]) + head + encode_varints([len(rules)]) + encode_varints(rules.ravel())
    return body + check_bytes(body)


def load_rules(data: bytes) -> tuple[np.ndarray, dict]:
    if data[:4] != MAGIC or len(data) < 6:
        raise FormatError("not a chunkpress rules file (bad magic bytes)")
    if data[4] not in READABLE:
        raise FormatError(f"unsupported rules file version {data[4]}")
    if data[4] >= 2:
        if len(data) < 6 + CHECK_BYTES or check_bytes(data[:-CHECK_BYTES]) != data[-CHECK_BYTES:]:
            raise FormatError("rules file is corrupt, truncated or extended (check bytes do not match)")
        data = data[:-CHECK_BYTES]
    (hlen,), pos = decode_varints(data, 1, 5)
    if pos + hlen > len(data):
        raise FormatError("rules file truncated")
    try:
        meta = json.loads(data[pos : pos + hlen])
    except ValueError as exc:
        raise FormatError(f"corrupt rules file metadata: {exc}") from None
    except RecursionError:
        raise FormatError("corrupt rules file metadata: nested too deeply") from None
    if not isinstance(meta, dict):
        raise FormatError(f"corrupt rules file metadata: a {type(meta).__name__}, not an object")
    (r,), pos = decode_varints(data, 1, pos + hlen)
    flat, end = decode_varints(data, 2 * int(r), pos)
    if end != len(data):
        raise FormatError("rules file has trailing bytes")
    rules = flat.reshape(-1, 2)
    symbol_lengths(rules)  # validates that every rule refers to earlier symbols
    return rules, meta
