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

import attrs
import numpy as np

from ...plugin.hookspecs import hookimpl
from ...plugin.descriptors import CoderInfo
from ...format import backends as frames
from ...errors import FormatError
from ...format.leb128 import decode_varints, encode_varints
from ...format.limits import check_allocation
from ...plugin.base import BYTE_SYMBOLS


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


def join_model(model: bytes, string: bytes, dictionary_size: int | None = None):
    """Inverse of :func:`split_model`, validating every count against the bytes present."""
    (r, u, n), pos = decode_varints(model, 3)
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


class VarintCoder:
    """Shared frame layout; subclasses say how a frame is compressed."""

    by_frequency = True

    def encode(self, rules, symbols, dictionary_size: int | None = None) -> bytes:
        """``dictionary_size``: the string uses an external dictionary (``rules`` is empty)."""
        model, string = split_model(rules, symbols, self.by_frequency)
        first = self.compress(model)
        return encode_varints([len(first)]) + first + self.compress(string)

    def frames(self, payload: bytes) -> tuple[bytes, bytes]:
        (size,), pos = decode_varints(payload, 1)
        if size > len(payload) - pos:
            raise FormatError("payload truncated: model frame extends past the end")
        return payload[pos : pos + size], payload[pos + size :]

    def decode(self, payload: bytes, dictionary_size: int | None = None):
        first, second = self.frames(payload)
        return join_model(self.decompress(first), self.decompress(second), dictionary_size)

    def describe(self, payload: bytes) -> dict:
        """Bytes per part as written: the model (rules + rank table) and the string."""
        first, second = self.frames(payload)
        return {"model_bytes": len(payload) - len(second), "string_bytes": len(second),
                "dictionary_bytes": len(payload) - len(second)}


def _level(low, high):
    return [attrs.validators.instance_of(int), attrs.validators.ge(low), attrs.validators.le(high)]


#: ``order = "id"`` writes the tokens in id order instead of frequency order (seed 3's
#: ablation). The decoder reads the table either way, so the byte format is the same.
_ORDER = attrs.field(default="frequency", validator=attrs.validators.in_(("frequency", "id")))


@attrs.frozen(kw_only=True)
class ZstdParams:
    level: int = attrs.field(default=19, validator=_level(1, 22))
    order: str = _ORDER


@attrs.frozen(kw_only=True)
class ZlibParams:
    level: int = attrs.field(default=9, validator=_level(0, 9))
    order: str = _ORDER


@attrs.frozen(kw_only=True)
class LzmaParams:
    preset: int = attrs.field(default=9, validator=_level(0, 9))
    extreme: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    order: str = _ORDER


@attrs.frozen(kw_only=True)
class Bz2Params:
    level: int = attrs.field(default=9, validator=_level(1, 9))
    order: str = _ORDER


@attrs.frozen(kw_only=True)
class PpmdParams:
    model_order: int = attrs.field(default=8, validator=_level(2, 64))
    memory_mb: int = attrs.field(default=256, validator=_level(1, 2048))
    order: str = _ORDER


class _Backend(VarintCoder):
    backend = ""

    def __init__(self, params):
        self.codec = frames.Compressor(self.backend, params)
        self.by_frequency = params.order == "frequency"

    def compress(self, data: bytes) -> bytes:
        return self.codec.compress(data)

    def decompress(self, frame: bytes) -> bytes:
        return self.codec.decompress(frame)


class VarintZstd(_Backend):
    backend = "zstd"


class VarintZlib(_Backend):
    backend = "zlib"


class VarintLzma(_Backend):
    backend = "lzma"


class VarintBz2(_Backend):
    backend = "bz2"


class VarintPpmd(_Backend):
    backend = "ppmd"


@hookimpl
def register_coders():
    return [
        CoderInfo(
            name="varint-zstd", codec_id="chunkpress.varint-zstd.v1", factory=VarintZstd,
            params=ZstdParams, version="1",
            summary="frequency-ordered ranks as LEB128 varints, then zstd (level 19)",
        ),
        CoderInfo(
            name="varint-zlib", codec_id="chunkpress.varint-zlib.v1", factory=VarintZlib,
            params=ZlibParams, version="1",
            summary="frequency-ordered ranks as LEB128 varints, then zlib (level 9)",
        ),
        CoderInfo(
            name="varint-lzma", codec_id="chunkpress.varint-lzma.v1", factory=VarintLzma,
            params=LzmaParams, version="1",
            summary="frequency-ordered ranks as LEB128 varints, then xz (preset 9e)",
        ),
        CoderInfo(
            name="varint-bz2", codec_id="chunkpress.varint-bz2.v1", factory=VarintBz2,
            params=Bz2Params, version="1",
            summary="frequency-ordered ranks as LEB128 varints, then bzip2 (level 9)",
        ),
        CoderInfo(
            name="varint-ppmd", codec_id="chunkpress.varint-ppmd.v1", factory=VarintPpmd,
            params=PpmdParams, version="1",
            summary="frequency-ordered ranks as LEB128 varints, then PPMd var. I order 8 (needs pyppmd)",
        ),
    ]
