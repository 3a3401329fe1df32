"""chunk-cm's older models, kept to read (and write) their archives: each is pinned by its
golden archive (``tests/golden``), which its coder must decode, and re-create byte for byte. A
model's differences from the current one are its :class:`~.chunk_cm_model.versions.Model`
record; the current coder's code serves them all, so these are not to change.

- v5 turns -9's pieces on by params (``direct``, ``indirect``, ... :class:`.ChunkCmParams`),
  which v6 always has; -6 to -8 write it, with none or ``hash_per_byte`` alone;

- v4 picks its mixers' weight sets by bit position rather than by the node near the root;
- v3 also splits its tree at the weight's half and has cm's shorter bit histories, no flag
  inputs and one match lookup;
- v2 also has no run model and twenty contexts;
- v1 also no weight classes (each rank's bits down the complete trie, twelve contexts).
"""

from __future__ import annotations

from .chunk_cm import ChunkCmCoder, ChunkCmParams, ChunkCmV1Params, ChunkCmV2Params, ChunkCmV4Params
from .chunk_cm_model.versions import MODELS


class ChunkCmV5Coder(ChunkCmCoder):
    """chunk-cm's fifth model (-9's pieces as params): reads and writes its archives, -6 to
    -8's among them."""

    model = MODELS[5]
    codec_id = model.codec_id
    params_class = ChunkCmParams


class ChunkCmV4Coder(ChunkCmCoder):
    """chunk-cm's fourth model (its mixers' weight sets picked by bit position, not by the node):
    reads and writes its archives."""

    model = MODELS[4]
    codec_id = model.codec_id
    params_class = ChunkCmV4Params


class ChunkCmV3Coder(ChunkCmCoder):
    """chunk-cm's third model (the tree split at the weight's half, one match lookup, no flags):
    reads and writes its archives."""

    model = MODELS[3]
    codec_id = model.codec_id
    params_class = ChunkCmV4Params


class ChunkCmV2Coder(ChunkCmCoder):
    """chunk-cm's second model (no run model, twenty contexts): reads and writes its archives."""

    model = MODELS[2]
    codec_id = model.codec_id
    params_class = ChunkCmV2Params


class ChunkCmV1Coder(ChunkCmCoder):
    """chunk-cm's first model (complete trie, chunkpress 1.x archives): reads and writes them."""

    model = MODELS[1]
    codec_id = model.codec_id
    params_class = ChunkCmV1Params
