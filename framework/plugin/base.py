"""The role base classes plugin authors subclass (``Scorer``, ``Rewriter``, ``Coder``, ...), as
this façade hands them on: they are defined below the engine and the formats, in
:mod:`chunkpress.contract`, which every floor may import."""

from ..contract import (
    BYTE_SYMBOLS,
    DELETES_NOTHING,
    LEARNS_BY_MERGES,
    NO_NORMALIZER,
    NO_PRETOKENIZER,
    OPENS_NOTHING,
    REPLAYS_MERGES,
    AheadPart,
    BoundaryPolicy,
    Coder,
    DeletionPolicy,
    Learner,
    MergeReport,
    Normalizer,
    PreTokenizer,
    Rewriter,
    Scorer,
    Segmenter,
    SplitScorer,
    as_symbols,
)

__all__ = ["AheadPart", "BYTE_SYMBOLS", "BoundaryPolicy", "Coder", "DeletionPolicy", "MergeReport", "OPENS_NOTHING",
           "REPLAYS_MERGES", "Rewriter", "Scorer", "Segmenter", "Learner", "LEARNS_BY_MERGES", "SplitScorer", "as_symbols",
           "PreTokenizer", "NO_PRETOKENIZER", "Normalizer", "NO_NORMALIZER", "DELETES_NOTHING"]
