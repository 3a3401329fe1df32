"""The learner loop: ask the index for the best pair, stop or merge, record a trace row.

Per step it makes a fixed, small number of calls (index query, scorer on the changed pairs,
rewriter kernel); no Python runs per symbol or per occurrence, and pluggy is not involved.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable

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


class StopReason(enum.StrEnum):
    """Why a run stopped (a str: it prints and compares as its value)."""

    NO_PAIR_LEFT = "no pair left"
    MAX_RULES = "max_rules"
    SCORER = "scorer"
    RULES_FILE = "rules file"  # no learning: a dictionary reused as it is


#: the limits of a run that stops by its scorer alone
NO_LIMITS = Limits()


def fit(
    data,
    scorer: Scorer,
    rewriter: Rewriter,
    limits: Limits = NO_LIMITS,
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
    run = _Run(scorer, rewriter, limits, trace, progress)
    run.load(data, breaks, weights)
    del data, breaks, weights  # the rewriter holds what it needs: the caller's copies may go
    string = rewriter.linked_string()
    if string is not None:
        run.fused_batches(string)
    while (stop := run.step()) is None:
        pass
    return run.result(stop)


class _Run:
    """One learning run's state and its phases: load, fused batches, single steps, result."""

    def __init__(self, scorer: Scorer, rewriter: Rewriter, limits: Limits, trace: bool, progress):
        self.started = time.perf_counter()
        self.compiled = compile_scorer(scorer)
        self.rewriter, self.limits, self.trace, self.progress = rewriter, limits, trace, progress
        self.rules: list[tuple[int, int]] = []
        self.rows: list[tuple] = []
        self.row = np.zeros(ROW_FIELDS)
        self.parts = np.zeros(5, dtype=np.int64)
        self.acc = np.zeros(1)  # sum of lf(k_i), kept incrementally past EXACT_SUM_LIMIT
        self.index = PairIndex(self.compiled, limits.min_count)

    def load(self, data, breaks, weights) -> None:
        """The text into the rewriter, every pair into the index."""
        if weights is None:
            self.rewriter.load(as_symbols(data), breaks)
        elif not self.rewriter.supports_weights:
            raise TypeError(f"{type(self.rewriter).__name__} does not support weights")
        else:
            self.rewriter.load(as_symbols(data), breaks, weights)
        s0, s1, k01 = self.rewriter.pairs()
        self.index.update(s0, s1, k01, counts=self.rewriter.symbol_counts())

    def limited(self) -> bool:
        return self.limits.max_rules is not None and len(self.rules) >= self.limits.max_rules

    def fused_batches(self, string) -> None:
        """Every merge but the last, in compiled batches (the engine's linked string)."""
        for batch_rules, batch_rows, seconds in fused.run(string, self.compiled, self.index, len(self.rules),
                                                          self.limits.max_rules, self.trace, self.acc):
            self.rules.extend(map(tuple, batch_rules.tolist()))
            if self.trace:
                base = self.rows[-1][-1] if self.rows else 0.0
                for i, r in enumerate(batch_rows.tolist()):
                    self.rows.append((*r, base + seconds * (i + 1) / len(batch_rows)))
            if self.progress is not None:
                self.progress(len(self.rules), self.rewriter.length, self.rows[-1][1] if self.trace and self.rows else -1)

    def _record(self, m: int, n: int, counts, s0: int, s1: int, k01: int, loss: float) -> None:
        if self.trace:
            fill_trace_row(m, n, counts, self.acc, self.parts, self.row, s0, s1, k01, loss)
            self.rows.append((*self.row.tolist(), time.perf_counter() - self.started))

    def step(self) -> StopReason | None:
        """One merge through the rewriter's own apply; the reason when the run stops instead."""
        m = BYTE_SYMBOLS + len(self.rules)
        n = self.rewriter.length
        counts = self.rewriter.symbol_counts()
        best = self.index.best(n, m, counts)
        stopping = best is None or self.compiled.stops(best[3], best[2]) or self.limited()
        if stopping:
            best = self.index.settle(best, n, m, counts)
        if best is None:
            self._record(m, n, counts, -1, -1, 0, np.nan)
            return StopReason.NO_PAIR_LEFT
        s0, s1, k01, loss = best
        self._record(m, n, counts, s0, s1, k01, loss)
        if stopping:
            return StopReason.MAX_RULES if self.limited() and not self.compiled.stops(loss, k01) else StopReason.SCORER
        old_a, old_b = int(counts[s0]), int(counts[s1])
        report = self.rewriter.apply(s0, s1)
        self.rules.append((s0, s1))
        counts = self.rewriter.symbol_counts()
        if self.trace:
            self.acc[0] += merge_sum_delta(old_a, counts[s0], old_b, counts[s1], counts[report.symbol], s0 == s1)
        self.index.update(report.s0, report.s1, report.k01, counts=counts, touched=(s0, s1))
        if self.progress is not None:
            self.progress(len(self.rules), n, self.rows[-1][1] if self.trace else -1)
        return None

    def result(self, stop: StopReason) -> FitResult:
        return FitResult(
            rules=np.array(self.rules, dtype=np.int64).reshape(-1, 2),
            symbols=np.asarray(self.rewriter.symbols()).astype(np.int64),
            trace=rows_to_table(self.rows),
            stop_reason=stop,
            seconds=time.perf_counter() - self.started,
        )
