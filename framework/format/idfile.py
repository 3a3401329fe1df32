"""Symbol-id files, as ``encode`` writes them and ``decode`` reads them: little-endian uint32
(``u32``) or whitespace-separated decimal ids (``text``).

Reading is bounded: the ids are counted and parsed by a compiled pass over the bytes into one
int64 array whose size is checked against the memory limit first (a Python ``split`` would hold
an object of about 40 bytes per id).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .limits import check_allocation

FORMATS = ("u32", "text")
def read_ids(raw: bytes, fmt: str, name: str = "input") -> np.ndarray:
    """The ids of an id file (int64)."""
    if fmt == "text":
        most = (len(raw) + 1) // 2  # one digit and one separator per id at least
        check_allocation(f"an id file of up to {most:,} ids", 8 * most)
        from .idparse import parse_text_ids  # compiled: loads numba only when text ids are read

        out = np.empty(most, dtype=np.int64)
        n = parse_text_ids(np.frombuffer(raw, dtype=np.uint8), out)
        if n < 0:
            raise InputError(f"{name}: expected whitespace-separated symbol ids below 2^32 (byte {-n - 1} is not)")
        return out[:n]
    if len(raw) % 4:
        raise InputError(f"{name}: not a uint32 id file (length {len(raw)} is not a multiple of 4)")
    check_allocation(f"an id file of {len(raw) // 4:,} ids", 2 * len(raw))
    return np.frombuffer(raw, dtype="<u4").astype(np.int64)


def write_ids(ids: np.ndarray, fmt: str) -> bytes:
    if fmt == "text":
        return (" ".join(map(str, np.asarray(ids).tolist())) + "\n").encode()
    return np.asarray(ids).astype("<u4").tobytes()


def write_id_pieces(pieces, fmt: str, write) -> None:
    """The ids of ``pieces`` (arrays, one after the other) to ``write``, as :func:`write_ids`
    writes their concatenation."""
    first = True
    for ids in pieces:
        if fmt == "text":
            if len(ids):
                write(((" " if not first else "") + " ".join(map(str, np.asarray(ids).tolist()))).encode())
                first = False
        else:
            write(np.asarray(ids).astype("<u4").tobytes())
    if fmt == "text":
        write(b"\n")
