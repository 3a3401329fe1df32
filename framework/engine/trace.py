"""The learning trace: one row per step, written by the same function on every path.

The first eleven columns are those of the reference program's CSV files: the total code
length and its parts before the step, the candidate pair, its count and loss; then N and the
time since the start.
"""

from __future__ import annotations

import numba
import numpy as np

from .codelength import EXACT_SUM_LIMIT, parts_from_sum, string_log_sum

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


@numba.njit(cache=True)
def fill_trace_row(m, n, counts, acc, parts, row, s0, s1, k01, loss):
    """Write the row of a step with m symbols and length n into ``row`` (float64, 12). ``acc[0]``
    carries sum lf(k_i) (recomputed exactly while m <= EXACT_SUM_LIMIT); ``parts`` is scratch."""
    if m <= EXACT_SUM_LIMIT:
        acc[0] = string_log_sum(counts, m)
    parts_from_sum(m, n, acc[0], parts)
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
