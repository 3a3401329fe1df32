"""BPE-dropout: a merge vocabulary's encode samples as HF's BPE(dropout=p) does, reproducibly
from a seed, and the settings that cannot sample are refused in one line."""

import collections
import json
import statistics

import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from support import read

TEXT = read("alice29.txt")
CUT = TEXT.index(b"\n", len(TEXT) * 4 // 5) + 1
HELD = TEXT[CUT:].decode().splitlines(keepends=True)[:300]


@pytest.fixture(scope="module")
def bpe(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bpe")
    (folder / "train.txt").write_bytes(TEXT[:CUT])
    assert main(["train", str(folder / "train.txt"), "--pretokenizer", "gpt2", "--vocab-size", "2000", "--rules",
                 str(folder / "bpe.rules"), "-q"]) == 0
    assert main(["export-hf", str(folder / "bpe.rules"), "--dropout", "0.1", "-o", str(folder / "tokenizer.json"),
                 "-q"]) == 0
    return folder


def test_dropout_samples_as_hf_s_bpe_dropout(bpe):
    """Mean tokens over 100 samples of held-out lines within 1.5% of HF's on the exported
    tokenizer (its model carries the dropout), and each word's segmentations over 3,000
    samples within total variation 0.05 of HF's."""
    tokenizers = pytest.importorskip("tokenizers")
    ours = Tokenizer.from_file(bpe / "bpe.rules")
    hf = tokenizers.Tokenizer.from_file(str(bpe / "tokenizer.json"))
    assert json.loads((bpe / "tokenizer.json").read_text())["model"]["dropout"] == 0.1
    mean_ours = statistics.mean(sum(len(e.ids) for e in ours.encode_batch(HELD, dropout=0.1, seed=s))
                                for s in range(100))
    mean_hf = statistics.mean(sum(len(e.ids) for e in hf.encode_batch(HELD)) for _ in range(100))
    plain = sum(len(e.ids) for e in ours.encode_batch(HELD))
    assert mean_ours > 1.05 * plain and abs(mean_ours / mean_hf - 1) < 0.015, (mean_ours, mean_hf, plain)
    for word in (" beginning", " Alice", " curiously", " everything"):
        a = collections.Counter(tuple(ours.encode(word, dropout=0.1, seed=s).ids) for s in range(3000))
        b = collections.Counter(tuple(hf.encode(word).ids) for _ in range(3000))
        assert len(a) > 2 and 0.5 * sum(abs(a[k] - b[k]) for k in a.keys() | b.keys()) / 3000 < 0.05, word


def test_samples_follow_the_seed_and_the_extremes_are_exact(bpe):
    tok = Tokenizer.from_file(bpe / "bpe.rules")
    first = [e.ids for e in tok.encode_batch(HELD, dropout=0.3, seed=7)]
    assert first == [e.ids for e in tok.encode_batch(HELD, dropout=0.3, seed=7)]
    assert first != [e.ids for e in tok.encode_batch(HELD, dropout=0.3, seed=8)]
    assert [e.ids for e in tok.encode_batch(HELD, dropout=0.0)] == [e.ids for e in tok.encode_batch(HELD)]
    assert tok.encode(" everything", dropout=1.0).ids == list(b" everything")
    assert all(tok.decode(ids) == line for ids, line in zip(first, HELD, strict=True))


def test_encode_samples_from_the_command_line_and_compress_never_does(bpe, tmp_path):
    (tmp_path / "held.txt").write_text("".join(HELD))
    runs = []
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        assert main(["encode", str(tmp_path / "held.txt"), "--rules", str(bpe / "bpe.rules"), "--dropout", "0.2",
                     "--seed", seed, "--format", "text", "-o", str(tmp_path / f"{name}.ids")]) == 0
        runs.append((tmp_path / f"{name}.ids").read_text())
    assert runs[0] == runs[1] != runs[2]
    tok = Tokenizer.from_file(bpe / "bpe.rules")
    assert tok.decode([int(i) for i in runs[0].split()]) == "".join(HELD)
    archives = []
    for _ in range(2):
        assert main(["compress", str(tmp_path / "held.txt"), "--rules", str(bpe / "bpe.rules"), "-q",
                     "-o", str(tmp_path / "held.cpz"), "-f"]) == 0
        archives.append((tmp_path / "held.cpz").read_bytes())
    assert archives[0] == archives[1]


@pytest.mark.parametrize(("args", "says"), [
    (["--dropout", "1.5"], "probability from 0 to 1"),
    (["--dropout", "nan"], "probability from 0 to 1"),
    (["--dropout", "0.1", "--segmenter", "likelihood"], "skips merges"),
    (["--alpha", "0.1"], "not cut by the most likely path"),
])
def test_a_dropout_that_cannot_sample_is_refused_in_one_line(bpe, tmp_path, capsys, args, says):
    (tmp_path / "held.txt").write_text("".join(HELD[:5]))
    assert main(["encode", str(tmp_path / "held.txt"), "--rules", str(bpe / "bpe.rules"), "-o",
                 str(tmp_path / "out.ids"), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out.ids").exists()


@pytest.fixture(scope="module")
def spm_unigram(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("spm")
    (folder / "train.txt").write_bytes(TEXT[:CUT])
    spm.SentencePieceTrainer.train(input=str(folder / "train.txt"), model_prefix=str(folder / "m"), vocab_size=800,
                                   model_type="unigram", byte_fallback=True, normalization_rule_name="identity",
                                   remove_extra_whitespaces=False, minloglevel=2)
    return str(folder / "m.model")


def test_unigram_sampling_draws_as_sentencepiece_does(spm_unigram):
    """alpha 0.1, nbest_size -1 on an imported sentencepiece unigram model: over 8,000 samples
    each of six held-out words (one with a character no piece holds), the distribution of
    segmentations lies within total variation 0.06 of sentencepiece's; so it does with
    nbest_size 5 and alpha 0.5."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=spm_unigram)
    ours = Tokenizer.from_spm_file(spm_unigram)
    for word in ("curiouser", "Caterpillar", "beginning", "xylophone", "Hatter", "na\u00efve\u2603"):
        a = collections.Counter(tuple(e.ids) for e in ours.encode_batch([word] * 8000, alpha=0.1, seed=5))
        b = collections.Counter(tuple(x) for x in sp.encode([word] * 8000, enable_sampling=True, alpha=0.1,
                                                           nbest_size=-1))
        assert 0.5 * sum(abs(a[k] - b[k]) for k in a.keys() | b.keys()) / 8000 < 0.06, (word, a, b)
    for word in ("curiouser", "beginning", "Hatter"):  # nbest_size 5: from the 5 best (A*), as sentencepiece
        a = collections.Counter(tuple(e.ids) for e in ours.encode_batch([word] * 6000, alpha=0.5, nbest_size=5,
                                                                         seed=9))
        b = collections.Counter(tuple(x) for x in sp.encode([word] * 6000, enable_sampling=True, alpha=0.5,
                                                           nbest_size=5))
        assert len(a) <= 5 and 0.5 * sum(abs(a[k] - b[k]) for k in a.keys() | b.keys()) / 6000 < 0.06, (word, a, b)
    assert len({tuple(ours.encode("curiouser", alpha=0.1, seed=s).ids) for s in range(50)}) > 3
    assert ours.encode("Alice was tired", alpha=0.1, seed=3).ids == ours.encode("Alice was tired", alpha=0.1,
                                                                                  seed=3).ids
    assert ours.decode(ours.encode(" curiouser\u2603 ", alpha=0.5, seed=1).ids) == " curiouser\u2603 "


@pytest.mark.parametrize(("settings", "says"), [
    ({"alpha": float("nan")}, "finite number"),
    ({"alpha": 0.1, "nbest_size": 1}, "would be no sample"),
    ({"alpha": 0.1, "nbest_size": 2.5}, "would be no sample"),
    ({"nbest_size": -1}, "give alpha"),
    ({"alpha": 0.1, "dropout": 0.1}, "give one"),
    ({"dropout": 0.1}, "skips merges"),
])
def test_a_sampling_keyword_the_vocabulary_cannot_take_is_refused(spm_unigram, settings, says):
    from chunkpress import ConfigError

    with pytest.raises(ConfigError, match=says):
        Tokenizer.from_spm_file(spm_unigram).encode("some text", **settings)


def test_alpha_on_a_merge_vocabulary_is_refused(bpe):
    from chunkpress import ConfigError

    with pytest.raises(ConfigError, match="not cut by the most likely path"):
        Tokenizer.from_file(bpe / "bpe.rules").encode("some text", alpha=0.1)
