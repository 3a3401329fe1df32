"""SuperBPE (a boundary policy) and Picky BPE (a deletion policy): the engine against a plain
Python BPE written from the papers' definitions, the rewriters against each other, encoding
against training, rules files, HF export, the trace, and bad settings."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import chunkpress
import numpy as np
import pytest
from chunkpress.engine.events import DELETED, OPENED, deletion_steps
from chunkpress.engine.linkedstring import LinkedString
from chunkpress.format.rulesfile import RulesFile
from chunkpress.pipeline import Pipeline
from chunkpress.plugins.rewriters.scan import ScanRewriter
from chunkpress.text.pretokenize import pretoken_breaks, split
from chunkpress.text.tokenizer import Tokenizer
from support import PlainBpe, read

TEXT = read("alice29.txt")[:30_000]


def _units(text: bytes) -> Counter:
    """SuperBPE's units by its definition: GPT-2 pre-tokens, a word (letters, at most one
    leading space) joined to the next when that is a space and letters."""
    def word(t):
        s = t.decode("utf-8", "replace")
        return s[1:].isalpha() if s.startswith(" ") else s.isalpha()

    units, current = Counter(), []
    for token in split(text, "gpt2"):
        if current and word(current[-1]) and token.startswith(b" ") and word(token):
            current.append(token)
        else:
            if current:
                units[tuple(current)] += 1
            current = [token]
    units[tuple(current)] += 1
    return units


def _plain(text: bytes, rules: int, join_after=None, tau=None) -> PlainBpe:
    units = _units(text) if join_after is not None else Counter((t,) for t in split(text, "gpt2"))
    bpe = PlainBpe({unit: n for unit, n in units.items()}, join_after=join_after, tau=tau)
    while bpe.vocabulary() < 256 + rules and bpe.step():
        pass
    return bpe


def _fit(rewriter="linked", **settings):
    return Pipeline.from_config(scorer="repair", rewriter=rewriter, pretokenizer="gpt2", **settings).fit(TEXT)


def test_superbpe_merges_as_the_definition_says_and_joins_words_after_t():
    fit = _fit(limits={"max_rules": 300}, superword_after=256 + 150)
    plain = _plain(TEXT, 300, join_after=150)
    assert fit.rules.tolist() == [list(r) for r in plain.rules]
    spelled = [Tokenizer(fit.rules).decode_bytes([256 + r]) for r in range(len(fit.rules))]
    across = [r for r, s in enumerate(spelled) if b" " in s[1:].strip()]
    assert across and min(across) >= 150  # words join only after the transition, and they do
    # the whole text with the reference rewriter (no word counts) learns the same
    assert _fit("scan", limits={"max_rules": 300}, superword_after=256 + 150).rules.tolist() == fit.rules.tolist()


def test_superbpe_stopped_by_its_scorer_before_the_transition_gives_the_texts_string():
    """MDL stops long before 20,000 rules: the run never regroups, and its string (learned on
    the words) is assembled into the text's, as encoding gives it."""
    pipe = Pipeline.from_config(scorer="mdl", pretokenizer="gpt2", superword_after=256 + 20_000)
    fit = pipe.fit(TEXT[:40_000])
    assert fit.stop_reason == "scorer" and len(fit.rules) < 20_000
    tokenizer = Tokenizer(fit.rules, "gpt2", boundary=pipe.policies()[0])
    assert np.array_equal(tokenizer.symbols(TEXT[:40_000]), fit.symbols)


def _joined_by_definition(text: bytes, pretokenizer: str) -> list[int]:
    """The boundaries SuperBPE opens, from its docstring: between a word (letters after at most
    one leading space) and a space-led word, and on both sides of a lone space between a word
    and an unspaced word (offsets of the byte before each)."""
    tokens = split(text, pretokenizer)
    ends = np.cumsum([len(t) for t in tokens]) - 1

    def kind(t):
        s = t.decode("utf-8", "replace")
        if s == " ":
            return "lone"
        body = s[1:] if s.startswith(" ") else s
        return ("spaced" if s.startswith(" ") else "word") if body.isalpha() else "other"

    kinds = [kind(t) for t in tokens]
    opened = set()
    for t in range(len(tokens) - 1):
        word = kinds[t] in ("word", "spaced")
        if word and kinds[t + 1] == "spaced":
            opened.add(int(ends[t]))
        if word and kinds[t + 1] == "lone" and t + 2 < len(tokens) and kinds[t + 2] == "word":
            opened.update((int(ends[t]), int(ends[t + 1])))
    return sorted(opened)


@pytest.mark.parametrize("pretokenizer", ["gpt2", "whitespace"])
@pytest.mark.parametrize("after", [0, 200, 40_000, 2**31 + 5])
def test_superbpe_opens_the_boundaries_its_definition_names(pretokenizer, after):
    from chunkpress.plugins.boundaries.superbpe import SuperBpe, SuperBpeParams

    text = (TEXT[:6000] + read("udhr_arb.txt")[:3000] + " 12 x  y z\t\u00e9t\u00e9 a b. c".encode()
            + read("udhr_cmn_hans.txt")[:1500] + b" end")
    arr = np.frombuffer(text, dtype=np.uint8)
    steps = SuperBpe(SuperBpeParams(after=after)).opening_steps(arr, pretoken_breaks(arr, pretokenizer))
    assert steps.shape == arr.shape and np.issubdtype(steps.dtype, np.signedinteger)
    breaks = pretoken_breaks(arr, pretokenizer)
    opened = np.flatnonzero((steps >= 0) & breaks).tolist()
    assert opened == _joined_by_definition(text, pretokenizer) and len(opened) > 100
    assert set(steps[opened].tolist()) == {after}  # held exactly, however large


def test_picky_merges_and_deletes_as_the_definition_says():
    fit = _fit(limits={"max_rules": 300}, picky=0.6)
    plain = _plain(TEXT, 300, tau=0.6)
    assert fit.rules.tolist() == [list(r) for r in plain.rules]
    assert fit.deletions.tolist() == [list(d) for d in plain.deletions] and len(fit.deletions) > 5
    assert fit.dictionary_size == 256 + 300  # deleted symbols free their places for more merges
    scanned = _fit("scan", limits={"max_rules": 300}, picky=0.6)
    assert scanned.rules.tolist() == fit.rules.tolist() and scanned.deletions.tolist() == fit.deletions.tolist()
    # tau = 1 removes nothing: plain BPE
    assert _fit(limits={"max_rules": 300}, picky=1.0).rules.tolist() == _fit(limits={"max_rules": 300}).rules.tolist()


def test_the_trace_shows_each_deletion_and_the_opening_as_a_row():
    fit = _fit(limits={"max_rules": 200}, picky=0.6, superword_after=256 + 100)
    rows = fit.trace
    deleted = rows[rows["s1"] == DELETED]
    assert deleted["s0"].tolist() == fit.deletions[:, 1].tolist() and (deleted["k01"] >= 0).all()
    opened = rows[rows["s1"] == OPENED]
    assert len(opened) == 1 and opened["k01"][0] > 100  # the boundaries between words
    merges = rows[rows["s1"] >= 0]
    assert len(merges) == len(fit.rules) + 1  # and the candidate that stopped the run


@pytest.mark.parametrize("settings", [{"superword_after": 256 + 300}, {"picky": 0.8},
                                      {"superword_after": 256 + 200, "picky": 0.8}])
def test_encoding_the_training_text_gives_the_training_string_and_held_out_text_round_trips(tmp_path, settings):
    text = read("alice29.txt")
    pipe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 1500}, **settings)
    fit = pipe.fit(text)
    tokenizer = Tokenizer(fit.rules, "gpt2", deletions=fit.deletions, boundary=pipe.policies()[0])
    assert np.array_equal(tokenizer.symbols(text), fit.symbols)
    # through a rules file (version 3), as `chunkpress encode` loads it
    rules = RulesFile.learned(fit.rules, pipe.config.to_dict(), unicode="16.0.0", deletions=fit.deletions.tolist() or None)
    data = rules.to_bytes()
    assert data[4] == 3
    loaded = Tokenizer.from_rules_file(data)
    for sample in (read("udhr_arb.txt"), read("udhr_cmn_hans.txt"), text[::-1][:20_000]):
        ids = loaded.encode(sample).ids
        assert loaded.decode_bytes(ids) == sample and ids == tokenizer.encode(sample).ids
    assert np.array_equal(loaded.symbols(text), fit.symbols)


@pytest.mark.parametrize(("scorer", "name", "after", "rules", "later"), [
    ("repair", "alice29.txt", 300, 1200, 0), ("length-max", "alice29.txt", 150, 700, 0),
    ("mdl", "udhr_arb.txt", 60, None, 0), ("repair", "alice29.txt", 300, 1200, 45)])
def test_superbpe_learned_in_two_stages_is_the_one_run_of_the_engine(monkeypatch, scorer, name, after, rules, later):
    """Word counts up to the transition, then the units as the symbols those rules made: the
    rules, final string and trace of one engine run over the units (with the string's room
    made small, so that loading after merges and opening grow it as they go). ``later``: the
    boundaries after a byte of odd value open that many rules after the others (two openings,
    their boundaries interleaved in the text)."""
    from chunkpress.engine.learner import fit
    from chunkpress.text.units import inside_units
    from chunkpress.text.wordcounts import count_words

    monkeypatch.setattr(LinkedString, "initial_slots", 64)
    monkeypatch.setattr(LinkedString, "OPEN_ROOM", 16)
    text = read(name)
    pipe = Pipeline.from_config(scorer=scorer, pretokenizer="gpt2", superword_after=256 + after,
                                limits={"max_rules": rules})
    boundary = pipe.policies()[0]
    if later:
        class TwoSteps(type(boundary)):
            def opening_steps(self, data, breaks):
                steps = super().opening_steps(data, breaks)
                at = np.flatnonzero(steps >= 0)
                steps[at[data[at] % 2 == 1]] += later
                return steps

        boundary = TwoSteps(boundary.params)
        monkeypatch.setattr(pipe, "policies", lambda: (boundary, None))
    units = count_words(text, "gpt2", lines=True, boundary=boundary)
    staged = pipe.fit_words(units)
    breaks, opened = inside_units(boundary, units.buf, units.offsets, "gpt2")
    assert len(opened) == (2 if later else 1)
    weights = units.position_weights() if units.counts.max() > 1 else None
    whole = fit(units.buf, pipe._scorer(), pipe._build("rewriter"), pipe.config.limits, breaks=breaks,
                weights=weights, openings=opened)
    # the run went past the openings
    assert len(whole.rules) > after + later and (whole.trace["s1"] == OPENED).sum() == len(opened)
    assert staged.rules.tolist() == whole.rules.tolist() and staged.stop_reason == whole.stop_reason
    assert np.array_equal(staged.symbols, whole.symbols)
    for field in whole.trace.dtype.names:
        if field != "seconds":
            assert np.allclose(staged.trace[field], whole.trace[field], rtol=1e-12, equal_nan=True), field


def test_superbpe_encodes_long_words_and_long_units_as_training_parsed_them():
    """A pre-token and a unit each longer than the encoder's small array: replayed, still the
    training string."""
    from chunkpress.text.encoder import SHORT_UNIT

    long_word = b"x" * (SHORT_UNIT * 3) + b"yz"
    long_unit = b" ".join([b"tea", b"party"] * SHORT_UNIT)
    text = TEXT + b"\n" + long_word + b"\n" + long_unit + b".\n" + TEXT[:5_000]
    pipe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 800},
                                superword_after=256 + 300)
    fit = pipe.fit(text)
    tokenizer = Tokenizer(fit.rules, "gpt2", boundary=pipe.policies()[0])
    assert np.array_equal(tokenizer.symbols(text), fit.symbols)
    assert tokenizer.decode_bytes(tokenizer.encode(long_unit).ids) == long_unit


def test_the_encoders_long_unit_kernel_merges_as_its_short_unit_kernel():
    """The min tree over a linked list (any length) against the scan of a small array, on
    slices of real text with boundaries that open at several steps or never."""
    from chunkpress.text.encoder import NEVER, SHORT_UNIT, Encoder, merge_long_units, merge_short_units

    fit = _fit(limits={"max_rules": 600}, superword_after=256 + 200)
    encoder = Encoder(fit.rules, np.zeros((0, 2), dtype=np.int64))
    rng = np.random.default_rng(3)
    data = np.frombuffer(TEXT, dtype=np.uint8)
    lengths = rng.integers(1, SHORT_UNIT + 1, 300)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    starts = rng.integers(0, data.size - SHORT_UNIT, lengths.size)
    buf = np.concatenate([data[a:a + n] for a, n in zip(starts.tolist(), lengths.tolist(), strict=True)])
    gaps = rng.choice(np.array([0, 0, 0, 100, 200, 400, NEVER]), buf.size)
    for below in (NEVER, 300):
        outs = []
        for kernel in (merge_short_units, merge_long_units):
            out, out_len = np.zeros(buf.size, dtype=np.int64), np.zeros(lengths.size, dtype=np.int64)
            args = (buf, offsets, gaps, below, encoder.keys, encoder.vals, encoder.ranks)
            if kernel is merge_short_units:
                kernel(*args, encoder.deleted, encoder.pieces, out, offsets, out_len)
            else:
                kernel(*args, np.arange(lengths.size), out, offsets, out_len)
            outs.append([out[a:a + n].tolist() for a, n in zip(offsets[:-1].tolist(), out_len.tolist(), strict=True)])
        assert outs[0] == outs[1]
        assert sum(map(len, outs[0])) < buf.size  # merges happened


def test_a_plain_rules_file_stays_version_2():
    fit = _fit(limits={"max_rules": 50})
    assert RulesFile.learned(fit.rules, {"pretokenizer": {"name": "gpt2"}}).to_bytes()[4] == 2


def test_the_linked_string_and_the_scan_agree_through_deletions_and_openings():
    rng = np.random.default_rng(7)
    for _ in range(100):
        data = rng.choice(np.frombuffer(b"aab  ", np.uint8), int(rng.integers(5, 200)))
        breaks = pretoken_breaks(data, "whitespace")
        strings = [LinkedString(), ScanRewriter()]
        for s in strings:
            s.load(data, breaks)
        rules, deleted = [], []
        for step in range(10):
            s0, s1, k = strings[0].pairs()
            if not k.size:
                break
            pair = (int(s0[np.argmax(k)]), int(s1[np.argmax(k)]))
            reports = [s.apply(*pair) for s in strings]
            rules.append(pair)
            if step in (3, 6):
                symbol = 256 + int(rng.integers(0, len(rules)))
                if symbol not in dict(deleted).values():
                    deleted.append((len(rules) - 1, symbol))
                    event = deletion_steps(np.array(rules), np.array(deleted))[-1]
                    reports = [s.delete(event) for s in strings]
            if step == 5:
                reports = [s.open(np.flatnonzero(breaks[:-1])) for s in strings]
            assert _rows(reports[0].s0, reports[0].s1, reports[0].k01) == _rows(reports[1].s0, reports[1].s1,
                                                                                 reports[1].k01)
            assert strings[0].symbols().tolist() == strings[1].symbols().tolist()
            assert _rows(*strings[0].pairs()) == _rows(*strings[1].pairs())


def _rows(*columns) -> list:
    return sorted(zip(*[c.tolist() for c in columns], strict=True))


def test_superbpe_exports_to_hf_and_hf_encodes_as_we_do(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    text = read("alice29.txt")
    pipe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 1500},
                                superword_after=256 + 800)
    fit = pipe.fit(text)
    ours = Tokenizer(fit.rules, "gpt2", boundary=pipe.policies()[0])
    hf = tokenizers.Tokenizer.from_str(ours.to_hf_json())
    for sample in (text.decode(), read("udhr_arb.txt").decode(), read("udhr_cmn_hans.txt").decode(),
                   "Hello  world,\n the cat's 123 hats  sat on the mat.\r\n"):
        assert hf.encode(sample).ids == ours.encode(sample).ids


@pytest.mark.slow
def test_picky_refuses_hf_export_in_one_line(tmp_path):
    fit = _fit(limits={"max_rules": 300}, picky=0.6)
    rules = tmp_path / "p.rules"
    Tokenizer(fit.rules, "gpt2", deletions=fit.deletions).save(rules)
    proc = subprocess.run([sys.executable, "-m", "chunkpress.cli", "export-hf", str(rules), "-o", str(tmp_path / "p.json")],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and not (tmp_path / "p.json").exists()
    assert proc.stderr.count("\n") == 1 and "cannot split a token back" in proc.stderr and "p.rules" in proc.stderr


def _option(option: str, value: str) -> list[str]:
    """``--picky=-0.2`` as one argument: argparse reads a lone "-0.2" as an option (-0 ... -9 are levels)."""
    return [option + value] if value.startswith("=") else [option, value]


@pytest.mark.slow
@pytest.mark.parametrize("option, value, says", [
    ("--picky", "0", "tau"), ("--picky", "1.5", "tau"), ("--picky", "=-0.2", "tau"),
    ("--superword-after", "9000", "beyond the vocabulary"), ("--superword-after", "100", "above 256"),
])
def test_bad_settings_get_one_line_naming_the_option(tmp_path, option, value, says):
    src = tmp_path / "t.txt"
    src.write_bytes(TEXT)
    proc = subprocess.run([sys.executable, "-m", "chunkpress.cli", "train", str(src), "--scorer", "repair",
                           "--pretokenizer", "gpt2", "--vocab-size", "8192", *_option(option, value), "--rules",
                           str(tmp_path / "t.rules")], capture_output=True, text=True)
    assert proc.returncode != 0 and not (tmp_path / "t.rules").exists()
    assert proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr


def test_a_boundary_policy_needs_a_pre_tokenizer():
    with pytest.raises(chunkpress.ConfigError, match="pre-tokenizer"):
        Pipeline.from_config(scorer="repair", superword_after=1000)


def test_a_config_file_takes_the_shortcuts_and_the_sections(tmp_path):
    short = tmp_path / "short.toml"
    short.write_text('superword_after = 1256\npicky = 0.9\n[scorer]\nname = "repair"\n[pretokenizer]\nname = "gpt2"\n')
    long = tmp_path / "long.toml"
    long.write_text('[scorer]\nname = "repair"\n[pretokenizer]\nname = "gpt2"\n[boundary]\nname = "superbpe"\n'
                    'params = { after = 1000 }\n[deletion]\nname = "picky"\nparams = { tau = 0.9 }\n')
    a, b = (Pipeline.from_config(p).config.to_dict() for p in (short, long))
    assert a == b and a["boundary"] == {"name": "superbpe", "params": {"after": 1000}}
    assert json.dumps(Pipeline.from_config(scorer="repair").config.to_dict()).count("boundary") == 0
