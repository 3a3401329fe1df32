"""The scorers reproduce the MDL reference program's traces row for row (alice29)."""

import numpy as np
import pytest
from chunkpress.engine.learner import fit
from chunkpress.engine.stops import Limits
from chunkpress.study.traceio import read_trace_csv
from support import DATA

INTEGER_COLUMNS = ["m", "total_bits", "m_bits", "rules_bits", "n_bits", "counts_bits", "string_bits", "s0", "s1", "k01"]
CASES = [("mdl", "alice29.mdl.csv"), ("repair", "alice29.count.csv"), ("spmi", "alice29.spmi.csv"), ("pmi", "alice29.pmi.csv")]


def run(registry, scorer, rewriter, data, reference):
    limit = None if scorer == "mdl" else int(reference["m"][-1]) - 256
    return fit(data, registry.get("scorer", scorer).build(), registry.get("rewriter", rewriter).build(), Limits(max_rules=limit))


def assert_same_trace(trace, reference):
    assert len(trace) == len(reference)
    for col in INTEGER_COLUMNS:
        bad = np.flatnonzero(trace[col] != reference[col])
        assert bad.size == 0, f"{col} differs first at row {bad[0]}: {trace[bad[0]]} vs {reference[bad[0]]}"
    assert np.max(np.abs(trace["loss"] - reference["loss"])) <= 0.005 + 1e-9


@pytest.mark.parametrize("scorer,csv", CASES)
def test_linked_reproduces_reference(registry, alice, scorer, csv):
    reference = read_trace_csv(DATA / csv)
    result = run(registry, scorer, "linked", alice, reference)
    assert_same_trace(result.trace, reference)
    assert len(result.rules) == int(reference["m"][-1]) - 256


def test_scan_reproduces_mdl_reference(registry, alice):
    reference = read_trace_csv(DATA / "alice29.mdl.csv")
    result = run(registry, "mdl", "scan", alice, reference)
    assert_same_trace(result.trace, reference)
    assert result.stop_reason == "scorer"
    assert result.trace["loss"][-1] > 0 and (result.trace["loss"][:-1] <= 0).all()


def test_code_length_of_bytes_matches_first_row(alice):
    from chunkpress.engine.codelength import code_length

    counts = np.bincount(np.frombuffer(alice, np.uint8), minlength=256)
    parts = code_length(256, len(alice), counts)
    assert (parts.m_bits, parts.rules_bits, parts.n_bits, parts.counts_bits, parts.string_bits) == (1, 0, 26, 2715, 694302)
    assert parts.total_bits == 697044


def test_the_trace_s_memoised_sum_is_the_reference_s_double():
    """The trace evaluates lf(k) only for counts that changed since its last row, yet adds every
    term in the reference's order: the same double as a sum taken afresh, whatever moved."""
    from chunkpress.engine.codelength import string_log_sum
    from chunkpress.engine.trace import fresh_log_sum, new_log_sum

    rng = np.random.default_rng(5)
    counts = rng.integers(0, 300_000, 9000)
    counts[:40] = [0, 1] * 20
    acc = new_log_sum()
    for m in (300, 5000, 5000, 9000, 2000, 9000):
        moved = rng.integers(0, m, 50)
        counts[moved] = rng.integers(0, 3000, moved.size)
        assert fresh_log_sum(counts, m, acc) == string_log_sum(counts, m)
    assert (acc.seen[:9000] == counts).all()


@pytest.mark.parametrize("name", ["mdl", "pmi", "spmi", "repair"])
def test_compiled_losses_equal_the_python_functions_bit_for_bit(registry, name):
    """The engine runs a scorer's loss compiled; run as plain Python it gives the same bits."""
    from chunkpress.engine.losses import compile_scorer

    scorer = registry.get("scorer", name).build()
    compiled = compile_scorer(scorer)
    rng = np.random.default_rng(3)
    k0 = rng.integers(1, 200_000, 2000)
    same = rng.random(2000) < 0.1
    k1 = np.where(same, k0, rng.integers(1, 200_000, 2000))
    k01 = np.maximum(1, (rng.random(2000) * np.minimum(k0, k1) / np.where(same, 2, 1)).astype(np.int64))
    N, m = 900_000, 13_000
    a = np.array([scorer.loss_a(N, m, int(k)) for k in k01], dtype=np.float64)
    b = np.array([scorer.loss_b(int(k), int(x), int(y), bool(s)) for k, x, y, s in zip(k01, k0, k1, same, strict=True)],
                 dtype=np.float64)
    assert np.array_equal(compiled.losses_a(N, m, k01), a)
    assert np.array_equal(compiled.losses_b(k01, k0, k1, same), b)
