"""Truncation and padding, as HF ``tokenizers`` offers them on a tokenizer
(``enable_truncation``, ``enable_padding``): a text's tokens cut to a length that leaves room for
the post-processor's, then the batch padded to its longest (or to a length), with attention
masks and type ids; a pair of texts put into the post-processor's pair template."""

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


def _pair_lengths(n1: int, n2: int, target: int) -> tuple[int, int]:
    """How many tokens of each text of a pair HF's ``longest_first`` keeps within ``target``."""
    if n1 + n2 <= target:
        return n1, n2
    swap = n1 > n2
    if swap:
        n1, n2 = n2, n1
    n2 = n1 if n1 > target else max(n1, target - n1)
    if n1 + n2 > target:
        n1 = target // 2
        n2 = n1 + target % 2
    return (n2, n1) if swap else (n1, n2)


def _kept(enc, n: int, right: bool) -> tuple[list, list, list]:
    """The ids, tokens and offsets of ``enc``'s first (or, not ``right``, last) ``n`` tokens."""
    ids, tokens, offsets = enc.ids, enc.tokens, enc.offsets
    if len(ids) > n:
        keep = slice(0, n) if right else slice(len(ids) - n, len(ids))
        ids, tokens, offsets = ids[keep], tokens[keep], offsets[keep]
    return list(ids), list(tokens), list(offsets)


def _assembled(enc, items: tuple, truncation: Truncation | None) -> ShapedEncoding:
    """One text (or a pair: a tuple) put into ``items`` (kind, content, id, type id), each text
    cut first so that all fits ``truncation``'s length."""
    texts = list(enc) if isinstance(enc, tuple) else [enc]
    lengths = [len(t.ids) for t in texts]
    right = truncation is None or truncation.direction == "right"
    if truncation is not None:
        target = truncation.max_length - sum(1 for kind, *_ in items if kind == "T")
        if target < 0:
            raise ConfigError(f"max_length {truncation.max_length} leaves no room beside the "
                              f"{truncation.max_length - target} tokens the post-processor adds")
        lengths = list(_pair_lengths(lengths[0], lengths[1], target)) if len(texts) == 2 else [min(lengths[0], target)]
    kept = dict(zip("AB", (_kept(t, n, right) for t, n in zip(texts, lengths, strict=True)), strict=False))
    fields: dict[str, list] = {k: [] for k in ("ids", "tokens", "offsets", "type_ids", "special")}
    for kind, content, i, type_id in items:
        if kind == "T":
            ids, tokens, offsets, special = [i], [content], [(0, 0)], [1]
        else:
            ids, tokens, offsets = kept[kind]
            special = [0] * len(ids)
        for key, values in zip(("ids", "tokens", "offsets", "special"), (ids, tokens, offsets, special), strict=True):
            fields[key] += values
        fields["type_ids"] += [type_id] * len(ids)
    return ShapedEncoding(fields["ids"], fields["tokens"], fields["offsets"], [1] * len(fields["ids"]),
                          fields["special"], fields["type_ids"])


def shaped(encodings, template: tuple, truncation: Truncation | None, padding: Padding | None,
           pair_template: tuple = ()) -> list[ShapedEncoding]:
    """``encodings`` (without the post-processor's tokens; a pair of them as a tuple) cut to
    ``truncation``'s length less the template's tokens, put into the ``template`` (a pair into
    ``pair_template``, or after each other with type ids 0 and 1), and padded by ``padding``."""
    before, after = template
    single = (*(("T", c, i, 0) for c, i in before), ("A", "", -1, 0), *(("T", c, i, 0) for c, i in after))
    pair = pair_template or (("A", "", -1, 0), ("B", "", -1, 1))
    out = [_assembled(enc, pair if isinstance(enc, tuple) else single, truncation) for enc in encodings]
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
