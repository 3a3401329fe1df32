"""chunkpress: compress text by growing a dictionary of chunks.

The front door: ``compress``, ``decompress`` and ``open`` for everyday use, over one
:class:`Compressor` and one :class:`Decompressor` that hold every setting (as python-zstandard's
``ZstdCompressor`` and ``ZstdDecompressor``). Plugin authors import :mod:`chunkpress.plugin`.
"""

from typing import TYPE_CHECKING

from .contract import Coder, Rewriter, Scorer, SplitScorer
from .engine.cachefiles import install as _sturdy_kernel_cache
from .errors import ChunkpressError, ChunkpressWarning, ConfigError, FormatError, InputError, PluginError
from .plugin import CoderInfo, NoParams, RewriterInfo, ScorerInfo, hookimpl
from .version import __version__

if TYPE_CHECKING:
    from .compressor import Compressor
    from .decompressor import Decompressor
    from .text.tokenizer import Tokenizer

_sturdy_kernel_cache()  # a damaged numba cache file is compiled again, never reported as the data's fault

#: names imported on first use, so that ``import chunkpress`` stays light (numba and the
#: engine load only when a job needs them)
_LAZY = {"Compressor": "compressor", "Decompressor": "decompressor", "Tokenizer": "text.tokenizer"}


def compress(data: bytes, level: int | None = None, **settings) -> bytes:
    """The archive of ``data``: ``Compressor(level, **settings).compress(data)``, with
    ``chunkpress compress``'s options as keywords (``config=``, ``rules=``, ``rules_ref=``,
    ``block_size=``, ``workers=``, ``scheduler=``, ``shared_dictionary=``, ``max_rules=``,
    ``min_count=``, ``scorer=``, ``coder=``, ...; see :class:`Compressor`)."""
    from .compressor import Compressor  # the compressor and its engine load on first use

    return Compressor(level, **settings).compress(data)


def decompress(archive: bytes, *, rules=None, max_memory: int | None = None,
               max_output_size: int | None = None) -> bytes:
    """The original bytes of any archives (single, block, stored, or several one after the
    other): ``Decompressor(...).decompress(archive)``; FormatError if anything does not verify.
    ``rules``: the dictionary an archive made with ``rules_ref`` needs (path, bytes or
    Tokenizer); ``max_memory``: this call's bound in bytes; ``max_output_size``: refuse more
    output than this (see :class:`Decompressor`)."""
    from .decompressor import Decompressor  # the decompressor loads on first use

    return Decompressor(rules=rules, max_memory=max_memory, max_output_size=max_output_size).decompress(archive)


def open(file, mode: str = "rb", **kwargs):
    """An archive as a file object, as ``gzip.open``: ``"rb"``/``"wb"``/``"xb"``/``"ab"`` or
    text (``"rt"``, ...); see :func:`chunkpress.streams.open`."""
    from .streams import open as _open  # the io wrappers are only needed by open()

    return _open(file, mode, **kwargs)


def numcodecs_codec(**params):
    """chunkpress as a numcodecs codec (for zarr): ``ChunkpressCodec(level=..., scorer=...,
    coder=..., max_rules=..., pretokenizer=..., config=...)``; needs ``pip install
    'chunkpress[numcodecs]'``."""
    from .adapters.numcodecs_codec import ChunkpressCodec  # numcodecs is an optional dependency

    return ChunkpressCodec(**params)


def zarr_codec(**params):
    """chunkpress as a zarr 3 codec (``zarr_format=3``): ``ChunkpressZarrCodec(level=..., ...)``,
    the numcodecs codec's parameters; needs zarr 3.1 and ``pip install 'chunkpress[numcodecs]'``."""
    from .adapters.zarr_codec import ChunkpressZarrCodec  # zarr is an optional dependency

    return ChunkpressZarrCodec(**params)


def __getattr__(name: str):
    """``chunkpress.Compressor``, ``Decompressor`` and ``Tokenizer``, imported on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'chunkpress' has no attribute {name!r}")
    import importlib  # only on a lazy name's first use

    value = getattr(importlib.import_module(f"chunkpress.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Compressor",
    "Decompressor",
    "Tokenizer",
    "__version__",
    "compress",
    "decompress",
    "open",
    "numcodecs_codec",
    "zarr_codec",
    "hookimpl",
    "Scorer",
    "SplitScorer",
    "Rewriter",
    "Coder",
    "ScorerInfo",
    "RewriterInfo",
    "CoderInfo",
    "NoParams",
    "ChunkpressError",
    "ChunkpressWarning",
    "ConfigError",
    "PluginError",
    "FormatError",
    "InputError",
]
