"""Baselines for studies: a general-purpose compressor on the raw bytes, no dictionary.

``raw-ppmd`` puts a PPM-class model (pyppmd, an optional dependency) in the same tables.

The coder expands (rules, symbols) back to bytes and compresses those, so any learned rules
are discarded: pair it with ``max_rules = 0`` to skip learning. Payload: the compressor's
frame. Codecs ``chunkpress.raw-{zlib,lzma,zstd,bz2,ppmd}.v1``.
"""

from __future__ import annotations

import attrs
import numpy as np

from ...plugin.hookspecs import hookimpl
from ...plugin.descriptors import CoderInfo
from ...format import backends as frames
from ...format.expand import expand


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


@attrs.frozen(kw_only=True)
class PpmdParams:
    """PPMd var. I (pyppmd, optional): model order and model memory in MB."""

    model_order: int = _level(2, 64, 8)
    memory_mb: int = _level(1, 2048, 256)


class RawCoder:
    """Expand to bytes, then compress; decode returns no rules and the bytes as symbols."""

    backend = ""

    def __init__(self, params):
        self.codec = frames.Compressor(self.backend, params)

    def encode(self, rules, symbols) -> bytes:
        return self.codec.compress(expand(rules, symbols))

    def decode(self, payload: bytes):
        data = self.codec.decompress(bytes(payload))
        return np.zeros((0, 2), dtype=np.int64), np.frombuffer(data, dtype=np.uint8).astype(np.int64)

    def describe(self, payload: bytes) -> dict:
        return {"dictionary_bytes": 0, "string_bytes": len(payload)}


class RawZlib(RawCoder):
    backend = "zlib"


class RawLzma(RawCoder):
    backend = "lzma"


class RawBz2(RawCoder):
    backend = "bz2"


class RawZstd(RawCoder):
    backend = "zstd"


class RawPpmd(RawCoder):
    backend = "ppmd"


@hookimpl
def register_coders():
    info = CoderInfo
    return [
        info(name="raw-zlib", codec_id="chunkpress.raw-zlib.v1", factory=RawZlib, params=ZlibLevel, version="1",
             summary="baseline: zlib on the raw bytes (level 9), no dictionary"),
        info(name="raw-lzma", codec_id="chunkpress.raw-lzma.v1", factory=RawLzma, params=LzmaPreset, version="1",
             summary="baseline: xz on the raw bytes (preset 9), no dictionary"),
        info(name="raw-zstd", codec_id="chunkpress.raw-zstd.v1", factory=RawZstd, params=ZstdLevel, version="1",
             summary="baseline: zstd on the raw bytes (level 19), no dictionary"),
        info(name="raw-bz2", codec_id="chunkpress.raw-bz2.v1", factory=RawBz2, params=Bz2Level, version="1",
             summary="baseline: bzip2 on the raw bytes (level 9), no dictionary"),
        info(name="raw-ppmd", codec_id="chunkpress.raw-ppmd.v1", factory=RawPpmd, params=PpmdParams, version="1",
             summary="baseline: PPMd var. I order 8 on the raw bytes (needs pyppmd), no dictionary"),
    ]
