"""A learned dictionary used on new text: encode/decode, held-out code length, HF export."""

import re

import numpy as np
import pytest
from chunkpress.cli import main
from chunkpress.format.rulesfile import dump_rules
from chunkpress.pipeline import Pipeline
from chunkpress.text.hf import from_hf_json, to_hf_json
from chunkpress.text.tokenizer import Tokenizer
from support import fixture_inputs, read

FIXTURES = fixture_inputs()


@pytest.fixture(scope="module", params=["none", "gpt2", "whitespace"])
def trained(request, registry, alice):
    result = Pipeline.from_config(registry=registry, scorer="repair", pretokenizer=request.param,
                                  limits={"max_rules": 1500}).fit(alice)
    return request.param, result


def test_encoding_the_training_text_gives_the_training_string(trained, alice):
    pre, result = trained
    assert np.array_equal(Tokenizer(result.rules, pre).encode(alice).id_array, result.symbols)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_encode_decode_is_identity(trained, name):
    pre, result = trained
    tok = Tokenizer(result.rules, pre)
    data = FIXTURES[name]  # includes bytes never seen in training (Arabic, Chinese, random)
    assert tok.decode_bytes(tok.encode(data).ids) == data


def test_mdl_dictionary_on_held_out_text(registry, alice):
    result = Pipeline.from_config(registry=registry).fit(alice)
    tok = Tokenizer(result.rules)
    own = tok.code_length_curve(alice)
    assert np.array_equal(own["total_bits"], result.trace["total_bits"])  # same numbers as training
    other = tok.code_length_curve(read("udhr_arb.txt"))
    assert len(other) == len(result.rules) + 1 and other["m"][-1] == 256 + len(result.rules)
    # English chunks do not help Arabic: the held-out code length only grows with the rules
    assert other["total_bits"][-1] > other["total_bits"][0]


def test_hf_export_import_round_trip(trained):
    pre, result = trained
    rules, name, vocab = from_hf_json(to_hf_json(result.rules, pre))
    assert np.array_equal(rules, result.rules) and name == pre
    assert np.array_equal(vocab.ids, np.arange(256 + len(rules))) and vocab.special == ()


def _hf_trained(alice, add_prefix_space: bool, full_alphabet: bool):
    """A ByteLevel BPE trained by HF tokenizers itself, with two special tokens; without the full
    alphabet HF numbers only the bytes it saw, in its own order."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = decoders.ByteLevel()
    extra = {"initial_alphabet": pre_tokenizers.ByteLevel.alphabet()} if full_alphabet else {}
    tok.train_from_iterator([alice.decode()], trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["<|endoftext|>", "<pad>"], show_progress=False, **extra))
    return tok


@pytest.mark.parametrize("add_prefix_space", [True, False])
@pytest.mark.parametrize("full_alphabet", [True, False])
def test_hf_import_gives_hf_ids_special_tokens_and_prefix_space(tmp_path, alice, add_prefix_space, full_alphabet):
    hf = _hf_trained(alice, add_prefix_space, full_alphabet)
    # 100 KB of text with the special tokens between (and after) its paragraphs
    text = "<|endoftext|>".join(re.split("\r?\n\r?\n", alice[:100_000].decode())) + "<pad><|endoftext|>x"
    theirs = hf.encode(text).ids
    assert theirs.count(0) > 100  # the special token is there, whole, many times
    source = tmp_path / "tokenizer.json"
    source.write_text(hf.to_str())
    rules, plain = tmp_path / "hf.rules", tmp_path / "t.txt"
    plain.write_bytes(text.encode())
    assert main(["import-hf", str(source), "-o", str(rules)]) == 0
    ids = tmp_path / "ids"
    assert main(["encode", str(plain), "--rules", str(rules), "--format", "text", "-o", str(ids)]) == 0
    assert list(map(int, ids.read_text().split())) == theirs
    back = tmp_path / "back"
    assert main(["decode", str(ids), "--rules", str(rules), "--format", "text", "-o", str(back)]) == 0
    assert back.read_bytes() == hf.decode(theirs, skip_special_tokens=False).encode()
    # exported again, HF reads the same tokenizer back
    exported = tmp_path / "again.json"
    assert main(["export-hf", str(rules), "-o", str(exported)]) == 0
    assert type(hf).from_file(str(exported)).encode(text).ids == theirs
    # compress --rules codes the dictionary's own symbols: the text comes back exactly
    archive = tmp_path / "t.cpz"
    assert main(["compress", str(plain), "--rules", str(rules), "-o", str(archive)]) == 0
    assert main(["decompress", str(archive), "-o", str(tmp_path / "t.out")]) == 0
    assert (tmp_path / "t.out").read_bytes() == plain.read_bytes()


def test_hf_import_refuses_what_would_tokenize_differently(alice):
    import json

    from chunkpress import FormatError

    doc = json.loads(_hf_trained(alice, True, True).to_str())
    changes = {
        "normalizer": lambda d: d.update(normalizer={"type": "BertNormalizer", "lowercase": True}),
        "ignore_merges": lambda d: d["model"].update(ignore_merges=True),
        "dropout": lambda d: d["model"].update(dropout=0.1),
        "lstrip": lambda d: d["added_tokens"][0].update(lstrip=True),
        "Metaspace": lambda d: d.update(pre_tokenizer={"type": "Metaspace"}),
        "lacks": lambda d: d["model"]["vocab"].pop(d["model"]["merges"][5][0] + d["model"]["merges"][5][1]),
    }
    for word, change in changes.items():
        bad = json.loads(json.dumps(doc))
        change(bad)
        with pytest.raises(FormatError, match=word):
            from_hf_json(json.dumps(bad))


def test_an_imported_vocabulary_refuses_bytes_it_has_no_id_for(alice):
    from chunkpress import ChunkpressError

    rules, pre, vocab = from_hf_json(_hf_trained(alice, False, False).to_str())
    with pytest.raises(ChunkpressError, match="byte 0xc3 has no id"):
        Tokenizer(rules, pre, vocab).encode("naïve ä".encode())


def test_train_vocab_size_counts_as_hf_does(tmp_path, alice):
    text, rules = tmp_path / "a.txt", tmp_path / "a.rules"
    text.write_bytes(alice)
    assert main(["train", str(text), "--scorer", "repair", "--vocab-size", "1000", "--rules", str(rules)]) == 0
    assert Tokenizer.from_rules_file(rules.read_bytes()).vocab_size == 1000
    assert main(["train", str(text), "--vocab-size", "1000", "--max-rules", "5", "--rules", str(rules), "-f"]) == 2
    assert main(["train", str(text), "--vocab-size", "200", "--rules", str(rules), "-f"]) == 2


def test_hf_tokenizers_gives_the_same_ids(trained, alice):
    tokenizers = pytest.importorskip("tokenizers")
    pre, result = trained
    hf = tokenizers.Tokenizer.from_str(to_hf_json(result.rules, pre))
    ours = Tokenizer(result.rules, pre).encode(alice).id_array
    assert hf.encode(alice.decode("utf-8")).ids == ours.tolist()


def test_cli_encode_decode_and_compress_with_rules(tmp_path, trained, alice):
    pre, result = trained
    rules = tmp_path / "a.rules"
    rules.write_bytes(dump_rules(result.rules, {"config": {"pretokenizer": {"name": pre}}}))
    text = tmp_path / "t.txt"
    text.write_bytes(read("udhr_cmn_hans.txt") + alice[:2000])
    for fmt in ("u32", "text"):
        ids, back = tmp_path / f"ids.{fmt}", tmp_path / f"back.{fmt}"
        assert main(["encode", str(text), "--rules", str(rules), "--format", fmt, "-o", str(ids)]) == 0
        assert main(["decode", str(ids), "--rules", str(rules), "--format", fmt, "-o", str(back)]) == 0
        assert back.read_bytes() == text.read_bytes()
    archive = tmp_path / "t.cpz"
    assert main(["compress", str(text), "--rules", str(rules), "-o", str(archive)]) == 0
    assert main(["decompress", str(archive), "-o", str(tmp_path / "t.out")]) == 0
    assert (tmp_path / "t.out").read_bytes() == text.read_bytes()


def test_cli_decode_rejects_bad_ids(tmp_path, capsys):
    rules = tmp_path / "a.rules"
    rules.write_bytes(dump_rules(np.array([[97, 98]]), {}))
    bad = tmp_path / "bad.txt"
    bad.write_text("97 98 999999")
    out = tmp_path / "o"
    assert main(["decode", str(bad), "--rules", str(rules), "--format", "text", "-o", str(out)]) != 0
    assert "symbol ids must lie in [0, 257)" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("coder", ["combinatorial", "varint-zstd"])
def test_archive_referencing_a_dictionary(tmp_path, trained, alice, capsys, coder):
    pre, result = trained
    rules = tmp_path / "a.rules"
    rules.write_bytes(dump_rules(result.rules, {"config": {"pretokenizer": {"name": pre}}}))
    other = tmp_path / "other.rules"
    other.write_bytes(dump_rules(result.rules[:-1], {"config": {"pretokenizer": {"name": pre}}}))
    text = tmp_path / "t.txt"
    text.write_bytes(alice[:30000])
    held, ref = tmp_path / "held.cpz", tmp_path / "ref.cpz"
    assert main(["compress", str(text), "--rules", str(rules), "--coder", coder, "-o", str(held)]) == 0
    assert main(["compress", str(text), "--rules", str(rules), "--rules-ref", "--coder", coder, "-o", str(ref)]) == 0
    assert ref.stat().st_size < held.stat().st_size  # the dictionary is not in the archive
    capsys.readouterr()
    out = tmp_path / "out.txt"
    assert main(["decompress", str(ref), "-o", str(out)]) == 4
    assert "references a dictionary of 1,500 rules" in capsys.readouterr().err and not out.exists()
    assert main(["decompress", str(ref), "--rules", str(other), "-o", str(out)]) == 4
    assert "not the dictionary this archive references" in capsys.readouterr().err and not out.exists()
    assert main(["decompress", str(ref), "--rules", str(rules), "-o", str(out)]) == 0
    assert out.read_bytes() == text.read_bytes()


def test_version_1_rules_files_still_load_and_version_2_carry_a_check():
    """Rules files written before the check (version 1) keep loading; new ones refuse a flip."""
    from chunkpress import FormatError
    from chunkpress.format.leb128 import encode_varints
    from chunkpress.format.rulesfile import load_rules

    rules = np.array([[97, 98], [256, 99]])
    meta = b'{"note":"v1"}'
    v1 = b"CPRL" + bytes([1]) + encode_varints([len(meta)]) + meta + encode_varints([2]) + encode_varints(rules.ravel())
    loaded, got = load_rules(v1)
    assert np.array_equal(loaded, rules) and got == {"note": "v1"}
    v2 = dump_rules(rules, {"note": "v2"})
    assert v2[4] == 2 and np.array_equal(load_rules(v2)[0], rules)
    for i in range(5, len(v2)):
        bad = bytearray(v2)
        bad[i] ^= 0x10
        with pytest.raises(FormatError):
            load_rules(bytes(bad))


def test_train_without_a_pretokenizer_never_merges_across_two_inputs_or_an_added_token(tmp_path):
    """Without pre-tokens the inputs are one text cut at their ends and at added tokens: the
    pair that would span them ("yz" across the files, "b<" into the token) is never merged."""
    (tmp_path / "a.txt").write_bytes(b"xy" + b" abab" * 50 + b"y")
    (tmp_path / "b.txt").write_bytes(b"z<s>" * 60)
    rules = tmp_path / "r.rules"
    files = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")] * 2  # "yz" spans two file ends
    assert main(["train", *files, "--scorer", "repair", "--special-token", "<s>", "--rules", str(rules), "-q"]) == 0
    tok = Tokenizer.from_rules_file(rules.read_bytes())
    spelled = [tok.decode_bytes([256 + r]) for r in range(len(tok.rules))]
    assert b"ab" in spelled and not any(b"<" in s or b">" in s or s.startswith(b"yz") for s in spelled)
    assert tok.encode(b"z<s>").ids[-1] == tok.vocab_size - 1  # the added token, whole


def test_compress_with_a_broken_rules_file_names_it(tmp_path, capsys):
    (tmp_path / "bad.rules").write_bytes(b"junk")
    (tmp_path / "t.txt").write_bytes(b"some text " * 20)
    assert main(["compress", str(tmp_path / "t.txt"), "--rules", str(tmp_path / "bad.rules"),
                 "-o", str(tmp_path / "t.cpz")]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"chunkpress: error: {tmp_path / 'bad.rules'}: not a chunkpress rules file (bad magic bytes)"]
    assert not (tmp_path / "t.cpz").exists()
