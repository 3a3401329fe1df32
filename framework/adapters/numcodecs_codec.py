"""chunkpress as a numcodecs codec, so zarr arrays (and anything that takes a numcodecs codec)
can store text-like chunks with it: ``numcodecs.get_codec({"id": "chunkpress"})``.

Registered through numcodecs' entry-point group ``numcodecs.codecs`` (``pip install
'chunkpress[numcodecs]'``). Each chunk becomes one self-describing archive, written by a
:class:`~chunkpress.Compressor` and read by a :class:`~chunkpress.Decompressor`, so a chunk
decodes with no config, as ``chunkpress decompress`` does.

Decoding is bounded as a whole, not only per chunk: zarr decodes many chunks at once on
threads, so the decodings of one codec share its ``max_memory`` (each waits for room), and a
chunk whose archive claims more bytes than the chunk holds is refused before it is decoded.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy

from ..compressor import Compressor
from ..decompressor import Decompressor
from ..errors import FormatError
from ..format import container
from ..format.limits import BYTES_PER_SYMBOL, check_max_memory, memory_limit


class _Budget:
    """Bytes of memory that concurrent decodings take and give back."""

    def __init__(self, total: int):
        self.total, self.free = total, total
        self.ready = threading.Condition()

    def take(self, n: int) -> None:
        if n > self.total:
            raise FormatError(f"a chunk would need {n:,} bytes to decode, more than max_memory ({self.total:,})")
        with self.ready:
            self.ready.wait_for(lambda: self.free >= n)
            self.free -= n

    def give(self, n: int) -> None:
        with self.ready:
            self.free += n
            self.ready.notify_all()


class ChunkpressCodec(Codec):
    """Compress each chunk at a compression ``level`` (1-9; neither level nor config: 5, as
    ``chunkpress.compress``) or with a ``config`` file, with overrides (``scorer``, ``coder``,
    ``max_rules``, ``pretokenizer``); ``max_memory``: what this codec's decodings may hold at
    once (None: ``CHUNKPRESS_MAX_MEMORY`` or half the machine's memory)."""

    codec_id = "chunkpress"

    def __init__(self, scorer: str | None = None, coder: str | None = None, max_rules: int | None = None,
                 pretokenizer: str | None = None, config: str | None = None, level: int | None = None,
                 max_memory: int | None = None):
        check_max_memory(max_memory)
        self.level, self.scorer, self.coder, self.max_rules = level, scorer, coder, max_rules
        self.pretokenizer, self.config, self.max_memory = pretokenizer, config, max_memory
        overrides: dict[str, Any] = {k: v for k, v in (("scorer", scorer), ("coder", coder), ("pretokenizer", pretokenizer),
                                       ("max_rules", max_rules)) if v is not None}
        self._compressor = Compressor(level, config=config, **overrides)  # a bad setting fails here
        self._budget = _Budget(max_memory or memory_limit())

    def encode(self, buf):
        return self._compressor.compress(ensure_contiguous_ndarray(buf).view(np.uint8).tobytes())

    def decode(self, buf, out=None):
        archive = bytes(ensure_contiguous_ndarray(buf).view(np.uint8))
        expected = None if out is None else ensure_contiguous_ndarray(out).nbytes
        need = self._need(archive, expected)
        self._budget.take(need)
        try:
            data = Decompressor(max_memory=need, max_output_size=expected).decompress(archive)
        finally:
            self._budget.give(need)
        return ndarray_copy(np.frombuffer(data, dtype=np.uint8), out)

    def _need(self, archive: bytes, expected: int | None) -> int:
        """What decoding ``archive`` may take: its output's bytes and symbols beside its own
        size (a block archive: its largest block's at most, as the chunk bounds it)."""
        length = expected
        if length is None and archive[:len(container.MAGIC)] == container.MAGIC:
            length = container.unpack(archive)[0].length
        length = len(archive) if length is None else length
        return min(self._budget.total, (2 + BYTES_PER_SYMBOL) * length + 2 * len(archive) + (64 << 20))

    def get_config(self) -> dict:
        config = {"id": self.codec_id}
        for key in ("level", "scorer", "coder", "max_rules", "pretokenizer", "config", "max_memory"):
            value = getattr(self, key)
            if value is not None:
                config[key] = value
        return config

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "id")
        return f"ChunkpressCodec({params})"
