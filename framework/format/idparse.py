"""The compiled parser of text id files (see :mod:`chunkpress.format.idfile`)."""

from __future__ import annotations

import numba

#: ids at or above this are refused (they could not be written back as u32 either)
ID_LIMIT = 1 << 32


@numba.njit(cache=True)
def parse_text_ids(raw, out):
    """Decimal ids separated by ASCII white space into ``out``; returns the count, or -(1 + the
    offset of the first bad byte) (a non-digit, or an id of ID_LIMIT or more)."""
    n = 0
    value = -1
    for i in range(raw.size):
        c = raw[i]
        if 48 <= c <= 57:
            value = (0 if value < 0 else value * 10) + (c - 48)
            if value >= ID_LIMIT:
                return -(1 + i)
        elif c == 32 or 9 <= c <= 13:
            if value >= 0:
                out[n] = value
                n += 1
                value = -1
        else:
            return -(1 + i)
    if value >= 0:
        out[n] = value
        n += 1
    return n
