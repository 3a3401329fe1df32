"""Unigram's seeds as sentencepiece makes them: right-maximal substrings (its suffix array's
internal nodes) whose characters are of one Unicode script, read from the shipped script table."""

import numpy as np
import pytest
from chunkpress.plugin import char_scripts, script_names
from chunkpress.plugins.learners.seeds import seed_pieces
from chunkpress.plugins.learners.unigram import script_groups, train_unigram
from chunkpress.text.unicodeclasses import SCRIPT_TABLE, code_point_scripts
from chunkpress.text.wordcounts import count_words
from support import read


def _scripts_of(text: str) -> list[str]:
    scripts, starts = char_scripts(np.frombuffer(text.encode(), dtype=np.uint8))
    return [script_names()[s] for s in scripts[starts]]


def test_each_character_has_its_unicode_script():
    assert _scripts_of("a,1日ひカé\u0301Ω") == ["Latin", "Common", "Common", "Han", "Hiragana", "Katakana", "Latin",
                                                 "Inherited", "Greek"]
    scripts, starts = char_scripts(np.frombuffer(b"a\xff\xe6\x97", dtype=np.uint8))  # invalid bytes: Unknown
    assert scripts.tolist() == [script_names().index("Latin"), 0, 0, 0] and starts.all()
    table = code_point_scripts()
    assert table.shape == (0x110000,) and not table.flags.writeable and script_names()[0] == "Unknown"


def _table_of(path) -> np.ndarray:
    """The script of every code point as a table file's runs give it."""
    runs = [line.split() for line in path.read_text().splitlines() if line[:1] not in ("#", "u", "n")]
    starts = [int(start, 16) for start, _ in runs]
    numbers = [script_names().index(name) for _, name in runs]
    return np.repeat(numbers, np.diff([*starts, 0x110000]))


def test_the_script_table_is_regex_s():
    """Regenerated from the installed regex, the table agrees wherever both know a code point
    (a newer regex knows more of Unicode; nothing else may differ)."""
    pytest.importorskip("regex")
    import tempfile
    from pathlib import Path

    from chunkpress.text.unicodeclasses import generate_scripts

    with tempfile.TemporaryDirectory() as tmp:
        generate_scripts(Path(tmp) / "scripts.txt")
        regenerated = _table_of(Path(tmp) / "scripts.txt")
    shipped = code_point_scripts()
    assert np.array_equal(_table_of(SCRIPT_TABLE), shipped)
    differ = (regenerated != shipped) & (regenerated != 0) & (shipped != 0)
    assert not differ.any(), np.flatnonzero(differ)[:10]
    assert (regenerated == shipped).mean() > 0.99


def _seeds(words: dict[bytes, int], **kw) -> set[bytes]:
    buf = np.frombuffer(b"".join(words), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(w) for w in words])]).astype(np.int64)
    spell, starts, *_ = seed_pieces(buf, offsets, np.array(list(words.values()), dtype=np.int64), 1000, 16, **kw)
    return {spell[starts[t]:starts[t + 1]].tobytes() for t in range(starts.size - 1)}


def test_a_substring_always_followed_by_one_character_is_no_seed():
    words = {b" philadelphia": 5, b" phil": 3, b" delphi": 2}
    every = _seeds(words)
    maximal = _seeds(words, right_maximal=True)
    assert b" philadelphi" in every and b" philadelphi" not in maximal  # always followed by "a"
    assert {b" philadelphia", b" phil", b"delphi"} <= maximal  # a word's end, or two characters follow
    assert maximal < every


def test_a_seed_s_characters_are_of_one_script():
    words = {" cafe\u0301,".encode(): 4, " cafe\u0301s".encode(): 3, " 東京タワー".encode(): 3, " 東京,".encode(): 2}
    seeds = _seeds(words, right_maximal=True, grouping=script_groups)
    assert " cafe\u0301".encode() in seeds  # a combining mark joins its letter
    # no letter with punctuation (a combining mark alone joins any: sentencepiece's "\u0301," is valid)
    assert [s for s in seeds if b"," in s and len(s) > 1] == ["\u0301,".encode()]
    assert " 東京タワー".encode() in seeds  # Katakana and its prolonged sound mark count as Han
    assert not any(b" " in s[1:] for s in seeds)  # a space only leads


@pytest.mark.parametrize("name", ["alice29.txt", "udhr_cmn_hans.txt", "udhr_arb.txt"])
def test_unigram_pieces_are_valid_sentencepiece_pieces(name):
    text = read(name).replace(b"\r\n", b" ").replace(b"\n", b" ")
    words = count_words(text, "metaspace")
    pieces, _ = train_unigram(words.buf, words.offsets, np.asarray(words.counts), 1000)
    for piece in pieces:
        groups = script_groups(np.frombuffer(piece, dtype=np.uint8))
        _, starts = char_scripts(np.frombuffer(piece, dtype=np.uint8))
        joined = {g for g in groups[starts].tolist() if g >= 0}
        assert len(joined) <= 1 and -2 not in groups[starts][1:].tolist(), piece
