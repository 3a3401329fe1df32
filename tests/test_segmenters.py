"""Segmenters: a tokenizer's inference as a choice of its own (merges, longest prefix, fewest
tokens, likelihood), checked against plain Python on random vocabularies, recorded in rules
files, and usable by every command that cuts text."""

import numpy as np
import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from chunkpress.format.rulesfile import RulesFile
from chunkpress.testing import check_segmenter
from support import read


@pytest.mark.parametrize("name", ["longest-prefix", "fewest-tokens", "likelihood", "best-pair"])
def test_each_segmenter_cuts_as_its_plain_python_reference(name):
    """The kit plugin authors run: random vocabularies and units, the compiled search against
    brute force (fewest tokens, likelihood: every segmentation tried) or a greedy walk."""
    check_segmenter(name, cases=80)


@pytest.fixture(scope="module")
def bpe(tmp_path_factory):
    """A BPE vocabulary of alice29 (GPT-2's pre-tokens, 1,000 tokens), as train writes it."""
    path = tmp_path_factory.mktemp("bpe") / "alice.rules"
    assert main(["train", str(_alice(path.parent)), "--pretokenizer", "gpt2", "--vocab-size", "1000",
                 "--rules", str(path), "-q"]) == 0
    return path


def _alice(folder):
    path = folder / "alice.txt"
    if not path.exists():
        path.write_bytes(read("alice29.txt"))
    return path


def test_the_fewest_tokens_are_never_more_than_any_other_segmenter_s(bpe):
    """On held-out text, a shortest path is never longer than merge replay or greedy longest
    match (it is the minimum), and each spells the text back."""
    held = read("udhr_arb.txt") + read("gpl3.txt")
    counts = {}
    for name in ("merges", "longest-prefix", "fewest-tokens", "likelihood"):
        tokenizer = Tokenizer.from_file(bpe, segmenter=name)
        symbols = tokenizer.symbols(held)
        assert tokenizer.decode_bytes(symbols) == held, name
        counts[name] = symbols.size
    assert counts["fewest-tokens"] == min(counts.values()) and counts["fewest-tokens"] < counts["merges"]


def test_a_rules_file_records_its_segmenter_and_an_older_reader_refuses_it(bpe, tmp_path):
    """train --segmenter writes it into the rules file (version 4: a version-3 reader would
    replay the merges); training's symbol counts are there for the likelihood segmenter."""
    out = tmp_path / "lp.rules"
    assert main(["train", str(_alice(tmp_path)), "--pretokenizer", "gpt2", "--vocab-size", "1000",
                 "--segmenter", "longest-prefix", "--rules", str(out), "-q"]) == 0
    data = out.read_bytes()
    assert data[4] == 4 and RulesFile.from_bytes(data).segmenter == "longest-prefix"
    assert Tokenizer.from_file(out).segmenter == "longest-prefix"
    assert bpe.read_bytes()[4] == 2  # merges replayed: readable by older versions, as before
    meta = RulesFile.from_bytes(bpe.read_bytes())
    assert len(meta.counts) == 1000 and sum(meta.counts) > 0


@pytest.mark.parametrize("level", [6, 9, 3])
def test_every_segmenter_round_trips_through_a_level_s_coder(bpe, tmp_path, level):
    data = read("udhr_arb.txt")
    source = tmp_path / "in.txt"
    source.write_bytes(data)
    for name in ("merges", "longest-prefix", "fewest-tokens", "likelihood", "best-pair"):
        archive = tmp_path / f"{name}.cpz"
        assert main(["compress", str(source), f"-{level}", "--rules", str(bpe), "--segmenter", name, "-o",
                     str(archive), "-q", "-f"]) == 0
        assert main(["decompress", str(archive), "-o", str(tmp_path / "back"), "-q", "-f"]) == 0
        assert (tmp_path / "back").read_bytes() == data, (level, name)


def test_encode_and_evaluate_take_a_segmenter_and_bad_ones_are_one_line(bpe, tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_bytes(read("gpl3.txt"))
    assert main(["evaluate", str(bpe), str(text), "--segmenter", "merges,fewest-tokens", "--json"]) == 0
    import json

    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["segmenter"] for r in rows] == ["merges", "fewest-tokens"] and rows[1]["tokens"] < rows[0]["tokens"]
    ids = tmp_path / "ids.txt"
    assert main(["encode", str(text), "--rules", str(bpe), "--segmenter", "fewest-tokens", "--format", "text",
                 "-o", str(ids)]) == 0
    assert len(ids.read_text().split()) == rows[1]["tokens"]
    assert main(["encode", str(text), "--rules", str(bpe), "--segmenter", "shortest", "-o", str(tmp_path / "x")]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--segmenter" in err[0] and "fewest-tokens" in err[0] and not (tmp_path / "x").exists()
    bare = tmp_path / "bare.rules"  # a dictionary without training counts: no likelihood to search by
    meta = RulesFile.from_bytes(bpe.read_bytes())
    bare.write_bytes(RulesFile(rules=meta.rules, config=meta.config, unicode=meta.unicode).to_bytes())
    assert main(["encode", str(text), "--rules", str(bare), "--segmenter", "likelihood", "-o", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "likelihood" in err[0] and "log-probabilities" in err[0]


def test_plugins_lists_the_segmenters(capsys):
    assert main(["plugins", "--json"]) == 0
    import json

    listed = {(p["role"], p["name"]) for p in json.loads(capsys.readouterr().out)}
    assert {("segmenter", n) for n in ("merges", "longest-prefix", "fewest-tokens", "likelihood")} <= listed


def test_a_vocabulary_s_trie_finds_each_token_and_nothing_else():
    from chunkpress.plugin import Vocabulary, trie_child

    rules = np.array([[97, 98], [256, 99], [100, 100]])  # ab, abc, dd
    vocab = Vocabulary.of(rules, np.array([257, 258]), np.array([-1.0, -2.0]))
    node = 0
    for byte in b"abc":
        node = trie_child(vocab.keys, vocab.children, node, byte)
    assert vocab.token[node] == 257 and vocab.logp[node] == -1.0
    ab = trie_child(vocab.keys, vocab.children, trie_child(vocab.keys, vocab.children, 0, 97), 98)
    assert vocab.token[ab] == -1  # "ab" is a prefix in the trie, not a token of this vocabulary
    assert trie_child(vocab.keys, vocab.children, 0, 122) >= 0  # every byte is a token
    assert trie_child(vocab.keys, vocab.children, ab, 100) == -1
