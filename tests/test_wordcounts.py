"""Word counts over shards: the same words and counts as the whole text, so word-level training
on a stream (here or on Dask workers) learns the same rules without holding the corpus."""

import io

import numpy as np
import pytest
from chunkpress.cli import main
from chunkpress.format.rulesfile import load_rules
from chunkpress.pipeline import Pipeline
from chunkpress.text.wordcounts import WordCounts, count_stream, count_words, shards
from support import read

# white-space runs, contractions, digits and non-ASCII text around every possible cut
TRICKY = (b"a\n\n\nWord  b\t\tc's  they're\r\n\r\n 12 345x  y\n \n" + "naïve 東京 ١٢٣ ".encode() * 3) * 40


def _as_dict(words: WordCounts) -> dict:
    return {bytes(words.buf[a:b]): int(c) for a, b, c in zip(words.offsets[:-1], words.offsets[1:], words.counts, strict=False)}


@pytest.mark.parametrize("lines", [False, True])
@pytest.mark.parametrize("pretokenizer", ["gpt2", "whitespace", "metaspace"])
@pytest.mark.parametrize("name", ["alice29.txt", "udhr_arb.txt", "tricky"])
def test_counts_over_shards_equal_the_whole_text(name, pretokenizer, lines):
    text = TRICKY if name == "tricky" else read(name)
    pieces = list(shards(io.BytesIO(text), 1024, pretokenizer=pretokenizer, lines=lines))
    assert b"".join(pieces) == text and len(pieces) > 3
    whole = _as_dict(count_words(text, pretokenizer, lines=lines))
    assert _as_dict(count_stream(io.BytesIO(text), pretokenizer, shard_size=1024, lines=lines)) == whole
    assert sum(whole.values()) == count_words(text, pretokenizer, lines=lines).occurrences


@pytest.mark.parametrize("pretokenizer", ["gpt2", "whitespace"])
@pytest.mark.parametrize("name", ["alice29.txt", "udhr_arb.txt", "udhr_cmn_hans.txt", "tricky"])
def test_units_keep_the_steps_that_splitting_them_again_gives(name, pretokenizer):
    """A boundary policy's units carry the steps they were counted with, whole and over shards:
    the breaks and openings that pre-tokenizing each distinct unit on its own gives. Learning
    takes them (a second fit splits the units again, to the same rules)."""
    from chunkpress.plugins.boundaries.superbpe import SuperBpe, SuperBpeParams
    from chunkpress.text.units import inside_units

    text = TRICKY if name == "tricky" else read(name)
    policy = SuperBpe(SuperBpeParams(after=300))
    whole = count_words(text, pretokenizer, lines=True, boundary=policy)
    sharded = count_stream(io.BytesIO(text), pretokenizer, shard_size=1024, lines=True, boundary=policy)
    for units in (whole, sharded):
        assert units.steps is not None and units.steps.shape == units.buf.shape
        carried = inside_units(policy, units.buf, units.offsets, pretokenizer, units.steps)
        again = inside_units(policy, units.buf, units.offsets, pretokenizer)
        assert np.array_equal(carried[0], again[0])
        assert [(o.at, o.positions.tolist()) for o in carried[1]] == [(o.at, o.positions.tolist()) for o in again[1]]
    assert name == "udhr_cmn_hans.txt" or any(o.positions.size for o in carried[1])  # Chinese has no joined words
    pipe = Pipeline.from_config(pretokenizer=pretokenizer, superword_after=256 + 300, limits={"max_rules": 600})
    first = pipe.fit_words(whole)
    assert whole.steps is None  # taken
    assert pipe.fit_words(whole).rules.tolist() == first.rules.tolist()


def test_metaspace_shards_keep_a_line_break_inside_its_word():
    # metaspace breaks before spaces only: "end\n" is one word, which a cut before the newline split
    text = b"".join(b" word%d end\n" % i for i in range(400))
    sharded = _as_dict(count_stream(io.BytesIO(text), "metaspace", shard_size=256))
    assert sharded == _as_dict(count_words(text, "metaspace")) and sharded[b" end\n"] == 400


def test_a_stream_with_no_safe_cut_stays_whole():
    text = "東京".encode() * 2000  # no ASCII at all
    assert list(shards(io.BytesIO(text), 1024)) == [text]


def test_training_on_counted_shards_learns_the_same_rules(registry, alice):
    pipe = Pipeline.from_config(registry=registry, scorer="repair", pretokenizer="gpt2", limits={"max_rules": 700})
    whole = pipe.fit(alice)
    sharded = pipe.fit_words(count_stream(io.BytesIO(alice), "gpt2", shard_size=8192))
    assert np.array_equal(whole.rules, sharded.rules)
    assert np.array_equal(whole.trace["total_bits"], sharded.trace["total_bits"])
    assert np.array_equal(whole.trace["N"], sharded.trace["N"])


@pytest.mark.slow
def test_train_on_two_workers_writes_the_serial_rules(tmp_path, alice):
    pytest.importorskip("distributed")
    text = tmp_path / "a.txt"
    text.write_bytes(alice * 3)
    serial, parallel = tmp_path / "s.rules", tmp_path / "p.rules"
    common = ["--scorer", "repair", "--pretokenizer", "gpt2", "--vocab-size", "2000"]
    assert main(["train", str(text), *common, "--rules", str(serial)]) == 0
    assert main(["train", str(text), *common, "--workers", "2", "--rules", str(parallel)]) == 0
    (rules_s, meta_s), (rules_p, meta_p) = load_rules(serial.read_bytes()), load_rules(parallel.read_bytes())
    assert np.array_equal(rules_s, rules_p) and meta_s == meta_p  # same length and BLAKE2b of the input
    assert main(["train", str(text), "--workers", "2", "--rules", str(parallel), "-f"]) == 5  # no pre-tokenizer


def test_shards_sent_inside_their_tasks_draw_no_dask_warning():
    """A shard of megabytes travels inside its task, so that a dead worker's task can be rerun;
    Dask's warning of a large graph printed on every train --workers of a big file."""
    pytest.importorskip("distributed")
    import warnings

    from chunkpress.parallel import ordered_map

    items = [bytes([65 + k]) * (12 << 20) for k in range(3)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert [(i[:1], n) for i, n in ordered_map(len, items, workers=2)] == [(i[:1], 12 << 20) for i in items]
    assert not [w for w in seen if "large graph" in str(w.message)], [str(w.message) for w in seen]


@pytest.mark.parametrize("side", ["left", "right"])
def test_the_walk_through_ascending_positions_answers_as_searchsorted(side):
    from chunkpress.arrays import searchsorted_ascending

    rng = np.random.default_rng(7)
    haystack = np.sort(rng.integers(0, 5000, 3000))  # with repeats, as offsets of empty words have
    for needles in (np.sort(rng.integers(-10, 5010, 4000)), rng.integers(0, 5000, 500), np.zeros(0, np.int64),
                    haystack.copy()):
        assert searchsorted_ascending(haystack, needles, side).tolist() == \
            np.searchsorted(haystack, needles, side=side).tolist()
    assert searchsorted_ascending(np.zeros(0, np.int64), np.arange(3), side).tolist() == [0, 0, 0]


def test_distinct_words_are_exact_for_tokens_longer_than_a_table_row_holds():
    from chunkpress.text.wordcounts import DistinctWords

    long = (1 << 24) + 3  # a length the hash table's row cannot hold: read off the first occurrence
    arr = np.concatenate([np.zeros(long, np.uint8), np.zeros(long - 1, np.uint8), np.zeros(long, np.uint8),
                          np.ones(2, np.uint8)])
    breaks = np.zeros(arr.size, dtype=bool)
    breaks[[long - 1, 2 * long - 2, 3 * long - 2, arr.size - 1]] = True
    words = DistinctWords(arr, breaks)
    assert words.ids.tolist() == [0, 1, 0, 2] and words.counts.tolist() == [2, 1, 1]
    assert np.diff(words.offsets).tolist() == [long, long - 1, 2]
