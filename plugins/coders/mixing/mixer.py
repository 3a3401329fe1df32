"""The mixer (lpaq's neural network of one layer): inputs in the stretched domain, weighted by
a set of weights chosen by a small context, summed to a logit; after the bit, each weight moves
along the error. A weight set is a row of an int32 table (weights in 1/65536).

    d = mix_dot(tx, w, s, n)            # a logit in 1/256, clamped to +-2047
    p = squash(d)
    mix_learn(tx, w, s, bit, p, n, rate, skip)   # after the bit
"""

from __future__ import annotations

import numba
import numpy as np
from chunkpress.plugin import prefetch_item


@numba.njit(cache=True, inline="always")
def mix_dot(tx, w, s, n_in):
    """A mixer's output (a logit in 1/256, clamped) with weight set ``s`` over the first ``n_in``
    inputs, in one contiguous loop."""
    dot = 0
    for k in range(n_in):
        dot += np.int64(tx[k]) * w[s, k]
    return max(-2047, min(2047, dot >> 16))


@numba.njit(cache=True, inline="always")
def mix_learn(tx, w, s, y, p, n_in, rate, skip):
    """Move weight set ``s`` along the error of its prediction ``p`` (1/4096) times ``rate``; an
    error of at most ``skip`` (1/4096) leaves the weights as they are: a nearly right mixer
    learns nothing worth the time."""
    e = ((y << 12) - p) * rate
    if e > rate * skip or e < -rate * skip:
        for k in range(n_in):
            w[s, k] += (np.int64(tx[k]) * e) >> 16


@numba.njit(cache=True, inline="always")
def prefetch_weights(w, s, n_in):
    """Ask for the cache lines of weight set ``s``'s first ``n_in`` weights."""
    for k in range(0, n_in, 16):
        prefetch_item(w, s, k)
