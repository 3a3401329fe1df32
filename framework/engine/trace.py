"""The learning trace: one row per step, written by the same function on every path.

The first eleven columns are those of the reference program's CSV files: the total code
length and its parts before the step, the candidate pair, its count and loss; then N and the
time since the start.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .codelength import EXACT_SUM_LIMIT, parts_from_sum
from .numerics import log_factorial_scalar

TRACE_DTYPE = np.dtype(
    [
        ("m", np.int64),
        ("total_bits", np.int64),
        ("m_bits", np.int64),
        ("rules_bits", np.int64),
        ("n_bits", np.int64),
        ("counts_bits", np.int64),
        ("string_bits", np.int64),
        ("s0", np.int64),
        ("s1", np.int64),
        ("k01", np.int64),
        ("loss", np.float64),
        ("N", np.int64),
        ("seconds", np.float64),
    ]
)
#: columns a row holds before its time is added
ROW_FIELDS = 12


class LogSum(NamedTuple):
    """The string term's sum lf(k_i) as the trace carries it: ``total[0]``, taken afresh at
    every row while m <= EXACT_SUM_LIMIT and moved by each merge's change above. ``seen[i]`` is
    the count at which ``logs[i]`` = lf(k_i) was last evaluated (-1: never), so a fresh sum
    evaluates only the counts that changed since, yet adds every term in the reference's order:
    the same double as :func:`~.codelength.string_log_sum`."""

    total: np.ndarray  # (1,) float64
    seen: np.ndarray  # (EXACT_SUM_LIMIT,) int64
    logs: np.ndarray  # (EXACT_SUM_LIMIT,) float64


def new_log_sum() -> LogSum:
    return LogSum(np.zeros(1), np.full(EXACT_SUM_LIMIT, -1, dtype=np.int64), np.zeros(EXACT_SUM_LIMIT))


@numba.njit(cache=True)
def fresh_log_sum(counts, m, acc):
    """sum_i lf(k_i) for i < m <= EXACT_SUM_LIMIT in the reference's order (acc = lf(k_i) + acc;
    a count of 0 or 1 adds lf = 0.0, which leaves the double as the reference's skip does)."""
    seen, logs = acc.seen, acc.logs
    total = 0.0
    for i in range(m):
        k = counts[i]
        if k != seen[i]:
            seen[i] = k
            logs[i] = log_factorial_scalar(k) if k > 1 else 0.0
        total = logs[i] + total
    return total


@numba.njit(cache=True)
def fill_trace_row(m, n, counts, acc, parts, row, s0, s1, k01, loss):
    """Write the row of a step with m symbols and length n into ``row`` (float64, 12). ``acc``:
    the run's :class:`LogSum`; ``parts`` is scratch."""
    if m <= EXACT_SUM_LIMIT:
        acc.total[0] = fresh_log_sum(counts, m, acc)
    parts_from_sum(m, n, acc.total[0], parts)
    total = 0
    for j in range(5):
        row[2 + j] = parts[j]
        total += parts[j]
    row[0] = m
    row[1] = total
    row[7] = s0
    row[8] = s1
    row[9] = k01
    row[10] = loss
    row[11] = n


def rows_to_table(rows: list) -> np.ndarray:
    """Trace rows (12 values and a time each) as a TRACE_DTYPE array."""
    table = np.zeros(len(rows), dtype=TRACE_DTYPE)
    if rows:
        values = np.array(rows, dtype=np.float64)
        for j, name in enumerate(TRACE_DTYPE.names or ()):
            table[name] = values[:, j]
    return table
