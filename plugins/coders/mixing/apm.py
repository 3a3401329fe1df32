"""Adaptive probability maps (APMs, lpaq's SSE stage): a probability refined by a context,
interpolated between 33 knots on the stretched axis; each knot adapts to the bits it saw.

    t = apm_table(contexts)
    p2, i = apm_predict(t, ctx, p)     # p and p2: P(1) in 1/4096
    apm_update(t, i, bit)              # after the bit is known
"""

from __future__ import annotations

import numba
import numpy as np
from chunkpress.plugin import prefetch_row

from .hashing import mix64
from .logistic import SQUASH_KNOTS, STRETCH
from .states import toward

#: knots per context: squash's, as a map starts on the identity
APM_STEPS = SQUASH_KNOTS.size


@numba.njit(cache=True, forceinline=True)
def apm_predict(t, ctx, pr):
    """An adaptive map from (context, input probability) to probability: returns (p, index of
    the nearer knot to update). A knot is one int32, P(1) in 1/2^22 above an 8-bit count: a
    context's 33 knots span three cache lines (half the misses of a pair per knot)."""
    s = (STRETCH[pr] + 2048) * (APM_STEPS - 1)
    lo = s >> 12
    w = s & 4095
    i = ctx * APM_STEPS + lo
    p = ((np.int64(t[i]) >> 18) * (4096 - w) + (np.int64(t[i + 1]) >> 18) * w) >> 12
    return p, (i + 1 if w >= 2048 else i)


def apm_table(contexts: int) -> np.ndarray:
    """Each context's knots start on the identity map, counted as 6 observations: knot k at
    squash's value at logit (k - 16) * 128, which are squash's own knots."""
    knots = SQUASH_KNOTS.astype(np.int32) << 10
    return np.tile((knots << 8) | 6, contexts)


@numba.njit(cache=True, inline="always")
def apm_update(t, i, y):
    """Move knot ``i`` toward bit ``y`` by 1/(count + 1.5); P stays in [0, 2^22), so 30 bits."""
    v = np.int64(t[i])
    c = v & 255
    t[i] = (toward(v >> 8, c, y) << 8) | min(c + 1, 255)


@numba.njit(cache=True, inline="always")
def apm_context(apm, key, direct):
    """An APM's context: ``direct`` where the table has room for it, else ``key`` hashed."""
    size = apm.shape[0] // APM_STEPS
    if 0 <= direct < size:
        return direct
    return np.int64(mix64(key) & np.uint64(size - 1))


@numba.njit(cache=True, inline="always")
def prefetch_knots(apm, ctx):
    """Ask for the cache lines of an APM context's knots (they span three)."""
    first = ctx * APM_STEPS
    prefetch_row(apm, first)
    prefetch_row(apm, first + 16)
    prefetch_row(apm, first + APM_STEPS - 1)
