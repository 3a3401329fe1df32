"""Truncation and padding, as HF ``tokenizers`` offers them on a tokenizer
(``enable_truncation``, ``enable_padding``): a text's tokens cut to a length that leaves room for
the post-processor's, then the batch padded to its longest (or to a length), with attention
masks and type ids. Only single texts: pairs are not read."""

from __future__ import annotations

import attrs
import numpy as np

from ..errors import ConfigError


def _positive(_inst, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{attribute.name} must be a positive whole number, not {value!r}")


def _side(_inst, attribute, value):
    if value not in ("right", "left"):
        raise ConfigError(f"{attribute.name} must be 'right' or 'left', not {value!r}")


@attrs.frozen(kw_only=True)
class Truncation:
    max_length: int = attrs.field(validator=_positive)
    direction: str = attrs.field(default="right", validator=_side)


@attrs.frozen(kw_only=True)
class Padding:
    #: None: to the longest in the batch (HF's BatchLongest); else to this length (Fixed)
    length: int | None = attrs.field(default=None, validator=attrs.validators.optional(_positive))
    pad_to_multiple_of: int | None = attrs.field(default=None, validator=attrs.validators.optional(_positive))
    pad_id: int = attrs.field(default=0, validator=attrs.validators.instance_of(int))
    pad_type_id: int = attrs.field(default=0, validator=attrs.validators.instance_of(int))
    pad_token: str = attrs.field(default="[PAD]", validator=attrs.validators.instance_of(str))
    direction: str = attrs.field(default="right", validator=_side)


class ShapedEncoding:
    """An encoding after truncation and padding: ``ids``, ``tokens``, ``offsets``,
    ``type_ids``, ``attention_mask`` (0 for padding) and ``special_tokens_mask`` (1 for the
    post-processor's tokens and padding), as lists, as HF's Encoding has them."""

    def __init__(self, ids, tokens, offsets, attention_mask, special_tokens_mask, type_ids):
        self.ids, self.tokens, self.offsets = ids, tokens, offsets
        self.attention_mask, self.special_tokens_mask, self.type_ids = attention_mask, special_tokens_mask, type_ids

    @property
    def id_array(self) -> np.ndarray:
        return np.asarray(self.ids, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, attention_mask])"


def shaped(encodings, template: tuple, truncation: Truncation | None, padding: Padding | None) -> list[ShapedEncoding]:
    """``encodings`` (without the post-processor's tokens) cut to ``truncation``'s length less
    the ``template``'s tokens, given those, and padded by ``padding``."""
    before, after = template
    room, right = None, True
    if truncation is not None:
        room, right = truncation.max_length - len(before) - len(after), truncation.direction == "right"
        if room < 0:
            raise ConfigError(f"max_length {truncation.max_length} leaves no room beside the "
                              f"{len(before) + len(after)} tokens the post-processor adds")
    out = []
    for enc in encodings:
        ids, tokens, offsets = enc.ids, enc.tokens, enc.offsets
        if room is not None and len(ids) > room:
            keep = slice(0, room) if right else slice(len(ids) - room, len(ids))
            ids, tokens, offsets = ids[keep], tokens[keep], offsets[keep]
        n_model = len(ids)
        ids = [i for _, i in before] + list(ids) + [i for _, i in after]
        tokens = [c for c, _ in before] + list(tokens) + [c for c, _ in after]
        offsets = [(0, 0)] * len(before) + list(offsets) + [(0, 0)] * len(after)
        special = [1] * len(before) + [0] * n_model + [1] * len(after)
        out.append(ShapedEncoding(ids, tokens, offsets, [1] * len(ids), special, [0] * len(ids)))
    if padding is None or not out:
        return out
    target = padding.length if padding.length is not None else max(len(e) for e in out)
    if padding.pad_to_multiple_of:
        target = -(-target // padding.pad_to_multiple_of) * padding.pad_to_multiple_of
    for e in out:
        n = target - len(e)
        if n <= 0:
            continue
        pads = {"ids": [padding.pad_id] * n, "tokens": [padding.pad_token] * n, "offsets": [(0, 0)] * n,
                "attention_mask": [0] * n, "special_tokens_mask": [1] * n, "type_ids": [padding.pad_type_id] * n}
        for key, pad in pads.items():
            setattr(e, key, getattr(e, key) + pad if padding.direction == "right" else pad + getattr(e, key))
    return out
