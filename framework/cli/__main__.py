"""``python -m chunkpress.cli``: the ``chunkpress`` program."""

from . import entry

entry()
