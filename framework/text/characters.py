"""The characters of a text's bytes: each byte's Unicode class (or script) and whether it starts
its character, read as HF ``tokenizers`` reads UTF-8 (its Unicode tables, shipped as data in
:mod:`.unicodeclasses`, not the running Python's); a byte that is not valid UTF-8 is a
character of its own, of class "other". The pre-tokenizers and the boundary policies read them."""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

import numba
import numpy as np

from .unicodeclasses import OTHER as _OTHER
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
