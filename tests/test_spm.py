"""import-spm: a sentencepiece model read as a vocabulary of ours, whose encoding gives
sentencepiece's ids, and the models we cannot read refused in one line."""

import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from support import DATA, read

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
    assert tok.segmenter == ("likelihood-f32" if kind == "unigram" else "best-pair")
    lines = HELD_LINES + ["  two leading spaces", "trailing  ", "ß∑ unseen ☃ characters"]
    theirs = sp.encode(lines)
    ours = [e.ids for e in tok.encode_batch(lines)]
    assert ours == theirs
    assert [tok.decode(ids) for ids in ours[:50]] == [sp.decode(ids) for ids in theirs[:50]]


#: lines that take every path of sentencepiece's normalization: NFKC forms, white space of
#: every kind and length at both ends and inside, a literal ▁, characters no model has, and
#: characters that normalize to nothing or to several
TRICKY = ["  two leading spaces", "trailing  ", "ß∑ unseen ☃ characters", "  a\tb\nc  ", "Ｈｅｌｌｏ ① ﷺ",
          "\u200b", "a\u00adb", "x\u2581 ", " \u2581", "ｶﾞｷﾞ", "a  \u3000 b", "", "   ", "a€€b", "€", "▁▁a", "AAA aaa"]


def _tricky_lines(count: int = 600) -> list[str]:
    """Random strings over the characters where sentencepiece's normalization and search branch."""
    import random

    alphabet = [" ", "\t", "\n", "\u3000", "\xa0", "\u2581", "\xad", "\u200b", "Ａ", "①", "ﷺ", "\u1100", "\u1161",
                "a", "\u0301", "한", "A", "\u3099", "か", "€", "e", "t"]
    rng = random.Random(7)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(count)]


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
@pytest.mark.parametrize("settings", [
    {},  # sentencepiece's defaults: nmt_nfkc, extra white space removed, no byte fallback (<unk>)
    {"normalization_rule_name": "nfkc", "byte_fallback": True},
    {"normalization_rule_name": "nmt_nfkc_cf"},
    {"normalization_rule_name": "identity", "remove_extra_whitespaces": True},
    {"remove_extra_whitespaces": False},
    {"add_dummy_prefix": False},
    {"character_coverage": 0.98},  # rarer characters are <unk>
    {"split_digits": True},
    {"model_type": "char", "vocab_size": 300},
], ids=["defaults", "nfkc", "nmt_nfkc_cf", "identity-trimmed", "spaces-kept", "no-prefix", "coverage", "digits", "char"])
def test_a_model_trained_with_sentencepiece_settings_gives_its_ids_and_text(tmp_path, kind, settings):
    options = {"normalization_rule_name": "nmt_nfkc", "byte_fallback": False, "remove_extra_whitespaces": True,
               "character_coverage": 0.9995} | settings
    model = _train(tmp_path, kind, **options)
    sp = spm.SentencePieceProcessor(model_file=model)
    tok = Tokenizer.from_spm_file(model)
    lines = HELD_LINES + read("udhr_cmn_hans.txt").decode().splitlines() + TRICKY + _tricky_lines()
    theirs = sp.encode(lines)
    assert [e.ids for e in tok.encode_batch(lines)] == theirs
    assert [tok.encode(line).ids for line in lines[-40:]] == theirs[-40:]  # a text alone as in a batch
    assert [tok.decode(ids) for ids in theirs] == [sp.decode(ids) for ids in theirs]
    lossy = settings.get("normalization_rule_name", "nmt_nfkc") != "identity" or not settings.get("byte_fallback")
    assert tok.is_lossless is not lossy


def test_the_unknown_piece_stands_for_a_run_of_unknown_characters(tmp_path):
    model = _train(tmp_path, "unigram", normalization_rule_name="nmt_nfkc", byte_fallback=False,
                   remove_extra_whitespaces=True)
    tok = Tokenizer.from_spm_file(model)
    sp = spm.SentencePieceProcessor(model_file=model)
    enc = tok.encode("a ☃☃ b")
    assert enc.ids == sp.encode("a ☃☃ b") and enc.tokens.count("<unk>") == 1
    assert enc.offsets[enc.tokens.index("<unk>")] == (2, 4)  # both characters, one token
    assert tok.decode(enc.ids) == "a  ⁇  b" == sp.decode(enc.ids)


def test_a_lossy_model_makes_no_archive_and_exports_no_hf_file(tmp_path, capsys):
    model = _train(tmp_path, "unigram", normalization_rule_name="nmt_nfkc", byte_fallback=False,
                   remove_extra_whitespaces=True)
    rules = tmp_path / "m.rules"
    assert main(["import-spm", model, "-o", str(rules), "-q"]) == 0
    capsys.readouterr()
    (tmp_path / "t.txt").write_bytes(TEXT[:2000])
    assert main(["compress", str(tmp_path / "t.txt"), "--rules", str(rules), "-o", str(tmp_path / "t.cpz")]) != 0
    err = capsys.readouterr().err
    assert "normalizer" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.cpz").exists()
    assert main(["export-hf", str(rules), "-o", str(tmp_path / "t.json")]) != 0
    err = capsys.readouterr().err
    assert "normalizer" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.json").exists()


def test_a_corrupt_character_map_is_refused_in_one_line(tmp_path, capsys):
    from chunkpress.text.spm import read_model

    model = _train(tmp_path, "unigram", normalization_rule_name="nmt_nfkc")
    data = open(model, "rb").read()
    charsmap = read_model(data)["normalizer"]["charsmap"]
    at = data.index(charsmap) + 4  # the trie's root: its children now lie past the map's end
    (tmp_path / "bad.model").write_bytes(data[:at] + b"\xff\xff\xff\x7f" + data[at + 4:])
    assert main(["import-spm", str(tmp_path / "bad.model"), "-o", str(tmp_path / "m.rules")]) == 4
    err = capsys.readouterr().err
    assert "bad.model" in err and "character map" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.rules").exists()


@pytest.mark.parametrize(("settings", "says"), [
    ({"model_type": "word"}, "'word' models are not read"),
    ({"user_defined_symbols": "Alice"}, "user-defined"),
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


def _their_spans(sp, line: str) -> list[tuple[int, int]]:
    """Each piece's byte span in ``line`` as sentencepiece places it (its SentencePieceText:
    pieces are field 2, their begin and end fields 4 and 5), read without protobuf."""
    from chunkpress.text.spm import _fields

    pieces = [dict((f, v) for f, _, v in _fields(piece, "piece"))
              for f, _, piece in _fields(sp.encode(line, out_type="serialized_proto"), "text") if f == 2]
    return [(p.get(4, 0), p.get(5, 0)) for p in pieces]


@pytest.mark.parametrize("settings", [{"normalization_rule_name": "nmt_nfkc", "remove_extra_whitespaces": True},
                                      {"remove_extra_whitespaces": False, "byte_fallback": False}])
def test_offsets_point_into_the_text_as_given_as_sentencepiece_places_its_pieces(tmp_path, settings):
    model = _train(tmp_path, "unigram", **settings)
    sp = spm.SentencePieceProcessor(model_file=model)
    tok = Tokenizer.from_spm_file(model)
    lines = HELD_LINES[:200] + TRICKY + _tricky_lines(200)
    for line, enc in zip(lines, tok.encode_batch([line.encode() for line in lines]), strict=True):
        assert enc.offsets == _their_spans(sp, line), line
    for line, enc in zip(lines, tok.encode_batch(lines), strict=True):  # a str's count characters
        data = line.encode()
        chars = [(len(data[:a].decode()), len(data[:b].decode())) for a, b in _their_spans(sp, line)]
        assert enc.offsets == chars, line


@pytest.mark.parametrize("model", ["test_model.model", "test_ja_model.model"])
def test_sentencepieces_own_test_models_give_its_ids_and_text(model):
    """sentencepiece's own test models (English and Japanese; nfkc, no byte fallback), read
    from the file as published: every id and decoded text of held-out English, Japanese,
    Chinese and Arabic lines equal sentencepiece's."""
    path = str(DATA / "sentencepiece" / model)
    sp = spm.SentencePieceProcessor(model_file=path)
    tok = Tokenizer.from_spm_file(path)
    lines = HELD_LINES + read("sentencepiece/wagahaiwa_slice.txt").decode().splitlines() + \
        read("udhr_cmn_hans.txt").decode().splitlines() + TRICKY
    theirs = sp.encode(lines)
    assert [e.ids for e in tok.encode_batch(lines)] == theirs
    assert [tok.decode(ids) for ids in theirs] == [sp.decode(ids) for ids in theirs]


@pytest.mark.parametrize(("params", "says"), [({"charsmap": "!!!"}, "not base64"),
                                              ({"charsmap": "EAAAAP////////////////////8="}, "character map"),
                                              ({"remove_extra_whitespaces": "yes"}, "remove_extra_whitespaces")])
def test_a_rules_file_with_a_damaged_normalizer_is_refused_in_one_line(tmp_path, capsys, params, says):
    import attrs
    from chunkpress.format.rulesfile import RulesFile

    model = _train(tmp_path, "unigram", normalization_rule_name="nmt_nfkc")
    assert main(["import-spm", model, "-o", str(tmp_path / "m.rules"), "-q"]) == 0
    source = RulesFile.from_bytes((tmp_path / "m.rules").read_bytes())
    config = {**source.config, "normalizer": {"name": "sentencepiece",
                                              "params": {**source.config["normalizer"]["params"], **params}}}
    (tmp_path / "bad.rules").write_bytes(attrs.evolve(source, config=config).to_bytes())
    (tmp_path / "in.txt").write_text("hello world\n")
    capsys.readouterr()
    assert main(["encode", str(tmp_path / "in.txt"), "--rules", str(tmp_path / "bad.rules"),
                 "-o", str(tmp_path / "out.ids")]) == 4
    err = capsys.readouterr().err
    assert says in err and "bad.rules" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.ids").exists()
