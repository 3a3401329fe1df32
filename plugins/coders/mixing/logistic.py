"""The logistic domain of the mixers, in integers: ``squash`` maps a logit to a probability
and ``STRETCH`` back. Both sides of a coder compute the same table, so archives decode alike on
any machine.

    p = squash(d)          # d: a logit in 1/256 (-2047..2047) -> P(1) in 1/4096 (1..4095)
    d = STRETCH[p]         # the inverse, a table over 0..4095
"""

from __future__ import annotations

import numba
import numpy as np

#: 4096 / (1 + exp(-x)) at x = -8, -7.5, ..., 8, rounded: the logistic function's knots.
SQUASH_KNOTS = np.array(
    [1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048, 2550, 2994,
     3349, 3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095],
    dtype=np.int64,
)


@numba.njit(cache=True, inline="always")
def squash(d):
    """P(1) in 1/4096 for a logit ``d`` in 1/256 (range -2047..2047), by linear interpolation."""
    if d > 2047:
        return 4095
    if d < -2047:
        return 1
    w = d & 127
    k = (d >> 7) + 16
    return (SQUASH_KNOTS[k] * (128 - w) + SQUASH_KNOTS[k + 1] * w + 64) >> 7


def _stretch_table() -> np.ndarray:
    """Inverse of :func:`squash` over 0..4095 (the smallest logit that reaches each p)."""
    table = np.zeros(4096, dtype=np.int16)
    last = 0
    for d in range(-2047, 2048):
        p = squash.py_func(d)  # the same integers, without compiling or calling the kernel at import
        table[last : p + 1] = d
        last = p + 1
    table[last:] = 2047
    return table


STRETCH = _stretch_table()
