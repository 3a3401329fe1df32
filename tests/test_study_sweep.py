"""A study that sweeps vocabulary sizes: one learning run per dataset x variant x repeat, a row
per size whose tokens are those of a dictionary trained to that size, tokenizer metrics on the
studied and on held-out texts, and outputs ready to publish (readable names, best values in
bold, a panel per metric)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from chunkpress import ConfigError
from chunkpress.cli import main
from chunkpress.pipeline import Pipeline
from chunkpress.study.runner import load_study, run_study
from chunkpress.text.metrics import measure
from chunkpress.text.tokenizer import Tokenizer
from support import DATA, read

STUDY = f"""
[study]
name = "sweep"
repeats = 1
vocab_sizes = [700, 400]

[datasets]
alice = "{DATA / 'alice29.txt'}"

[held_out]
arabic = "{DATA / 'udhr_arb.txt'}"

[base]
scorer = "repair"
pretokenizer = "gpt2"
coder = "varint-zstd"

[[variants]]
name = "BPE"

[[variants]]
name = "SuperBPE"
superword_after = 500

[[variants]]
name = "Picky BPE"
picky = 0.6
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    (folder / "study.toml").write_text(STUDY)
    study = load_study(folder / "study.toml")
    log = folder / "learned"
    original = Pipeline.fit_words

    def counted(self, *args, **kw):  # rows run in forked processes: they count in a file
        with open(log, "a") as fh:
            fh.write(f"{self.config.limits.max_rules}\n")
        return original(self, *args, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(Pipeline, "fit_words", counted)
    try:
        rows = run_study(study, folder / "out", progress=None)
    finally:
        mp.undo()
    return folder / "out", rows, [int(n) for n in log.read_text().split()]


def _trained(settings: dict, size: int, segmenter: str | None = None) -> Tokenizer:
    """What ``chunkpress train`` writes at ``size`` with the study's base and ``settings``."""
    flags = {"superword_after": "--superword-after", "picky": "--picky"}
    with tempfile.TemporaryDirectory() as folder:
        rules = Path(folder) / "t.rules"
        assert main(["train", str(DATA / "alice29.txt"), "--scorer", "repair", "--pretokenizer", "gpt2",
                     "--vocab-size", str(size), "--rules", str(rules), "-q",
                     *[part for key, value in settings.items() for part in (flags[key], str(value))]]) == 0
        return Tokenizer.from_file(rules, segmenter=segmenter)


SETTINGS = {"BPE": {}, "SuperBPE": {"superword_after": 500}, "Picky BPE": {"picky": 0.6}}


def test_one_learning_run_per_variant_and_a_row_per_size(swept):
    _, rows, learned = swept
    assert [(r["variant"], r["vocab_size"]) for r in rows] == [(v, s) for v in SETTINGS for s in (400, 700)]
    assert all(not r["error"] and r["verified"] for r in rows)
    # three learning runs of the study (each to 700 tokens), and three warm-ups on a sample
    assert sorted(learned) == [444] * 6


@pytest.mark.parametrize("variant", list(SETTINGS))
def test_each_row_is_the_dictionary_trained_to_its_size(swept, variant):
    _, rows, _ = swept
    for row in (r for r in rows if r["variant"] == variant):
        settings = SETTINGS[variant]
        if settings.get("superword_after", 0) >= row["vocab_size"]:
            settings = {}  # SuperBPE before its transition is BPE
        tok = _trained(settings, row["vocab_size"])
        symbols = tok.symbols(read("alice29.txt"))
        assert row["tokens"] == row["symbols"] == symbols.size
        assert row["dictionary_size"] == tok.get_vocab_size() == row["vocab_size"]
        held = read("udhr_arb.txt")
        expected = measure(tok.symbols(held), held, 256 + len(tok.rules))
        assert row["held_out"]["arabic"] == {k: expected[k] for k in row["held_out"]["arabic"]}
    picky = [r for r in rows if r["variant"] == "Picky BPE"]
    assert variant != "Picky BPE" or picky[-1]["deleted"] > 0


def test_outputs_are_ready_to_publish(swept):
    out, _, _ = swept
    markdown = (out / "results.md").read_text()
    assert "| alice | alice | SuperBPE, 700 tokens |" in markdown and "held-out arabic" in markdown
    latex = (out / "results.tex").read_text()
    assert latex.count(r"\begin{table}") == 3 and r"\textbf{" in latex
    # booktabs as a paper sets it: the size a column of its own, one rule under each header, a label
    assert latex.count(r"\midrule") == 3 and latex.count(r"\label{tab:study-sweep") == 3
    assert "& Vocabulary &" in latex and "SuperBPE & 700 &" in latex and "SuperBPE & 400 &" in latex
    assert "700 tokens" not in latex
    # every size drawn: the factor plot's bars and the size-time plot's points name each size
    factor = (out / "factor.svg").read_text()
    assert all(f"{variant}, {size} tokens" in factor for variant in SETTINGS for size in (400, 700))
    # the x ticks are the sizes used, on each of the seven panels, and no power of two
    sweep = (out / "sweep_alice.svg").read_text()
    assert sweep.count("<!-- 400 -->") == sweep.count("<!-- 700 -->") == 7 and "<!-- 512 -->" not in sweep
    csv_head = (out / "results.csv").read_text().splitlines()[0].split(",")
    assert {"vocab_size", "renyi_efficiency", "held_out.arabic.tokens_per_word"} <= set(csv_head)
    for name in ("sweep_alice", "sweep_arabic"):
        assert all((out / f"{name}.{fmt}").stat().st_size > 0 for fmt in ("png", "svg", "pdf"))
    row = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert isinstance(row["held_out"]["arabic"]["renyi_efficiency"], float)


def test_a_rerun_reuses_every_row_of_the_sweep(swept):
    out, rows, _ = swept
    study = load_study(out.parent / "study.toml")
    again = run_study(study, out, progress=None)
    assert [r["tokens"] for r in again] == [r["tokens"] for r in rows]


def test_variant_names_read_as_words(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(f'[datasets]\na = "{DATA / "alice29.txt"}"\n[grid]\n"scorer.name" = ["wordpiece"]\n'
                    '"limits.max_rules" = [1000]\n"coder.name" = ["cm"]\n"coder.params.memory" = [22]\n')
    study = load_study(path)
    assert study.variants[0].name == "wordpiece, 1,000 rules, cm, memory 22" and study.repeats == 3


@pytest.mark.parametrize("text, says", [
    ("vocab_sizes = [200]", "vocab_sizes"), ('vocab_sizes = "8k"', "vocab_sizes"),
])
def test_a_bad_sweep_is_a_config_error(tmp_path, text, says):
    path = tmp_path / "s.toml"
    path.write_text(f'[study]\n{text}\n[datasets]\na = "{DATA / "alice29.txt"}"\n')
    with pytest.raises(ConfigError, match=says):
        load_study(path)


def test_a_sweep_refuses_a_variant_that_sets_its_own_size(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(f'[study]\nvocab_sizes = [400]\n[datasets]\na = "{DATA / "alice29.txt"}"\n'
                    '[base]\nlimits = { max_rules = 100 }\n')
    with pytest.raises(ConfigError, match="max_rules"):
        run_study(load_study(path), tmp_path / "out", progress=None)


def test_a_held_out_slice_is_whole_lines_of_the_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(f'[datasets]\na = "{DATA / "alice29.txt"}"\n[held_out]\n'
                    f'rest = {{ path = "{DATA / "alice29.txt"}", offset = 100000, length = 20000 }}\n')
    text = load_study(path).held_out["rest"].read()
    alice = read("alice29.txt")
    start = alice.index(b"\n", 100_000) + 1
    assert text == alice[start:alice.rindex(b"\n", 0, 120_000) + 1] and text.endswith(b"\n")


def test_results_from_before_show_their_overrides_as_words():
    from chunkpress.study.display import display_name

    assert display_name("wordpiece, limits.max_rules=1000, coder=cm") == "wordpiece, 1,000 rules, cm"
    assert display_name("repair, m = 3000") == "repair, m = 3000" and display_name("a=b") == "a=b"


TOP_DOWN = f"""
[study]
name = "top-down"
repeats = 1
vocab_sizes = [400, 700]

[datasets]
alice = "{DATA / 'alice29.txt'}"

[base]
scorer = "repair"
pretokenizer = "gpt2"
coder = "varint-zstd"

[[variants]]
name = "Unigram"
pretokenizer = "metaspace"
"learner.name" = "unigram"

[[variants]]
name = "BPE, fewest-tokens"
"segmenter.name" = "fewest-tokens"

[[variants]]
name = "BPE, likelihood"
"segmenter.name" = "likelihood"
"""


def test_a_sweep_learns_a_top_down_vocabulary_at_each_size_and_cuts_by_the_named_segmenter(tmp_path):
    """Each row is what `train` then `evaluate --segmenter` give at its size: a top-down
    learner's sweep (`train --vocab-size 400,700`, one pruning run), a merge vocabulary's
    prefix cut by the segmenter (by likelihood with the counts that prefix's own training
    records)."""
    from chunkpress.text.training import learn_top_down_sizes, text_words

    (tmp_path / "study.toml").write_text(TOP_DOWN)
    rows = run_study(load_study(tmp_path / "study.toml"), tmp_path / "out", progress=None)
    assert all(not r["error"] and r["verified"] for r in rows), [r["error"] for r in rows]
    text = read("alice29.txt")
    found = {(r["variant"], r["vocab_size"]): r for r in rows}
    pipe = Pipeline.from_config(pretokenizer="metaspace", learner="unigram", limits={"max_rules": 700 - 256})
    sweep, _ = learn_top_down_sizes(pipe, text_words(pipe, text), [("alice", 0, "")], [400, 700])
    for size, (rules_file, _) in zip((400, 700), sweep, strict=True):
        unigram = Tokenizer.from_rules_file(rules_file.to_bytes())
        assert found["Unigram", size]["tokens"] == unigram.symbols(text).size
        assert found["Unigram", size]["dictionary_size"] == size
        bpe = _trained({}, size)
        fewest = bpe.with_segmenter("fewest-tokens").symbols(text).size
        assert found["BPE, fewest-tokens", size]["tokens"] == fewest <= bpe.symbols(text).size
        likely = _trained({}, size, segmenter="likelihood")  # by the counts train recorded at that size
        assert found["BPE, likelihood", size]["tokens"] == likely.symbols(text).size


SAME_AS_TRAIN = f"""
[study]
name = "same"
repeats = 1
vocab_sizes = [500, 900]

[datasets]
alice = "{DATA / 'alice29.txt'}"

[held_out]
chinese = "{DATA / 'udhr_cmn_hans.txt'}"
arabic = "{DATA / 'udhr_arb.txt'}"
english = "{DATA / 'enwiki_64k.txt'}"

[base]
scorer = "repair"
coder = "varint-zstd"

[[variants]]
name = "BPE"
pretokenizer = "gpt2"

[[variants]]
name = "BPE, metaspace"
pretokenizer = "metaspace"

[[variants]]
name = "Unigram"
pretokenizer = "metaspace"
"learner.name" = "unigram"
"""


def test_a_study_row_counts_the_tokens_that_train_then_evaluate_count(tmp_path):
    """The same settings give the same vocabulary from a study and from `chunkpress train`, so
    every held-out text (Chinese, Arabic, English) has the same token count at every size of
    the sweep (they parted at rule 363 of 15,744 when the study learned from the whole text and
    train line by line)."""
    from chunkpress.text.metrics import evaluate

    (tmp_path / "study.toml").write_text(SAME_AS_TRAIN)
    rows = run_study(load_study(tmp_path / "study.toml"), tmp_path / "out", progress=None)
    assert all(not r["error"] for r in rows), [r["error"] for r in rows]
    held = {name: read(f) for name, f in (("chinese", "udhr_cmn_hans.txt"), ("arabic", "udhr_arb.txt"),
                                           ("english", "enwiki_64k.txt"))}
    for variant, flags in (("BPE", ["--pretokenizer", "gpt2"]), ("BPE, metaspace", ["--pretokenizer", "metaspace"]),
                           ("Unigram", ["--pretokenizer", "metaspace", "--learner", "unigram"])):
        rules = tmp_path / f"{variant}.rules"
        assert main(["train", str(DATA / "alice29.txt"), "--scorer", "repair", "--vocab-size", "500,900"
                     if variant == "Unigram" else "900", "--rules", str(rules), "-q", *flags]) == 0
        for size in (500, 900):
            path = rules.with_suffix(f".{size}.rules") if variant == "Unigram" else rules
            measured = evaluate(Tokenizer.from_file(path), held, () if variant == "Unigram" else (size,))
            row = next(r for r in rows if r["variant"] == variant and r["vocab_size"] == size)
            assert {m["text"]: m["tokens"] for m in measured} == \
                {name: row["held_out"][name]["tokens"] for name in held}, (variant, size)
