"""One LEB128 varint at a time, in plain Python: for headers and frame lengths, where loading a
compiled kernel (:mod:`.leb128`, for arrays) would cost more than the work. The same bytes as
:func:`.leb128.encode_varints` and the same limits as its decoder (at most 63 bits)."""

from __future__ import annotations

from ..errors import FormatError

#: a value takes at most this many bytes (63 bits)
MAX_VARINT_BYTES = 9


def varint(value: int) -> bytes:
    """``value`` (a non-negative integer below 2**63) as LEB128."""
    if value < 0 or value >= 1 << 63:
        raise ValueError(f"a varint holds 0 to 2**63 - 1, not {value}")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(buf, pos: int = 0) -> tuple[int, int]:
    """(value, end offset) of the varint at ``buf[pos]``; FormatError if ``buf`` ends first or
    the value has more than 63 bits."""
    value = shift = 0
    for end in range(pos, min(len(buf), pos + MAX_VARINT_BYTES)):
        byte = buf[end]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, end + 1
        shift += 7
    raise FormatError("truncated or malformed varint data")
