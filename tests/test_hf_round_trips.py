"""export-hf then import-hf: every vocabulary that exports comes back with the same ids, and HF's
ids for the exported file equal ours; and the HF settings that give a token no bytes of ours
(a WordPiece word past its longest, a run of Unigram's unknown id) refuse that text, in one
line, where HF would lose bytes."""

import json

import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from chunkpress.text.hf import byte_to_unicode
from support import read

tokenizers = pytest.importorskip("tokenizers")

TEXT = read("alice29.txt")
CUT = TEXT.index(b"\n", len(TEXT) * 4 // 5) + 1
#: held-out lines in two scripts, with a leading space, runs of spaces, a literal ``##`` and
#: a literal ``▁`` (a space to sentencepiece)
LINES = (" starts with a space\n" + TEXT[CUT:].decode() + read("udhr_arb.txt").decode()
         + "  ## heading  \n\u2581x \u2581\u2581y\n").splitlines(keepends=True)


@pytest.fixture(scope="module")
def vocabularies(tmp_path_factory) -> dict[str, Tokenizer]:
    """Search vocabularies of every source: trained here (Unigram; longest-prefix) and read
    from sentencepiece (its dummy prefix, byte fallback and ``▁``), cut by likelihood or by
    longest prefix."""
    folder = tmp_path_factory.mktemp("vocabularies")
    (folder / "t.txt").write_bytes(TEXT[:CUT])
    out = {}
    for name, extra in (("unigram", ["--learner", "unigram"]), ("longest-prefix", ["--segmenter", "longest-prefix"])):
        assert main(["train", str(folder / "t.txt"), "--pretokenizer", "metaspace", "--vocab-size", "600",
                     "--rules", str(folder / f"{name}.rules"), "-q", *extra]) == 0
        out[name] = Tokenizer.from_file(folder / f"{name}.rules")
    spm = pytest.importorskip("sentencepiece")
    spm.SentencePieceTrainer.train(input=str(folder / "t.txt"), model_prefix=str(folder / "m"), vocab_size=600,
                                   model_type="unigram", byte_fallback=True, normalization_rule_name="identity",
                                   remove_extra_whitespaces=False, minloglevel=2)
    imported = Tokenizer.from_spm_file(folder / "m.model")
    # HF's Unigram sums in float64 word by word: sentencepiece's float32 ties are not its own
    out["sentencepiece"] = imported.with_segmenter("likelihood")
    out["sentencepiece, longest-prefix"] = imported.with_segmenter("longest-prefix")
    return out


@pytest.mark.parametrize("name", ["unigram", "longest-prefix", "sentencepiece", "sentencepiece, longest-prefix"])
def test_an_exported_vocabulary_encodes_alike_in_hf_and_imported_back(vocabularies, tmp_path, name):
    ours = vocabularies[name]
    ours.save(tmp_path / "v.rules")
    assert main(["export-hf", str(tmp_path / "v.rules"), "-o", str(tmp_path / "tokenizer.json"), "-q"]) == 0
    assert main(["import-hf", str(tmp_path / "tokenizer.json"), "-o", str(tmp_path / "back.rules"), "-q"]) == 0
    expected = [e.ids for e in ours.encode_batch(LINES)]
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [e.ids for e in hf.encode_batch(LINES)] == expected
    back = Tokenizer.from_file(tmp_path / "back.rules")
    assert [e.ids for e in back.encode_batch(LINES)] == expected
    assert [back.decode(ids) for ids in expected] == [ours.decode(ids) for ids in expected]


def _byte_level_doc(model: dict) -> dict:
    return {"version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None, "decoder": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                              "use_regex": True},
            "model": model}


def _import(doc: dict, tmp_path) -> Tokenizer:
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc))
    assert main(["import-hf", str(tmp_path / "tokenizer.json"), "-o", str(tmp_path / "t.rules"), "-q"]) == 0
    return Tokenizer.from_file(tmp_path / "t.rules")


def _refused_by_encode(tmp_path, capsys, text: bytes, says: str) -> None:
    (tmp_path / "in.txt").write_bytes(text)
    capsys.readouterr()
    assert main(["encode", str(tmp_path / "in.txt"), "--rules", str(tmp_path / "t.rules"),
                 "-o", str(tmp_path / "ids.txt")]) != 0
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "ids.txt").exists()


def test_a_wordpiece_word_past_its_longest_is_refused_where_hf_gives_unknown(tmp_path, capsys):
    """HF's WordPiece gives a word of more than ``max_input_chars_per_word`` characters its
    unknown token, which loses the word's bytes; shorter words get HF's ids."""
    table = byte_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    vocab.update({"##" + table[b]: b for b in range(256)})
    vocab.update({"[UNK]": 256, "the": 257, "##the": 257, "Ġthe": 258, "##Ġthe": 258})
    doc = _byte_level_doc({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                           "max_input_chars_per_word": 12, "vocab": vocab})
    ours = _import(doc, tmp_path)
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    short = [" the other [UNK] bathe", "Alice was beginning to get very tired", "Ⅻ théâtre"]
    assert [e.ids for e in ours.encode_batch(short)] == [e.ids for e in hf.encode_batch(short)]
    long_word = " unbelievable"  # 13 characters with its space, as ByteLevel spells it
    assert hf.encode(long_word).ids == [256]
    _refused_by_encode(tmp_path, capsys, long_word.encode(), "max_input_chars_per_word = 12")


def test_a_unigram_unknown_id_on_a_real_piece_keeps_the_piece(tmp_path, capsys):
    """HF's Unigram matches the piece that ``unk_id`` names like any other, and fuses a run of
    that id into one token: the piece is kept, and a text with such a run is refused."""
    table = byte_to_unicode()
    vocab = [[table[b], -6.0] for b in range(256)] + [["he", -2.0], ["the", -2.5], ["<unk>", -1.0]]
    doc = _byte_level_doc({"type": "Unigram", "unk_id": 256, "byte_fallback": False, "vocab": vocab})
    ours = _import(doc, tmp_path)
    hf = tokenizers.Tokenizer.from_str(json.dumps(doc))
    texts = ["he the other", "she said <unk>", "the he"]
    assert [e.ids for e in ours.encode_batch(texts)] == [e.ids for e in hf.encode_batch(texts)]
    assert hf.encode("hehe").ids == [256]  # two "he" fused, two bytes lost
    _refused_by_encode(tmp_path, capsys, b"hehe", "fuses them")
