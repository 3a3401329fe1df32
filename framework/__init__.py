"""chunkpress: compress text by growing a dictionary of chunks."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chunkpress")  # one place for the version: pyproject.toml
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

from .plugin.descriptors import CoderInfo, NoParams, RewriterInfo, ScorerInfo  # noqa: E402
from .errors import (  # noqa: E402
    ChunkpressError,
    ConfigError,
    FormatError,
    InputError,
    PluginError,
)
from .plugin.hookspecs import hookimpl  # noqa: E402
from .plugin.base import Coder, Rewriter, Scorer, SplitScorer  # noqa: E402


def compress(data: bytes, config=None, level: int | None = None, **overrides) -> bytes:
    """One-shot: an archive of ``data`` (a config path, or a ``level`` from 1 fastest to 9
    smallest; neither: level 5, as the command line; ``overrides`` as in
    :meth:`chunkpress.pipeline.Pipeline.from_config`, e.g. ``coder="cm"``)."""
    from .config import compress_level
    from .pipeline import Pipeline

    return Pipeline.from_config(config, level=compress_level(config, level), **overrides).compress(data)


def decompress(archive: bytes, *, max_memory: int | None = None) -> bytes:
    """One-shot: the original bytes of an archive (FormatError if anything does not verify).
    ``max_memory``: this call's bound in bytes, checked before each allocation (FormatError past
    it); None: ``CHUNKPRESS_MAX_MEMORY`` or half the machine's memory. Other threads' calls keep
    their own bounds, and the process's limits are never changed."""
    from .pipeline import decompress as _decompress

    return _decompress(archive, max_memory=max_memory)


def open(file, mode: str = "rb", **kwargs):
    """An archive as a file object, as ``gzip.open``: ``"rb"``/``"wb"``/``"xb"``/``"ab"`` or
    text (``"rt"``, ...); see :func:`chunkpress.streams.open`."""
    from .streams import open as _open

    return _open(file, mode, **kwargs)


def numcodecs_codec(**params):
    """chunkpress as a numcodecs codec (for zarr): ``ChunkpressCodec(scorer=..., coder=...,
    max_rules=..., pretokenizer=..., config=...)``; needs ``pip install 'chunkpress[numcodecs]'``."""
    from .format.numcodecs_codec import ChunkpressCodec

    return ChunkpressCodec(**params)


def zarr_codec(**params):
    """chunkpress as a zarr 3 codec (``zarr_format=3``): ``ChunkpressZarrCodec(level=..., ...)``,
    the numcodecs codec's parameters; needs zarr 3.1 and ``pip install 'chunkpress[numcodecs]'``."""
    from .format.zarr_codec import ChunkpressZarrCodec

    return ChunkpressZarrCodec(**params)


__all__ = [
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
    "ConfigError",
    "PluginError",
    "FormatError",
    "InputError",
]
