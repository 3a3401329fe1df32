"""Compiled twins of the built-in scorers' losses, for the engine's fused merge loop.

Each function evaluates exactly the same floating-point operations, in the same order, as the
numpy loss of its scorer (a test checks them bit for bit), so a run through the fused loop picks
the same rules as a run through the general path. User scorers never need one: they run through
the general path, one vectorized call per merge step.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .kernels import kernel
from .numerics import LOG2E, elias_delta_bits_scalar, log_factorial_scalar

MOST_FREQUENT, MDL, PMI, SPMI = 0, 1, 2, 3
KINDS = {"most_frequent": MOST_FREQUENT, "mdl": MDL, "pmi": PMI, "spmi": SPMI}


@kernel
def step_constants(kind, n, m, out):
    """The parts of loss_a that depend on (N, m) only, computed once per step for
    :func:`loss_a_given`: the same values, so the same float results."""
    if kind == MDL:
        r = m - 256
        log_m = math.log(float(m))
        out[0] = float(elias_delta_bits_scalar(r + 1) - elias_delta_bits_scalar(r)) + LOG2E * 2.0 * log_m
        out[1] = log_factorial_scalar(n + m - 1)
        out[2] = log_m
        out[3] = elias_delta_bits_scalar(n)
    elif kind == PMI or kind == SPMI:
        out[0] = math.log(float(n))


@numba.njit(cache=True, inline="always")
def loss_a_given(kind, n, m, k, c):
    """loss_a from the step constants ``c`` (bit for bit equal to :func:`loss_a`)."""
    if kind == MDL:
        length_bits = float(elias_delta_bits_scalar(n - k) - np.int64(c[3]))
        return c[0] + length_bits + LOG2E * (log_factorial_scalar(n - k + m) - c[1] - c[2])
    if kind == PMI:
        return -(math.log(float(k)) + c[0])
    if kind == SPMI:
        kf = float(k)
        return kf * -(math.log(kf) + c[0])
    return -float(k)


@numba.njit(cache=True)
def loss_a(kind, n, m, k):
    """loss_a of one group (the fused loop uses :func:`loss_a_given` with the step constants
    computed once; this is the same computation, so testing it tests the loop's)."""
    c = np.zeros(4)
    step_constants(kind, n, m, c)
    return loss_a_given(kind, n, m, k, c)


@kernel
def loss_b(kind, k, k0, k1, same):
    if kind == MDL:
        if same:
            return LOG2E * (log_factorial_scalar(k0) - log_factorial_scalar(max(k0 - 2 * k, 0)) - log_factorial_scalar(k))
        return LOG2E * (
            log_factorial_scalar(k0) + log_factorial_scalar(k1) - log_factorial_scalar(k0 - k)
            - log_factorial_scalar(max(k1 - k, 0)) - log_factorial_scalar(k)
        )
    if kind == PMI:
        return math.log(float(k0)) + math.log(float(k1))
    if kind == SPMI:
        return float(k) * (math.log(float(k0)) + math.log(float(k1)))
    return 0.0


@kernel
def stops(kind, loss, k, stop_below):
    """The scorer's stop rule (PMI and SPMI have none)."""
    if kind == MDL:
        return loss > 0.0
    if kind == MOST_FREQUENT:
        return k < stop_below
    return False
