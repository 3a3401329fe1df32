"""Exact arithmetic shared by scorers, the code-length model and the codec.

The MDL reference program compares losses as IEEE doubles, so near-ties resolve by rounding.
To choose the same rules it does, we evaluate log-factorials exactly its way: ``log(double(n!))``
from a table for n <= 170 and a Stirling series above, with the C library's ``log``.
The functions are scalar, inlined into the numba kernels that call them (scorers' losses, the
code-length model, the combinatorial codec).
"""

from __future__ import annotations

import math

import numba
import numpy as np

LOG2E = 1.4426950408889634
_HALF_LOG_2PI = 0.9189385332046727

#: ``log(double(n!))`` for n <= 170: the factorial is rounded to a double first, then logged.
LOG_FACTORIAL_TABLE = np.array([math.log(float(math.factorial(n))) for n in range(171)])


@numba.njit(cache=True, forceinline=True)
def log_factorial_scalar(n):
    """log(n!) in nats, evaluated exactly as the reference program does."""
    if n <= 170:
        return LOG_FACTORIAL_TABLE[n]
    x = n + 1.0
    rx = 1.0 / x
    st = (x - 0.5) * math.log(x) - x + _HALF_LOG_2PI
    if n < 1500:
        return st + rx * (1.0 / 12.0 - (1.0 / 360.0) * rx * rx)
    return st + (1.0 / 12.0) * rx


@numba.njit(cache=True, forceinline=True)
def bit_length_scalar(x):
    """Number of bits of a non-negative integer (0 for 0), by binary search on the shifts."""
    n = 0
    if x >= 1 << 32:
        x >>= 32
        n += 32
    if x >= 1 << 16:
        x >>= 16
        n += 16
    if x >= 1 << 8:
        x >>= 8
        n += 8
    if x >= 1 << 4:
        x >>= 4
        n += 4
    if x >= 1 << 2:
        x >>= 2
        n += 2
    if x >= 2:
        x >>= 1
        n += 1
    return n + x


@numba.njit(cache=True, inline="always")
def elias_delta_bits_scalar(x):
    """Bits of the Elias-delta code of x + 1 (so x = 0 is codable)."""
    length = bit_length_scalar(x + 1)
    return length + 2 * bit_length_scalar(length) - 2
