"""``chunkpress.open``: archives as file objects, as ``gzip.open``, ``lzma.open`` and
``zstandard.open`` give them.

Writing produces a block archive (what ``chunkpress compress`` writes for a stream): the data
is cut into blocks of ``block_size`` bytes (after a newline where there is one), each block
compressed as it fills, so memory stays that of one block whatever is written. Reading decodes
one block (or one single archive) at a time, and reads archives one after another as their
concatenation, so mode ``"ab"`` appends an archive that reads back as one stream.
"""

from __future__ import annotations

import builtins
import io
import os

from .blockmode import STREAM_BLOCK_SIZE, BlockWriter, iter_members
from .errors import ConfigError
from .format.limits import bounded_memory, memory_limit

_MODES = {"r": "rb", "rb": "rb", "rt": "rb", "w": "wb", "wb": "wb", "wt": "wb", "x": "xb", "xb": "xb", "xt": "xb",
          "a": "ab", "ab": "ab", "at": "ab"}


class _Raw(io.RawIOBase):
    """Closes the file under it when this module opened it by name."""

    def __init__(self, fileobj, owned: bool):
        self._fileobj, self._owned = fileobj, owned

    def close(self) -> None:
        if not self.closed:
            try:
                self._finish()
            finally:
                super().close()
                if self._owned:
                    self._fileobj.close()

    def _finish(self) -> None:
        pass


class _Reader(_Raw):
    """The decoded bytes of the archives in ``fileobj``, a piece (a block) at a time."""

    def __init__(self, fileobj, owned: bool, max_memory: int | None):
        super().__init__(fileobj, owned)
        with bounded_memory(max_memory):  # a single archive is read whole: at most the limit
            self._pieces = iter_members(fileobj, limit=memory_limit())
        self._max_memory = max_memory
        self._piece = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._piece:
            with bounded_memory(self._max_memory):
                piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._piece = memoryview(piece)
        n = min(len(buffer), len(self._piece))
        buffer[:n] = self._piece[:n]
        self._piece = self._piece[n:]
        return n


class _Writer(_Raw):
    """A block archive written to ``fileobj`` as the blocks fill; the end record on close."""

    def __init__(self, fileobj, owned: bool, pipe, block_size: int):
        super().__init__(fileobj, owned)
        self._blocks = BlockWriter(pipe, fileobj, block_size)

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        return self._blocks.write(bytes(data))

    def _finish(self) -> None:
        self._blocks.close()
        self._fileobj.flush()


def open(file, mode: str = "rb", *, level: int | None = None, config=None, block_size: int = STREAM_BLOCK_SIZE,
         encoding: str | None = None, errors: str | None = None, newline: str | None = None,
         max_memory: int | None = None, **overrides):
    """A file object over an archive: ``file`` is a path or a binary file object; ``mode`` is
    ``"rb"``, ``"wb"``, ``"xb"`` or ``"ab"`` (binary, the default ``"rb"``) or the same with
    ``"t"`` for text (``encoding``, ``errors``, ``newline`` as in :func:`io.open`). Writing
    compresses at ``level`` (1-9; neither level nor ``config``: level 5, as ``compress``);
    reading needs no settings, and ``max_memory`` bounds each block's decoding.

        with chunkpress.open("log.txt.cpz", "wt", level=3) as f:
            f.write("a line\\n")
        with chunkpress.open("log.txt.cpz", "rt") as f:
            lines = f.readlines()
    """
    if mode not in _MODES:
        raise ValueError(f"invalid mode {mode!r}: use r, w, x or a, with b (binary, the default) or t (text)")
    binary_mode = _MODES[mode]
    text = "t" in mode
    if not text and (encoding is not None or errors is not None or newline is not None):
        raise ValueError("encoding, errors and newline are for text modes ('rt', 'wt', ...)")
    if block_size < 1 << 10:
        raise ConfigError(f"block_size must be at least 1K, not {block_size}")
    owned = isinstance(file, (str, bytes, os.PathLike))
    fileobj = builtins.open(file, binary_mode) if owned else file
    stream: io.BufferedIOBase
    try:
        if binary_mode == "rb":
            stream = io.BufferedReader(_Reader(fileobj, owned, max_memory))
        else:
            from .config import compress_level
            from .pipeline import Pipeline

            pipe = Pipeline.from_config(config, level=compress_level(config, level), **overrides)
            stream = io.BufferedWriter(_Writer(fileobj, owned, pipe, block_size), buffer_size=1 << 20)
    except BaseException:
        if owned:
            fileobj.close()
        raise
    return io.TextIOWrapper(stream, encoding=encoding, errors=errors, newline=newline) if text else stream
