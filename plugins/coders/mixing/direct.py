"""Direct probabilities (zpaq's CM): for a context at a node, P(1) itself, counted, where a bit
history (:mod:`.slots`) keeps only a state that a state map shared by every node turns into a
probability. Where a context is met often (the previous id, the word in progress) the count
learns its own node's rate, which no shared state map can. A context's 15 nodes of a 4-level
group share one 64-byte line of 16 counters (index 0 unused), so a group costs one miss.

    line = direct_line(dc, hv)           # hv: the slot hash of the context at the group's top
    prefetch_row(dc, line)               # ask for it ahead
    x = direct_input(dc, line + nib)     # a mixer input: the stretched P(1), 0 if never seen
    direct_update(dc, line + nib, bit)   # after the bit
"""

from __future__ import annotations

import numba
import numpy as np

from .logistic import STRETCH
from .states import adapt_counted

#: a counter is a counted probability (:func:`.states.adapt_counted`): its count stops at this
#: (then it moves by 1/1024.5)
DIRECT_LIMIT = 1023


@numba.njit(cache=True, inline="always")
def direct_line(dc, hv):
    """The first counter of the line that slot hash ``hv`` picks (``dc``'s size: a power of 2, 16 at least)."""
    return np.int64(hv & np.uint64((dc.size >> 4) - 1)) << 4


@numba.njit(cache=True, inline="always")
def direct_input(dc, i):
    """Counter ``i``'s P(1), stretched; 0 where it has counted nothing."""
    e = np.int64(dc[i])
    return STRETCH[e >> 20] if e & 1023 else 0


@numba.njit(cache=True, inline="always")
def direct_update(dc, i, y):
    """Move counter ``i`` toward bit ``y`` by 1/(count + 1.5); a fresh counter (the table is
    zeros, so that untouched pages cost nothing) starts at 1/2."""
    if dc[i] & 1023 == 0:
        dc[i] = np.uint32(1 << 31)
    adapt_counted(dc, i, y, DIRECT_LIMIT)
