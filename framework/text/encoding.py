"""One encoded text, as HF ``tokenizers``' ``Encoding``: ids, tokens and offsets, as lists.

Offsets count characters when the text was a str (as HF's do) and bytes when it was bytes. A
token that holds part of a character (byte-level BPE splits some) spans that whole character;
a prefix space that ByteLevel inserted spans nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def char_index(arr: np.ndarray) -> np.ndarray:
    """For each byte of the UTF-8 ``arr`` (uint8), the character it belongs to, and one entry
    more: the number of characters (where an offset at the end lands)."""
    char_at = np.cumsum((arr & 0xC0) != 0x80) - 1
    return np.concatenate([char_at, [char_at[-1] + 1 if arr.size else 0]])


def char_offsets(data: bytes, offsets: np.ndarray, char_at: np.ndarray | None = None) -> np.ndarray:
    """Byte offsets (n, 2) into the UTF-8 ``data`` as character offsets: a token starts at the
    character that holds its first byte and ends after the one that holds its last (an empty
    token where it starts). ``char_at``: ``char_index`` of ``data``, where the caller has it."""
    if offsets.size == 0:
        return offsets
    if char_at is None:
        char_at = char_index(np.frombuffer(data, dtype=np.uint8))
    start = char_at[offsets[:, 0]]
    end = np.where(offsets[:, 1] > offsets[:, 0], char_at[np.maximum(offsets[:, 1] - 1, 0)] + 1, start)
    return np.stack([start, end], axis=1)


class Encoding:
    """``ids`` (list of int), ``tokens`` (HF's byte-level spelling of each, an added token as
    its text), ``offsets`` (list of (start, end)); ``id_array`` is the ids as int64 numpy."""

    __slots__ = ("id_array", "_offsets", "_spell", "_ids", "_tokens")

    def __init__(self, ids: np.ndarray, offsets: np.ndarray, spell: Callable[[], list[str]]):
        self.id_array = ids
        self._offsets = offsets
        self._spell = spell
        self._ids: list[int] | None = None
        self._tokens: list[str] | None = None

    @property
    def ids(self) -> list[int]:
        if self._ids is None:
            self._ids = self.id_array.tolist()
        return self._ids

    @property
    def tokens(self) -> list[str]:
        if self._tokens is None:
            self._tokens = self._spell()
        return self._tokens

    @property
    def offsets(self) -> list[tuple[int, int]]:
        return list(map(tuple, self._offsets.tolist()))

    @property
    def attention_mask(self) -> list[int]:
        return [1] * len(self)

    def __len__(self) -> int:
        return int(self.id_array.size)

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self)}, attributes=[ids, tokens, offsets, attention_mask])"
