"""The fifth hostile round: searches that end whatever the scores, work bounded by the input
times the longest piece, memory checked before a vocabulary is built, and the models read from
elsewhere either encoded as their library does or refused in one line."""

import json
import math
import os
import signal
import struct
import subprocess
import sys
import time

import attrs
import numpy as np
import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from chunkpress.format.rulesfile import RulesFile
from support import FAST, read

TEXT = read("alice29.txt")
CUT = TEXT.index(b"\n", len(TEXT) * 4 // 5) + 1
LETTERS = np.random.default_rng(5).integers(97, 123, 200_000, dtype=np.uint8).tobytes()


@pytest.fixture(scope="module")
def unigram_rules(tmp_path_factory):
    """A small Unigram vocabulary with scores (likelihood), learned from alice29."""
    folder = tmp_path_factory.mktemp("unigram")
    (folder / "train.txt").write_bytes(TEXT[:CUT])
    rules = folder / "uni.rules"
    assert main(["train", str(folder / "train.txt"), "--learner", "unigram", "--pretokenizer", "metaspace",
                 "--vocab-size", "500", "--rules", str(rules), "-q"]) == 0
    return rules


def _cli(args, cwd, timeout=60):
    return subprocess.run([sys.executable, "-m", "chunkpress.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
@pytest.mark.parametrize("score", [-1e300, -1e301, -1.7e308, 1e31])
@pytest.mark.parametrize("segmenter", ["likelihood", "fewest-tokens"])
def test_scores_that_break_a_path_s_sum_are_refused_in_one_line(tmp_path, unigram_rules, score, segmenter):
    found = RulesFile.from_bytes(unigram_rules.read_bytes())
    crafted = tmp_path / "crafted.rules"
    crafted.write_bytes(attrs.evolve(found, scores=[score] * len(found.scores)).to_bytes())
    (tmp_path / "t.txt").write_text("hello world, said Alice\n")
    done = _cli(["encode", "t.txt", "--rules", "crafted.rules", "--segmenter", segmenter], tmp_path)
    assert done.returncode == 4
    assert "crafted.rules" in done.stderr and "score" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "t.txt.ids").exists()


@pytest.mark.parametrize("value", [-1e300, -np.inf, np.nan, -1.7e308])
def test_a_search_ends_and_cuts_every_unit_whatever_the_scores(value):
    """Past the load's check (a plugin's vocabulary, the API): the searches still end, and their
    tokens spell each unit."""
    from chunkpress.plugin import Vocabulary
    from chunkpress.plugins.segmenters.search import BestPair, FewestTokens, Likelihood

    pieces = [b"ab", b"abc", b"bca", b"cab"]
    tokens = [bytes([b]) for b in range(256)] + pieces
    spell = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum([len(t) for t in tokens])]).astype(np.int64)
    scores = np.full(len(tokens), value)
    vocab = Vocabulary.of_spellings(spell, starts, np.arange(len(tokens)), scores)
    units = [b"abcabcab", b"cabbca", b"x", b"abcabcabcabcabcab" * 20]
    buf = np.frombuffer(b"".join(units), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(u) for u in units])]).astype(np.int64)
    for segmenter in (Likelihood(), FewestTokens(), BestPair()):
        out = np.empty(buf.size, dtype=np.int64)
        counts = segmenter.segment(vocab, buf, offsets, out)
        for u, unit in enumerate(units):
            ids = out[offsets[u]:offsets[u] + counts[u]]
            assert b"".join(tokens[i] for i in ids.tolist()) == unit


def test_an_empty_scored_vocabulary_cuts_text_into_bytes():
    tok = Tokenizer.from_rules_file(RulesFile.learned(np.zeros((0, 2), dtype=np.int64),
                                                      {"pretokenizer": {"name": "metaspace"}},
                                                      segmenter="likelihood", vocabulary=[], scores=[]).to_bytes())
    assert tok.encode(b"hi there").ids == list(b"hi there")


def _plain_best_pair(unit: bytes, score_of: dict) -> list[bytes]:
    """sentencepiece's BPE inference as its papers state it: the adjacent pair spelling the
    best-scored piece joins, the leftmost among equals, until none does."""
    symbols = [bytes([b]) for b in unit]
    while True:
        best, at = -math.inf, -1
        for k in range(len(symbols) - 1):
            joined = symbols[k] + symbols[k + 1]
            if joined in score_of and score_of[joined] > best:
                best, at = score_of[joined], k
        if at < 0:
            return symbols
        symbols[at:at + 2] = [symbols[at] + symbols[at + 1]]


def test_best_pair_joins_as_the_plain_definition_does():
    from chunkpress.plugin import Vocabulary
    from chunkpress.plugins.segmenters.search import BestPair

    rng = np.random.default_rng(3)
    for _ in range(200):
        pieces = sorted({bytes(rng.integers(97, 100, size=rng.integers(2, 5)).tolist()) for _ in range(10)})
        scores = rng.integers(-5, 0, size=len(pieces)).astype(float)  # many ties: leftmost first
        score_of = dict(zip(pieces, scores.tolist(), strict=True))
        tokens = [bytes([b]) for b in range(256)] + pieces
        spell = np.frombuffer(b"".join(tokens), dtype=np.uint8)
        starts = np.concatenate([[0], np.cumsum([len(t) for t in tokens])]).astype(np.int64)
        vocab = Vocabulary.of_spellings(spell, starts, np.arange(len(tokens)),
                                        np.concatenate([np.full(256, -9.0), scores]))
        unit = bytes(rng.integers(97, 100, size=rng.integers(1, 30)).tolist())
        out = np.empty(len(unit), dtype=np.int64)
        count = BestPair().segment(vocab, np.frombuffer(unit, dtype=np.uint8), np.array([0, len(unit)]), out)[0]
        assert [tokens[i] for i in out[:count].tolist()] == _plain_best_pair(unit, score_of), unit


def test_best_pair_on_a_long_line_is_bounded_by_its_length():
    """200,000 letters in one unit: sentencepiece's agenda, not a rescan after every join."""
    from chunkpress.plugin import Vocabulary
    from chunkpress.plugins.segmenters.search import BestPair

    pieces = sorted({LETTERS[k:k + 2] for k in range(0, 4000, 7)} | {LETTERS[k:k + 3] for k in range(0, 4000, 11)})
    tokens = [bytes([b]) for b in range(256)] + pieces
    spell = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum([len(t) for t in tokens])]).astype(np.int64)
    vocab = Vocabulary.of_spellings(spell, starts, np.arange(len(tokens)), -np.arange(len(tokens), dtype=float))
    buf = np.frombuffer(LETTERS, dtype=np.uint8)
    out = np.empty(buf.size, dtype=np.int64)
    BestPair().segment(vocab, buf[:100], np.array([0, 100]), out)  # compiled before the clock
    began = time.process_time()
    count = BestPair().segment(vocab, buf, np.array([0, buf.size]), out)[0]
    assert time.process_time() - began < FAST
    assert b"".join(tokens[i] for i in out[:count].tolist()) == LETTERS


@pytest.mark.slow
@pytest.mark.parametrize(("learner", "text"), [("pathpiece", LETTERS[:50_000]), ("mdl-prune", b"a" * 1_000_000)])
def test_a_learner_on_one_long_line_is_bounded(tmp_path, learner, text):
    """The round's cases: PathPiece on 50 kB of random letters (over 300 s before), mdl-prune
    on 1 MB of one byte (over 300 s before): each well within the hostile bound."""
    (tmp_path / "line.txt").write_bytes(text)
    done = _cli(["train", "line.txt", "--learner", learner, "--pretokenizer", "metaspace", "--vocab-size", "300",
                 "--rules", "line.rules", "-q"], tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    tok = Tokenizer.from_file(tmp_path / "line.rules")
    assert tok.decode(tok.encode(text[:5000]).ids).encode() == text[:5000]


def test_unigram_on_more_characters_than_its_size_keeps_the_likeliest(tmp_path):
    """Random bytes hold thousands of distinct multi-byte characters, more than a size of 500
    allows: the most likely are kept, the rest spelled by their bytes (it exited 3 before,
    blaming the learner for too many tokens)."""
    data = np.random.default_rng(8).integers(0, 256, 100_000, dtype=np.uint8).tobytes()
    (tmp_path / "rand.bin").write_bytes(data)
    assert main(["train", str(tmp_path / "rand.bin"), "--learner", "unigram", "--pretokenizer", "metaspace",
                 "--vocab-size", "500", "--rules", str(tmp_path / "r.rules"), "-q"]) == 0
    tok = Tokenizer.from_file(tmp_path / "r.rules")
    assert tok.get_vocab_size() == 500
    assert tok.decode_bytes(tok.encode(data[:20_000]).ids) == data[:20_000]


def _encode_with(tmp_path, rules: np.ndarray, segmenter: str) -> subprocess.CompletedProcess:
    (tmp_path / "big.rules").write_bytes(RulesFile.learned(rules, {"pretokenizer": {"name": "none"}}).to_bytes())
    (tmp_path / "t.txt").write_bytes(b"hello aaaa world\n")
    env = dict(os.environ, CHUNKPRESS_MAX_MEMORY=str(10**9))
    return subprocess.run([sys.executable, "-m", "chunkpress.cli", "encode", "t.txt", "--rules", "big.rules",
                           "--segmenter", segmenter, "-o", "ids.txt", "--format", "text"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_long_search_ends_on_a_signal_with_no_output(tmp_path, unigram_rules, sig, code):
    """A search of 20 MB of letters in one line, by the likelihood segmenter, stopped after a
    second: the process ends within 2 s, exits 128 + the signal, and leaves no ids file."""
    (tmp_path / "line.txt").write_bytes(LETTERS * 100)
    run = subprocess.Popen([sys.executable, "-m", "chunkpress.cli", "encode", "line.txt", "--rules", str(unigram_rules),
                            "-o", "ids.bin"], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert run.poll() is None, "the search ended before the signal: make the line longer"
    sent = time.monotonic()
    run.send_signal(sig)
    _, err = run.communicate(timeout=30)
    assert time.monotonic() - sent < 2.0 and run.returncode == code, err
    assert len(err.strip().splitlines()) == 1 and not list(tmp_path.glob("ids*"))


@pytest.mark.slow
def test_tokens_doubled_past_the_longest_are_refused_for_a_search(tmp_path):
    """A few hundred bytes of rules defining a token of 2^24 bytes by doubling (it peaked at
    2.9 GB; a 1 MiB token made a search quadratic): a searched vocabulary is refused in one line
    naming the rules file; replaying the merges needs no trie and encodes."""
    rules = np.array([[97, 97]] + [[256 + k, 256 + k] for k in range(23)], dtype=np.int64)
    done = _encode_with(tmp_path, rules, "fewest-tokens")
    assert done.returncode == 4 and "big.rules: token" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "ids.txt").exists()
    replayed = Tokenizer.from_file(tmp_path / "big.rules").encode(b"hello aaaa world")
    assert replayed.ids == [104, 101, 108, 108, 111, 32, 257, 32, 119, 111, 114, 108, 100]


@pytest.mark.slow
def test_tokens_past_the_memory_limit_are_refused_before_the_trie(tmp_path):
    """3,900 tokens of 4,096 to 7,995 bytes, each one rule longer than the last: their trie
    would need more than the 1 GB limit, so the vocabulary is refused before it is built."""
    doubling = [[97, 97]] + [[256 + k, 256 + k] for k in range(11)]  # symbol 267: 4,096 a's
    chain = [[267 + k, 98] for k in range(3900)]
    done = _encode_with(tmp_path, np.array(doubling + chain, dtype=np.int64), "longest-prefix")
    assert done.returncode == 4 and "memory" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "ids.txt").exists()


def _unigram_json(scores, **model) -> str:
    vocab = [[f"<0x{b:02X}>", -20.0] for b in range(256)] + [[p, s] for p, s in scores]
    return json.dumps({"version": "1.0", "model": {"type": "Unigram", "unk_id": None, "byte_fallback": True,
                                                   "vocab": vocab, **model},
                       "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                                         "split": True}, "added_tokens": []})


@pytest.mark.parametrize(("doc", "says"), [
    (_unigram_json([("\u2581the", -2.0), ("he", -1e300)]), "score"),
    (_unigram_json([("\u2581the", -2.0), ("", -3.0)]), "empty"),
    (json.dumps({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]",
                           "continuing_subword_prefix": 5},
                 "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                                   "split": True}}), "continuing_subword_prefix"),
])
def test_an_hf_file_that_cannot_be_read_right_is_refused_in_one_line(tmp_path, capsys, doc, says):
    (tmp_path / "tokenizer.json").write_text(doc)
    assert main(["import-hf", str(tmp_path / "tokenizer.json"), "-o", str(tmp_path / "t.rules")]) != 0
    err = capsys.readouterr().err
    assert says in err and "tokenizer.json" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.rules").exists()


# -- sentencepiece models ----------------------------------------------------------------------


def _field(number: int, wire: int, payload: bytes) -> bytes:
    def varint(value: int) -> bytes:
        out = bytearray()
        while True:
            out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
            value >>= 7
            if not value:
                return bytes(out)
    return varint(number << 3 | wire) + (varint(len(payload)) + payload if wire == 2 else payload)


def _piece(text: str, score: float, kind: int) -> bytes:
    """A ModelProto piece field (repeated field 1 may come anywhere in the message)."""
    body = _field(1, 2, text.encode()) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, bytes([kind]))
    return _field(1, 2, body)


@pytest.fixture(scope="module")
def spm_models(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece")
    folder = tmp_path_factory.mktemp("spm")
    (folder / "train.txt").write_bytes(TEXT[:CUT])

    def train(name: str, kind: str, **settings) -> str:
        options = {"normalization_rule_name": "identity", "byte_fallback": True, "remove_extra_whitespaces": False,
                   "character_coverage": 1.0, "vocab_size": 800} | settings
        spm.SentencePieceTrainer.train(input=str(folder / "train.txt"), model_prefix=str(folder / name),
                                       model_type=kind, num_threads=1, minloglevel=2, **options)
        return str(folder / f"{name}.model")

    return spm, train


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
@pytest.mark.parametrize("setting", [{"split_by_whitespace": False}, {"treat_whitespace_as_suffix": True},
                                     {"allow_whitespace_only_pieces": True}])
def test_a_sentencepiece_setting_that_cuts_otherwise_is_refused_in_one_line(tmp_path, capsys, spm_models, kind,
                                                                             setting):
    _, train = spm_models
    model = train(f"{kind}-{next(iter(setting))}", kind, **setting)
    assert main(["import-spm", model, "-o", str(tmp_path / "m.rules")]) == 4
    err = capsys.readouterr().err
    assert next(iter(setting)) in err and model in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.rules").exists()


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_sentencepiece_pieces_of_unknown_types_a_meta_space_and_a_long_piece_read_as_sentencepiece_does(
        tmp_path, spm_models, kind):
    """A piece whose type sentencepiece does not know is a normal piece to it (proto2 reads an
    unknown enum value as the default); a literal ▁ in the text is a space to it; a piece of
    7,999 bytes, the longest sentencepiece loads, is read within the hostile bound, and one of
    16,000 is refused in one line, as sentencepiece refuses it."""
    spm, train = spm_models
    model = train(f"{kind}-plain", kind)
    data = open(model, "rb").read()
    long_piece = "\u2581" + "q" * 7_996
    crafted = tmp_path / "crafted.model"
    crafted.write_bytes(data + _piece("\u2581Alicewise", -1.0, 7) + _piece("zqj", -2.0, 0)
                        + _piece(long_piece, -30.0, 1))
    began = time.process_time()
    assert main(["import-spm", str(crafted), "-o", str(tmp_path / "m.rules"), "-q"]) == 0
    assert time.process_time() - began < FAST
    sp = spm.SentencePieceProcessor(model_file=str(crafted))
    tok = Tokenizer.from_file(tmp_path / "m.rules")
    lines = ["Alicewise zqj went", "a\u2581literal\u2581meta space", "plain text, said the Hatter",
             "q" * 16_000 + " " + "q" * 7_996]
    assert [e.ids for e in tok.encode_batch(lines)] == sp.encode(lines)
    (tmp_path / "longer.model").write_bytes(data + _piece("\u2581" + "q" * 16_000, -30.0, 1))
    assert main(["import-spm", str(tmp_path / "longer.model"), "-o", str(tmp_path / "l.rules"), "-q"]) == 4
    assert not (tmp_path / "l.rules").exists()


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_an_empty_sentencepiece_piece_is_refused_in_one_line(tmp_path, capsys, spm_models, kind):
    _, train = spm_models
    crafted = tmp_path / "empty.model"
    crafted.write_bytes(open(train(f"{kind}-plain", kind), "rb").read() + _piece("", -1.0, 1))
    assert main(["import-spm", str(crafted), "-o", str(tmp_path / "m.rules")]) == 4
    err = capsys.readouterr().err
    assert "empty" in err and "empty.model" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_model_of_many_pieces_is_refused_before_its_rules_outgrow_the_limit(tmp_path, spm_models):
    """200,000 random pieces, each of which needs a rule for every prefix: under a limit of
    250 MB the import is refused before it builds them (1.3 M such pieces peaked at 1.95 GB
    under a 1 GB limit, and wrote a rules file that no later use within it could read)."""
    _, train = spm_models
    rng = np.random.default_rng(4)
    words = {"\u2581Q" + "".join(chr(97 + c) for c in rng.integers(0, 26, rng.integers(3, 14))) for _ in range(200_000)}
    crafted = tmp_path / "many.model"
    crafted.write_bytes(open(train("unigram-plain", "unigram"), "rb").read()
                        + b"".join(_piece(w, -12.0, 1) for w in sorted(words)))
    env = dict(os.environ, CHUNKPRESS_MAX_MEMORY=str(250 * 10**6))
    done = subprocess.run([sys.executable, "-m", "chunkpress.cli", "import-spm", "many.model", "-o", "m.rules"],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 4 and "memory" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "m.rules").exists()


@pytest.mark.parametrize("learner", ["mdl-prune", "pathpiece", "unigram"])
def test_every_learner_refuses_empty_text_and_writes_nothing(tmp_path, capsys, learner):
    (tmp_path / "empty.txt").write_bytes(b"")
    assert main(["train", str(tmp_path / "empty.txt"), "--learner", learner, "--pretokenizer", "metaspace",
                 "--vocab-size", "300", "--rules", str(tmp_path / "e.rules")]) == 2
    assert "no text to learn from" in capsys.readouterr().err
    assert not (tmp_path / "e.rules").exists()


def test_a_huge_unknown_name_is_not_echoed_in_full(tmp_path, capsys, unigram_rules):
    (tmp_path / "t.txt").write_bytes(b"some text\n")
    name = "x" * 100_000
    assert main(["encode", str(tmp_path / "t.txt"), "--rules", str(unigram_rules), "--segmenter", name]) != 0
    err = capsys.readouterr().err
    assert "100,000 characters" in err and len(err) < 1000


@pytest.mark.parametrize("alpha", [0.5, 2.5, 1e300, 1e308])
def test_renyi_efficiency_of_any_order_is_computed_without_a_numpy_warning(alpha):
    import warnings

    from chunkpress.text.metrics import efficiency

    counts = np.array([5, 3, 2, 1, 1, 7])
    p = counts / counts.sum()
    plain = -math.log2(p.max()) if alpha > 1e100 else math.log2(float(np.sum(p ** alpha))) / (1 - alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert efficiency(counts, alpha) == pytest.approx(plain / math.log2(counts.size), rel=1e-12)
