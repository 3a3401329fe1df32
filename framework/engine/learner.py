"""The learner loop: ask the index for the best pair, stop or merge, record a trace row.

Per step it makes a fixed, small number of calls (index query, scorer on the changed pairs,
rewriter kernel); no Python runs per symbol or per occurrence, and pluggy is not involved.
"""

from __future__ import annotations

import time
from typing import Callable

import attrs
import numpy as np

from .codelength import EXACT_SUM_LIMIT, merge_sum_delta, parts_from_sum, string_log_sum
from .index import PairIndex
from ..plugin.rewriting import BYTE_SYMBOLS, Rewriter, as_symbols
from ..plugin.scoring import Scorer

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


def _not_bool(_inst, attribute, value):
    if isinstance(value, bool):  # TOML true is an int to Python; a count it is not
        raise TypeError(f"'{attribute.name}' must be an integer, got {value!r}")


@attrs.frozen(kw_only=True)
class Limits:
    """Stop rules besides the scorer's own: a dictionary-size cap and a minimum pair count."""

    max_rules: int | None = attrs.field(
        default=None,
        validator=attrs.validators.optional([_not_bool, attrs.validators.instance_of(int), attrs.validators.ge(0)]),
    )
    min_count: int = attrs.field(
        default=1, validator=[_not_bool, attrs.validators.instance_of(int), attrs.validators.ge(1)]
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
    weights: np.ndarray | None = None,
) -> FitResult:
    """Grow a dictionary on ``data`` (bytes or uint8 array) and return rules, string and trace.
    ``weights`` (rewriters that support them) counts each position that many times."""
    started = time.perf_counter()
    if weights is None:
        rewriter.load(as_symbols(data), breaks)
    else:
        rewriter.load(as_symbols(data), breaks, weights)
    index = PairIndex(scorer, limits.min_count)
    counts = rewriter.symbol_counts()
    index.update(*rewriter.pairs(), counts=counts)
    compiled = getattr(scorer, "compiled", None) if hasattr(rewriter, "run_compiled") else None
    rules: list[tuple[int, int]] = []
    rows: list[tuple] = []
    parts = np.zeros(5, dtype=np.int64)
    acc = np.zeros(1)  # sum of lf(k_i), kept incrementally past EXACT_SUM_LIMIT
    stop_reason = "no pair left"
    while True:
        if compiled is not None:
            # the fused loop runs every merge that would not stop the run, then hands back
            for batch_rules, batch_rows, seconds in rewriter.run_compiled(
                compiled, index, len(rules), limits.max_rules, getattr(scorer, "stop_below", 0), trace, acc
            ):
                rules.extend(map(tuple, batch_rules.tolist()))
                if trace:
                    base = rows[-1][-1] if rows else 0.0
                    for i, r in enumerate(batch_rows.tolist()):
                        rows.append((*map(int, r[:10]), r[10], int(r[11]), base + seconds * (i + 1) / len(batch_rows)))
                if progress is not None:
                    progress(len(rules), rewriter.length, rows[-1][1] if trace and rows else -1)
            compiled = None
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
                acc[0] = string_log_sum(counts, m)
            parts_from_sum(m, n, acc[0], parts)
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
            acc[0] += merge_sum_delta(old_a, counts[s0], old_b, counts[s1], counts[report.symbol], s0 == s1)
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

