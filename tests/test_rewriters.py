"""The fast linked rewriter and the reference scan rewriter agree exactly."""

import re
from pathlib import Path

import numpy as np
import pytest
from chunkpress.engine.learner import fit
from chunkpress.engine.linkednodes import NXT, SYM
from chunkpress.engine.stops import Limits
from chunkpress.plugins.rewriters.linked import LinkedRewriter
from chunkpress.plugins.rewriters.scan import ScanRewriter, pair_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import read

SCORERS = ["mdl", "repair", "pmi", "spmi"]


def both(registry, scorer, data, breaks=None, max_rules=60):
    limits = Limits(max_rules=max_rules)
    s = registry.get("scorer", scorer)
    a = fit(data, s.build(), ScanRewriter(), limits, breaks=breaks)
    b = fit(data, s.build(), LinkedRewriter(), limits, breaks=breaks)
    return a, b


def assert_identical(a, b):
    assert np.array_equal(a.rules, b.rules)
    assert np.array_equal(a.symbols, b.symbols)
    for col in a.trace.dtype.names:
        if col != "seconds":
            assert np.array_equal(a.trace[col], b.trace[col], equal_nan=True), col


texts = st.one_of(
    st.binary(max_size=300),
    st.text(alphabet="ab ", max_size=300).map(str.encode),
    st.lists(st.sampled_from([b"a", b"aa", b"ab", b"ba", b"aaa", b" "]), max_size=120).map(b"".join),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=texts, scorer=st.sampled_from(SCORERS), use_breaks=st.booleans(), seed=st.integers(0, 2**16))
def test_linked_equals_scan(registry, data, scorer, use_breaks, seed):
    breaks = None
    if use_breaks and data:
        breaks = np.random.default_rng(seed).random(len(data)) < 0.2
    assert_identical(*both(registry, scorer, data, breaks))


@pytest.mark.parametrize("scorer", SCORERS)
@pytest.mark.parametrize(
    "name,data",
    [
        ("run", b"a" * 5001),
        ("alternating", b"ab" * 2000 + b"a"),
        ("runs_of_runs", b"".join(bytes([c]) * (c % 7 + 1) for c in range(256)) * 4),
        ("all_bytes", bytes(range(256)) * 8),
    ],
)
def test_adversarial_inputs(registry, scorer, name, data):
    assert_identical(*both(registry, scorer, data, max_rules=200))


def test_pair_counts_are_non_overlapping():
    s = np.frombuffer(b"aaaa.aaa", np.uint8).astype(np.int32)
    keys, counts = pair_table(s, np.zeros(len(s), bool))
    table = {(int(k) >> 32, int(k) & 0xFFFFFFFF): int(c) for k, c in zip(keys, counts, strict=False)}
    assert table[(97, 97)] == 3  # 2 in "aaaa", 1 in "aaa"


def test_merge_is_left_to_right(registry):
    for rw in (ScanRewriter(), LinkedRewriter()):
        rw.load(np.frombuffer(b"aaab", np.uint8))
        report = rw.apply(97, 97)
        assert rw.symbols().tolist() == [256, 97, 98]
        assert report.sites == 1


def test_breaks_stop_pairs(registry):
    data = b"abab"
    breaks = np.array([0, 1, 0, 0], bool)  # boundary between "ab" and "ab"
    for rw in (ScanRewriter(), LinkedRewriter()):
        rw.load(np.frombuffer(data, np.uint8), breaks)
        s0, s1, k = rw.pairs()
        assert dict(zip(zip(s0.tolist(), s1.tolist(), strict=False), k.tolist(), strict=False)) == {(97, 98): 2}


def test_gpt2_pretokenizer_matches_the_gpt2_pattern(alice):
    import re

    from chunkpress.text.pretokenize import split

    # on ASCII text the Unicode classes are the ASCII ones, so Python's re can state the pattern
    pattern = re.compile(rb"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")
    text = alice + b"I'm  don't\n\n  x  42!! \t\n hi 's "
    assert split(text, "gpt2") == pattern.findall(text)
    assert split(b"hello  world\n\nfoo", "whitespace") == [b"hello", b"  ", b"world", b"\n\n", b"foo"]
    # not UTF-8: every stray byte is a character of its own class "other"
    assert b"".join(split(b"ab\xff\xfe cd\xc3", "gpt2")) == b"ab\xff\xfe cd\xc3"


def test_gpt2_pretokenizer_equals_hf_bytelevel_on_unicode(alice):
    pytest.importorskip("tokenizers")
    from chunkpress.text.hf import byte_to_unicode
    from chunkpress.text.pretokenize import split
    from tokenizers import pre_tokenizers

    back = {v: k for k, v in byte_to_unicode().items()}
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    samples = [
        read("udhr_arb.txt"), read("udhr_cmn_hans.txt"), alice[:20000],
        "25\u00b0C \u2013 caf\u00e9\u00a0na\u00efve \u0663\u0664 \u3000x\u2028y \U0001F600!! \u00bd 's".encode(),
    ]
    for data in samples:
        expected = [bytes(back[c] for c in w) for w, _ in hf.pre_tokenize_str(data.decode())]
        assert split(data, "gpt2") == expected


def test_word_level_rules_stay_inside_words(registry, alice):
    from chunkpress.format.expand import expand
    from chunkpress.pipeline import Pipeline
    from chunkpress.text.pretokenize import split

    pipe = Pipeline.from_config(registry=registry, scorer="repair", pretokenizer="gpt2", limits={"max_rules": 300})
    result = pipe.fit(alice)
    words = set(split(alice, "gpt2"))
    for r in range(len(result.rules)):
        chunk = expand(result.rules, [256 + r])
        assert any(chunk in w for w in words), chunk  # every chunk is part of one pre-token
    assert expand(result.rules, result.symbols) == alice


@pytest.mark.parametrize("scorer,limit", [("repair", 1500), ("mdl", None), ("spmi", 800), ("pmi", 200)])
@pytest.mark.parametrize("pre", ["gpt2", "whitespace"])
def test_distinct_word_training_equals_whole_text(registry, alice, scorer, limit, pre):
    """Training on each distinct pre-token once, weighted by its count, is training on the text."""
    from chunkpress.pipeline import Pipeline
    from chunkpress.text.pretokenize import pretoken_breaks

    data = alice + read("udhr_arb.txt")
    pipe = Pipeline.from_config(registry=registry, scorer=scorer, pretokenizer=pre,
                                limits={"max_rules": limit} if limit else {})
    weighted = pipe.fit(data)
    arr = np.frombuffer(data, np.uint8)
    whole = fit(arr, registry.get("scorer", scorer).build(), ScanRewriter() if scorer == "pmi" else LinkedRewriter(),
                pipe.config.limits, breaks=pretoken_breaks(arr, pre))
    assert_identical(weighted, whole)


def test_growth_keeps_data_fills_records_and_never_leaves_a_view_dangling():
    from types import SimpleNamespace

    from chunkpress.engine.index import RECORD
    from chunkpress.engine.pairtable import grow, grown

    box = SimpleNamespace(a=np.arange(5))
    grow(box, "a", 8, -1)  # nothing else refers to it: resized in place
    assert box.a.tolist() == [0, 1, 2, 3, 4, -1, -1, -1]
    view = box.a[:3]  # a live view: numpy refuses the in-place resize, so it is copied
    grow(box, "a", 1 << 20, 9)
    assert view.tolist() == [0, 1, 2] and box.a[:9].tolist() == [0, 1, 2, 3, 4, -1, -1, -1, 9]
    assert box.a.size == 1 << 20 and not np.shares_memory(view, box.a)
    assert grown(np.arange(6).reshape(3, 2), 4, np.array([-1, -2])).tolist() == [[0, 1], [2, 3], [4, 5], [-1, -2]]
    fill = np.zeros(1, dtype=RECORD)
    fill["child"] = -1
    box.rec = grown(np.empty(0, dtype=RECORD), 3, fill)
    box.rec[1]["k01"] = 9
    grow(box, "rec", 5, fill)
    assert box.rec.dtype == RECORD and box.rec["k01"].tolist() == [0, 9, 0, 0, 0]
    assert box.rec["child"].tolist() == [-1] * 5 and box.rec["bval"].tolist() == [0.0] * 5
    grow(box, "rec", 7, None)  # no fill: for arrays whose entries are written before use
    assert box.rec.size == 7 and box.rec["k01"][:5].tolist() == [0, 9, 0, 0, 0]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident size from /proc")
def test_growth_without_a_fill_leaves_the_new_pages_untouched():
    """numpy zero-fills what a resize adds unless the array is read-only: grow resizes it so,
    and the pages past the old end stay out of memory until used."""
    from types import SimpleNamespace

    from chunkpress.engine.pairtable import grow

    def resident_mib() -> int:
        return int(re.search(r"VmRSS:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) >> 10

    box = SimpleNamespace(a=np.arange(1 << 20))  # 8 MiB
    before = resident_mib()
    grow(box, "a", 1 << 25, None)  # 256 MiB
    assert box.a.flags.writeable and box.a[:5].tolist() == [0, 1, 2, 3, 4]
    assert resident_mib() - before < 64
    box.a[-1] = 7  # and it is there to be written
    assert box.a[-1] == 7


def test_linked_grows_its_arrays_during_a_fit_and_matches_scan(registry, monkeypatch):
    # 16 spare pair records at load, thousands of pairs later: the rewriter's records and table, the
    # index's, and the symbol arrays all grow many times inside the fused loop and in replay; with
    # no spare pool entries the occurrence pool is rebuilt (stale entries dropped) and grown too
    monkeypatch.setattr(LinkedRewriter, "initial_slots", 16)
    monkeypatch.setattr(LinkedRewriter, "pool_headroom", 0.0)
    data = read("alice29.txt")[:6000]
    for scorer in ("repair", "mdl"):
        a, b = both(registry, scorer, data, max_rules=None)
        assert len(a.rules) > 100
        assert_identical(a, b)
    rw = LinkedRewriter()
    rw.load(np.frombuffer(data, dtype=np.uint8))
    start, pool_start = rw.pair_records.shape[0], rw.pool.shape[0]  # byte pairs + 16, length + 16
    rw.replay(a.rules)
    assert rw.pair_records.shape[0] >= 2 * start
    assert rw.pool_rebuilds > 0 and rw.pool.shape[0] == pool_start  # rebuilt in place, never grown
    assert np.array_equal(rw.symbols(), b.symbols)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([-1.5, 0.0, 2.0, float("nan")]), st.integers(0, 3), st.integers(0, 3)),
                     min_size=1, max_size=40))
def test_lexicographic_argmin_is_lexsorts_first_row(rows):
    from chunkpress.arrays import lexicographic_argmin

    loss, k, s = (np.array(col) for col in zip(*rows, strict=False))
    assert lexicographic_argmin(loss, k, s) == np.lexsort((s, k, loss))[0]


@pytest.mark.parametrize(("scorer", "rules"), [("mdl", None), ("length-max", 400), ("wordpiece", 400)])
def test_the_stopping_step_settles_block_by_block_as_over_all_pairs_at_once(registry, monkeypatch, scorer, rules):
    """The last step's search among the pairs below the scorer's floor, a block of slots at a
    time, finds the candidate (and so the stop and the trace's last row) of one search."""
    import chunkpress.engine.index as index

    blocks = []
    whole_argmin = index.lexicographic_argmin
    monkeypatch.setattr(index, "lexicographic_argmin", lambda *keys: blocks.append(1) or whole_argmin(*keys))
    data, limits = read("alice29.txt")[:60_000], Limits(max_rules=rules)
    results = {}
    for block in (1 << 40, 97):
        monkeypatch.setattr(index, "SETTLE_BLOCK", block)
        blocks.clear()
        results[block] = fit(data, registry.get("scorer", scorer).build(), LinkedRewriter(), limits)
        searched = len(blocks)
    assert searched > 1  # the last run searched many blocks
    one, many = results[1 << 40], results[97]
    assert one.stop_reason == many.stop_reason and one.rules.tolist() == many.rules.tolist()
    for field in one.trace.dtype.names:
        if field != "seconds":
            assert np.array_equal(one.trace[field][-1:], many.trace[field][-1:], equal_nan=True), field


def test_a_most_frequent_first_scorer_stops_on_the_candidate_a_full_search_finds(registry):
    """A by-count scorer's last step skips the search below its floor (those pairs are less
    frequent than the best one): the same candidate, so the same trace row, as the search over
    every pair that the same loss without the by-count promise makes."""
    repair = registry.get("scorer", "repair").build()
    searched = type("Searched", (type(repair),), {"by_count": False})()
    data = read("alice29.txt")[:60_000]
    runs = [fit(data, s, LinkedRewriter(), Limits(max_rules=400)) for s in (repair, searched)]
    assert runs[0].rules.tolist() == runs[1].rules.tolist()
    last = [(int(t["s0"]), int(t["s1"]), int(t["k01"]), float(t["loss"])) for t in (r.trace[-1] for r in runs)]
    assert last[0] == last[1] and last[0][2] >= repair.min_merge_count > 1


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=300), split=st.integers(0, 300))
def test_sort_in_place_sorts_and_leaves_the_rest(values, split):
    # the merge kernel's allocation-free sort: a prefix of the array, with scratch; nearly sorted
    # input (two ascending runs, as a merge's site lists are) takes its skip-the-merge path
    from chunkpress.engine.kernels import sort_in_place

    for data in (values, sorted(values[:split]) + sorted(values[split:])):
        a = np.array(data + [7, 7], dtype=np.int32)
        sort_in_place(a, len(data), np.zeros(len(data), dtype=np.int32))
        assert a[: len(data)].tolist() == sorted(data) and a[len(data):].tolist() == [7, 7]


@pytest.mark.parametrize("text", [b"ab" * 3000, b"abcd" * 1500, b"aab" * 2000, b"a" * 6001, b"a" + b"b" * 6001])
@pytest.mark.parametrize("scorer", ["mdl", "repair"])
def test_periodic_and_degenerate_input_match_scan(registry, text, scorer):
    """The inputs that once made the linked rewriter quadratic (a walk back over the run of new
    symbols at every site) give the scan rewriter's rules, string and trace."""
    a, b = both(registry, scorer, text, max_rules=None)
    assert_identical(a, b)


def test_a_merge_that_needs_more_pool_entries_than_are_free_rebuilds_in_place(monkeypatch):
    """a b b b ...: merging (a, b) shifts the pairing of the whole run of b's, one new pool entry
    per two nodes, after a merge of (x, y) left its entries stale and with no spare entries at
    all: the pool is rebuilt inside the merge, never written past, and the counts stay exact."""
    monkeypatch.setattr(LinkedRewriter, "pool_headroom", 0.0)
    data = np.frombuffer(b"xy" * 5000 + b"ca" + b"b" * 20001, dtype=np.uint8)
    rw, ref = LinkedRewriter(), ScanRewriter()
    rw.load(data)
    ref.load(data)
    size = rw.pool.shape[0]
    for merger in (rw, ref):
        merger.apply(120, 121)
    report = rw.apply(97, 98)
    ref.apply(97, 98)
    assert rw.pool.shape[0] == size and rw.pool_rebuilds >= 1
    assert sorted(zip(*map(list, rw.pairs()), strict=False)) == sorted(zip(*map(list, ref.pairs()), strict=False))
    assert report.sites == 1 and np.array_equal(rw.symbols(), ref.symbols())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), merges=st.integers(0, 12), weighted=st.booleans())
def test_a_regrouped_string_counts_as_the_same_tokens_loaded_afresh(seed, merges, weighted):
    """Regrouping a string of words into tokens (each a copy of a word, with its own weight)
    leaves the pairs, their counts, the symbol counts and the next merges as loading the
    tokens' symbols afresh would; the report names the pairs whose count changed."""
    rng = np.random.default_rng(seed)
    words = [bytes(rng.integers(97, 100, rng.integers(1, 7)).astype(np.uint8)) for _ in range(6)]
    data = np.frombuffer(b"".join(words), dtype=np.uint8)
    starts = np.cumsum([0] + [len(w) for w in words])
    breaks = np.zeros(data.size, dtype=bool)
    breaks[starts[1:] - 1] = True
    string = LinkedRewriter()
    string.load(data, breaks, rng.integers(1, 4, data.size) if weighted else None)
    for _ in range(merges):  # the commonest pair, as a learner would take it
        s0, s1, k = string.pairs()
        if not k.size:
            break
        best = int(np.argmax(k))
        string.apply(int(s0[best]), int(s1[best]))
    tokens = rng.integers(0, len(words), 9)
    weights = rng.integers(1, 5, tokens.size) if weighted else None
    live = string.symbols()
    word_symbols = []  # each word's symbols as merged, read off the string before regrouping
    for w in range(len(words)):
        q, out = int(starts[w]), []
        while q != -1:
            out.append(int(string.node[q, SYM]))
            q = int(string.node[q, NXT])
        word_symbols.append(out)
    assert sum(len(s) for s in word_symbols) == live.size
    before = {(a, b): c for a, b, c in zip(*map(np.ndarray.tolist, string.pairs()), strict=True)}
    report, token_last = string.regroup(tokens, starts[:-1], weights)
    assert string.n_slots == len(before)  # the pairs counted before, numbered anew

    fresh = LinkedRewriter()
    symbols = np.concatenate([word_symbols[t] for t in tokens.tolist()])
    ends = np.cumsum([len(word_symbols[t]) for t in tokens.tolist()]) - 1
    cut = np.zeros(symbols.size, dtype=bool)
    cut[ends] = True
    fresh.load(symbols, cut, None if weights is None else np.repeat(weights, [len(word_symbols[t]) for t in tokens]),
               dictionary_size=string.next_symbol)
    after = {(a, b): c for a, b, c in zip(*map(np.ndarray.tolist, string.pairs()), strict=True)}
    assert after == {(a, b): c for a, b, c in zip(*map(np.ndarray.tolist, fresh.pairs()), strict=True)}
    assert np.array_equal(string.symbol_counts()[:string.next_symbol], fresh.symbol_counts()[:string.next_symbol])
    assert string.length == fresh.length and np.array_equal(token_last, ends)
    assert np.array_equal(string.symbols(), fresh.symbols())
    moved = {(a, b): c for a, b, c in zip(report.s0.tolist(), report.s1.tolist(), report.k01.tolist(), strict=True)}
    assert moved == {p: after.get(p, 0) for p in before.keys() | after.keys() if after.get(p, 0) != before.get(p, 0)}
    for _ in range(3):  # and merging goes on alike
        s0, s1, k = fresh.pairs()
        if not k.size:
            break
        best = int(np.argmax(k))
        a, b = string.apply(int(s0[best]), int(s1[best])), fresh.apply(int(s0[best]), int(s1[best]))
        assert a.sites == b.sites and np.array_equal(string.symbols(), fresh.symbols())
