"""A learned dictionary used on new text: encode/decode, held-out code length, HF export."""

import numpy as np
import pytest

from chunkpress.cli import main
from chunkpress.text.hf import from_hf_json, to_hf_json
from chunkpress.pipeline import Pipeline
from chunkpress.format.rulesfile import dump_rules
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
    assert np.array_equal(Tokenizer(result.rules, pre).encode(alice), result.symbols)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_encode_decode_is_identity(trained, name):
    pre, result = trained
    tok = Tokenizer(result.rules, pre)
    data = FIXTURES[name]  # includes bytes never seen in training (Arabic, Chinese, random)
    assert tok.decode(tok.encode(data)) == data


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
    rules, name = from_hf_json(to_hf_json(result.rules, pre))
    assert np.array_equal(rules, result.rules) and name == pre


def test_hf_tokenizers_gives_the_same_ids(trained, alice):
    tokenizers = pytest.importorskip("tokenizers")
    pre, result = trained
    hf = tokenizers.Tokenizer.from_str(to_hf_json(result.rules, pre))
    ours = Tokenizer(result.rules, pre).encode(alice)
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
