"""Normalizers are a role: the built-ins (Unicode normal forms, lower case) registered as a
third party's would be; a vocabulary trained with one records it, encodes the text as it
rewrites it, and exports it as HF's normalizer; an archive takes none."""

import json
import textwrap
import types
import unicodedata

import pytest
from chunkpress import Compressor, ConfigError, Tokenizer
from chunkpress.cli import main
from chunkpress.plugin.registry import build_registry, default_registry
from support import read

#: full-width letters, a ligature, circled digits and a decomposed accent: each NFKC folds
ODD = "\uff28\uff45\uff4c\uff4c\uff4f \ufb01ne caf\u0065\u0301 \u2460\u2461 Caf\u00e9\n"
TEXT = (ODD * 20).encode() + read("alice29.txt")[:60_000]


@pytest.fixture(scope="module")
def nfkc(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nfkc")
    (folder / "t.txt").write_bytes(TEXT)
    assert main(["train", str(folder / "t.txt"), "--pretokenizer", "gpt2", "--vocab-size", "600", "--normalizer",
                 "nfkc", "--rules", str(folder / "t.rules"), "-q"]) == 0
    return folder


def test_the_built_in_normalizers_are_registered_and_rewrite_as_their_names_say():
    registry = default_registry()
    assert {"none", "nfc", "nfd", "nfkc", "nfkd", "lowercase"} <= set(registry.names("normalizer"))
    for name, rewrite in (("nfc", lambda s: unicodedata.normalize("NFC", s)),
                          ("nfkd", lambda s: unicodedata.normalize("NFKD", s)), ("lowercase", str.lower)):
        normalizer = registry.get("normalizer", name).build()
        assert normalizer.normalize(ODD.encode()) == rewrite(ODD).encode() and not normalizer.lossless
    assert registry.get("normalizer", "none").build().lossless
    # bytes that are not UTF-8 are kept as they are
    assert registry.get("normalizer", "nfkc").build().normalize(b"\xff\xfe\xef\xbc\xa1") == b"\xff\xfeA"


def test_a_vocabulary_trained_with_a_normalizer_encodes_the_normalized_text(nfkc):
    tok = Tokenizer.from_file(nfkc / "t.rules")
    assert tok.normalizer == "nfkc" and not tok.keeps_bytes
    folded = unicodedata.normalize("NFKC", ODD)
    assert tok.encode(ODD).ids == tok.encode(folded).ids
    assert tok.decode(tok.encode(ODD).ids) == folded
    assert tok.symbols(ODD.encode()).tolist() == tok.symbols(folded.encode()).tolist()
    # its rules were learned from the folded text: no token holds a full-width letter
    assert not any("\uff28" in token for token in tok.get_vocab())


def test_the_normalizer_exports_to_hf_and_imports_back(nfkc, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    assert main(["export-hf", str(nfkc / "t.rules"), "-o", str(tmp_path / "t.json"), "-q"]) == 0
    assert json.loads((tmp_path / "t.json").read_text())["normalizer"] == {"type": "NFKC"}
    ours = Tokenizer.from_file(nfkc / "t.rules")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    lines = (ODD + read("alice29.txt")[60_000:70_000].decode()).splitlines(keepends=True)
    assert [e.ids for e in hf.encode_batch(lines)] == [e.ids for e in ours.encode_batch(lines)]
    back = Tokenizer.from_hf_file(tmp_path / "t.json")
    assert back.normalizer == "nfkc" and back.encode(ODD).ids == ours.encode(ODD).ids


def test_an_archive_takes_no_normalizer(nfkc, tmp_path, capsys):
    with pytest.raises(ConfigError, match="rewrites the text"):
        Compressor(normalizer="nfkc")
    (tmp_path / "in.txt").write_bytes(TEXT[:5000])
    assert main(["compress", str(tmp_path / "in.txt"), "--rules", str(nfkc / "t.rules"), "-o",
                 str(tmp_path / "in.cpz")]) == 2
    err = capsys.readouterr().err
    assert "rewrites the text" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "in.cpz").exists()
    # the default names none, and a rules file without one is read as before
    assert main(["train", str(tmp_path / "in.txt"), "--pretokenizer", "gpt2", "--vocab-size", "300", "--rules",
                 str(tmp_path / "plain.rules"), "-q"]) == 0
    assert b"normalizer" not in (tmp_path / "plain.rules").read_bytes()


def test_the_hook_spec_example_normalizes():
    import chunkpress.plugin.hookspecs as hookspecs

    module = types.ModuleType("cp_test_normalizer_example")
    exec(textwrap.dedent(hookspecs.register_normalizers.__doc__.split("to ASCII::")[1]), module.__dict__)
    registry = build_registry(extra_plugins=[module], autoload=False)
    half = registry.get("normalizer", "half-width").build()
    assert half.normalize("\uff28\uff49 there".encode()) == b"Hi there"


def test_every_tokenizer_derived_from_a_normalizing_one_keeps_its_normalizer(nfkc, tmp_path, capsys):
    """Another segmenter, a vocabulary-size prefix (evaluate) and train --eval's held-out text
    all rewrite the text as the rules file says; a study, which codes archives, refuses one."""
    from chunkpress.text.metrics import evaluate

    tok = Tokenizer.from_file(nfkc / "t.rules")
    folded = unicodedata.normalize("NFKC", ODD)
    assert tok.with_segmenter("longest-prefix").normalizer == "nfkc"
    assert tok.with_segmenter("longest-prefix").encode(ODD).ids == tok.with_segmenter("longest-prefix").encode(folded).ids
    rows = evaluate(tok, {"odd": ODD.encode(), "folded": folded.encode()}, (400,))
    assert rows[0]["tokens"] == rows[1]["tokens"]
    (tmp_path / "held.txt").write_text(ODD)
    (tmp_path / "t.txt").write_bytes(TEXT)
    assert main(["train", str(tmp_path / "t.txt"), "--pretokenizer", "gpt2", "--vocab-size", "400", "--normalizer",
                 "nfkc", "--eval", str(tmp_path / "held.txt"), "--trace", str(tmp_path / "t.csv"), "-q"]) == 0
    from chunkpress.pipeline import Pipeline
    from chunkpress.study.runner import measure

    with pytest.raises(ConfigError, match="rewrites the text"):
        measure(Pipeline.from_config(None, pretokenizer="gpt2", normalizer="nfkc").config, None, TEXT,
                default_registry())
