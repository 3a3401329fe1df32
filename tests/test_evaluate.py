"""`chunkpress evaluate`: the metrics papers report, against tokenization-scorer and against
`chunkpress encode`, vocabulary-size prefixes against training to that size, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from chunkpress.pipeline import Pipeline
from chunkpress.text.metrics import efficiency, evaluate
from chunkpress.text.tokenizer import Tokenizer
from support import read

TRAIN = read("alice29.txt")[:110_000]
HELD = read("alice29.txt")[110_000:]


def _cli(*args):
    proc = subprocess.run([sys.executable, "-m", "chunkpress.cli", *map(str, args)], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    folder = tmp_path_factory.mktemp("evaluate")
    (folder / "train.txt").write_bytes(TRAIN)
    (folder / "held.txt").write_bytes(HELD)
    assert _cli("train", folder / "train.txt", "--scorer", "repair", "--pretokenizer", "gpt2", "--vocab-size", 3000,
                "--rules", folder / "r.rules")[0] == 0
    return folder


@pytest.mark.slow
def test_renyi_efficiency_is_tokenization_scorers_on_the_same_tokens(rules):
    scorer = pytest.importorskip("tokenization_scorer")
    rc, out, _ = _cli("evaluate", rules / "r.rules", rules / "held.txt", "--json")
    row = json.loads(out)
    ids = Tokenizer.from_file(rules / "r.rules").encode(HELD).ids
    tokens = " ".join(f"t{i}" for i in ids)  # one line of white-space separated tokens
    assert rc == 0 and row["tokens"] == len(ids)
    assert row["renyi_efficiency"] == pytest.approx(scorer.score(tokens, metric="renyi", power=2.5), rel=1e-9)
    assert row["shannon_efficiency"] == pytest.approx(scorer.score(tokens, metric="shannon"), rel=1e-9)
    assert row["bytes_per_token"] == pytest.approx(len(HELD) / len(ids))
    assert row["tokens_per_word"] == pytest.approx(len(ids) / len(HELD.split()))


@pytest.mark.slow
def test_tokens_are_those_of_chunkpress_encode(rules):
    assert _cli("encode", rules / "held.txt", "--rules", rules / "r.rules", "--format", "text", "-o",
                rules / "held.ids", "-f")[0] == 0
    encoded = (rules / "held.ids").read_text().split()
    rc, out, _ = _cli("evaluate", rules / "r.rules", rules / "held.txt", rules / "train.txt", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rc == 0 and [r["text"] for r in rows] == [str(rules / "held.txt"), str(rules / "train.txt")]
    assert rows[0]["tokens"] == len(encoded) and rows[0]["vocab_size"] == 3000


@pytest.mark.slow
def test_a_vocabulary_prefix_is_the_dictionary_trained_to_that_size(rules):
    rc, out, _ = _cli("evaluate", rules / "r.rules", rules / "held.txt", "--vocab-size", "1000,3000", "--json")
    rows = {r["vocab_size"]: r for r in map(json.loads, out.splitlines())}
    assert _cli("train", rules / "train.txt", "--scorer", "repair", "--pretokenizer", "gpt2", "--vocab-size", 1000,
                "--rules", rules / "small.rules")[0] == 0
    assert rc == 0 and rows[1000]["tokens"] == Tokenizer.from_file(rules / "small.rules").symbols(HELD).size
    assert rows[1000]["tokens"] > rows[3000]["tokens"]


@pytest.mark.parametrize("settings, sizes", [({"picky": 0.7}, (1200, 2500)), ({"superword_after": 1500}, (1600, 2500))])
def test_prefixes_of_picky_and_superbpe_dictionaries_are_their_trainings_too(settings, sizes):
    def trained(size):
        pipe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": size - 256}, **settings)
        fit = pipe.fit(TRAIN)
        return Tokenizer(fit.rules, "gpt2", deletions=fit.deletions, boundary=pipe.policies()[0])

    rows = evaluate(trained(4000), {"held": HELD}, sizes)
    for row in rows:
        assert row["tokens"] == trained(row["vocab_size"]).symbols(HELD).size


def test_efficiency_by_its_definition():
    counts = np.array([5, 3, 2, 0])
    p = np.array([0.5, 0.3, 0.2])
    assert efficiency(counts, 2.5) == pytest.approx(np.log2(np.sum(p**2.5)) / (1 - 2.5) / np.log2(3))
    assert efficiency(counts, 1.0) == pytest.approx(-np.sum(p * np.log2(p)) / np.log2(3))
    assert efficiency(np.array([4]), 2.5) is None  # one token used: no efficiency


@pytest.mark.slow
@pytest.mark.parametrize("make, args, says", [
    (None, ["nope.txt"], "nope.txt"),
    (b"\x00\xff\xfe text", ["bin.dat"], "bin.dat: not UTF-8"),
    (b"", ["empty.txt"], "empty.txt: empty"),
    (b"some text", ["t.txt", "--vocab-size", "9000"], "--vocab-size"),
    (b"some text", ["t.txt", "--vocab-size", "1k"], "--vocab-size"),
    (b"some text", ["t.txt", "--alpha", "0"], "--alpha"),
])
def test_bad_input_gets_one_line_naming_the_file_or_option(rules, make, args, says):
    if make is not None:
        (rules / args[0]).write_bytes(make)
    rc, out, err = _cli("evaluate", rules / "r.rules", rules / args[0], *args[1:])
    assert rc != 0 and not out and err.count("\n") == 1 and says in err, err


def test_gini_is_the_mean_absolute_difference_over_twice_the_mean():
    from chunkpress.text.metrics import gini

    assert gini([2.0, 2.0, 2.0]) == 0.0
    assert gini([1.0, 3.0]) == pytest.approx(0.25)  # |1 - 3| * 2 / (2 * 2 * 4)
    assert gini([0.0, 0.0, 0.0, 1.0]) == pytest.approx(0.75)  # one of four holds it all: (n - 1) / n


def test_texts_named_by_language_get_a_parity_row_per_size(rules, tmp_path):
    """`evaluate R en=... ar=... zh=...`: a row per language and size, and a parity row per
    size with the Gini and max/min of bytes per token, the worst and best language named."""
    for name, data in (("en.txt", HELD[:9000]), ("ar.txt", read("udhr_arb.txt")), ("zh.txt", read("udhr_cmn_hans.txt"))):
        (tmp_path / name).write_bytes(data)
    code, out, err = _cli("evaluate", rules / "r.rules", f"en={tmp_path / 'en.txt'}", f"ar={tmp_path / 'ar.txt'}",
                          f"zh={tmp_path / 'zh.txt'}", "--vocab-size", "500,1000", "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    rows = {(r["text"], r["vocab_size"]): r for r in lines if "parity" not in r}
    assert set(rows) == {(t, v) for t in ("en", "ar", "zh") for v in (500, 1000)}
    for size in (500, 1000):
        row = next(r["parity"] for r in lines if "parity" in r and r["parity"]["vocab_size"] == size)
        values = [rows[t, size]["bytes_per_token"] for t in ("en", "ar", "zh")]
        assert row["max_min_bytes_per_token"] == pytest.approx(max(values) / min(values))
        assert row["worst"] == "ar" or row["worst"] == "zh"
        assert row["best"] == "en" and 0.0 < row["gini_bytes_per_token"] < 1.0
    code, out, _ = _cli("evaluate", rules / "r.rules", f"en={tmp_path / 'en.txt'}", f"zh={tmp_path / 'zh.txt'}")
    assert code == 0 and "parity across the texts" in out
    code, out, _ = _cli("evaluate", rules / "r.rules", tmp_path / "en.txt", tmp_path / "zh.txt")  # not named
    assert code == 0 and "parity" not in out
