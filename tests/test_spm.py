"""import-spm: a sentencepiece model read as a vocabulary of ours, whose encoding gives
sentencepiece's ids, and the models we cannot read refused in one line."""

import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from support import read

spm = pytest.importorskip("sentencepiece")

TEXT = read("alice29.txt")
CUT = TEXT.index(b"\n", len(TEXT) * 4 // 5) + 1
HELD_LINES = [line for line in (TEXT[CUT:] + read("udhr_arb.txt")).decode().splitlines() if line.strip()]


def _train(folder, kind: str, **settings) -> str:
    (folder / "train.txt").write_bytes(TEXT[:CUT])
    prefix = str(folder / kind)
    kind = settings.pop("model_type", kind)
    options = {"normalization_rule_name": "identity", "byte_fallback": True, "remove_extra_whitespaces": False,
               "character_coverage": 1.0} | settings
    options.setdefault("vocab_size", 1000)
    spm.SentencePieceTrainer.train(input=str(folder / "train.txt"), model_prefix=prefix, model_type=kind,
                                   num_threads=1, minloglevel=2, use_all_vocab=kind == "char", **options)
    return prefix + ".model"


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_an_imported_model_encodes_and_decodes_as_sentencepiece_does(tmp_path, kind):
    model = _train(tmp_path, kind)
    out = tmp_path / "m.rules"
    assert main(["import-spm", model, "-o", str(out), "-q"]) == 0
    sp = spm.SentencePieceProcessor(model_file=model)
    tok = Tokenizer.from_file(out)
    assert tok.segmenter == ("likelihood" if kind == "unigram" else "best-pair")
    lines = HELD_LINES + ["  two leading spaces", "trailing  ", "ß∑ unseen ☃ characters"]
    theirs = sp.encode(lines)
    ours = [e.ids for e in tok.encode_batch(lines)]
    assert ours == theirs
    assert [tok.decode(ids) for ids in ours[:50]] == [sp.decode(ids) for ids in theirs[:50]]


@pytest.mark.parametrize(("settings", "says"), [
    ({"normalization_rule_name": "nmt_nfkc"}, "normalization 'nmt_nfkc'"),
    ({"model_type": "char"}, "'char' models are not read"),
    ({"byte_fallback": False}, "byte_fallback"),
    ({"remove_extra_whitespaces": True}, "remove_extra_whitespaces"),
])
def test_a_model_that_would_tokenize_otherwise_is_refused_in_one_line(tmp_path, capsys, settings, says):
    model = _train(tmp_path, "unigram", **settings)
    assert main(["import-spm", model, "-o", str(tmp_path / "m.rules")]) == 4
    err = capsys.readouterr().err
    assert says in err and model in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.rules").exists()


def test_a_truncated_or_foreign_file_is_refused_in_one_line(tmp_path, capsys):
    model = _train(tmp_path, "unigram")
    data = open(model, "rb").read()
    crafted = data.replace(b"<0x41>", b"<0xZZ>")  # a byte piece that names no byte
    assert crafted != data
    for name, content in (("cut.model", data[: len(data) // 2]), ("text.model", TEXT[:5000]),
                          ("byte.model", crafted)):
        (tmp_path / name).write_bytes(content)
        assert main(["import-spm", str(tmp_path / name), "-o", str(tmp_path / "m.rules")]) == 4
        err = capsys.readouterr().err
        assert name in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "m.rules").exists()
