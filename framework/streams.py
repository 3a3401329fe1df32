"""``chunkpress.open``: archives as file objects, as ``gzip.open``, ``lzma.open`` and
``zstandard.open`` give them, over a :class:`~chunkpress.compressor.Compressor`'s stream writer
and a :class:`~chunkpress.decompressor.Decompressor`'s stream reader.

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

from .blockmode import STREAM_BLOCK_SIZE
from .compressor import Compressor, check_block_size
from .decompressor import DecompressionReader, Decompressor

_MODES = {"r": "rb", "rb": "rb", "rt": "rb", "w": "wb", "wb": "wb", "wt": "wb", "x": "xb", "xb": "xb", "xt": "xb",
          "a": "ab", "ab": "ab", "at": "ab"}


class _Closing(io.RawIOBase):
    """A raw stream that also closes the file under it when this module opened it by name."""

    def __init__(self, raw: io.RawIOBase, fileobj, owned: bool):
        self._raw, self._fileobj, self._owned = raw, fileobj, owned

    def readable(self) -> bool:
        return self._raw.readable()

    def writable(self) -> bool:
        return self._raw.writable()

    def readinto(self, buffer) -> int:
        return self._raw.readinto(buffer)

    def write(self, data) -> int:
        return self._raw.write(data)

    def tell(self) -> int:
        return self._raw.tell()

    def seekable(self) -> bool:
        return self._raw.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def close(self) -> None:
        if not self.closed:
            try:
                self._raw.close()
                if self._raw.writable():
                    self._fileobj.flush()
            finally:
                super().close()
                if self._owned:
                    self._fileobj.close()


def open(file, mode: str = "rb", *, level: int | None = None, config=None, block_size: int = STREAM_BLOCK_SIZE,
         encoding: str | None = None, errors: str | None = None, newline: str | None = None,
         max_memory: int | None = None, **overrides):
    """A file object over an archive: ``file`` is a path or a binary file object; ``mode`` is
    ``"rb"``, ``"wb"``, ``"xb"`` or ``"ab"`` (binary, the default ``"rb"``) or the same with
    ``"t"`` for text (``encoding``, ``errors``, ``newline`` as in :func:`io.open`). Writing
    compresses at ``level`` (1-9; neither level nor ``config``: level 5, as ``compress``);
    reading needs no settings, and ``max_memory`` bounds each block's decoding. ``tell()`` gives
    the uncompressed position, as gzip's file objects do.

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
    if binary_mode == "rb":
        coder = Decompressor(max_memory=max_memory)
    else:
        compressor = Compressor(level, config=config, **overrides)
        check_block_size(block_size)  # before the file is made
    owned = isinstance(file, (str, bytes, os.PathLike))
    fileobj = builtins.open(file, binary_mode) if owned else file
    stream: io.BufferedIOBase
    try:
        if binary_mode == "rb":
            reader = DecompressionReader(coder.pieces(fileobj), coder.restart(fileobj))
            stream = io.BufferedReader(_Closing(reader, fileobj, owned))
        else:
            writer = compressor.stream_writer(fileobj, block_size=block_size)
            stream = io.BufferedWriter(_Closing(writer, fileobj, owned), buffer_size=1 << 20)
    except BaseException:
        if owned:
            fileobj.close()
        raise
    return io.TextIOWrapper(stream, encoding=encoding, errors=errors, newline=newline) if text else stream
