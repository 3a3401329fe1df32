"""The learner loop: ask the index for the best pair, stop or merge, record a trace row.

Per step it makes a fixed, small number of calls (index query, scorer on the changed pairs,
rewriter kernel); no Python runs per symbol or per occurrence, and pluggy is not involved.
"""

from __future__ import annotations

import time
from typing import Callable

import attrs
import numpy as np

from chunkpress.codelength import EXACT_SUM_LIMIT, merge_sum_delta, parts_from_sum, string_log_sum
from chunkpress.index import PairIndex
from chunkpress.rewriting import BYTE_SYMBOLS, Rewriter, as_symbols
from chunkpress.scoring import Scorer

#: Columns of the trace; the first eleven are those of the reference program's CSV files.
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


@attrs.frozen(kw_only=True)
class Limits:
    """Stop rules besides the scorer's own: a dictionary-size cap and a minimum pair count."""

    max_rules: int | None = attrs.field(
        default=None,
        validator=attrs.validators.optional([attrs.validators.instance_of(int), attrs.validators.ge(0)]),
    )
    min_count: int = attrs.field(
        default=1, validator=[attrs.validators.instance_of(int), attrs.validators.ge(1)]
    )


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
) -> FitResult:
    """Grow a dictionary on ``data`` (bytes or uint8 array) and return rules, string and trace."""
    started = time.perf_counter()
    rewriter.load(as_symbols(data), breaks)
    index = PairIndex(scorer, limits.min_count)
    counts = rewriter.symbol_counts()
    index.update(*rewriter.pairs(), counts=counts)
    if getattr(scorer, "most_frequent_first", False) and hasattr(rewriter, "run_most_frequent"):
        return _fit_compiled(scorer, rewriter, index, limits, trace, progress, started)
    rules: list[tuple[int, int]] = []
    rows: list[tuple] = []
    parts = np.zeros(5, dtype=np.int64)
    log_sum = 0.0
    stop_reason = "no pair left"
    while True:
        m = BYTE_SYMBOLS + len(rules)
        n = rewriter.length
        counts = rewriter.symbol_counts()
        best = index.best(n, m, counts)
        stopping = (
            best is None
            or scorer.stop(best[3], best[2])
            or (limits.max_rules is not None and len(rules) >= limits.max_rules)
        )
        if stopping:
            best = index.settle(best, n, m, counts)
        if trace:
            if m <= EXACT_SUM_LIMIT:
                log_sum = string_log_sum(counts, m)
            parts_from_sum(m, n, log_sum, parts)
            total = int(parts.sum())
        else:
            total = -1
        if best is None:
            if trace:
                rows.append((m, total, *parts.tolist(), -1, -1, 0, np.nan, n, time.perf_counter() - started))
            break
        s0, s1, k01, loss = best
        if trace:
            rows.append((m, total, *parts.tolist(), s0, s1, k01, loss, n, time.perf_counter() - started))
        if stopping:
            limited = limits.max_rules is not None and len(rules) >= limits.max_rules
            stop_reason = "max_rules" if limited and not scorer.stop(loss, k01) else "scorer"
            break
        old_a, old_b = int(counts[s0]), int(counts[s1])
        report = rewriter.apply(s0, s1)
        rules.append((s0, s1))
        counts = rewriter.symbol_counts()
        if trace:
            log_sum += merge_sum_delta(old_a, counts[s0], old_b, counts[s1], counts[report.symbol], s0 == s1)
        index.update(report.s0, report.s1, report.k01, counts=counts, touched=(s0, s1))
        if progress is not None:
            progress(len(rules), n, total)
    return FitResult(
        rules=np.array(rules, dtype=np.int64).reshape(-1, 2),
        symbols=np.asarray(rewriter.symbols()).astype(np.int64),
        trace=np.array(rows, dtype=TRACE_DTYPE),
        stop_reason=stop_reason,
        seconds=time.perf_counter() - started,
    )


def _fit_compiled(scorer, rewriter, index, limits, trace, progress, started) -> FitResult:
    """The most-frequent-pair loop run inside the rewriter's compiled kernel."""
    rules, chunks, _ = rewriter.run_most_frequent(
        index, limits.max_rules, scorer.stop_below, limits.min_count, trace, progress=progress
    )
    rows = []
    elapsed = 0.0
    for chunk, seconds in chunks:
        for i, r in enumerate(chunk.tolist()):
            s0, s1 = int(r[7]), int(r[8])
            rows.append((int(r[0]), int(r[6]), *map(int, r[1:6]), s0, s1, int(r[9]), r[10], int(r[11]),
                         elapsed + seconds * (i + 1) / len(chunk)))
        elapsed += seconds
    last_k = rows[-1][9] if rows else 0
    if rows and rows[-1][7] < 0:
        reason = "no pair left"
    elif rows and last_k >= scorer.stop_below and limits.max_rules is not None and len(rules) >= limits.max_rules:
        reason = "max_rules"
    else:
        reason = "scorer"
    return FitResult(
        rules=rules,
        symbols=np.asarray(rewriter.symbols()).astype(np.int64),
        trace=np.array(rows, dtype=TRACE_DTYPE),
        stop_reason=reason,
        seconds=time.perf_counter() - started,
    )
