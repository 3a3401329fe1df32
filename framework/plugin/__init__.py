"""The plugin API: everything a plugin author needs, and all that a plugin imports from the
framework (the built-in plugins too, as a third party's would).

* the hook marker :data:`hookimpl` and the specs with complete examples (:mod:`.hookspecs`);
* the base class of each role (:class:`Scorer`, :class:`SplitScorer`, :class:`Rewriter`,
  :class:`Coder`, :class:`BoundaryPolicy`, :class:`DeletionPolicy`, :class:`Segmenter`, :class:`Learner`,
  :class:`PreTokenizer`, :class:`Normalizer`) and the
  descriptors plugins return (:class:`ScorerInfo`, ...);
* the errors to raise (:class:`FormatError` for a corrupt payload, ...);
* the helpers coders use: LEB128 varints (arrays compiled, one value in plain Python),
  expanding rules to bytes, memory checks before an allocation, the kernels' decorators,
  interruptible calls and the wait for kernels compiled ahead, prefetching, a coder's progress
  meter, the engine's linked string for a rewriter, the code-length numerics of the scorers.

Test a plugin with :mod:`chunkpress.testing` (``check_coder``, ``check_scorer``,
``check_rewriter``).
"""

from typing import TYPE_CHECKING

from ..errors import ChunkpressError, ConfigError, FormatError, InputError, PluginError
from .base import (
    BYTE_SYMBOLS,
    DELETES_NOTHING,
    LEARNS_BY_MERGES,
    NO_NORMALIZER,
    NO_PRETOKENIZER,
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
from .descriptors import (
    BoundaryInfo,
    CoderInfo,
    DeletionInfo,
    FirstCompile,
    LearnerInfo,
    NoParams,
    NormalizerInfo,
    PreTokenizerInfo,
    RewriterInfo,
    ScorerInfo,
    SegmenterInfo,
)
from .hookspecs import hookimpl

#: the helpers, each loaded from its module on first use: the engine and the formats import
#: this package's base classes, so this package imports them only when a plugin asks
_HELPERS = {
    "call_interruptibly": "engine.interruptible", "await_compiled_ahead": "engine.ahead",
    "share_compile_ahead": "engine.ahead", "kernel": "engine.kernels",
    "long_kernel": "engine.kernels", "inlined_kernel": "engine.kernels",
    "LinkedString": "engine.linkedstring", "LOG2E": "engine.numerics", "bit_length_scalar": "engine.numerics",
    "elias_delta_bits_scalar": "engine.numerics", "log_factorial_scalar": "engine.numerics",
    "prefetch_item": "engine.prefetch", "prefetch_row": "engine.prefetch", "STORED_CODEC": "format.container",
    "MAX_EXPANSION": "format.expand", "expand": "format.expand", "expand_into": "format.expand",
    "symbol_lengths": "format.expand", "decode_varints": "format.leb128", "encode_varints": "format.leb128",
    "check_allocation": "format.limits", "memory_limit": "format.limits", "coding_meter": "progress",
    "code_length": "engine.codelength", "varint": "format.varint", "read_varint": "format.varint",
    "char_classes": "text.characters", "char_scripts": "text.characters", "script_names": "text.unicodeclasses",
    "SPACE": "text.unicodeclasses", "LETTER": "text.unicodeclasses",
    "DIGIT": "text.unicodeclasses", "OTHER": "text.unicodeclasses", "Vocabulary": "text.vocabulary",
    "trie_child": "text.vocabulary",
}

if TYPE_CHECKING:
    from ..engine.ahead import await_compiled_ahead, share_compile_ahead
    from ..engine.codelength import code_length
    from ..engine.interruptible import call_interruptibly
    from ..engine.kernels import inlined_kernel, kernel, long_kernel
    from ..engine.linkedstring import LinkedString
    from ..engine.numerics import LOG2E, bit_length_scalar, elias_delta_bits_scalar, log_factorial_scalar
    from ..engine.prefetch import prefetch_item, prefetch_row
    from ..format.container import STORED_CODEC
    from ..format.expand import MAX_EXPANSION, expand, expand_into, symbol_lengths
    from ..format.leb128 import decode_varints, encode_varints
    from ..format.limits import check_allocation, memory_limit
    from ..format.varint import read_varint, varint
    from ..progress import coding_meter
    from ..text.characters import char_classes, char_scripts
    from ..text.unicodeclasses import DIGIT, LETTER, OTHER, SPACE, script_names
    from ..text.vocabulary import Vocabulary, trie_child


def __getattr__(name: str):
    if name not in _HELPERS:
        raise AttributeError(f"module 'chunkpress.plugin' has no attribute {name!r}")
    import importlib  # only on a helper's first use

    value = getattr(importlib.import_module(f"chunkpress.{_HELPERS[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    # hooks and roles
    "hookimpl", "Scorer", "SplitScorer", "Rewriter", "Coder", "AheadPart", "MergeReport", "BYTE_SYMBOLS", "as_symbols",
    "BoundaryPolicy", "DeletionPolicy", "DELETES_NOTHING", "Segmenter", "REPLAYS_MERGES", "ScorerInfo", "RewriterInfo",
    "CoderInfo",
    "BoundaryInfo", "DeletionInfo", "SegmenterInfo", "NoParams", "Learner", "LEARNS_BY_MERGES", "LearnerInfo", "FirstCompile",
    "PreTokenizer", "PreTokenizerInfo", "NO_PRETOKENIZER", "Normalizer", "NormalizerInfo", "NO_NORMALIZER",
    # errors
    "ChunkpressError", "ConfigError", "FormatError", "InputError", "PluginError",
    # coders' helpers
    "encode_varints", "decode_varints", "varint", "read_varint", "expand", "expand_into", "symbol_lengths", "MAX_EXPANSION",
    "check_allocation", "memory_limit", "kernel", "long_kernel", "inlined_kernel", "call_interruptibly", "await_compiled_ahead",
    "share_compile_ahead",
    "prefetch_row",
    "prefetch_item", "coding_meter", "STORED_CODEC",
    # rewriters' and scorers' helpers
    "LinkedString", "LOG2E", "bit_length_scalar", "elias_delta_bits_scalar", "log_factorial_scalar", "code_length",
    # boundary policies' and learners' helpers: each byte's character class, its script
    "char_classes", "SPACE", "LETTER", "DIGIT", "OTHER", "char_scripts", "script_names",
    # segmenters' helpers: the vocabulary's trie
    "Vocabulary", "trie_child",
]
