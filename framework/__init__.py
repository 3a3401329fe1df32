"""chunkpress: compress text by growing a dictionary of chunks."""

__version__ = "0.1.0"

from chunkpress.descriptors import CoderInfo, NoParams, RewriterInfo, ScorerInfo  # noqa: E402
from chunkpress.errors import (  # noqa: E402
    ChunkpressError,
    ConfigError,
    FormatError,
    InputError,
    PluginError,
)
from chunkpress.hookspecs import hookimpl  # noqa: E402

__all__ = [
    "__version__",
    "hookimpl",
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
