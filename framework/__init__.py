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


def compress(data: bytes, config=None, level: int | None = None, *, rules=None, rules_ref: bool = False,
             block_size: int | None = None, workers: int | None = None, scheduler: str | None = None,
             shared_dictionary: bool = False, max_rules: int | None = None, min_count: int | None = None,
             **overrides) -> bytes:
    """One-shot: an archive of ``data``, with ``chunkpress compress``'s options as keywords.

    ``config`` (a TOML path) or ``level`` (1 fastest ... 9 smallest; neither: 5, as the command
    line); ``scorer=``, ``rewriter=``, ``coder=``, ``pretokenizer=``, ``limits=`` (or
    ``max_rules=``, ``min_count=``) override it, as in
    :meth:`chunkpress.pipeline.Pipeline.from_config`. ``rules``: reuse a learned dictionary (a
    rules file's path or bytes, or a :class:`chunkpress.Tokenizer`) instead of learning one;
    ``rules_ref``: store only its hash. ``block_size``, ``workers``, ``scheduler``,
    ``shared_dictionary``: block mode, as ``--block-size`` etc.; chosen by default, as on the
    command line, for data over 256 MB."""
    from .oneshot import compress as _compress

    return _compress(data, config, level, rules=rules, rules_ref=rules_ref, block_size=block_size, workers=workers,
                     scheduler=scheduler, shared_dictionary=shared_dictionary, max_rules=max_rules,
                     min_count=min_count, **overrides)


def decompress(archive: bytes, *, rules=None, max_memory: int | None = None) -> bytes:
    """One-shot: the original bytes of any archive (plain, block, or several one after the
    other); FormatError if anything does not verify. ``rules``: the dictionary an archive made
    with ``rules_ref`` needs (path, bytes or Tokenizer), as ``decompress --rules``.
    ``max_memory``: this call's bound in bytes, checked before each allocation (FormatError past
    it); None: ``CHUNKPRESS_MAX_MEMORY`` or half the machine's memory. Other threads' calls keep
    their own bounds, and the process's limits are never changed."""
    from .oneshot import decompress as _decompress

    return _decompress(archive, rules=rules, max_memory=max_memory)


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


def __getattr__(name: str):
    """``chunkpress.Tokenizer`` (a learned dictionary as a tokenizer, HF-style), imported on
    first use so that ``import chunkpress`` stays light."""
    if name == "Tokenizer":
        from .text.tokenizer import Tokenizer

        return Tokenizer
    raise AttributeError(f"module 'chunkpress' has no attribute {name!r}")


__all__ = [
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
    "ConfigError",
    "PluginError",
    "FormatError",
    "InputError",
]
