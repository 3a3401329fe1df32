"""BERT's WordPiece read from HF: BertNormalizer and BertPreTokenizer, a word's first piece and
its ## continuations with ids of their own, [UNK] for a word that cannot be cut, [CLS] ... [SEP]
as the post-processor adds them, and the WordPiece decoder. Every id, token, offset and decoded
text is checked against HF on held-out English, Chinese and Arabic lines and on random strings
of the characters where BERT's normalizer and splitter branch."""

import json
import random

import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from support import read

tokenizers = pytest.importorskip("tokenizers")

TEXT = read("alice29.txt")
CUT = TEXT.index(b"\n", len(TEXT) * 4 // 5) + 1
HELD = [line for line in (TEXT[CUT:] + read("udhr_arb.txt") + read("udhr_cmn_hans.txt")).decode().splitlines()]


def _random_lines(count: int = 800) -> list[str]:
    alphabet = [" ", "\t", "\n", "\x00", "\ufffd", "\x85", "\u200b", "\xad", "Ａ", "①", "é", "E\u0301", "İ", "Σ", "你",
                "好", "!", "¿", "—", "a", "b", "\u3000", "\x1c", "ﬁ", "ß", "\U00020000", "\ue000", "[CLS]", "[SEP]",
                "x" * 120, "the", "alice", "'s", "."]
    rng = random.Random(5)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(count)]


def _bert(folder, lowercase: bool, post: str) -> str:
    """An HF BertWordPieceTokenizer trained on alice29's first four fifths, with ``post``
    (BertProcessing or TemplateProcessing) adding [CLS] and [SEP]."""
    from tokenizers import BertWordPieceTokenizer, processors

    (folder / "train.txt").write_bytes(TEXT[:CUT])
    tok = BertWordPieceTokenizer(lowercase=lowercase)
    tok.train([str(folder / "train.txt")], vocab_size=2000)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok._tokenizer.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls)) if post == "bert" else \
        processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                      special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.save(str(folder / "bert.json"))
    return str(folder / "bert.json")


@pytest.mark.parametrize(("lowercase", "post"), [(True, "bert"), (False, "template")], ids=["uncased", "cased"])
def test_bert_wordpiece_gives_hf_ids_tokens_offsets_and_text(tmp_path, lowercase, post):
    path = _bert(tmp_path, lowercase, post)
    assert main(["import-hf", path, "-o", str(tmp_path / "bert.rules"), "-q"]) == 0
    ours = Tokenizer.from_file(tmp_path / "bert.rules")
    theirs = tokenizers.Tokenizer.from_file(path)
    lines = HELD + _random_lines()
    for special in (True, False):
        want = theirs.encode_batch(lines, add_special_tokens=special)
        got = ours.encode_batch(lines, add_special_tokens=special)
        assert [e.ids for e in got] == [e.ids for e in want]
        assert [e.tokens for e in got] == [e.tokens for e in want]
        assert [e.offsets for e in got] == [e.offsets for e in want]
    ids = [e.ids for e in theirs.encode_batch(lines)]
    assert [ours.decode(i) for i in ids] == [theirs.decode(i) for i in ids]
    assert [ours.decode(i, skip_special_tokens=False) for i in ids] == \
        [theirs.decode(i, skip_special_tokens=False) for i in ids]
    assert ours.encode("Alice").ids[0] == theirs.token_to_id("[CLS]")  # encode adds them too, as HF's does
    assert not ours.is_lossless


def test_a_word_bert_cannot_cut_is_one_unknown_token(tmp_path):
    path = _bert(tmp_path, True, "bert")
    ours = Tokenizer.from_hf_file(path)
    unk = json.loads(open(path).read())["model"]["vocab"]["[UNK]"]
    enc = ours.encode("alice ☃☃x " + "y" * 101 + " rabbit", add_special_tokens=False)
    assert enc.ids.count(unk) == 2 and len(enc.ids) == 4  # the snowman word and the over-long one, each whole
    assert enc.offsets[1] == (6, 9) and enc.offsets[2] == (10, 111)


@pytest.mark.parametrize(("change", "says"), [
    (lambda d: d.update(normalizer={"type": "NFC"}), "only BertNormalizer"),
    (lambda d: d.update(post_processor={"type": "Nonsense"}), "post-processor 'Nonsense'"),
    (lambda d: d["model"].update(continuing_subword_prefix="@@"), "continuing_subword_prefix"),
    (lambda d: d["model"].update(unk_token="[NOPE]"), "unk_token"),
])
def test_a_bert_model_that_would_cut_otherwise_is_refused_in_one_line(tmp_path, capsys, change, says):
    doc = json.loads(open(_bert(tmp_path, True, "bert")).read())
    change(doc)
    (tmp_path / "odd.json").write_text(json.dumps(doc))
    assert main(["import-hf", str(tmp_path / "odd.json"), "-o", str(tmp_path / "odd.rules")]) == 4
    err = capsys.readouterr().err
    assert says in err and "odd.json" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "odd.rules").exists()


def test_a_bert_vocabulary_makes_no_archive(tmp_path, capsys):
    path = _bert(tmp_path, True, "bert")
    assert main(["import-hf", path, "-o", str(tmp_path / "bert.rules"), "-q"]) == 0
    (tmp_path / "t.txt").write_bytes(TEXT[:3000])
    capsys.readouterr()
    assert main(["compress", str(tmp_path / "t.txt"), "--rules", str(tmp_path / "bert.rules"),
                 "-o", str(tmp_path / "t.cpz")]) != 0
    err = capsys.readouterr().err
    assert "normalizer" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "t.cpz").exists()


def test_an_imported_bert_exports_as_hf_reads_it_and_comes_back(tmp_path):
    path = _bert(tmp_path, True, "bert")
    assert main(["import-hf", path, "-o", str(tmp_path / "bert.rules"), "-q"]) == 0
    assert main(["export-hf", str(tmp_path / "bert.rules"), "-o", str(tmp_path / "back.json"), "-q"]) == 0
    original, written = tokenizers.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(tmp_path / "back.json"))
    again = Tokenizer.from_hf_file(tmp_path / "back.json")
    lines = HELD + _random_lines(300)
    want = [e.ids for e in original.encode_batch(lines)]
    assert [e.ids for e in written.encode_batch(lines)] == want
    assert [e.ids for e in again.encode_batch(lines)] == want


@pytest.fixture(scope="module")
def uncased(tmp_path_factory) -> str:
    """One uncased BERT tokenizer.json for the tests that only read it."""
    return _bert(tmp_path_factory.mktemp("bert"), True, "bert")


@pytest.mark.parametrize("truncation", [None, {"max_length": 12}, {"max_length": 12, "direction": "left"},
                                        {"max_length": 2}])
@pytest.mark.parametrize("padding", [None, {}, {"length": 40}, {"pad_to_multiple_of": 8, "direction": "left"}])
def test_truncation_and_padding_are_hfs(uncased, truncation, padding):
    """enable_truncation and enable_padding as HF's: a text cut to leave room for [CLS] and
    [SEP] (or its end kept), padded to the batch's longest, a length or a multiple, with the
    same ids, tokens, offsets, attention masks, type ids and special-token masks."""
    theirs, ours = tokenizers.Tokenizer.from_file(uncased), Tokenizer.from_hf_file(uncased)
    for tok in (theirs, ours):
        if truncation is not None:
            tok.enable_truncation(**truncation)
        if padding is not None:
            tok.enable_padding(**padding)
    lines = HELD[:60] + ["", "a", "Alice " * 30]
    for special in (True, False):
        want, got = theirs.encode_batch(lines, add_special_tokens=special), ours.encode_batch(lines,
                                                                                               add_special_tokens=special)
        for field in ("ids", "tokens", "offsets", "attention_mask", "type_ids", "special_tokens_mask"):
            assert [getattr(e, field) for e in got] == [getattr(e, field) for e in want], field


def test_a_truncation_that_leaves_no_room_is_refused(uncased):
    from chunkpress import ConfigError

    tok = Tokenizer.from_hf_file(uncased)
    tok.enable_truncation(1)
    with pytest.raises(ConfigError, match="no room"):
        tok.encode("alice")
    with pytest.raises(ConfigError, match="stride"):
        tok.enable_truncation(10, stride=2)


@pytest.mark.parametrize("post", ["bert", "template", "roberta"])
def test_a_pair_of_texts_gets_hfs_ids_type_ids_and_truncation(uncased, tmp_path, post):
    """encode(a, b) and encode_batch of pairs as HF's, through BertProcessing,
    TemplateProcessing ("[CLS] $A [SEP] $B:1 [SEP]:1") and RobertaProcessing: the pair
    template's tokens and type ids, longest_first truncation (either end kept) and padding."""
    from tokenizers import processors

    doc = json.loads(open(uncased).read())
    cls, sep = doc["model"]["vocab"]["[CLS]"], doc["model"]["vocab"]["[SEP]"]
    made = {"bert": processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls)),
            "template": processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                      special_tokens=[("[CLS]", cls), ("[SEP]", sep)]),
            "roberta": processors.RobertaProcessing(("[SEP]", sep), ("[CLS]", cls), trim_offsets=False,
                                                    add_prefix_space=False)}[post]
    theirs = tokenizers.Tokenizer.from_file(uncased)
    theirs.post_processor = made
    theirs.save(str(tmp_path / "pair.json"))
    ours = Tokenizer.from_hf_file(tmp_path / "pair.json")
    pairs = list(zip(HELD[:40:2], HELD[1:40:2], strict=True)) + [("", "a"), ("a", ""), ("Alice " * 20, "rabbit")]
    assert ours.encode(*pairs[0]).ids == theirs.encode(*pairs[0]).ids
    for truncation in (None, {"max_length": 9}, {"max_length": 16, "direction": "left"}):
        for tok in (theirs, ours):
            tok.no_truncation()
            tok.enable_padding()
            if truncation is not None:
                tok.enable_truncation(**truncation)
        for special in (True, False):
            want, got = theirs.encode_batch(pairs, add_special_tokens=special), ours.encode_batch(
                pairs, add_special_tokens=special)
            for field in ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask"):
                assert [getattr(e, field) for e in got] == [getattr(e, field) for e in want], (field, truncation)
