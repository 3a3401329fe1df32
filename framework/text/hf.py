"""Export a dictionary to the HF ``tokenizers`` JSON format, and import one from it.

The export is a byte-level BPE whose merges are our rules in order and whose vocabulary ids
are our symbol ids, so HF's segmentation equals ``chunkpress encode``: HF applies merges by
rank, leftmost first, within each pre-token, and since no merge can create a pair of a lower
rank, that is the same as applying the rules one after the other, left to right.

Pre-tokenizers: ``gpt2`` -> ByteLevel with its regex (our splitter gives the same pre-tokens,
checked on all the corpora), ``none`` -> ByteLevel without regex (the whole text is one word),
``whitespace`` -> Split on white-space runs, then ByteLevel.
``tokenizers`` is only needed to *use* the file, not to write or read it.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import FormatError
from ..format.expand import expand
from ..plugin.base import BYTE_SYMBOLS


def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def _pre_tokenizer(name: str) -> dict:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": name == "gpt2"}
    if name == "whitespace":
        split = {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Isolated", "invert": False}
        return {"type": "Sequence", "pretokenizers": [split, byte_level]}
    return byte_level


def to_hf_json(rules: np.ndarray, pretokenizer: str = "none") -> str:
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    table = byte_to_unicode()
    tokens = [table[b] for b in range(BYTE_SYMBOLS)]
    seen = {t: i for i, t in enumerate(tokens)}
    for r, (a, b) in enumerate(rules.tolist()):
        token = tokens[a] + tokens[b]
        if token in seen:
            raise FormatError(
                f"rules {seen[token] - BYTE_SYMBOLS} and {r} both stand for {expand(rules, [BYTE_SYMBOLS + r])!r}: "
                "an HF BPE vocabulary needs distinct strings"
            )
        seen[token] = BYTE_SYMBOLS + r
        tokens.append(token)
    model = {
        "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
        "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
        "vocab": {t: i for i, t in enumerate(tokens)},
        "merges": [f"{tokens[a]} {tokens[b]}" for a, b in rules.tolist()],
    }
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": _pre_tokenizer(pretokenizer), "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": model,
    }
    return json.dumps(doc, ensure_ascii=False)


def from_hf_json(text: str) -> tuple[np.ndarray, str]:
    """(rules, pretokenizer) from a byte-level BPE tokenizer.json."""
    try:
        doc = json.loads(text)
        model = doc["model"]
        merges = model["merges"]
    except RecursionError:
        raise FormatError("not an HF tokenizer.json: nested too deeply") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise FormatError(f"not an HF tokenizer.json with a BPE model: {exc}") from None
    if model.get("type") != "BPE":
        raise FormatError(f"only BPE models can be imported, not {model.get('type')!r}")
    table = byte_to_unicode()
    symbol = {table[b]: b for b in range(BYTE_SYMBOLS)}
    rules = []
    for i, merge in enumerate(merges):
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        if left not in symbol or right not in symbol:
            raise FormatError(f"merge {i} ({left!r}, {right!r}) uses a token that no earlier merge or byte makes")
        rules.append((symbol[left], symbol[right]))
        symbol.setdefault(left + right, BYTE_SYMBOLS + i)
        if symbol[left + right] != BYTE_SYMBOLS + i:
            raise FormatError(f"merge {i} makes {left + right!r} a second time")
    pre = doc.get("pre_tokenizer") or {}
    if pre.get("type") == "Sequence":
        name = "whitespace"
    elif pre.get("type") == "ByteLevel":
        name = "gpt2" if pre.get("use_regex", True) else "none"
    else:
        raise FormatError(f"pre-tokenizer {pre.get('type')!r} has no chunkpress equivalent; expected ByteLevel")
    return np.array(rules, dtype=np.int64).reshape(-1, 2), name
