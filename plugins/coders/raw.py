"""Baselines for studies: a general-purpose compressor on the raw bytes, no dictionary.

``raw-ppmd`` puts a PPM-class model (pyppmd, an optional dependency) in the same tables.

The coder expands (rules, symbols) back to bytes and compresses those, so any learned rules
are discarded: pair it with ``max_rules = 0`` to skip learning. Payload: the compressor's
frame. Codecs ``chunkpress.raw-{zlib,lzma,zstd,bz2,ppmd}.v1``.
"""

from __future__ import annotations

import numpy as np
from chunkpress.plugin import STORED_CODEC, Coder, FormatError, expand, memory_limit

from .backends import Backend, check_backend, family_class


class RawCoder(Coder):
    """Expand to bytes, then compress; decode returns no rules and the bytes as symbols."""

    backend: Backend
    codes_bytes = True
    describes_from_payload = True  # bytes, no rules: sizes from the payload

    def __init__(self, params):
        super().__init__(params)
        check_backend(self.backend)

    def encode(self, rules, symbols, *, dictionary_size=None) -> bytes:
        return self.backend.compress(expand(rules, symbols), self.params)

    def decode(self, payload: bytes, *, dictionary_size=None, max_symbols=None):
        cap = memory_limit() if max_symbols is None else min(memory_limit(), max_symbols)
        data = self.backend.decompress(bytes(payload), self.params, cap)
        return np.zeros((0, 2), dtype=np.int64), np.frombuffer(data, dtype=np.uint8)  # bytes stay 1 byte each

    def describe(self, payload: bytes, rules, symbols) -> dict:
        return {"dictionary_bytes": 0, "string_bytes": len(payload)}


class StoredCoder(Coder):
    """The bytes as they are: what the compressor stores where no coder shrinks the data (a
    stored archive, container version 2, is read with this coder), and a baseline."""

    codec_id = STORED_CODEC
    codes_bytes = True
    describes_from_payload = True  # bytes, no rules: sizes from the payload

    def encode(self, rules, symbols, *, dictionary_size=None) -> bytes:
        return expand(rules, symbols)

    def decode(self, payload: bytes, *, dictionary_size=None, max_symbols=None):
        if max_symbols is not None and len(payload) > max_symbols:
            raise FormatError(f"stored payload of {len(payload):,} bytes, more than the header's length")
        return np.zeros((0, 2), dtype=np.int64), np.frombuffer(payload, dtype=np.uint8)

    def describe(self, payload: bytes, rules, symbols) -> dict:
        return {"dictionary_bytes": 0, "string_bytes": len(payload)}



def __getattr__(name: str):
    """The family's coder for each backend (RawZstd, RawLzma, ...), made on first use."""
    return family_class("raw", RawCoder, name)
