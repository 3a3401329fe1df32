"""chunkpress's version: the one place it is written (pyproject.toml reads it from here). On the
ground floor, so that every module may record it."""

__version__ = "0.1.0"
