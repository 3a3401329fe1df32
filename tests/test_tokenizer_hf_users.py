"""Tokenizers as HF users expect: HF's ids over all of Unicode both ways, training on several
files with added tokens, and the Tokenizer object (from_file, save, encode, offsets, tokens)."""

import io
import re
import sys
import unicodedata

import chunkpress
import pytest
from chunkpress.cli import main
from chunkpress.text.unicodeclasses import OTHER, code_point_classes
from support import read

tokenizers = pytest.importorskip("tokenizers")


def _unicode_text() -> str:
    """Every assigned code point (the table's or Python's), as words of a few characters
    between spaces, punctuation, digits and line ends."""
    classes = code_point_classes()
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF
              and (classes[c] != OTHER or unicodedata.category(chr(c)) not in ("Cn", "Co", "Cs"))]
    separators = [" ", " ", "'s ", "\n", ", ", "7", "  "]
    return "".join(chr(c) + (separators[i % 7] if i % 3 == 2 else "") for i, c in enumerate(points))


@pytest.fixture(scope="module")
def unicode_text() -> str:
    return _unicode_text()


@pytest.fixture(scope="module")
def mixed(unicode_text) -> str:
    """alice29 and a text over all of Unicode, with the added token between them."""
    return read("alice29.txt").decode() + "<|endoftext|>" + unicode_text


def test_an_hf_trained_tokenizer_imported_gives_hf_s_ids_over_all_of_unicode(tmp_path, mixed):
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator([mixed], trainers.BpeTrainer(vocab_size=3000, special_tokens=["<|endoftext|>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                        show_progress=False))
    (tmp_path / "tokenizer.json").write_text(hf.to_str())
    assert main(["import-hf", str(tmp_path / "tokenizer.json"), "-q"]) == 0
    ours = chunkpress.Tokenizer.from_file(tmp_path / "tokenizer.rules")
    theirs = hf.encode(mixed)
    encoding = ours.encode(mixed)
    assert encoding.ids == theirs.ids  # token for token, some 700,000 of them
    assert encoding.tokens == theirs.tokens
    assert ours.decode(encoding.ids) == hf.decode(theirs.ids)  # HF drops added tokens by default
    assert ours.decode(encoding.ids, skip_special_tokens=False) == mixed == ours.decode_bytes(encoding.ids).decode()
    (tmp_path / "mixed.txt").write_text(mixed)
    assert main(["encode", str(tmp_path / "mixed.txt"), "--rules", str(tmp_path / "tokenizer.rules"),
                 "--format", "text", "-o", str(tmp_path / "ids")]) == 0
    assert list(map(int, (tmp_path / "ids").read_text().split())) == theirs.ids


def test_our_tokenizer_exported_is_encoded_by_hf_as_we_encode_it(tmp_path, mixed, unicode_text):
    text = tmp_path / "mixed.txt"
    text.write_text(mixed)
    rules = tmp_path / "m.rules"
    assert main(["train", str(text), "--scorer", "repair", "--pretokenizer", "gpt2", "--max-rules", "3000",
                 "--rules", str(rules), "-q"]) == 0
    assert main(["export-hf", str(rules), "-o", str(tmp_path / "t.json")]) == 0
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    ours = chunkpress.Tokenizer.from_file(rules)
    for sample in (mixed, unicode_text[::-1], "naïve café — 𱍐𱍑 Ᲊᲊ 12,345 it's"):
        assert ours.encode(sample).ids == hf.encode(sample).ids


def test_train_on_several_files_with_an_added_token(tmp_path, monkeypatch):
    alice = read("alice29.txt")
    (tmp_path / "a.txt").write_bytes(alice[:80_000] + b"<|endoftext|>" + alice[80_000:100_000])
    (tmp_path / "b.txt").write_bytes(read("udhr_arb.txt"))
    rules = tmp_path / "r.rules"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(alice[100_000:])))
    assert main(["train", str(tmp_path / "a.txt"), "-", str(tmp_path / "b.txt"), "--vocab-size", "1000",
                 "--special-token", "<|endoftext|>", "--pretokenizer", "gpt2", "--rules", str(rules), "-q"]) == 0
    tok = chunkpress.Tokenizer.from_file(rules)
    assert tok.vocab_size == 1000  # as HF counts it: bytes, merges and the added token
    meta = tok.meta
    assert [s["name"] for s in meta.sources] == [str(tmp_path / "a.txt"), "-", str(tmp_path / "b.txt")]
    assert meta.length == len(alice) + 13 + len(read("udhr_arb.txt"))
    # the added token is no word of the training text: no rule spells any part of "<|endo"
    spelled = [tok.decode_bytes([256 + r]) for r in range(len(tok.rules))]
    assert not any(b"<|" in s or b"|>" in s for s in spelled)
    assert main(["export-hf", str(rules), "-o", str(tmp_path / "t.json")]) == 0
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    sample = "Alice was<|endoftext|>beginning to get very tired<|endoftext|>"
    theirs = hf.encode(sample).ids
    assert theirs.count(999) == 2 and hf.token_to_id("<|endoftext|>") == 999
    assert tok.encode(sample).ids == theirs
    assert tok.decode(theirs, skip_special_tokens=False) == sample == hf.decode(theirs, skip_special_tokens=False)
    assert tok.decode(theirs) == hf.decode(theirs) == sample.replace("<|endoftext|>", "")


def test_train_counts_words_as_hf_s_trainer_does(tmp_path, unicode_text):
    """HF's trainer reads each file line by line (line ends kept) and pre-tokenizes each line on
    its own; the words train counts over two files are exactly those, with their counts."""
    import collections

    from chunkpress.text.wordcounts import count_stream

    alice = read("alice29.txt")
    files = [alice[:76_000], alice[76_000:] + unicode_text[:200_000].encode(), b"  tail\n\n\n   indented  \n"]
    byte_level = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    theirs = collections.Counter()
    for data in files:
        for line in re.split("(?<=\n)", data.decode()):  # lines end at \n only, kept
            theirs.update(token for token, _ in byte_level.pre_tokenize_str(line))
    from chunkpress.text.hf import byte_to_unicode

    table = byte_to_unicode()
    ours = collections.Counter()
    for data in files:
        words = count_stream(io.BytesIO(data), "gpt2", shard_size=10_000, lines=True)
        for u, count in enumerate(words.counts.tolist()):
            word = bytes(words.buf[words.offsets[u]:words.offsets[u + 1]])
            ours["".join(table[b] for b in word)] += count
    assert ours == theirs


def test_the_tokenizer_object(tmp_path):
    text = "Alice was beginning to get very tired of sitting by her sister on the bank, naïve."
    rules = tmp_path / "r.rules"
    (tmp_path / "a.txt").write_bytes(read("alice29.txt"))
    assert main(["train", str(tmp_path / "a.txt"), "--vocab-size", "800", "--pretokenizer", "gpt2",
                 "--rules", str(rules), "-q"]) == 0
    tok = chunkpress.Tokenizer.from_file(rules)
    by_text, by_bytes = tok.encode(text), tok.encode(text.encode())
    assert by_text.ids == by_bytes.ids and len(by_text) == len(by_text.tokens) > 10
    tok.save(tmp_path / "again.rules")
    again = chunkpress.Tokenizer.from_file(tmp_path / "again.rules")
    assert again.encode(text).ids == by_text.ids
    assert again.meta.blake2b == tok.meta.blake2b and again.meta.unicode == tok.meta.unicode == "16.0.0"
    # offsets are character offsets into a str (byte offsets into bytes), as HF's; each
    # token's bytes are the text's there
    data = text.encode()
    assert [data[a:b] for a, b in by_bytes.offsets] == [tok.decode_bytes([i]) for i in by_text.ids]
    assert by_text.offsets[-1][1] == len(text) and by_bytes.offsets[-1][1] == len(data)
    # tokens and offsets as HF's Encoding gives them (byte-level spelling; char offsets = byte offsets in ASCII)
    assert main(["export-hf", str(rules), "-o", str(tmp_path / "t.json")]) == 0
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json")).encode(text[:-7])
    assert tok.encode(text[:-7]).tokens == hf.tokens
    assert tok.encode(text[:-7]).offsets == hf.offsets
    batch = tok.encode_batch([text, b"sister", ""])
    assert [len(e) for e in batch] == [len(by_text), len(tok.encode("sister")), 0]
    with pytest.raises(chunkpress.InputError, match="cannot read .*missing.rules"):
        chunkpress.Tokenizer.from_file(tmp_path / "missing.rules")


def test_an_imported_tokenizer_s_offsets_skip_the_prefix_space_and_span_added_tokens(tmp_path):
    from tokenizers import models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    hf.train_from_iterator([read("alice29.txt").decode()], trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<s>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    (tmp_path / "t.json").write_text(hf.to_str())
    assert main(["import-hf", str(tmp_path / "t.json"), "-q"]) == 0
    tok = chunkpress.Tokenizer.from_file(tmp_path / "t.rules")
    text = "Alice<s>said the Queen<s>"
    encoding = tok.encode(text)
    assert encoding.ids == hf.encode(text).ids
    pieces = [text[a:b] for a, b in encoding.offsets]
    assert "".join(pieces) == text and pieces.count("<s>") == 2
    assert encoding.tokens == hf.encode(text).tokens and encoding.offsets == hf.encode(text).offsets
