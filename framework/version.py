"""The installed version of chunkpress, read once from the package metadata (pyproject.toml is
the one place it is written). On the ground floor, so that every module may record it."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chunkpress")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
