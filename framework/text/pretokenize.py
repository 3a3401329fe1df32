"""Pre-token boundaries: split text into words so that no merge crosses a word boundary.

The result is a ``breaks`` array (``breaks[i]`` true: no pair between bytes i and i + 1) that
the rewriters honour. Two splitters, both compiled, reading the bytes as UTF-8 and classifying
each code point as HF ``tokenizers`` does (its Unicode tables, shipped as data in
``unicodeclasses``, not the running Python's):

* ``gpt2`` — the GPT-2 pattern ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``:
  a single space before a word belongs to the word. It gives the same pre-tokens as HF's
  ByteLevel pre-tokenizer.
* ``whitespace`` — runs of whitespace and runs of non-whitespace are separate pre-tokens.
* ``metaspace`` — a pre-token starts at every space (U+0020), which it keeps: a word and the
  space before it, as sentencepiece cuts text (its ``▁``) and HF's Metaspace pre-tokenizer does
  (``split`` on, ``prepend_scheme`` never); nothing else splits.

Bytes that are not valid UTF-8 are each a character of class "other".
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

import numba
import numpy as np

from ..arrays import distinct
from .pretokenizers import NAMES, check_name
from .unicodeclasses import OTHER as _OTHER
from .unicodeclasses import SPACE as _SPACE
from .unicodeclasses import code_point_classes, code_point_scripts


@numba.njit(cache=True)
def _char_classes(data, table, invalid, cls, start):
    """Per byte: ``table``'s value of the code point it belongs to (``invalid``: a byte that is
    no UTF-8 character's), and whether it starts one."""
    n = data.size
    i = 0
    while i < n:
        b = data[i]
        length = 1
        cp = -1
        if b < 0x80:
            cp = b
        elif 0xC2 <= b <= 0xF4:
            length = 2 if b < 0xE0 else (3 if b < 0xF0 else 4)
            if i + length <= n:
                cp = b & (0x1F if length == 2 else (0x0F if length == 3 else 0x07))
                for k in range(1, length):
                    c = data[i + k]
                    if c & 0xC0 != 0x80:
                        cp = -1
                        break
                    cp = (cp << 6) | (c & 0x3F)
                # overlong forms, surrogates and values past U+10FFFF are not valid UTF-8
                if cp >= 0 and ((length == 3 and cp < 0x800) or (length == 4 and (cp < 0x10000 or cp > 0x10FFFF))
                                or 0xD800 <= cp <= 0xDFFF):
                    cp = -1
            if cp < 0:
                length = 1
        k = invalid if cp < 0 else table[cp]
        for j in range(length):
            cls[i + j] = k
            start[i + j] = j == 0
        i += length


@numba.njit(cache=True)
def _contraction(data, i, n):
    """Length of a GPT-2 contraction ('s 't 're 've 'm 'll 'd) at i (before n), or 0."""
    if data[i] != 39 or i + 1 >= n:
        return 0
    c = data[i + 1]
    if c == 115 or c == 116 or c == 109 or c == 100:  # s t m d
        return 2
    if i + 2 < n:
        d = data[i + 2]
        if (c == 114 and d == 101) or (c == 118 and d == 101) or (c == 108 and d == 108):  # re ve ll
            return 3
    return 0


@numba.njit(cache=True)
def _gpt2_piece(data, cls, start, breaks, lo, n):
    """The GPT-2 pattern over data[lo:n], a piece matched on its own."""
    i = lo
    while i < n:
        length = _contraction(data, i, n)
        if length:
            j = i + length
        elif cls[i] != _SPACE or (data[i] == 32 and i + 1 < n and cls[i + 1] != _SPACE):
            j = i + 1 if cls[i] == _SPACE else i
            k = cls[j]
            j += 1
            while j < n and cls[j] == k:
                j += 1
        else:
            j = i
            while j < n and cls[j] == _SPACE:
                j += 1
            if j < n and j - i > 1:
                # \s+(?!\S): the last white-space character goes with the next token
                j -= 1
                while not start[j]:
                    j -= 1
                if j == i:
                    j = i + 1
                    while j < n and not start[j]:
                        j += 1
        if j < n:
            breaks[j - 1] = True
        i = j


@numba.njit(cache=True)
def _gpt2_breaks(data, cls, start, breaks, ends):
    lo = np.int64(0)  # not a literal 0: one compiled _gpt2_piece, not two
    for e in ends:
        _gpt2_piece(data, cls, start, breaks, lo, e)
        lo = e


@numba.njit(cache=True)
def _whitespace_breaks(data, cls, start, breaks, ends):
    for i in range(data.size - 1):
        if (cls[i] == _SPACE) != (cls[i + 1] == _SPACE):
            breaks[i] = True


@numba.njit(cache=True)
def _metaspace_breaks(data, cls, start, breaks, ends):
    for i in range(data.size - 1):
        if data[i + 1] == 32:
            breaks[i] = True


SPLITTERS = {"gpt2": _gpt2_breaks, "whitespace": _whitespace_breaks, "metaspace": _metaspace_breaks}
assert ("none", *SPLITTERS) == NAMES, "a splitter is named in text/pretokenizers.py"


#: within :func:`classes_kept`: the classes worked out so far, by the id of the array read
_KEPT: ContextVar[dict | None] = ContextVar("chunkpress_char_classes", default=None)


@contextlib.contextmanager
def classes_kept():
    """Within: :func:`char_classes` of an array already read is not worked out again (the
    pre-tokenizer and a boundary policy both read the text; neither changes it)."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def char_classes(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(class, starts) per byte of ``data`` (uint8): the class (SPACE, LETTER, DIGIT, OTHER of
    :mod:`.unicodeclasses`) of the character the byte belongs to, as HF's pre-tokenizer reads
    UTF-8, and whether the byte starts that character (an invalid byte is one of class OTHER)."""
    kept = _KEPT.get()
    if kept is not None and id(data) in kept and kept[id(data)][0] is data:
        return kept[id(data)][1]
    cls = np.empty(data.size, dtype=np.int8)
    start = np.empty(data.size, dtype=np.bool_)
    _char_classes(data, code_point_classes(), _OTHER, cls, start)
    if kept is not None:
        kept[id(data)] = (data, (cls, start))  # the array too: its id is not reused while kept
    return cls, start


def char_scripts(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(script, starts) per byte of ``data`` (uint8): the Unicode script (a number of
    :func:`~.unicodeclasses.script_names`) of the character the byte belongs to, read as
    :func:`char_classes` reads UTF-8 (an invalid byte is one of script ``Unknown``), and
    whether the byte starts that character."""
    scripts = np.empty(data.size, dtype=np.uint8)
    start = np.empty(data.size, dtype=np.bool_)
    _char_classes(data, code_point_scripts(), np.uint8(0), scripts, start)
    return scripts, start


def pretoken_breaks(data, name: str, pieces=None, lines: bool = False) -> np.ndarray | None:
    """The ``breaks`` array of ``data`` under splitter ``name``; None (one word) for "none"
    unless the text is cut into pieces.

    ``pieces``: offsets where ``data`` is cut into texts pre-tokenized each on its own (HF
    splits at added tokens so; training, at the ends of its files); ``lines``: each line (its
    newline included) is such a piece, as HF's trainer reads files. A piece's end is always a
    break."""
    if check_name(name) == "none" and pieces is None and not lines:
        return None
    arr = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    ends = _piece_ends(arr, pieces, lines)
    if name == "none":
        if ends.size <= 1:
            return None
        breaks = np.zeros(arr.size, dtype=np.bool_)
        breaks[ends[:-1] - 1] = True
        return breaks
    cls, start = char_classes(arr)
    breaks = np.zeros(arr.size, dtype=np.bool_)
    SPLITTERS[name](arr, cls, start, breaks, ends)
    breaks[ends[:-1] - 1] = True
    return breaks


def _piece_ends(arr: np.ndarray, pieces, lines: bool) -> np.ndarray:
    """The sorted ends of the independent pieces, the last at ``arr.size``."""
    cuts = [np.asarray(pieces, dtype=np.int64)] if pieces is not None else []
    if lines:
        cuts.append(np.flatnonzero(arr == 10).astype(np.int64) + 1)
    ends = distinct(np.concatenate([*cuts, np.array([arr.size], dtype=np.int64)]))
    return ends[(ends > 0) & (ends <= arr.size)]


def split(data: bytes, name: str) -> list[bytes]:
    """The pre-tokens themselves (for inspection and tests)."""
    breaks = pretoken_breaks(data, name)
    if breaks is None:
        return [bytes(data)] if data else []
    cuts = np.flatnonzero(breaks) + 1
    edges = [0, *cuts.tolist(), len(data)]
    return [bytes(data[a:b]) for a, b in zip(edges, edges[1:], strict=False) if b > a]
