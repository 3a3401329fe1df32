"""The class of every code point for pre-tokenizing, as HF ``tokenizers`` classifies it.

HF's ByteLevel regex (``\\s``, ``\\p{L}``, ``\\p{N}``) runs on Oniguruma's Unicode tables, not on
the running Python's ``unicodedata``: Python 3.11 knows Unicode 14, the ``tokenizers`` release we
test against knows Unicode 16, so a letter added since (CJK Extension H, U+31350) split words
differently and ids drifted from HF's. The table is therefore data, shipped with the package
(``unicode_classes.txt``, 1,609 runs) and read the same on every Python; ``generate`` rebuilds
it from an installed ``tokenizers`` by asking its pre-tokenizer about every code point::

    python -c "from chunkpress.text.unicodeclasses import generate; generate()"

The table's Unicode version is recorded in rules files trained with a pre-tokenizer and
checked when they are loaded (``check_unicode_version``).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..errors import FormatError

SPACE, LETTER, DIGIT, OTHER = 0, 1, 2, 3
_LETTERS = "SLNO"  # the classes as the data file writes them
TABLE = Path(__file__).with_name("unicode_classes.txt")
SCRIPT_TABLE = Path(__file__).with_name("unicode_scripts.txt")
CODE_POINTS = 0x110000


def _runs(path: Path, values) -> tuple[str, np.ndarray, list[str], np.ndarray]:
    """(the Unicode version, each run's value, the header's names, each run's length) of a
    table file of runs: ``START VALUE`` lines (start in hex), ``values(value, names)`` the number
    a value stands for."""
    starts: list[int] = []
    found: list[int] = []
    version, names = "", []
    for line in path.read_text(encoding="ascii").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        key, value = line.split(maxsplit=1)
        if key == "unicode":
            version = value
            continue
        if key == "names":
            names = value.split()
            continue
        starts.append(int(key, 16))
        found.append(values(value, names))
    lengths = np.diff(np.array([*starts, CODE_POINTS]))
    return version, np.array(found), names, lengths


@functools.cache
def _read() -> tuple[str, np.ndarray]:
    version, classes, _, lengths = _runs(TABLE, lambda value, _: _LETTERS.index(value))
    table = np.repeat(classes.astype(np.int8), lengths)
    table.setflags(write=False)
    return version, table


@functools.cache
def _read_scripts() -> tuple[str, np.ndarray, tuple[str, ...]]:
    version, scripts, names, lengths = _runs(SCRIPT_TABLE, lambda value, names: names.index(value))
    table = np.repeat(scripts.astype(np.uint8), lengths)
    table.setflags(write=False)
    return version, table, tuple(names)


def code_point_classes() -> np.ndarray:
    """Class (SPACE, LETTER, DIGIT, OTHER) of every code point, read-only, 0x110000 entries."""
    return _read()[1]


def code_point_scripts() -> np.ndarray:
    """The Unicode script of every code point as a number, read-only, 0x110000 entries;
    :func:`script_names` names the numbers (``Unknown`` is 0)."""
    return _read_scripts()[1]


def script_names() -> tuple[str, ...]:
    """The names of the scripts of :func:`code_point_scripts`, by number (Unicode's long names:
    ``Latin``, ``Common``, ``Inherited``, ``Han``, ...)."""
    return _read_scripts()[2]


def unicode_version() -> str:
    """The Unicode version of the table (that of the ``tokenizers`` release it came from)."""
    return _read()[0]


def check_unicode_version(recorded, where: str = "rules file") -> None:
    """A FormatError when a rules file's pre-tokenizer ran on other Unicode tables than ours:
    its words, and so its ids, could differ from what it was trained on."""
    if recorded is None:
        return  # written before the version was recorded
    if recorded != unicode_version():
        raise FormatError(f"{where}: trained with Unicode {recorded} pre-tokenization; this chunkpress splits "
                          f"words by Unicode {unicode_version()}, so its ids could differ: train it again")


def _covered(pre_tokenizer, prefix: str, code_points: list[int]) -> np.ndarray:
    """For each code point c: does HF's pre-tokenizer put c in the same pre-token as ``prefix``
    in the text ``prefix + c + newline``? All code points in one call."""
    pieces, where, at = [], [], 0
    for c in code_points:
        piece = prefix + chr(c) + "\n"
        pieces.append(piece)
        where.append(at)
        at += len(piece)
    ends = {start: end for _, (start, end) in pre_tokenizer.pre_tokenize_str("".join(pieces))}
    return np.array([ends.get(w, -1) == w + len(prefix) + 1 for w in where])


def generate(path: Path = TABLE) -> None:
    """Write the table from the installed ``tokenizers`` (about a minute): a letter joins "a"
    (``\\p{L}+``), a digit joins "1" (``\\p{N}+``), other joins "!" (``[^\\s\\p{L}\\p{N}]+``),
    and what joins none is white space."""
    # the generator alone needs these: HF tokenizers (optional) is the table's source
    import unicodedata

    import tokenizers
    from tokenizers import pre_tokenizers

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    code_points = [c for c in range(CODE_POINTS) if not 0xD800 <= c <= 0xDFFF]  # surrogates: not text
    classes = np.full(CODE_POINTS, OTHER, dtype=np.int8)
    index = np.array(code_points)
    letter, digit, other = (_covered(byte_level, p, code_points) for p in ("a", "1", "!"))
    classes[index[letter]] = LETTER
    classes[index[digit & ~letter]] = DIGIT
    classes[index[~(letter | digit | other)]] = SPACE
    version = _newest_letter_version(classes)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(classes.astype(np.int16))) + 1])
    lines = ["# Pre-tokenizer classes of every code point, run starts in hex: S white space, L letter,",
             f"# N number, O other. Generated from HF tokenizers {tokenizers.__version__} by",
             f"# chunkpress.text.unicodeclasses.generate (Python's unicodedata: {unicodedata.unidata_version}).",
             f"unicode {version}"]
    lines += [f"{s:04X} {_LETTERS[classes[s]]}" for s in starts.tolist()]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    _read.cache_clear()


def generate_scripts(path: Path = SCRIPT_TABLE) -> None:
    """Write the script table from the installed ``regex`` (its ``\\p{Script=...}``), which
    only this generator needs, for the scripts the table's ``names`` line lists (Unicode's long
    names, ``Unknown`` first: a script Unicode adds is added there by hand); its Unicode
    version is the newest whose probe letter has a script."""
    import regex  # the table's source, not a dependency

    names = list(_read_scripts()[2])
    text = "".join(chr(c) for c in range(CODE_POINTS) if not 0xD800 <= c <= 0xDFFF)
    where = np.array([c for c in range(CODE_POINTS) if not 0xD800 <= c <= 0xDFFF])
    scripts = np.zeros(CODE_POINTS, dtype=np.uint8)
    for number, name in enumerate(names[1:], 1):
        for run in regex.finditer(r"\p{Script=" + name + "}+", text):
            scripts[where[run.start():run.end()]] = number
    version = next(v for v, c in _FIRST_LETTERS if scripts[c] != 0)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(scripts.astype(np.int16))) + 1])
    lines = ["# The Unicode script of every code point, run starts in hex. Generated from regex",
             f"# {regex.__version__} by chunkpress.text.unicodeclasses.generate_scripts.",
             f"unicode {version}", "names " + " ".join(names)]
    lines += [f"{s:04X} {names[scripts[s]]}" for s in starts.tolist()]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    _read_scripts.cache_clear()


#: a letter first assigned in each Unicode version, newest first: the newest one the generated
#: table classifies as a letter names its version
_FIRST_LETTERS = (("17.0.0", 0x1E6C0), ("16.0.0", 0x1C89), ("15.1.0", 0x2EBF0), ("15.0.0", 0x31350),
                  ("14.0.0", 0x0870))


def _newest_letter_version(classes: np.ndarray) -> str:
    for version, code_point in _FIRST_LETTERS:
        if classes[code_point] == LETTER:
            return version
    raise RuntimeError("the tokenizers release knows none of the probe letters")
