"""The error hierarchy: every failure a user can cause is one of these, with a one-line message."""


class ChunkpressError(Exception):
    """Base of every error chunkpress raises on purpose; the CLI prints it as one line."""

    exit_code = 1


class ConfigError(ChunkpressError):
    """A config file or parameter is wrong (unknown key, bad value, unknown plugin name)."""

    exit_code = 2


class PluginError(ChunkpressError):
    """A plugin cannot be loaded, is registered twice, or is not known."""

    exit_code = 3


class FormatError(ChunkpressError):
    """An archive or rules file is corrupt, truncated, or of an unknown codec/version."""

    exit_code = 4


class InputError(ChunkpressError):
    """An input or output path cannot be used (missing, unreadable, exists without --force)."""

    exit_code = 5


class ClusterError(ChunkpressError):
    """The Dask scheduler named cannot be reached or does not answer in time."""

    exit_code = 6


class ChunkpressWarning(UserWarning):
    """Something a user should know that is not an error; the command line prints it as one
    line (``chunkpress: warning: ...``)."""


class UnverifiedWarning(ChunkpressWarning):
    """Data decoded but not fully verified: a block archive of version 1 or 2 records no block
    order, so blocks rearranged in it decode without an error. The command line prints it as
    one line naming the file; a Python caller sees a warning."""
