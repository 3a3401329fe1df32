"""General-purpose compressors in one table: name -> params class, compress, capped decompress.

The raw-* and varint-* coder families are generated from :data:`BACKENDS` (one coder of each
family per backend), so adding a backend here adds both coders: :func:`family_class` makes a
family's classes in its module, :func:`family_coders` registers them by reference. This module
loads no compiled code, so the registry can read the table. Every frame must decode
completely, with no trailing bytes, and no frame may expand past ``max_size`` (the decoder's
memory limit): zstd frames are checked by their declared size before decoding, the others
decode with an output cap.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable

import attrs
import zstandard
from chunkpress.plugin import CoderInfo, ConfigError, FormatError, check_allocation, read_varint, varint


def _int_in(low: int, high: int, default: int):
    return attrs.field(default=default, validator=[attrs.validators.instance_of(int), attrs.validators.ge(low),
                                                   attrs.validators.le(high)])


@attrs.frozen(kw_only=True)
class ZstdParams:
    level: int = _int_in(1, 22, 19)


@attrs.frozen(kw_only=True)
class ZlibParams:
    level: int = _int_in(0, 9, 9)


@attrs.frozen(kw_only=True)
class LzmaParams:
    """xz: ``preset`` 0-9 and ``extreme`` (xz -e), on by default as in ``xz -9e``; ``x86``: the
    x86 branch filter first (xz --x86: call and jump targets made absolute), smaller on x86
    executables and libraries; ``stream``: ``xz`` (the .xz container, which names its filters)
    or ``lzma2`` (the LZMA2 stream alone, its filters and dictionary named by these params:
    some 60 bytes fewer, for the archive checks its own contents)."""

    preset: int = _int_in(0, 9, 9)
    extreme: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    x86: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool), metadata={"added": True})
    stream: str = attrs.field(default="xz", validator=attrs.validators.in_(("xz", "lzma2")), metadata={"added": True})


#: each xz preset's dictionary (liblzma's), which a bare LZMA2 stream's decoder must be told
_PRESET_DICTIONARY = (1 << 18, 1 << 20, 1 << 21, 1 << 22, 1 << 22, 1 << 23, 1 << 23, 1 << 24, 1 << 25, 1 << 26)


def _lzma_filters(p: LzmaParams, encoding: bool) -> list[dict]:
    lzma2: dict = {"id": lzma.FILTER_LZMA2, "dict_size": _PRESET_DICTIONARY[p.preset]}
    if encoding:
        lzma2["preset"] = p.preset | (lzma.PRESET_EXTREME if p.extreme else 0)
    return [{"id": lzma.FILTER_X86}, lzma2] if p.x86 else [lzma2]


def _lzma_compress(data: bytes, p: LzmaParams) -> bytes:
    # the preset's own dictionary, named: an xz stream's bytes are the same as with the preset alone
    return lzma.compress(data, format=lzma.FORMAT_RAW if p.stream == "lzma2" else lzma.FORMAT_XZ,
                         filters=_lzma_filters(p, True))


def _lzma_decompressor(p: LzmaParams):
    if p.stream == "lzma2":
        return lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=_lzma_filters(p, False))
    return lzma.LZMADecompressor(format=lzma.FORMAT_XZ)


@attrs.frozen(kw_only=True)
class Bz2Params:
    level: int = _int_in(1, 9, 9)


@attrs.frozen(kw_only=True)
class PpmdParams:
    """PPMd var. I (pyppmd, optional): model order and model memory in MB."""

    model_order: int = _int_in(2, 64, 8)
    memory_mb: int = _int_in(1, 2048, 256)


@attrs.frozen(kw_only=True)
class Backend:
    """A general-purpose compressor: ``compress(data, params)`` and ``decompress(frame, params,
    max_size)``, which raises FormatError on a corrupt frame or one larger than ``max_size``."""

    name: str
    params: type
    compress: Callable
    decompress: Callable
    summary: str


def _finish(d, out: bytes, name: str) -> bytes:
    if not d.eof or d.unused_data:
        raise FormatError(f"{name} frame is truncated, has trailing bytes or is larger than allowed")
    return out


def _stream(name: str, make, errors):
    """Decompress with a stream object that takes an output cap (zlib, bz2, xz), made by
    ``make(params)``."""

    def decompress(frame: bytes, params, max_size: int) -> bytes:
        try:
            d = make(params)
            out = d.decompress(frame, max_size + 1)  # one byte more tells "larger" from "exact"
        except errors as exc:
            raise FormatError(f"corrupt {name} frame: {exc}") from None
        if len(out) > max_size:
            raise FormatError(f"{name} frame is larger than allowed ({max_size:,} bytes)")
        return _finish(d, out, name)

    return decompress


def _zstd_decompress(frame: bytes, params, max_size: int) -> bytes:
    try:
        size = zstandard.frame_content_size(frame)
        if size < 0:
            raise FormatError("zstd frame does not record its content size")
        if size > max_size:
            check_allocation(f"a zstd frame of {size:,} bytes", size)
            raise FormatError(f"zstd frame of {size:,} bytes is larger than allowed ({max_size:,})")
        d = zstandard.ZstdDecompressor().decompressobj()
        out = d.decompress(frame)
    except zstandard.ZstdError as exc:
        raise FormatError(f"corrupt zstd frame: {exc}") from None
    if len(out) != size:
        raise FormatError("zstd frame is truncated or corrupt")
    return _finish(d, out, "zstd")


def _ppmd():
    try:
        import pyppmd  # optional: only the ppmd coders need it
    except ImportError:
        raise ConfigError("the ppmd coders need the optional package pyppmd: pip install 'chunkpress[ppmd]'") from None
    return pyppmd


def _ppmd_compress(data: bytes, params) -> bytes:
    """PPMd var. I; the frame starts with the length (the decoder needs it)."""
    if not data:
        return varint(0)
    encoder = _ppmd().Ppmd8Encoder(params.model_order, params.memory_mb << 20)
    frame = varint(len(data)) + encoder.encode(data) + encoder.flush(endmark=False)
    # pyppmd 1.3.1 cannot decode some of its own streams (order 2; a model that runs out of
    # memory): an archive nobody can read is lost data, so every frame is decoded once here
    try:
        same = _ppmd_decompress(frame, params, len(data)) == data
    except (FormatError, *_STREAM_ERRORS):
        same = False
    if not same:
        raise ConfigError(f"PPMd (pyppmd) cannot decode its own stream of these {len(data):,} bytes at order "
                          f"{params.model_order} with {params.memory_mb} MB; use another order, more memory or "
                          "another coder")
    return frame


def _ppmd_decompress(frame: bytes, params, max_size: int) -> bytes:
    size, pos = read_varint(frame)
    check_allocation(f"a PPMd frame of {size:,} bytes using {params.memory_mb} MB", int(size) + (params.memory_mb << 20))
    if size > max_size:
        raise FormatError(f"ppmd frame of {size:,} bytes is larger than allowed ({max_size:,})")
    if size == 0:
        if pos != len(frame):
            raise FormatError("ppmd frame has trailing bytes")
        return b""
    stream = frame[pos:]
    stream += b"\0" * max(0, 5 - len(stream))  # the decoder starts on 5 bytes; a 1-byte text codes to 4
    try:
        out = _ppmd().Ppmd8Decoder(params.model_order, params.memory_mb << 20).decode(stream, int(size))
    except ValueError as exc:  # pyppmd's "Corrupted input data"
        raise FormatError(f"corrupt ppmd frame: {exc}") from None
    if len(out) != size:
        raise FormatError("ppmd frame is truncated or corrupt")
    return out


_STREAM_ERRORS = (zlib.error, lzma.LZMAError, OSError, EOFError, ValueError)

BACKENDS = {
    b.name: b
    for b in [
        Backend(name="zstd", params=ZstdParams, summary="zstd",
                compress=lambda data, p: zstandard.ZstdCompressor(level=p.level).compress(data),
                decompress=_zstd_decompress),
        Backend(name="zlib", params=ZlibParams, summary="zlib (deflate)",
                compress=lambda data, p: zlib.compress(data, p.level),
                decompress=_stream("zlib", lambda p: zlib.decompressobj(), _STREAM_ERRORS)),
        Backend(name="lzma", params=LzmaParams, summary="xz (LZMA2)",
                compress=_lzma_compress,
                decompress=_stream("lzma", _lzma_decompressor, _STREAM_ERRORS)),
        Backend(name="bz2", params=Bz2Params, summary="bzip2",
                compress=lambda data, p: bz2.compress(data, p.level),
                decompress=_stream("bz2", lambda p: bz2.BZ2Decompressor(), _STREAM_ERRORS)),
        Backend(name="ppmd", params=PpmdParams, summary="PPMd var. I (optional package pyppmd)",
                compress=_ppmd_compress, decompress=_ppmd_decompress),
    ]
}


def with_fields(name: str, base: type, **extra) -> type:
    """A frozen attrs params class with ``base``'s fields and ``extra`` ones (attrs fields):
    how a coder family adds its own knobs to a backend's params."""
    fields = {a.name: attrs.field(default=a.default, validator=a.validator, metadata=a.metadata)
              for a in attrs.fields(base)}
    fields.update(extra)
    return attrs.make_class(name, fields, frozen=True, kw_only=True)


def check_backend(backend: Backend) -> None:
    """Fail when the coder is built, not when it first runs, if an optional package is missing."""
    if backend.name == "ppmd":
        _ppmd()


@attrs.frozen(kw_only=True)
class Family:
    """A coder family: one coder per backend, with this summary (formatted with the backend's)
    and these params beside the backend's (attrs fields)."""

    summary: str
    fields: dict = attrs.field(factory=dict)


FAMILIES = {
    "varint": Family(summary="frequency-ordered ranks as LEB128 varints, then {}",
                     # ``order = "id"`` writes the tokens in id order instead of frequency order
                     # (seed 3's ablation); the decoder reads the table either way: same format
                     fields={"order": attrs.field(default="frequency",
                                                  validator=attrs.validators.in_(("frequency", "id")))}),
    "raw": Family(summary="the raw bytes through {} (baseline; pair with max_rules = 0)"),
}


def _class_name(family: str, backend: Backend) -> str:
    return f"{family.capitalize()}{backend.name.capitalize()}"


def _codec_id(family: str, backend: Backend) -> str:
    return f"chunkpress.{family}-{backend.name}.v1"


_classes: dict[tuple[type, str], type] = {}


def family_class(family: str, base: type, name: str) -> type:
    """The family's coder class ``name`` (``<Family><Backend>``): a subclass of ``base`` for
    that backend of the table, made on first use (a family's module answers its own attribute
    lookups with this, so a backend added to the table has its coders too)."""
    for backend in BACKENDS.values():
        if _class_name(family, backend) == name:
            key = (base, name)
            if key not in _classes or getattr(_classes[key], "backend", None) is not backend:
                summary = FAMILIES[family].summary.format(backend.summary)
                _classes[key] = type(name, (base,), {"backend": backend, "codec_id": _codec_id(family, backend),
                                                     "__doc__": summary, "__module__": base.__module__})
            return _classes[key]
    raise AttributeError(f"no {family} coder {name!r}: the backends are {', '.join(BACKENDS)}")


def family_coders(family: str, module: str) -> list[CoderInfo]:
    """The family's coders (:func:`family_class` in ``module``) as descriptors by reference,
    named ``<family>-<backend>``, codec ``chunkpress.<family>-<backend>.v1``, whose params are
    the backend's plus the family's."""
    infos, spec = [], FAMILIES[family]
    for backend in BACKENDS.values():
        title = _class_name(family, backend)
        params = with_fields(f"{title}Params", backend.params, **spec.fields) if spec.fields else backend.params
        infos.append(CoderInfo(name=f"{family}-{backend.name}", factory=f"{module}:{title}", params=params,
                               codec_id=_codec_id(family, backend), version="1",
                               summary=spec.summary.format(backend.summary)))
    return infos
