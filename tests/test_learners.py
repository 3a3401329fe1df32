"""Learners: vocabularies learned top-down from word counts (Unigram LM, a third party's), written
as rules files that record their segmenter and scores, numbered as an embedding table's rows,
and measured against sentencepiece's trainer on the same words."""

import attrs
import numpy as np
import pytest
from chunkpress import Tokenizer
from chunkpress.cli import main
from chunkpress.format.expand import expand
from chunkpress.format.rulesfile import RulesFile
from chunkpress.pipeline import Pipeline
from chunkpress.plugin import BYTE_SYMBOLS, Learner, LearnerInfo, hookimpl
from chunkpress.plugin.registry import build_registry
from chunkpress.text.training import train
from chunkpress.text.vocabulary import rules_for_pieces, spellings
from support import read

TEXT = read("alice29.txt")
CUT = TEXT.index(b"\n", len(TEXT) * 4 // 5) + 1
TRAIN, HELD = TEXT[:CUT], TEXT[CUT:]


def _spaced(text: bytes) -> bytes:
    """Each line a sentence with sentencepiece's dummy prefix: its break becomes a space."""
    return text.replace(b"\r\n", b" ").replace(b"\n", b" ")


@pytest.fixture(scope="module")
def unigram(tmp_path_factory):
    """A Unigram LM of alice29's first four fifths (metaspace words, 1,000 tokens), by the CLI,
    from the plain file: a sentence a line, as sentencepiece reads it."""
    folder = tmp_path_factory.mktemp("unigram")
    (folder / "train.txt").write_bytes(TRAIN)
    rules = folder / "uni.rules"
    assert main(["train", str(folder / "train.txt"), "--learner", "unigram", "--pretokenizer", "metaspace",
                 "--vocab-size", "1000", "--rules", str(rules), "-q"]) == 0
    return rules


def test_a_unigram_rules_file_records_its_tokens_scores_and_segmenter(unigram):
    meta = RulesFile.from_bytes(unigram.read_bytes())
    assert meta.segmenter == "likelihood" and len(meta.vocabulary) == 1000 and len(meta.scores) == 1000
    assert all(s < 0 for s in meta.scores)
    tok = Tokenizer.from_file(unigram)
    assert tok.get_vocab_size() == 1000
    ids = tok.encode(HELD.decode("utf-8")).ids
    assert 0 <= min(ids) and max(ids) < 1000  # the tokens numbered 0..999, as an embedding table's rows
    assert tok.decode(ids) == HELD.decode("utf-8")
    spelled = {tok.id_to_token(i) for i in range(1000)}
    assert len(spelled) == 1000 and None not in spelled


def test_unigram_cuts_held_out_text_as_sentencepiece_s_trainer_does(unigram, tmp_path):
    """The same words, sentencepiece's settings: held-out tokens within 3% of sentencepiece
    unigram's at 1,000 tokens on a small text (the benchmark measures 8k and 16k), and each
    likelihood cut is the most likely under the file's own scores."""
    spm = pytest.importorskip("sentencepiece")
    (tmp_path / "train.txt").write_bytes(TRAIN)
    spm.SentencePieceTrainer.train(input=str(tmp_path / "train.txt"), model_prefix=str(tmp_path / "sp"),
                                   vocab_size=1000, model_type="unigram", normalization_rule_name="identity",
                                   byte_fallback=True, character_coverage=1.0, remove_extra_whitespaces=False,
                                   num_threads=1, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    lines = [line for line in HELD.decode("utf-8").splitlines() if line]
    theirs = sum(len(ids) for ids in sp.encode(lines))
    tok = Tokenizer.from_file(unigram)
    ours = sum(len(e.ids) for e in tok.encode_batch(lines))  # a space before each, as sentencepiece's prefix
    assert 0.95 * theirs < ours < 1.03 * theirs, (ours, theirs)


def test_rules_for_pieces_spell_every_piece_and_make_parts_first():
    rng = np.random.default_rng(5)
    words = [bytes(rng.integers(97, 101, size=rng.integers(2, 12)).tolist()) for _ in range(300)]
    pieces = sorted(set(words))
    rules, ids = rules_for_pieces(pieces)
    assert all(expand(rules, [int(i)]) == p for p, i in zip(pieces, ids, strict=True))
    assert (rules < np.arange(BYTE_SYMBOLS, BYTE_SYMBOLS + len(rules))[:, None]).all()  # parts made first


@attrs.frozen(kw_only=True)
class _Longest:
    longest: int = attrs.field(default=8, validator=attrs.validators.ge(2))


class _Words(Learner):
    """The hook spec's example: the most frequent whole words, cut by longest prefix."""

    segmenter = "longest-prefix"

    def learn(self, buf, offsets, counts, vocab_size, bottom_up):
        words = [buf[offsets[w]:offsets[w + 1]].tobytes() for w in range(counts.size)]
        order = np.argsort(-counts, kind="stable")
        kept = [words[w] for w in order if 1 < len(words[w]) <= self.params.longest]
        return kept[: vocab_size - BYTE_SYMBOLS], None


class _WordsPlugin:
    @hookimpl
    def register_learners(self):
        return [LearnerInfo(name="words", factory=_Words, params=_Longest, version="1", summary="whole words")]


def test_a_third_party_learner_trains_through_the_framework(tmp_path):
    registry = build_registry([_WordsPlugin()], autoload=False)
    (tmp_path / "t.txt").write_bytes(TRAIN)
    pipe = Pipeline.from_config(registry=registry, learner="words", pretokenizer="gpt2", limits={"max_rules": 300})
    trained = train(pipe, [str(tmp_path / "t.txt")])
    meta = trained.rules_file
    assert meta.segmenter == "longest-prefix" and len(meta.vocabulary) == 556 and meta.scores is None
    tok = Tokenizer(np.asarray(meta.rules), "gpt2", segmenter="longest-prefix", vocabulary=meta.vocabulary)
    held = HELD.decode("utf-8")
    assert tok.decode_bytes(tok.symbols(HELD)) == HELD
    assert " the" in {expand(meta.rules, [s]).decode() for s in tok.symbols(held.encode())}


@pytest.mark.parametrize("learner", ["unigram", "pathpiece", "mdl-prune"])
def test_a_sweep_is_one_pruning_run_whose_largest_size_is_a_lone_run_s(tmp_path, learner):
    """`train --vocab-size 400,700` writes a rules file a size; the largest is byte for byte
    the lone 700-token run's, the smaller one the same run's vocabulary of 400 on the way."""
    (tmp_path / "t.txt").write_bytes(TRAIN)
    common = ["train", str(tmp_path / "t.txt"), "--learner", learner, "--pretokenizer", "gpt2", "-q"]
    assert main([*common, "--vocab-size", "700,400", "--rules", str(tmp_path / "s.rules")]) == 0
    assert main([*common, "--vocab-size", "700", "--rules", str(tmp_path / "alone.rules")]) == 0
    assert (tmp_path / "s.700.rules").read_bytes() == (tmp_path / "alone.rules").read_bytes()
    small = RulesFile.from_bytes((tmp_path / "s.400.rules").read_bytes())
    assert len(small.vocabulary) == 400 and small.config["limits"]["max_rules"] == 400 - BYTE_SYMBOLS
    tok = Tokenizer.from_file(tmp_path / "s.400.rules")
    held = HELD.decode("utf-8")
    assert tok.decode(tok.encode(held).ids) == held
    larger = Tokenizer.from_file(tmp_path / "s.700.rules")
    assert larger.symbols(HELD).size < tok.symbols(HELD).size  # a larger vocabulary, fewer tokens
    assert not (tmp_path / "s.rules").exists()


def test_a_learner_without_a_sweep_of_its_own_learns_each_size(tmp_path):
    registry = build_registry([_WordsPlugin()], autoload=False)
    (tmp_path / "t.txt").write_bytes(TRAIN)
    pipe = Pipeline.from_config(registry=registry, learner="words", pretokenizer="gpt2", limits={"max_rules": 300})
    trained = train(pipe, [str(tmp_path / "t.txt")], vocab_sizes=[556, 400])
    assert sorted(trained.sweep) == [400, 556] and trained.rules_file is trained.sweep[556]
    alone = Pipeline.from_config(registry=registry, learner="words", pretokenizer="gpt2", limits={"max_rules": 144})
    assert trained.sweep[400].vocabulary == train(alone, [str(tmp_path / "t.txt")]).rules_file.vocabulary


@pytest.mark.parametrize(("args", "says"), [
    (["--vocab-size", "400,700"], "sweep"),  # merges: the smaller sizes are the prefixes
    (["--learner", "unigram", "--pretokenizer", "gpt2", "--vocab-size", "400,700", "--rules", "-"], "not stdout"),
])
def test_a_sweep_that_cannot_be_written_is_one_line(tmp_path, capsys, args, says):
    (tmp_path / "t.txt").write_bytes(TRAIN[:20000])
    assert main(["train", str(tmp_path / "t.txt"), *args]) == 5
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == [tmp_path / "t.txt"]


@pytest.mark.parametrize(("args", "code", "says"), [
    (["--learner", "nope", "--pretokenizer", "gpt2", "--vocab-size", "500"], 3, "unknown learner 'nope'"),
    (["--learner", "unigram", "--vocab-size", "500"], 2, "give a pre-tokenizer"),
    (["--learner", "unigram", "--pretokenizer", "gpt2"], 2, "--vocab-size"),
    (["--learner", "unigram", "--pretokenizer", "gpt2", "--vocab-size", "500", "--trace", "t.csv"], 5, "--trace"),
])
def test_a_learner_s_wrong_settings_are_one_line(tmp_path, capsys, args, code, says):
    (tmp_path / "t.txt").write_bytes(TRAIN[:20000])
    out = tmp_path / "r.rules"
    assert main(["train", str(tmp_path / "t.txt"), "--rules", str(out), *args]) == code
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize("kind", ["unigram", "longest-prefix"])
def test_hf_encodes_an_exported_search_vocabulary_as_we_do(unigram, tmp_path, kind):
    """A Unigram LM exports as HF's Unigram model, a longest-prefix vocabulary as HF's WordPiece
    (its continuation mark removed again on decode): HF's ids and text equal ours on held-out
    text in two scripts, with a literal ``##`` and runs of spaces."""
    tokenizers = pytest.importorskip("tokenizers")
    rules = unigram
    if kind == "longest-prefix":
        (tmp_path / "t.txt").write_bytes(TRAIN)
        rules = tmp_path / "lp.rules"
        assert main(["train", str(tmp_path / "t.txt"), "--pretokenizer", "gpt2", "--vocab-size", "1000",
                     "--segmenter", "longest-prefix", "--rules", str(rules), "-q"]) == 0
    out = tmp_path / "tokenizer.json"
    assert main(["export-hf", str(rules), "-o", str(out), "-q"]) == 0
    held = HELD.decode() + read("udhr_arb.txt").decode() + "  ## heading  \n"
    ours = Tokenizer.from_file(rules).encode(held).ids
    hf = tokenizers.Tokenizer.from_file(str(out))
    assert hf.encode(held).ids == ours and hf.decode(ours) == held


def test_a_fewest_tokens_vocabulary_is_not_exported_as_something_else(tmp_path, capsys):
    (tmp_path / "t.txt").write_bytes(TRAIN[:30000])
    rules = tmp_path / "ft.rules"
    assert main(["train", str(tmp_path / "t.txt"), "--pretokenizer", "gpt2", "--vocab-size", "400",
                 "--segmenter", "fewest-tokens", "--rules", str(rules), "-q"]) == 0
    assert main(["export-hf", str(rules), "-o", str(tmp_path / "x.json")]) != 0
    assert "fewest-tokens" in capsys.readouterr().err and not (tmp_path / "x.json").exists()


def _fewest(word: bytes, vocab: set[bytes]) -> int:
    best = [0] + [1 << 30] * len(word)
    for end in range(1, len(word) + 1):
        best[end] = min(best[start] + 1 for start in range(end) if word[start:end] in vocab or end - start == 1)
    return best[-1]


def test_pathpiece_charges_each_token_what_its_removal_costs():
    """The pruning's cost of a token that occurs once in a word is exactly how many more tokens
    the word's fewest-tokens cut needs without it (brute force over random vocabularies)."""
    from chunkpress.plugin import Vocabulary
    from chunkpress.plugins.learners.pathpiece import _costs

    rng = np.random.default_rng(11)
    for _ in range(300):
        alphabet = rng.integers(97, 100, size=3)
        word = bytes(rng.choice(alphabet, size=rng.integers(2, 14)).tolist())
        pieces = sorted({bytes(rng.choice(alphabet, size=rng.integers(2, 5)).tolist()) for _ in range(8)})
        tokens = [bytes([b]) for b in range(BYTE_SYMBOLS)] + pieces
        spell = np.frombuffer(b"".join(tokens), dtype=np.uint8)
        starts = np.concatenate([[0], np.cumsum([len(p) for p in tokens])]).astype(np.int64)
        trie = Vocabulary.of_spellings(spell, starts, np.arange(len(tokens)), np.zeros(len(tokens)))
        buf = np.frombuffer(word, dtype=np.uint8)
        cost = np.zeros(len(tokens), dtype=np.int64)
        work = [np.zeros(len(word) + 2, dtype=np.int64), np.zeros(len(word) + 2)] * 2
        total = _costs(buf, np.array([0, len(word)]), np.array([1]), trie.keys, trie.children, trie.token,
                       max(len(p) for p in tokens), cost, work[0], work[1],
                       np.zeros(len(word) + 2, dtype=np.int64), np.zeros(len(word) + 2),
                       np.zeros(len(word) + 2, dtype=np.int64))
        vocab = set(pieces)
        assert total == _fewest(word, vocab)
        for k, piece in enumerate(pieces):
            if sum(word[i:i + len(piece)] == piece for i in range(len(word))) == 1:
                assert cost[BYTE_SYMBOLS + k] == _fewest(word, vocab - {piece}) - total, (word, piece)


def test_pathpiece_learns_a_vocabulary_for_the_fewest_tokens(tmp_path):
    """Trained on alice29's first four fifths at 1,000 tokens, PathPiece cuts that text into
    fewer tokens than BPE's vocabulary of the same size does, by merges or by the fewest tokens,
    and its rules file names the fewest-tokens segmenter."""
    (tmp_path / "t.txt").write_bytes(TRAIN)
    counts = {}
    for name, extra in (("pathpiece", ["--learner", "pathpiece"]), ("bpe", [])):
        rules = tmp_path / f"{name}.rules"
        assert main(["train", str(tmp_path / "t.txt"), "--pretokenizer", "gpt2", "--vocab-size", "1000",
                     "--rules", str(rules), "-q", *extra]) == 0
        for segmenter in ("fewest-tokens",) if name == "pathpiece" else ("merges", "fewest-tokens"):
            tok = Tokenizer.from_file(rules, segmenter=segmenter)
            counts[name, segmenter] = tok.symbols(TRAIN).size
            assert tok.decode_bytes(tok.encode(HELD.decode()).ids) == HELD
    assert RulesFile.from_bytes((tmp_path / "pathpiece.rules").read_bytes()).segmenter == "fewest-tokens"
    assert counts["pathpiece", "fewest-tokens"] < min(counts["bpe", "merges"], counts["bpe", "fewest-tokens"]), counts


def test_import_hf_reads_unigram_and_wordpiece_tokenizers_back(unigram, tmp_path):
    """An exported Unigram or longest-prefix vocabulary imports to the same encoding; a Unigram
    that HF's own trainer learned (ByteLevel, every byte in its alphabet) encodes as HF does."""
    tokenizers = pytest.importorskip("tokenizers")
    held = HELD.decode() + read("udhr_arb.txt").decode() + "  ## heading  \n"
    exported = tmp_path / "uni.json"
    assert main(["export-hf", str(unigram), "-o", str(exported), "-q"]) == 0
    assert main(["import-hf", str(exported), "-o", str(tmp_path / "back.rules"), "-q"]) == 0
    back = Tokenizer.from_file(tmp_path / "back.rules")
    assert back.segmenter == "likelihood"
    assert back.encode(held).ids == Tokenizer.from_file(unigram).encode(held).ids

    from tokenizers import models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.Unigram())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    (tmp_path / "t.txt").write_bytes(TRAIN)
    hf.train([str(tmp_path / "t.txt")], trainers.UnigramTrainer(vocab_size=800, show_progress=False,
                                                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf.save(str(tmp_path / "hf_uni.json"))
    assert main(["import-hf", str(tmp_path / "hf_uni.json"), "-o", str(tmp_path / "hf_uni.rules"), "-q"]) == 0
    ours = Tokenizer.from_file(tmp_path / "hf_uni.rules")
    lines = held.splitlines(keepends=True)
    assert [e.ids for e in ours.encode_batch(lines)] == [e.ids for e in hf.encode_batch(lines)]


def test_import_hf_refuses_a_wordpiece_whose_continuations_are_tokens_of_their_own(tmp_path, capsys):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    (tmp_path / "t.txt").write_bytes(TRAIN)
    hf.train([str(tmp_path / "t.txt")], trainers.WordPieceTrainer(vocab_size=600, show_progress=False,
                                                                 special_tokens=["[UNK]"]))
    hf.save(str(tmp_path / "wp.json"))
    assert main(["import-hf", str(tmp_path / "wp.json"), "-o", str(tmp_path / "wp.rules")]) == 4
    err = capsys.readouterr().err
    assert "continues a word with an id of its own" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "wp.rules").exists()


def test_mdl_pruning_describes_its_training_text_in_fewer_bits_than_bpe(tmp_path):
    """mdl-prune starts from BPE's vocabulary four times the size and prunes by description
    length: at the same size its parse of the training text codes in fewer bits than BPE's."""
    from chunkpress.text.metrics import evaluate

    (tmp_path / "t.txt").write_bytes(TRAIN)
    bits = {}
    for name, extra in (("mdl-prune", ["--learner", "mdl-prune"]), ("bpe", [])):
        rules = tmp_path / f"{name}.rules"
        assert main(["train", str(tmp_path / "t.txt"), "--pretokenizer", "gpt2", "--vocab-size", "1000",
                     "--rules", str(rules), "-q", *extra]) == 0
        tok = Tokenizer.from_file(rules)
        assert tok.get_vocab_size() == 1000 and tok.decode_bytes(tok.encode(HELD.decode()).ids) == HELD
        bits[name] = evaluate(tok, {"train": TRAIN}, (), 2.5)[0]["code_length_bits"]
    assert RulesFile.from_bytes((tmp_path / "mdl-prune.rules").read_bytes()).segmenter == "likelihood"
    assert bits["mdl-prune"] < bits["bpe"], bits


@pytest.mark.parametrize("level", [6, 9])
def test_a_top_down_vocabulary_compresses_with_a_level_s_coder(unigram, tmp_path, level):
    """compress --rules takes a Unigram vocabulary (its tokens cut by likelihood, the ids the
    coder sees being its symbols) and the archive decodes to the input."""
    source = tmp_path / "in.txt"
    source.write_bytes(HELD + read("udhr_arb.txt"))
    archive = tmp_path / "out.cpz"
    assert main(["compress", str(source), f"-{level}", "--rules", str(unigram), "-o", str(archive), "-q"]) == 0
    assert main(["decompress", str(archive), "-o", str(tmp_path / "back"), "-q"]) == 0
    assert (tmp_path / "back").read_bytes() == source.read_bytes()



def test_a_metaspace_tokenizer_encodes_a_stream_as_the_whole(registry, monkeypatch):
    """A stream is encoded piece by piece, cut only before a space for metaspace words, whose
    line breaks stay inside them (merges learned across ``.\r\n`` apply in the stream too): the
    ids equal the whole text's."""
    import io

    import chunkpress.text.tokenizer as tokenizer_module

    fit = Pipeline.from_config(registry=registry, scorer="repair", pretokenizer="metaspace",
                               limits={"max_rules": 500}).fit(TEXT)
    tok = Tokenizer(fit.rules, "metaspace")
    assert any(b"\n" in spelled for spelled in spellings(fit.rules)[BYTE_SYMBOLS:])
    whole = tok.encode(TEXT.decode()).id_array
    monkeypatch.setattr(tokenizer_module, "DEFAULT_SHARD_SIZE", 1024)
    pieces = list(tok.ids_of_stream(io.BytesIO(TEXT)))
    assert len(pieces) > 10 and np.array_equal(np.concatenate(pieces), whole)


def test_metaspace_reads_a_plain_file_a_sentence_a_line(tmp_path):
    """A plain file trains the vocabulary that its lines, each after a space and no line break,
    train: sentencepiece's words, with no preprocessing (its trainer reads a line as a
    sentence with a dummy prefix); the tokenizer puts that space before each text it encodes
    and takes it off when it decodes."""
    lines = TRAIN.decode("utf-8").replace("\r", "").split("\n")
    (tmp_path / "plain.txt").write_text("\n".join(lines))
    (tmp_path / "spaced.txt").write_text("".join(" " + line for line in lines if line))
    for name in ("plain", "spaced"):
        assert main(["train", str(tmp_path / f"{name}.txt"), "--learner", "unigram", "--pretokenizer", "metaspace",
                     "--vocab-size", "600", "--rules", str(tmp_path / f"{name}.rules"), "-q"]) == 0
    plain, spaced = (RulesFile.from_bytes((tmp_path / f"{n}.rules").read_bytes()) for n in ("plain", "spaced"))
    # the spaced file is one sentence: one word more (its own dummy prefix), so the scores move a hair
    assert plain.vocabulary == spaced.vocabulary and np.allclose(plain.scores, spaced.scores, atol=1e-3)
    # no token holds a line break ("Ċ" in GPT-2's byte characters) with anything else
    assert not any("Ċ" in token and len(token) > 1 for token in Tokenizer.from_file(tmp_path / "plain.rules").get_vocab())
    tok = Tokenizer.from_file(tmp_path / "plain.rules")
    enc = tok.encode("Alice was beginning")
    assert enc.tokens[0].startswith("Ġ") and tok.decode(enc.ids) == "Alice was beginning"
