"""The learner loop: ask the index for the best pair, stop or merge, record a trace row.

Per step it makes a fixed, small number of calls (index query, scorer on the changed pairs,
rewriter kernel); no Python runs per symbol or per occurrence, and pluggy is not involved.
"""

from __future__ import annotations

import time
from typing import Callable

import attrs
import numpy as np

from ..plugin.base import BYTE_SYMBOLS, Rewriter, Scorer, as_symbols
from . import fused
from .codelength import merge_sum_delta
from .index import PairIndex
from .losses import compile_scorer
from .stops import Limits
from .trace import ROW_FIELDS, fill_trace_row, rows_to_table


@attrs.frozen(kw_only=True, eq=False)
class FitResult:
    """Rules (R x 2 int64: rule r makes symbol 256 + r), the final symbol string, and the trace
    (one row per step; the last row is the candidate that was rejected, or s0 = -1 if none)."""

    rules: np.ndarray
    symbols: np.ndarray
    trace: np.ndarray
    stop_reason: str
    seconds: float

    @property
    def dictionary_size(self) -> int:
        return BYTE_SYMBOLS + len(self.rules)


def fit(
    data,
    scorer: Scorer,
    rewriter: Rewriter,
    limits: Limits = Limits(),
    breaks: np.ndarray | None = None,
    trace: bool = True,
    progress: Callable[[int, int, float], None] | None = None,
    weights: np.ndarray | None = None,
) -> FitResult:
    """Grow a dictionary on ``data`` (bytes or uint8 array) and return rules, string and trace.
    ``weights`` (rewriters with ``supports_weights``) counts each position that many times.

    The loop is the engine's for every scorer and rewriter: while the rewriter offers the
    engine's linked string, whole batches of merges run in :mod:`.fused`; the last step (the
    candidate that stops the run), and every step of other rewriters, runs here."""
    started = time.perf_counter()
    compiled = compile_scorer(scorer)
    if weights is None:
        rewriter.load(as_symbols(data), breaks)
    elif not rewriter.supports_weights:
        raise TypeError(f"{type(rewriter).__name__} does not support weights")
    else:
        rewriter.load(as_symbols(data), breaks, weights)
    index = PairIndex(compiled, limits.min_count)
    counts = rewriter.symbol_counts()
    s0, s1, k01 = rewriter.pairs()
    index.update(s0, s1, k01, counts=counts)
    string = rewriter.linked_string()
    rules: list[tuple[int, int]] = []
    rows: list[tuple] = []
    row = np.zeros(ROW_FIELDS)
    parts = np.zeros(5, dtype=np.int64)
    acc = np.zeros(1)  # sum of lf(k_i), kept incrementally past EXACT_SUM_LIMIT
    stop_reason = "no pair left"

    def limited() -> bool:
        return limits.max_rules is not None and len(rules) >= limits.max_rules

    while True:
        if string is not None:
            for batch_rules, batch_rows, seconds in fused.run(string, compiled, index, len(rules), limits.max_rules, trace, acc):
                rules.extend(map(tuple, batch_rules.tolist()))
                if trace:
                    base = rows[-1][-1] if rows else 0.0
                    for i, r in enumerate(batch_rows.tolist()):
                        rows.append((*r, base + seconds * (i + 1) / len(batch_rows)))
                if progress is not None:
                    progress(len(rules), rewriter.length, rows[-1][1] if trace and rows else -1)
            string = None  # the run stops at the next step
        m = BYTE_SYMBOLS + len(rules)
        n = rewriter.length
        counts = rewriter.symbol_counts()
        best = index.best(n, m, counts)
        stopping = best is None or compiled.stops(best[3], best[2]) or limited()
        if stopping:
            best = index.settle(best, n, m, counts)
        if best is None:
            if trace:
                fill_trace_row(m, n, counts, acc, parts, row, -1, -1, 0, np.nan)
                rows.append((*row.tolist(), time.perf_counter() - started))
            break
        s0, s1, k01, loss = best
        if trace:
            fill_trace_row(m, n, counts, acc, parts, row, s0, s1, k01, loss)
            rows.append((*row.tolist(), time.perf_counter() - started))
        if stopping:
            stop_reason = "max_rules" if limited() and not compiled.stops(loss, k01) else "scorer"
            break
        old_a, old_b = int(counts[s0]), int(counts[s1])
        report = rewriter.apply(s0, s1)
        rules.append((s0, s1))
        counts = rewriter.symbol_counts()
        if trace:
            acc[0] += merge_sum_delta(old_a, counts[s0], old_b, counts[s1], counts[report.symbol], s0 == s1)
        index.update(report.s0, report.s1, report.k01, counts=counts, touched=(s0, s1))
        if progress is not None:
            progress(len(rules), n, rows[-1][1] if trace else -1)
    return FitResult(
        rules=np.array(rules, dtype=np.int64).reshape(-1, 2),
        symbols=np.asarray(rewriter.symbols()).astype(np.int64),
        trace=rows_to_table(rows),
        stop_reason=stop_reason,
        seconds=time.perf_counter() - started,
    )
