"""Pre-tokens equal HF's for every assigned code point, whatever Python runs us."""

import unicodedata

import numpy as np
import pytest
from chunkpress.errors import FormatError
from chunkpress.text.pretokenize import split
from chunkpress.text.unicodeclasses import OTHER, check_unicode_version, code_point_classes, unicode_version

tokenizers = pytest.importorskip("tokenizers")

#: where each code point c is put: inside a word, after a digit, after a space, after an
#: apostrophe, at a line start, between spaces, after punctuation, doubled
CONTEXTS = {
    "inside a word": "ab{c}cd ",
    "after a digit": "7{c}8 ",
    "after a space": "x {c}",
    "after an apostrophe": "'{c}'s ",
    "at a line start": "\n{c}\n",
    "between spaces": "  {c}  ",
    "after punctuation": ".{c}!",
    "doubled": "{c}{c} ",
}


def _assigned() -> list[int]:
    """Every code point assigned in the table's Unicode version or in Python's (the table
    knows letters and digits Python does not; private use and surrogates are not text)."""
    classes = code_point_classes()
    return [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF
            and (classes[c] != OTHER or unicodedata.category(chr(c)) not in ("Cn", "Co", "Cs"))]


@pytest.fixture(scope="module")
def assigned() -> list[int]:
    return _assigned()


def _hf_lengths(pre_tokenizer, text: str) -> list[int]:
    """Pre-token lengths in bytes (ByteLevel spells one character per byte)."""
    return [len(token) for token, _ in pre_tokenizer.pre_tokenize_str(text)]


@pytest.mark.parametrize("context", CONTEXTS)
def test_every_assigned_code_point_splits_as_hf_splits_it(assigned, context):
    byte_level = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    text = "".join(CONTEXTS[context].format(c=chr(c)) for c in assigned)
    ours = [len(piece) for piece in split(text.encode(), "gpt2")]
    theirs = _hf_lengths(byte_level, text)
    if ours != theirs:
        at = next(i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b)
        offset = sum(ours[:at])
        raise AssertionError(f"{context}: first difference at byte {offset}: "
                             f"{text.encode()[offset - 8: offset + 12]!r}")


def test_the_whitespace_splitter_agrees_with_hf_split_on_white_space(assigned):
    pre = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"\s+"), behavior="isolated"),
        tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    text = "".join(f"a{chr(c)}b {chr(c)} \n" for c in assigned)
    assert [len(p) for p in split(text.encode(), "whitespace")] == _hf_lengths(pre, text)


def test_letters_newer_than_python_s_unicode_are_letters():
    """CJK Extension H (Unicode 15.0) and U+1C89 (16.0): letters to HF, unassigned to Python 3.11."""
    classes = code_point_classes()
    assert unicode_version() == "16.0.0"
    for c in (0x31350, 0x2EBF0, 0x1C89):
        assert classes[c] == 1, hex(c)
        assert split(f"ab {chr(c)}{chr(c)} x".encode(), "gpt2") == [b"ab", f" {chr(c)}{chr(c)}".encode(), b" x"]


def test_a_rules_file_of_other_unicode_tables_is_refused():
    check_unicode_version(unicode_version())
    check_unicode_version(None)  # written before the version was recorded
    with pytest.raises(FormatError, match="trained with Unicode 14.0.0 pre-tokenization.*train it again"):
        check_unicode_version("14.0.0")


def test_the_table_is_data_read_the_same_everywhere():
    """No unicodedata at run time: the classes come from the shipped file alone."""
    import chunkpress.text.characters as characters
    import chunkpress.text.unicodeclasses as unicodeclasses

    assert "unicodedata" not in vars(characters) and "unicodedata" not in vars(unicodeclasses)
    table = code_point_classes()
    assert table.shape == (0x110000,) and not table.flags.writeable
    assert np.bincount(table).tolist() == [25, 141028, 1911, 971148]


def test_the_character_classes_of_a_text_are_read_once_where_kept(monkeypatch):
    """Counting units reads the text's classes once for the pre-tokenizer and the boundary
    policy both (classes_kept); elsewhere, and for another array, they are read afresh."""
    from chunkpress.plugins.boundaries.superbpe import SuperBpe, SuperBpeParams
    from chunkpress.text import characters as pretokenize
    from chunkpress.text.wordcounts import count_words

    reads = []
    read = pretokenize._char_classes
    monkeypatch.setattr(pretokenize, "_char_classes", lambda data, *rest: reads.append(data.size) or read(data, *rest))
    text = "Alice was beginning to get very tired of sitting by her sister, caf\u00e9 au lait.\n".encode() * 40
    units = count_words(text, "gpt2", boundary=SuperBpe(SuperBpeParams(after=10)))
    assert reads == [len(text)] and (units.steps >= 0).any()
    arr = np.frombuffer(text, dtype=np.uint8)
    with pretokenize.classes_kept():
        first = pretokenize.char_classes(arr)
        assert pretokenize.char_classes(arr)[0] is first[0]
        other = pretokenize.char_classes(arr.copy())
        assert other[0] is not first[0] and np.array_equal(other[0], first[0])
    assert pretokenize.char_classes(arr)[0] is not first[0]
