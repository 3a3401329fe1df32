"""The code-length model of "Information Theoretic Chunking": bits of data plus model.

With R = m - 256 rules, N symbols and counts k_i the total is the sum of five parts:
``m`` (Elias-delta of R), ``rules`` (two symbols per rule, rule r in base 256 + r),
``n`` (Elias-delta of N), ``counts`` (stars and bars) and ``string`` (multiset permutation).
Integer parts are ceilings, computed with the reference program's arithmetic so that a trace
agrees with it bit for bit.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from .kernels import kernel
from .numerics import LOG2E, elias_delta_bits_scalar, log_factorial_scalar

PART_NAMES = ("m_bits", "rules_bits", "n_bits", "counts_bits", "string_bits")

#: Up to this dictionary size the string term sums lf(k_i) afresh at every step, in the
#: reference's order (bit-exact; O(m) per step). Above it the sum is kept up to date by the
#: change of the three counts a merge touches (O(1) per step; may differ from the fresh sum in
#: the last bits of a double, so a ceiling can flip by one bit in rare cases).
EXACT_SUM_LIMIT = 1 << 15


@attrs.frozen(kw_only=True)
class CodeLength:
    """The five parts of the code length, in bits."""

    m_bits: int
    rules_bits: int
    n_bits: int
    counts_bits: int
    string_bits: int

    @property
    def total_bits(self) -> int:
        return self.m_bits + self.rules_bits + self.n_bits + self.counts_bits + self.string_bits


@kernel
def string_log_sum(counts, m):
    """sum_i lf(k_i) for i = 0 .. m-1, accumulated in the reference's order (acc = lf(k_i) + acc)."""
    acc = 0.0
    for i in range(m):
        k = counts[i]
        if k > 1:
            acc = log_factorial_scalar(k) + acc
    return acc


@kernel
def merge_sum_delta(old_a, new_a, old_b, new_b, new_z, same):
    """Change of sum_i lf(k_i) when a merge takes counts a, b to new_a, new_b and creates z."""
    d = log_factorial_scalar(new_a) - log_factorial_scalar(old_a) + log_factorial_scalar(new_z)
    if not same:
        d += log_factorial_scalar(new_b) - log_factorial_scalar(old_b)
    return d


@kernel
def code_length_parts(m, n, counts, out):
    """Fill ``out[0:5]`` with the five integer parts for dictionary size m and length n."""
    parts_from_sum(m, n, string_log_sum(counts, m), out)


@kernel
def parts_from_sum(m, n, log_sum, out):
    """The five parts, given ``log_sum`` = sum_i lf(k_i)."""
    r = m - 256
    out[0] = elias_delta_bits_scalar(r)
    out[1] = math.ceil(LOG2E * 2.0 * (log_factorial_scalar(255 + r) - log_factorial_scalar(255)))
    out[2] = elias_delta_bits_scalar(n)
    out[3] = math.ceil(
        LOG2E * (log_factorial_scalar(n + m - 1) - log_factorial_scalar(n) - log_factorial_scalar(m - 1))
    )
    if n <= 1:
        out[4] = 0
    else:
        out[4] = math.ceil(LOG2E * (log_factorial_scalar(n) - log_sum))


def code_length(m: int, n: int, counts: np.ndarray) -> CodeLength:
    """The code length of a state: dictionary size m, string length n, symbol counts (len >= m)."""
    out = np.zeros(5, dtype=np.int64)
    code_length_parts(m, n, np.ascontiguousarray(counts, dtype=np.int64), out)
    return CodeLength(**dict(zip(PART_NAMES, (int(v) for v in out), strict=False)))
