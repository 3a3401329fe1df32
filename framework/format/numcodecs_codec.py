"""chunkpress as a numcodecs codec, so zarr arrays (and anything that takes a numcodecs codec)
can store text-like chunks with it: ``numcodecs.get_codec({"id": "chunkpress"})``.

Registered through numcodecs' entry-point group ``numcodecs.codecs`` (``pip install
'chunkpress[numcodecs]'``). Each chunk becomes one self-describing chunkpress archive, so a
chunk decodes with no config, as ``chunkpress decompress`` does.
"""

from __future__ import annotations

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy


class ChunkpressCodec(Codec):
    """Compress each chunk at a compression ``level`` (1-9; neither level nor config: 5, as
    ``chunkpress.compress``) or with a ``config`` file, with overrides (``scorer``, ``coder``,
    ``max_rules``, ``pretokenizer``)."""

    codec_id = "chunkpress"

    def __init__(self, scorer: str | None = None, coder: str | None = None, max_rules: int | None = None,
                 pretokenizer: str | None = None, config: str | None = None, level: int | None = None):
        from ..config import preset

        if level is not None:
            preset(level)  # a bad level is refused here, not at the first chunk
        self.level = level
        self.scorer = scorer
        self.coder = coder
        self.max_rules = max_rules
        self.pretokenizer = pretokenizer
        self.config = config
        self._pipeline = None

    def _pipe(self):
        if self._pipeline is None:
            from ..config import compress_level
            from ..pipeline import Pipeline

            overrides = {k: v for k, v in (("scorer", self.scorer), ("coder", self.coder),
                                           ("pretokenizer", self.pretokenizer)) if v is not None}
            if self.max_rules is not None:
                overrides["limits"] = {"max_rules": self.max_rules}
            self._pipeline = Pipeline.from_config(self.config, level=compress_level(self.config, self.level),
                                                  **overrides)  # errors show at first use
        return self._pipeline

    def encode(self, buf):
        data = ensure_contiguous_ndarray(buf).view(np.uint8).tobytes()
        return self._pipe().compress(data)

    def decode(self, buf, out=None):
        from ..pipeline import decompress

        data = decompress(bytes(ensure_contiguous_ndarray(buf).view(np.uint8)))
        return ndarray_copy(np.frombuffer(data, dtype=np.uint8), out)

    def get_config(self) -> dict:
        config = {"id": self.codec_id}
        for key in ("level", "scorer", "coder", "max_rules", "pretokenizer", "config"):
            value = getattr(self, key)
            if value is not None:
                config[key] = value
        return config

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "id")
        return f"ChunkpressCodec({params})"
