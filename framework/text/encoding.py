"""One encoded text, as HF ``tokenizers``' ``Encoding``: ids, tokens and offsets, as lists.

Offsets count characters when the text was a str (as HF's do) and bytes when it was bytes. A
token that holds part of a character (byte-level BPE splits some) spans that whole character;
a prefix space that ByteLevel inserted spans nothing. Where a normalizer rewrote the text and
says where each byte came from, offsets point into the text as given.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np


def char_offsets(arr: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Character offsets (n, 2) of tokens of ``lengths`` bytes that tile the UTF-8 ``arr`` one
    after the other: a token starts at the character that holds its first byte and ends after
    the one that holds its last (an empty token where it starts). One pass over the bytes."""
    out = np.empty((lengths.size, 2), dtype=np.int64)
    _char_offsets(arr, np.asarray(lengths, dtype=np.int64), out)
    return out


@numba.njit(cache=True)
def _char_offsets(arr, lengths, out):
    char = -1  # the character that holds the byte just read
    pos = 0
    for k in range(lengths.size):
        if lengths[k] == 0:  # the character of the next byte, or the count at the end
            out[k, 0] = out[k, 1] = char + 1 if pos >= arr.size or (arr[pos] & 0xC0) != 0x80 else char
            continue
        if (arr[pos] & 0xC0) != 0x80:
            char += 1
        out[k, 0] = char
        for p in range(pos + 1, pos + lengths[k]):
            if (arr[p] & 0xC0) != 0x80:
                char += 1
        out[k, 1] = char + 1
        pos += lengths[k]


def _in_characters(spans: np.ndarray, arr: np.ndarray) -> np.ndarray:
    """Byte spans (n, 2) of the UTF-8 ``arr`` as character spans, as :func:`char_offsets` gives
    them: a span starts at the character that holds its first byte and ends after the one that
    holds its last; an empty one sits at the character of the byte after it."""
    lead = (arr & 0xC0) != 0x80
    before = np.concatenate([[0], np.cumsum(lead)])  # characters that start before each offset
    starts = spans[:, 0]
    inside = starts < arr.size
    held = before[starts] - (inside & ~lead[np.minimum(starts, arr.size - 1)] if arr.size else 0)
    ends = np.where(spans[:, 1] > starts, before[spans[:, 1]], held)
    return np.stack([held, ends], axis=1)


def spaces_for_marks(data: bytes, origin: np.ndarray | None) -> tuple[bytes, np.ndarray]:
    """``data`` with each U+2581 (sentencepiece's space) a space, and where each byte came from:
    through ``origin`` (None: ``data`` is the text as given)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    origin = np.arange(arr.size + 1, dtype=np.int64) if origin is None else origin
    marks = np.flatnonzero((arr[:-2] == 0xE2) & (arr[1:-1] == 0x96) & (arr[2:] == 0x81))
    keep = np.ones(arr.size + 1, dtype=bool)
    keep[marks + 1] = keep[marks + 2] = False  # a mark's first byte becomes the space
    return data.replace("\u2581".encode(), b" "), origin[keep]


class Encoding:
    """``ids`` (list of int), ``tokens`` (HF's byte-level spelling of each, an added token as
    its text), ``offsets`` (list of (start, end)); ``id_array`` is the ids as int64 numpy.

    An encoding of a batch refers to the batch's arrays (``first:last`` of them, its offsets
    less ``base``, where its text starts) and reads its part when asked: a batch of short
    texts then costs one small object a text."""

    __slots__ = ("_ids", "_offsets", "_symbols", "_spell", "_first", "_last", "_base", "_id_list", "_tokens", "_origin",
                 "_original")

    def __init__(self, ids: np.ndarray, offsets: np.ndarray, spell: Callable[[np.ndarray, np.ndarray], list[str]],
                 symbols: np.ndarray | None = None, first: int = 0, last: int | None = None, base: int = 0,
                 origin: np.ndarray | None = None, original: bytes | None = None):
        """``origin``: where each byte of the normalized text came from in the text given (and
        its end), ``offsets`` then being byte offsets in the normalized text; ``original``: the
        text's UTF-8 when it was a str (given, or normalized where there is no ``origin``), whose
        offsets then count characters, byte ``offsets`` being turned when they are read."""
        self._ids = ids
        self._offsets = offsets
        self._symbols = ids if symbols is None else symbols  # what ``spell`` spells beside the ids
        self._spell = spell
        self._first = first
        self._last = ids.size if last is None else last
        self._base = base
        self._id_list: list[int] | None = None
        self._tokens: list[str] | None = None
        self._origin = origin
        self._original = original

    @property
    def id_array(self) -> np.ndarray:
        return self._ids[self._first:self._last]

    @property
    def ids(self) -> list[int]:
        if self._id_list is None:
            self._id_list = self.id_array.tolist()
        return self._id_list

    @property
    def tokens(self) -> list[str]:
        if self._tokens is None:
            self._tokens = self._spell(self.id_array, self._symbols[self._first:self._last])
        return self._tokens

    @property
    def offsets(self) -> list[tuple[int, int]]:
        found = self._offsets[self._first:self._last]
        placed = found[:, 0] >= 0  # a template's token (-1) spans nothing: (0, 0), as HF gives it
        out = np.zeros(found.shape, dtype=np.int64)
        found = found[placed] - self._base
        if self._origin is not None and self._origin.ndim == 2:  # each byte's source span
            found = np.stack([self._origin[found[:, 0], 0], self._origin[np.maximum(found[:, 1] - 1, 0), 1]], axis=1)
        elif self._origin is not None:
            found = self._origin[found]
        if self._original is not None:
            found = _in_characters(found, np.frombuffer(self._original, dtype=np.uint8))
        out[placed] = found
        return list(zip(out[:, 0].tolist(), out[:, 1].tolist(), strict=True))

    @property
    def attention_mask(self) -> list[int]:
        return [1] * len(self)

    @property
    def type_ids(self) -> list[int]:
        return [0] * len(self)

    @property
    def special_tokens_mask(self) -> list[int]:
        """1 for the tokens the post-processor put in (they span nothing), 0 for the text's."""
        return (self._offsets[self._first:self._last, 0] < 0).astype(int).tolist()

    def __len__(self) -> int:
        return self._last - self._first

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self)}, attributes=[ids, tokens, offsets, attention_mask])"
