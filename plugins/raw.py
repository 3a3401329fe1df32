"""Baselines for studies: a general-purpose compressor on the raw bytes, no dictionary.

The coder expands (rules, symbols) back to bytes and compresses those, so any learned rules
are discarded: pair it with ``max_rules = 0`` to skip learning. Payload: the compressor's
frame. Codecs ``chunkpress.raw-{zlib,lzma,zstd,bz2}.v1``.
"""

from __future__ import annotations

import bz2
import lzma
import zlib

import attrs
import numpy as np
import zstandard

import chunkpress
from chunkpress.errors import FormatError
from chunkpress.expand import expand
from chunkpress.limits import check_allocation, memory_limit


def _level(low, high, default):
    return attrs.field(default=default, validator=[attrs.validators.instance_of(int), attrs.validators.ge(low), attrs.validators.le(high)])


@attrs.frozen(kw_only=True)
class ZlibLevel:
    level: int = _level(0, 9, 9)


@attrs.frozen(kw_only=True)
class ZstdLevel:
    level: int = _level(1, 22, 19)


@attrs.frozen(kw_only=True)
class LzmaPreset:
    preset: int = _level(0, 9, 9)
    extreme: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))


@attrs.frozen(kw_only=True)
class Bz2Level:
    level: int = _level(1, 9, 9)


class RawCoder:
    """Expand to bytes, then compress; decode returns no rules and the bytes as symbols."""

    def encode(self, rules, symbols) -> bytes:
        return self.compress(expand(rules, symbols))

    def decode(self, payload: bytes):
        data = self.decompress(bytes(payload))
        return np.zeros((0, 2), dtype=np.int64), np.frombuffer(data, dtype=np.uint8).astype(np.int64)

    def describe(self, payload: bytes) -> dict:
        return {"dictionary_bytes": 0, "string_bytes": len(payload)}


def _stream(decompressor, payload, name):
    try:
        out = decompressor.decompress(payload, memory_limit())
    except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as exc:
        raise FormatError(f"corrupt {name} payload: {exc}") from None
    if not decompressor.eof or decompressor.unused_data:
        raise FormatError(f"{name} payload is truncated or has trailing bytes")
    return out


class RawZlib(RawCoder):
    def __init__(self, params: ZlibLevel):
        self.level = params.level

    def compress(self, data):
        return zlib.compress(data, self.level)

    def decompress(self, payload):
        return _stream(zlib.decompressobj(), payload, "zlib")


class RawLzma(RawCoder):
    def __init__(self, params: LzmaPreset):
        self.preset = params.preset | (lzma.PRESET_EXTREME if params.extreme else 0)

    def compress(self, data):
        return lzma.compress(data, format=lzma.FORMAT_XZ, preset=self.preset)

    def decompress(self, payload):
        return _stream(lzma.LZMADecompressor(format=lzma.FORMAT_XZ), payload, "xz")


class RawBz2(RawCoder):
    def __init__(self, params: Bz2Level):
        self.level = params.level

    def compress(self, data):
        return bz2.compress(data, self.level)

    def decompress(self, payload):
        return _stream(bz2.BZ2Decompressor(), payload, "bz2")


class RawZstd(RawCoder):
    def __init__(self, params: ZstdLevel):
        self.level = params.level

    def compress(self, data):
        return zstandard.ZstdCompressor(level=self.level).compress(data)

    def decompress(self, payload):
        try:
            size = zstandard.frame_content_size(payload)
            if size < 0:
                raise FormatError("zstd frame does not record its content size")
            check_allocation(f"a zstd frame of {size:,} bytes", size)
            d = zstandard.ZstdDecompressor().decompressobj()
            out = d.decompress(payload)
        except zstandard.ZstdError as exc:
            raise FormatError(f"corrupt zstd payload: {exc}") from None
        if not d.eof or d.unused_data or len(out) != size:
            raise FormatError("zstd payload is truncated or has trailing bytes")
        return out


@chunkpress.hookimpl
def register_coders():
    info = chunkpress.CoderInfo
    return [
        info(name="raw-zlib", codec_id="chunkpress.raw-zlib.v1", factory=RawZlib, params=ZlibLevel, version="1",
             summary="baseline: zlib on the raw bytes (level 9), no dictionary"),
        info(name="raw-lzma", codec_id="chunkpress.raw-lzma.v1", factory=RawLzma, params=LzmaPreset, version="1",
             summary="baseline: xz on the raw bytes (preset 9), no dictionary"),
        info(name="raw-zstd", codec_id="chunkpress.raw-zstd.v1", factory=RawZstd, params=ZstdLevel, version="1",
             summary="baseline: zstd on the raw bytes (level 19), no dictionary"),
        info(name="raw-bz2", codec_id="chunkpress.raw-bz2.v1", factory=RawBz2, params=Bz2Level, version="1",
             summary="baseline: bzip2 on the raw bytes (level 9), no dictionary"),
    ]
