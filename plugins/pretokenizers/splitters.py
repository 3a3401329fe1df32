"""The compiled pre-tokenizers: GPT-2's pattern, white-space runs and sentencepiece's spaces,
each reading the bytes as UTF-8 and classifying every code point as HF ``tokenizers`` does
(``chunkpress.plugin.char_classes``: its Unicode tables, shipped as data, not the running
Python's); a byte that is not valid UTF-8 is a character of class "other".

* ``gpt2`` — ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``:
  a single space before a word belongs to the word. It gives the same pre-tokens as HF's
  ByteLevel pre-tokenizer.
* ``whitespace`` — runs of white space and runs of the rest are separate words.
* ``metaspace`` — a word starts at every space (U+0020), which it keeps: a word and the space
  before it, as sentencepiece cuts text (its ``▁``) and HF's Metaspace pre-tokenizer does
  (``split`` on, ``prepend_scheme`` never); nothing else splits. A file is read for training
  as sentencepiece reads it, a sentence a line (``PreTokenizer.sentences``).
"""

from __future__ import annotations

import chunkpress.plugin as cp
import numpy as np

_SPACE = cp.SPACE


@cp.kernel
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


@cp.kernel
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


@cp.kernel
def _gpt2_breaks(data, cls, start, breaks, ends):
    lo = np.int64(0)  # not a literal 0: one compiled _gpt2_piece, not two
    for e in ends:
        _gpt2_piece(data, cls, start, breaks, lo, e)
        lo = e


@cp.kernel
def _whitespace_breaks(data, cls, start, breaks, ends):
    for i in range(data.size - 1):
        if (cls[i] == _SPACE) != (cls[i + 1] == _SPACE):
            breaks[i] = True


@cp.kernel
def _metaspace_breaks(data, breaks):
    for i in range(data.size - 1):
        if data[i + 1] == 32:
            breaks[i] = True


class Nothing(cp.PreTokenizer):
    """No cut: each piece of the text is one word."""

    def split(self, data, ends, breaks):
        pass


class GPT2(cp.PreTokenizer):
    def split(self, data, ends, breaks):
        cls, start = cp.char_classes(data)
        _gpt2_breaks(data, cls, start, breaks, ends)


class Whitespace(cp.PreTokenizer):
    def split(self, data, ends, breaks):
        cls, start = cp.char_classes(data)
        _whitespace_breaks(data, cls, start, breaks, ends)


class Metaspace(cp.PreTokenizer):
    sentences = True  # as sentencepiece reads a file

    def split(self, data, ends, breaks):
        _metaspace_breaks(data, breaks)
