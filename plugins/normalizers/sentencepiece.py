"""sentencepiece's normalization, as a model file records it (its ``NormalizerSpec``): the
precompiled character map (``nmt_nfkc``, ``nfkc``, ``nmt_nfkc_cf`` or a custom rule's), white
space trimmed and runs of it made one, and the dummy prefix. ``import-spm`` configures it from
the model; the map travels in the rules file, base64 in the params, so a later use reads it
without the model."""

import base64
import binascii
import functools

import attrs
import chunkpress.plugin as cp

from .charsmap import CharsMap


def _base64(_inst, attribute, value):
    if not isinstance(value, str):
        raise ValueError(f"{attribute.name} must be a base64 string")
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error:
        raise ValueError(f"{attribute.name} is not base64") from None


@attrs.frozen(kw_only=True)
class SentencepieceParams:
    #: the model's ``precompiled_charsmap``, base64 ("": identity, no character replaced)
    charsmap: str = attrs.field(default="", validator=_base64, repr=False)
    #: spaces at the start and end removed, and a run of them made one
    remove_extra_whitespaces: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    #: a space put before every text that is not empty once normalized
    add_dummy_prefix: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))


@functools.lru_cache(maxsize=8)
def _charsmap(encoded: str) -> CharsMap:
    """The map, checked and read once per process however many tokenizers share it."""
    return CharsMap(base64.b64decode(encoded))


class Sentencepiece(cp.Normalizer):
    def __init__(self, params=None):
        super().__init__(params or SentencepieceParams())
        self.map = _charsmap(self.params.charsmap)  # a corrupt map is refused now

    def normalize(self, text):
        return self.normalize_batch([bytes(text)])[0][0]

    def normalize_aligned(self, text):
        return self.normalize_batch([bytes(text)])[0]

    def normalize_batch(self, texts):
        return self.map.normalize(texts, self.params.remove_extra_whitespaces, self.params.add_dummy_prefix)
