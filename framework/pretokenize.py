"""Pre-token boundaries: split text into words so that no merge crosses a word boundary.

The result is a ``breaks`` array (``breaks[i]`` true: no pair between bytes i and i + 1) that
the rewriters honour. Two splitters, both compiled and working on raw bytes:

* ``gpt2`` — the GPT-2 pattern ``'s|'t|'re|'ve|'m|'ll|'d| ?L+| ?N+| ?[^\\sLN]+|\\s+(?!\\S)|\\s+``
  with letters L = ASCII letters and every byte >= 0x80 (so UTF-8 text outside ASCII forms
  words), digits N = 0-9. A single space before a word belongs to the word.
* ``whitespace`` — runs of whitespace and runs of non-whitespace are separate pre-tokens.
"""

from __future__ import annotations

import numba
import numpy as np

from chunkpress.errors import ConfigError

_SPACE, _LETTER, _DIGIT, _OTHER = 0, 1, 2, 3


def _classes() -> np.ndarray:
    cls = np.full(256, _OTHER, dtype=np.int8)
    cls[[9, 10, 11, 12, 13, 32]] = _SPACE
    cls[ord("A") : ord("Z") + 1] = _LETTER
    cls[ord("a") : ord("z") + 1] = _LETTER
    cls[0x80:] = _LETTER
    cls[ord("0") : ord("9") + 1] = _DIGIT
    return cls


BYTE_CLASS = _classes()


@numba.njit(cache=True)
def _contraction(data, i):
    """Length of a GPT-2 contraction ('s 't 're 've 'm 'll 'd) at i, or 0."""
    n = data.size
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
def _gpt2_breaks(data, cls, breaks):
    n = data.size
    i = 0
    while i < n:
        length = _contraction(data, i)
        if length:
            j = i + length
        elif cls[data[i]] != _SPACE or (data[i] == 32 and i + 1 < n and cls[data[i + 1]] != _SPACE):
            j = i + 1 if cls[data[i]] == _SPACE else i
            k = cls[data[j]]
            j += 1
            while j < n and cls[data[j]] == k:
                j += 1
        else:
            j = i
            while j < n and cls[data[j]] == _SPACE:
                j += 1
            if j < n and j - i > 1:
                j -= 1  # \s+(?!\S): the last space goes with the next token
        if j < n:
            breaks[j - 1] = True
        i = j


@numba.njit(cache=True)
def _whitespace_breaks(data, cls, breaks):
    for i in range(data.size - 1):
        if (cls[data[i]] == _SPACE) != (cls[data[i + 1]] == _SPACE):
            breaks[i] = True


SPLITTERS = {"gpt2": _gpt2_breaks, "whitespace": _whitespace_breaks}
NAMES = ("none", *SPLITTERS)


def pretoken_breaks(data, name: str) -> np.ndarray | None:
    """The ``breaks`` array of ``data`` under splitter ``name`` (None for "none")."""
    if name == "none":
        return None
    if name not in SPLITTERS:
        raise ConfigError(f"unknown pretokenizer {name!r}; available: {', '.join(NAMES)}")
    arr = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    breaks = np.zeros(arr.size, dtype=np.bool_)
    SPLITTERS[name](arr, BYTE_CLASS, breaks)
    return breaks


def split(data: bytes, name: str) -> list[bytes]:
    """The pre-tokens themselves (for inspection and tests)."""
    breaks = pretoken_breaks(data, name)
    if breaks is None:
        return [bytes(data)] if data else []
    cuts = np.flatnonzero(breaks) + 1
    edges = [0, *cuts.tolist(), len(data)]
    return [bytes(data[a:b]) for a, b in zip(edges, edges[1:]) if b > a]
