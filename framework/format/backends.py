"""General-purpose compressors behind one interface, with safe decompression.

Coders that put bytes through zstd, zlib, xz, bzip2 or PPMd (the varint and raw families)
share these: every frame must decode completely, with no trailing bytes, and no frame may expand past
the memory limit (zstd frames are checked by their declared size before decoding).
"""

from __future__ import annotations

import bz2
import lzma
import zlib

import zstandard

from ..errors import ConfigError, FormatError
from .leb128 import decode_varints, encode_varints
from .limits import check_allocation, memory_limit


def _ppmd():
    try:
        import pyppmd
    except ImportError:
        raise ConfigError("the ppmd coders need the optional package pyppmd: pip install 'chunkpress[ppmd]'") from None
    return pyppmd


def compress(backend: str, data: bytes, level: int, extreme: bool = False, memory_mb: int = 0) -> bytes:
    if backend == "ppmd":  # PPMd var. I, order ``level``; the frame starts with the length
        if not data:
            return encode_varints([0])
        encoder = _ppmd().Ppmd8Encoder(level, memory_mb << 20)
        return encode_varints([len(data)]) + encoder.encode(data) + encoder.flush(endmark=False)
    if backend == "zstd":
        return zstandard.ZstdCompressor(level=level).compress(data)
    if backend == "zlib":
        return zlib.compress(data, level)
    if backend == "lzma":
        return lzma.compress(data, format=lzma.FORMAT_XZ, preset=level | (lzma.PRESET_EXTREME if extreme else 0))
    if backend == "bz2":
        return bz2.compress(data, level)
    raise ValueError(f"unknown backend {backend!r}")


def decompress(backend: str, frame: bytes, level: int = 0, memory_mb: int = 0) -> bytes:
    """The frame's content; FormatError if it is corrupt, truncated, extended or too large."""
    if backend == "ppmd":
        (size,), pos = decode_varints(frame, 1)
        check_allocation(f"a PPMd frame of {size:,} bytes using {memory_mb} MB", int(size) + (memory_mb << 20))
        if size == 0:
            if pos != len(frame):
                raise FormatError("ppmd frame has trailing bytes")
            return b""
        stream = frame[pos:]
        stream += b"\0" * max(0, 5 - len(stream))  # the decoder starts on 5 bytes; a 1-byte text codes to 4
        out = _ppmd().Ppmd8Decoder(level, memory_mb << 20).decode(stream, int(size))
        if len(out) != size:
            raise FormatError("ppmd frame is truncated or corrupt")
        return out
    try:
        if backend == "zstd":
            size = zstandard.frame_content_size(frame)
            if size < 0:
                raise FormatError("zstd frame does not record its content size")
            check_allocation(f"a zstd frame of {size:,} bytes", size)
            d = zstandard.ZstdDecompressor().decompressobj()
            out = d.decompress(frame)
            complete = d.eof and not d.unused_data and len(out) == size
        else:
            d = {"zlib": zlib.decompressobj, "bz2": bz2.BZ2Decompressor,
                 "lzma": lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ)}[backend]()
            out = d.decompress(frame, memory_limit())
            complete = d.eof and not d.unused_data
    except (zstandard.ZstdError, zlib.error, lzma.LZMAError, OSError, EOFError, ValueError) as exc:
        raise FormatError(f"corrupt {backend} frame: {exc}") from None
    if not complete:
        raise FormatError(f"{backend} frame is truncated, has trailing bytes or is larger than allowed")
    return out


class Compressor:
    """A backend with its settings taken from a coder's params (``level``, ``preset`` or
    ``model_order``; ``extreme`` for xz, ``memory_mb`` for PPMd): what the varint and raw coder
    families put their bytes through."""

    def __init__(self, backend: str, params):
        self.backend = backend
        self.level = next(getattr(params, k) for k in ("level", "preset", "model_order") if hasattr(params, k))
        self.extreme = getattr(params, "extreme", False)
        self.memory_mb = getattr(params, "memory_mb", 0)
        if backend == "ppmd":
            _ppmd()  # a missing optional package is reported when the coder is built

    def compress(self, data: bytes) -> bytes:
        return compress(self.backend, data, self.level, self.extreme, self.memory_mb)

    def decompress(self, frame: bytes) -> bytes:
        return decompress(self.backend, frame, self.level, self.memory_mb)
