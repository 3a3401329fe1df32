"""The learner loop: ask the index for the best pair, stop or merge, record a trace row.

Per step it makes a fixed, small number of calls (index query, scorer on the changed pairs,
rewriter kernel); no Python runs per symbol or per occurrence, and pluggy is not involved.
Between merges it runs the events of :mod:`.events`: boundaries that a boundary policy opens at
a step, and the deletions a deletion policy asks for after a merge; each reports the pairs it
changed to the index, as a merge does, so nothing is counted again from scratch.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Sequence

import attrs
import numpy as np

from ..contract import BYTE_SYMBOLS, Rewriter, Scorer, as_symbols
from ..errors import ConfigError
from . import fused
from .codelength import merge_sum_delta, string_log_sum
from .events import DELETED, OPENED, Deletion, Opening, Regroup, split_of
from .index import PairIndex
from .losses import compile_removes, compile_scorer, removes
from .stops import Limits
from .trace import ROW_FIELDS, fill_trace_row, new_log_sum, rows_to_table


@attrs.frozen(kw_only=True, eq=False)
class FitResult:
    """Rules (R x 2 int64: rule r makes symbol 256 + r), the final symbol string, the trace
    (one row per step; the last row is the candidate that was rejected, or s0 = -1 if none; a
    deletion or an opening is a row too, see :mod:`.events`), the deletions (D x 2: the rule
    after which, the symbol) and ``counts``: each symbol's occurrences in the final string, an
    entry per id of the dictionary (weighted where the run was, so those of the text it stands
    for; 0 for a deleted symbol)."""

    rules: np.ndarray
    symbols: np.ndarray
    trace: np.ndarray
    stop_reason: str
    seconds: float
    counts: np.ndarray
    deletions: np.ndarray = attrs.field(factory=lambda: np.zeros((0, 2), dtype=np.int64))

    @property
    def dictionary_size(self) -> int:
        """The symbols in the vocabulary: the bytes and the rules' symbols not deleted."""
        return BYTE_SYMBOLS + len(self.rules) - len(self.deletions)


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
    openings: Sequence[Opening] = (),
    deletion=None,
    symbols: bool = True,
    regroup: Regroup | None = None,
) -> FitResult:
    """Grow a dictionary on ``data`` (bytes or uint8 array) and return rules, string and trace.
    ``weights`` (rewriters with ``supports_weights``) counts each position that many times;
    ``openings``: boundaries of ``breaks`` that open at a step (a boundary policy's); ``deletion``:
    a deletion policy (None: nothing is deleted). ``limits.max_rules`` counts the rules whose
    symbols stay in the vocabulary.
    ``symbols`` False: the result's string is left empty, for a caller that wants the rules,
    counts and trace only (the string, as long as the text's distinct words, is not copied out).
    ``regroup``: the string laid out again at a step (:class:`~.events.Regroup`; the engine's
    linked string), the openings due from then on naming boundaries by token.

    The loop is the engine's for every scorer and rewriter: while the rewriter offers the
    engine's linked string, whole batches of merges run in :mod:`.fused`; the last step (the
    candidate that stops the run), the events, and every step of other rewriters, run here."""
    run = _Run(scorer, rewriter, limits, trace, progress, deletion)
    if (openings or run.removes is not None) and not rewriter.supports_events:
        raise ConfigError(f"rewriter {type(rewriter).__name__} cannot open boundaries or delete symbols "
                          "(supports_events): use the linked rewriter")
    run.load(data, breaks, weights)
    del data, breaks, weights  # the rewriter holds what it needs: the caller's copies may go
    run.pending = sorted(openings, key=lambda o: o.at)
    del openings  # an opening goes once it has opened
    if regroup is not None:
        if rewriter.linked_string() is None or (run.pending and run.pending[0].at < regroup.at):
            raise ConfigError("a regroup needs the engine's linked string, and comes before every opening")
        run.regroup, regroup = regroup, None  # it goes once done
    string = rewriter.linked_string()
    while True:
        run.open_due()
        if string is not None and not run.fused_batches(string):
            continue  # stopped at a step where boundaries open, or after a deletion
        stop = run.step()
        if stop is not None:
            return run.result(stop, symbols)


class _Run:
    """One learning run's state and its phases: load, fused batches, single steps, events, result."""

    def __init__(self, scorer: Scorer, rewriter: Rewriter, limits: Limits, trace: bool, progress, deletion):
        self.started = time.perf_counter()
        self.compiled = compile_scorer(scorer)
        self.removes = compile_removes(deletion) if deletion is not None else None
        self.rewriter, self.limits, self.trace, self.progress = rewriter, limits, trace, progress
        self.rules: list[tuple[int, int]] = []
        self.rows: list[tuple] = []
        self.row = np.zeros(ROW_FIELDS)
        self.parts = np.zeros(5, dtype=np.int64)
        self.acc = new_log_sum()
        self.index = PairIndex(self.compiled, limits.min_count)
        if self.compiled.uses_lengths:  # every symbol's bytes: 1 for each byte, a rule's the sum of its parts'
            self.index.lengths = np.ones(BYTE_SYMBOLS, dtype=np.int64)
        self.pending: list[Opening] = []
        self.regroup: Regroup | None = None
        self.deletions: list[tuple[int, int]] = []
        self.gone: dict[int, int] = {}  # deleted symbol -> the rule after which
        self.bytes_of = [1] * BYTE_SYMBOLS  # each symbol's bytes, for splitting a deleted one

    def load(self, data, breaks, weights) -> None:
        """The text into the rewriter, every pair into the index."""
        if weights is None:
            self.rewriter.load(as_symbols(data), breaks)
        elif not self.rewriter.supports_weights:
            raise TypeError(f"{type(self.rewriter).__name__} does not support weights")
        else:
            self.rewriter.load(as_symbols(data), breaks, weights)
        self._index_the_string()

    def _index_the_string(self) -> None:
        """Every pair of the rewriter's string into a new index (over the engine's linked
        string, the index keeps its records at the string's slots)."""
        lengths = self.index.lengths
        self.index = PairIndex(self.compiled, self.limits.min_count)
        self.index.lengths = lengths
        string = self.rewriter.linked_string()
        if string is not None:
            self.index.follow(string)
        s0, s1, k01 = self.rewriter.pairs()
        self.index.update(s0, s1, k01, counts=self.rewriter.symbol_counts())

    def limited(self) -> bool:
        return self.limits.max_rules is not None and len(self.rules) - len(self.deletions) >= self.limits.max_rules

    def _bound(self) -> int | None:
        """The rules after which the fused loop must hand back: the limit (deleted symbols make
        room for as many rules more) or the next step where boundaries open."""
        bounds = [o.at for o in self.pending] + ([self.regroup.at] if self.regroup is not None else [])
        if self.limits.max_rules is not None:
            bounds.append(self.limits.max_rules + len(self.deletions))
        return min(bounds) if bounds else None

    def fused_batches(self, string) -> bool:
        """Merges in compiled batches (the engine's linked string) until the run would stop:
        True; or until boundaries open or a deletion is due (done here): False, to go on."""
        bound = self._bound()
        for batch_rules, batch_rows, seconds, status in fused.run(
                string, self.compiled, self.index, len(self.rules), bound, self.trace, self.acc,
                removes=self.removes):
            self.rules.extend(map(tuple, batch_rules.tolist()))
            if self.trace:
                base = self.rows[-1][-1] if self.rows else 0.0
                for i, r in enumerate(batch_rows.tolist()):
                    self.rows.append((*r, base + seconds * (i + 1) / len(batch_rows)))
            if self.progress is not None:
                self.progress(len(self.rules), self.rewriter.length, self.rows[-1][1] if self.trace and self.rows else -1)
            if status == fused.DELETE:
                a, b = self.rules[-1]
                self.delete_parts(a, b)
                return False
        return not self._event_due()

    def _event_due(self) -> bool:
        """Whether the string is regrouped or boundaries open at this step."""
        due = [o.at for o in self.pending[:1]] + ([self.regroup.at] if self.regroup is not None else [])
        return bool(due) and len(self.rules) >= min(due)

    def _learned(self, a: int, b: int) -> None:
        self.rules.append((a, b))

    def _bytes_of(self) -> list[int]:
        """Each symbol's length in bytes, brought up to the rules learned (only a deletion needs
        it: a merge in the fused loop costs no Python)."""
        for a, b in self.rules[len(self.bytes_of) - BYTE_SYMBOLS:]:
            self.bytes_of.append(self.bytes_of[a] + self.bytes_of[b])
        return self.bytes_of

    def _record(self, m: int, n: int, counts, s0: int, s1: int, k01: int, loss: float) -> None:
        if self.trace:
            fill_trace_row(m, n, counts, self.acc, self.parts, self.row, s0, s1, k01, loss)
            self.rows.append((*self.row.tolist(), time.perf_counter() - self.started))

    def _event_row(self, s0: int, s1: int, k01: int) -> None:
        """A trace row for an event (its counts after the event)."""
        if self.trace:
            counts = self.rewriter.symbol_counts()
            self.acc.total[0] = string_log_sum(counts, BYTE_SYMBOLS + len(self.rules))
            self._record(BYTE_SYMBOLS + len(self.rules), self.rewriter.length, counts, s0, s1, k01, np.nan)

    def open_due(self) -> None:
        """Regroup the string and open the boundaries whose step has come."""
        if self.regroup is not None and len(self.rules) >= self.regroup.at:
            step, self.regroup = self.regroup, None
            _, token_last = self.rewriter.linked_string().regroup(step.tokens, step.word_starts, step.weights)
            del step
            self.pending = [Opening(at=o.at, positions=token_last[o.positions]) for o in self.pending]
            self._index_the_string()  # its slots are new
            # taken again, as after a deletion: exact, and right where the tokens' weights moved counts
            self.acc.total[0] = string_log_sum(self.rewriter.symbol_counts(), BYTE_SYMBOLS + len(self.rules))
        while self.pending and len(self.rules) >= self.pending[0].at:
            opening = self.pending.pop(0)
            report = self.rewriter.open(opening.positions)
            self.index.update(report.s0, report.s1, report.k01, counts=self.rewriter.symbol_counts())
            self._event_row(-1, OPENED, report.sites)

    def delete_parts(self, a: int, b: int) -> None:
        """After the merge of (a, b): delete each part (left first) that the policy removes."""
        z = BYTE_SYMBOLS + len(self.rules) - 1
        for part in dict.fromkeys((a, b)):
            counts = self.rewriter.symbol_counts()
            if part < BYTE_SYMBOLS or part in self.gone or not removes(self.removes, int(counts[z]), int(counts[part])):
                continue
            pieces, offsets = split_of(part, self.rules, self._bytes_of(), self.gone)
            step = Deletion(after=len(self.rules) - 1, symbol=part, pieces=pieces, offsets=offsets)
            report = self.rewriter.delete(step)
            self.gone[part] = step.after
            self.deletions.append((step.after, part))
            self.index.update(report.s0, report.s1, report.k01, counts=self.rewriter.symbol_counts(),
                              touched=(part, *pieces))
            self._event_row(part, DELETED, report.sites)

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
        self._learned(s0, s1)
        lengths = self.index.lengths
        if lengths is not None:
            if report.symbol >= lengths.size:
                lengths = self.index.lengths = np.concatenate([lengths, np.zeros(max(lengths.size, 64), np.int64)])
            lengths[report.symbol] = lengths[s0] + lengths[s1]
        counts = self.rewriter.symbol_counts()
        if self.trace:
            self.acc.total[0] += merge_sum_delta(old_a, counts[s0], old_b, counts[s1], counts[report.symbol], s0 == s1)
        self.index.update(report.s0, report.s1, report.k01, counts=counts, touched=(s0, s1))
        if self.progress is not None:
            self.progress(len(self.rules), n, self.rows[-1][1] if self.trace else -1)
        if self.removes is not None:
            self.delete_parts(s0, s1)
        return None

    def result(self, stop: StopReason, symbols: bool = True) -> FitResult:
        return FitResult(
            rules=np.array(self.rules, dtype=np.int64).reshape(-1, 2),
            symbols=np.asarray(self.rewriter.symbols()).astype(np.int64) if symbols else np.zeros(0, dtype=np.int64),
            trace=rows_to_table(self.rows),
            stop_reason=stop,
            seconds=time.perf_counter() - self.started,
            counts=self._final_counts(),
            deletions=np.array(self.deletions, dtype=np.int64).reshape(-1, 2),
        )

    def _final_counts(self) -> np.ndarray:
        """The rewriter's symbol counts, one an id of the dictionary (a copy: the rewriter may go on)."""
        m = BYTE_SYMBOLS + len(self.rules)
        counts = np.zeros(m, dtype=np.int64)
        held = np.asarray(self.rewriter.symbol_counts())[:m]
        counts[:held.size] = held
        return counts
