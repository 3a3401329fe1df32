"""BERT's WordPiece from an HF ``tokenizer.json``: ``BertNormalizer``, ``BertPreTokenizer``, a
WordPiece model whose continuations (``##ing``) have ids of their own, its [UNK] for a word it
cannot cut, and the WordPiece decoder.

The ``bert`` normalizer leaves the text as its words, each after one space, so a word's first
piece is its token spelled with that space (``hell`` is `` hell``) and a continuation is its
token without the mark (``##o`` is ``o``): cut by longest prefix, a word's start can match only
first pieces and the rest only continuations, as WordPiece's two lookups do. A word with a byte
that no piece covers, or longer than ``max_input_chars_per_word``, is [UNK] whole.
"""

from __future__ import annotations

import json

from ..errors import FormatError
from .hf import MAX_HF_ID, added_tokens_json, added_tokens_of, is_int, segmenter_of
from .hfsearched import add_byte_fallback
from .hftemplate import pair_template_of, template_of


def is_bert(doc: dict, model: dict) -> bool:
    """Whether ``doc`` is BERT's pipeline: BertPreTokenizer before a WordPiece model."""
    pre = doc.get("pre_tokenizer")
    return model.get("type") == "WordPiece" and isinstance(pre, dict) and pre.get("type") == "BertPreTokenizer"


def _normalizer_params(normalizer) -> dict:
    if not (isinstance(normalizer, dict) and normalizer.get("type") == "BertNormalizer"):
        kind = normalizer.get("type") if isinstance(normalizer, dict) else normalizer
        raise FormatError(f"BertPreTokenizer after normalizer {str(kind)[:40]!r}: only BertNormalizer is read with it")
    params = {key: normalizer.get(key, True) for key in ("clean_text", "handle_chinese_chars", "lowercase")}
    accents = normalizer.get("strip_accents")
    params["strip_accents"] = params["lowercase"] if accents is None else accents  # HF's null follows lowercase
    if not all(isinstance(v, bool) for v in params.values()):
        raise FormatError("BertNormalizer: its settings must be true, false (or null for strip_accents)")
    return params


def bert_from_hf(doc: dict, model: dict) -> dict:
    """A BERT WordPiece model as a vocabulary of ours (see the module's note)."""
    vocab = model.get("vocab")
    mark = model.get("continuing_subword_prefix", "##")
    if not isinstance(vocab, dict) or not all(isinstance(k, str) and is_int(v) for k, v in vocab.items()):
        raise FormatError("not an HF WordPiece model: 'vocab' must map tokens to integer ids")
    if mark != "##":
        raise FormatError(f"continuing_subword_prefix {str(mark)[:20]!r}: BERT's WordPiece is read with ## only")
    unk = vocab.get(model.get("unk_token"))
    if unk is None:
        raise FormatError(f"WordPiece unk_token {str(model.get('unk_token'))[:40]!r} is no token of the vocabulary")
    longest = model.get("max_input_chars_per_word", 100)  # HF's default
    if not (is_int(longest) and longest >= 1):
        raise FormatError("HF WordPiece model: max_input_chars_per_word must be a positive integer")
    decoder = doc.get("decoder")
    if decoder is not None and not (isinstance(decoder, dict) and decoder.get("type") == "WordPiece"
                                    and decoder.get("prefix", "##") == mark):
        raise FormatError("BERT's WordPiece is read with its WordPiece decoder only")
    tokens: list[bytes] = []
    ids: list[int] = []
    special = added_tokens_of(doc)
    added = {content for content, _ in special}
    for piece, i in vocab.items():
        # an added token is matched in the raw text; no word holds white space: neither is cut by the model
        if not piece or piece in added or any(c.isspace() for c in piece):
            continue
        if piece.startswith(mark):
            if piece != mark:
                tokens.append(piece[len(mark):].encode("utf-8"))
                ids.append(i)
            continue
        tokens.append(b" " + piece.encode("utf-8"))
        ids.append(i)
    if not all(0 <= i <= MAX_HF_ID for i in ids):
        raise FormatError(f"vocabulary ids must be integers in [0, {MAX_HF_ID}]")
    add_byte_fallback(tokens, ids, None, {}, 0.0, unknown=True)  # a byte no piece covers: [UNK]
    unknown = (unk, model["unk_token"], " " + model["unk_token"])  # decoded as a word of its own
    return {"tokens": tokens, "ids": ids, "scores": None, "segmenter": segmenter_of("WordPiece"), "pretokenizer": "metaspace",
            "normalizer": {"name": "bert", "params": _normalizer_params(doc.get("normalizer"))},
            "prefix": "normalizer", "special": special, "unknown": unknown, "unknown_words": True,
            "longest_word": min(longest, MAX_HF_ID), "cleanup": bool((decoder or {}).get("cleanup", True)),
            "template": template_of(doc), "pair_template": pair_template_of(doc), "spelled_as": "wordpiece"}


def to_hf_bert(tokens: list[bytes], ids: list[int], vocab, normalizer: dict | None) -> str:
    """A BERT WordPiece vocabulary read by :func:`bert_from_hf` written back as HF's: a first
    piece without its space, a continuation after ##, the normalizer, BertPreTokenizer, the
    template as TemplateProcessing and the WordPiece decoder."""
    if vocab.unknown is None or normalizer is None:
        raise FormatError("a WordPiece vocabulary is written as BERT's with its [UNK] and its normalizer")
    words = {t[1:].decode("utf-8", "replace") if t.startswith(b" ") else "##" + t.decode("utf-8", "replace"): i
             for t, i in zip(tokens, ids, strict=True) if i >= 0}
    words.update((content, i) for content, i in vocab.special)
    before, after = vocab.template
    template = None
    if before or after:
        def item(content: str, type_id: int = 0) -> dict:
            return {"SpecialToken": {"id": content, "type_id": type_id}}

        single = [*map(item, (c for c, _ in before)), {"Sequence": {"id": "A", "type_id": 0}},
                  *map(item, (c for c, _ in after))]
        pair = [*single, {"Sequence": {"id": "B", "type_id": 1}}, *(item(c, 1) for c, _ in after)]
        if vocab.pair_template:  # the one it was read with
            pair = [item(c, t) if kind == "T" else {"Sequence": {"id": kind, "type_id": t}}
                    for kind, c, _, t in vocab.pair_template]
        template = {"type": "TemplateProcessing", "single": single, "pair": pair,
                    "special_tokens": {c: {"id": c, "ids": [i], "tokens": [c]}
                                       for c, i in (*before, *after, *((c, i) for k, c, i, _ in vocab.pair_template
                                                                        if k == "T"))}}
    added = added_tokens_json(vocab.special)
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": normalizer,
           "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": template,
           "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": vocab.cleanup},
           "model": {"type": "WordPiece", "unk_token": vocab.unknown[1], "continuing_subword_prefix": "##",
                     "max_input_chars_per_word": vocab.longest_word or 100, "vocab": words}}
    return json.dumps(doc, ensure_ascii=False)
