"""Frequency-ordered tokens as varints behind a general-purpose compressor (zstd, zlib, lzma).

Symbols are ranked by descending frequency (ties: smaller id first) and the string is written
as LEB128 varints of the ranks, so the most frequent symbols take one byte; the compressor then
models the byte stream. Everything the decoder needs is charged: the payload holds two frames,
the model (rule count, rules, rank table) and the string.

Payload (all integers LEB128): ``len(model frame)``, model frame, string frame, where the model
frame decompresses to ``R U N`` then 2R rule parts then the U symbol ids in rank order, and the
string frame to N ranks.
"""

from __future__ import annotations

import numpy as np
from chunkpress.plugin import (
    BYTE_SYMBOLS,
    Coder,
    FormatError,
    check_allocation,
    decode_varints,
    encode_varints,
    memory_limit,
)

from .backends import Backend, check_backend, family_class


def rank_table(symbols: np.ndarray, by_frequency: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(symbol ids by descending frequency, rank of each symbol in ``symbols``). With
    ``by_frequency=False`` the table keeps id order: the ablation without reordering."""
    if symbols.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ids, inverse, counts = np.unique(symbols, return_inverse=True, return_counts=True)
    order = np.lexsort((ids, -counts)) if by_frequency else np.arange(ids.size)
    rank_of = np.empty(ids.size, dtype=np.int64)
    rank_of[order] = np.arange(ids.size)
    return ids[order], rank_of[inverse]


def split_model(rules, symbols, by_frequency: bool = True) -> tuple[bytes, bytes]:
    """The two uncompressed frames: model (R, U, N, rules, rank table) and string (ranks)."""
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    symbols = np.asarray(symbols, dtype=np.int64)
    table, ranks = rank_table(symbols, by_frequency)
    head = encode_varints([len(rules), table.size, symbols.size])
    return head + encode_varints(rules.ravel()) + encode_varints(table), encode_varints(ranks)


def join_model(model: bytes, string: bytes, dictionary_size: int | None = None, max_symbols: int | None = None):
    """Inverse of :func:`split_model`, validating every count against the bytes present."""
    (r, u, n), pos = decode_varints(model, 3)
    if max_symbols is not None and n > max_symbols:
        raise FormatError(f"the string claims {n:,} symbols, more than the {max_symbols:,} bytes of output")
    check_allocation(f"a string of {n:,} symbols", 8 * int(n))
    flat, pos = decode_varints(model, 2 * int(r), pos)
    table, pos = decode_varints(model, int(u), pos)
    if pos != len(model):
        raise FormatError("model frame has trailing bytes")
    rules = flat.reshape(-1, 2)
    m = BYTE_SYMBOLS + int(r) if dictionary_size is None else int(dictionary_size)
    if table.size and (table.min() < 0 or table.max() >= m or np.unique(table).size != table.size):
        raise FormatError("rank table holds an invalid or repeated symbol")
    ranks, end = decode_varints(string, int(n))
    if end != len(string):
        raise FormatError("string frame has trailing bytes")
    if ranks.size and ranks.max() >= table.size:
        raise FormatError("string uses a rank beyond the rank table")
    return rules, table[ranks] if ranks.size else np.zeros(0, dtype=np.int64)


class VarintCoder(Coder):
    """Frequency-ordered varints behind a general-purpose compressor; subclasses name the
    :class:`~.backends.Backend` (see :func:`~.backends.backend_coders`)."""

    backend: Backend
    references_dictionary = True

    def __init__(self, params):
        super().__init__(params)
        check_backend(self.backend)
        self.by_frequency = params.order == "frequency"

    def compress(self, data: bytes) -> bytes:
        return self.backend.compress(data, self.params)

    def decompress(self, frame: bytes, max_size: int | None = None) -> bytes:
        limit = memory_limit()
        return self.backend.decompress(frame, self.params, limit if max_size is None else min(limit, max_size))

    def encode(self, rules, symbols, *, dictionary_size: int | None = None) -> bytes:
        """``dictionary_size``: the string uses an external dictionary (``rules`` is empty)."""
        model, string = split_model(rules, symbols, self.by_frequency)
        first = self.compress(model)
        return encode_varints([len(first)]) + first + self.compress(string)

    def frames(self, payload: bytes) -> tuple[bytes, bytes]:
        (size,), pos = decode_varints(payload, 1)
        if size > len(payload) - pos:
            raise FormatError("payload truncated: model frame extends past the end")
        return payload[pos : pos + size], payload[pos + size :]

    def decode(self, payload: bytes, *, dictionary_size: int | None = None, max_symbols: int | None = None):
        first, second = self.frames(payload)
        # a rank takes at most 10 LEB128 bytes, and the header's length bounds the symbols
        string_cap = None if max_symbols is None else 10 * max_symbols
        return join_model(self.decompress(first), self.decompress(second, string_cap), dictionary_size, max_symbols)

    def describe(self, payload: bytes, rules, symbols) -> dict:
        """Bytes per part as written: the model (rules + rank table) and the string."""
        _, second = self.frames(payload)
        return {"model_bytes": len(payload) - len(second), "string_bytes": len(second),
                "dictionary_bytes": len(payload) - len(second)}



def __getattr__(name: str):
    """The family's coder for each backend (VarintZstd, VarintLzma, ...), made on first use."""
    return family_class("varint", VarintCoder, name)
