"""HF's search models, Unigram and WordPiece, as vocabularies of ours, and ours as them.

A dictionary cut by search exports as HF's Unigram (``likelihood``) or WordPiece
(``longest-prefix``) model over GPT-2's byte characters (:func:`to_hf_searched`) and imports back
(:func:`searched_from_hf`), as do HF's own Unigram and WordPiece models behind ByteLevel or
Metaspace. What HF matches is kept: its ids, its prefix space, whether a ``▁`` is a space; a
piece that HF can never match is skipped; and where HF would give a token that stands for no
bytes (a WordPiece word past ``max_input_chars_per_word``, a run of Unigram's unknown id), that
text is refused (:meth:`~chunkpress.text.hf.HFVocab.check_as_hf`).
"""

from __future__ import annotations

import json
import re

from ..contract import BYTE_SYMBOLS, NO_PRETOKENIZER
from ..errors import FormatError
from ..format.rulesfile import check_scores
from .hf import (
    MAX_HF_ID,
    UNKNOWN_BELOW,
    HFVocab,
    added_tokens_json,
    added_tokens_of,
    byte_level_pre_tokenizer,
    byte_to_unicode,
    is_int,
    pre_tokenizer_name,
    segmenter_of,
)
from .hftemplate import pair_template_of, template_of

#: the mark of a WordPiece token that continues a word, on export: BERT's ``##`` behind a
#: character that GPT-2's byte alphabet never holds, so a decoder can remove it exactly (a text's
#: own "##" is two byte characters like any other)
CONTINUES = "\u2581##"
#: HF's WordPiece gives a word longer than this its unknown token: ours are never unknown
LONGEST_WORD = (1 << 31) - 1


def _searched_pre_tokenizer(pretokenizer: str, add_prefix_space: bool = False) -> dict:
    """The pre-tokenizer of a search model (Unigram, WordPiece) over GPT-2's byte characters:
    ``metaspace`` splits before every space (HF's Split, merged with the next), the others are
    those of :func:`~chunkpress.text.hf.byte_level_pre_tokenizer`. ``add_prefix_space``: a space before a text segment that
    does not start with one (after the split only the first piece can lack it)."""
    if pretokenizer == "metaspace":
        split = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": False}
        return {"type": "Sequence", "pretokenizers": [split, byte_level_pre_tokenizer(NO_PRETOKENIZER, add_prefix_space)]}
    return byte_level_pre_tokenizer(pretokenizer, add_prefix_space)


#: sentencepiece's dummy prefix in HF's terms: a space before every text segment, even one that
#: starts with a space (HF normalizes each segment between added tokens on its own)
_PREFIX_ALWAYS = {"type": "Prepend", "prepend": " "}
#: a ``▁`` in the text is a space, as sentencepiece and HF's Metaspace read it
_SPACE_MARK = {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}


def _normalizer(space_mark: bool, prefix_always: bool) -> dict | None:
    """The normalizer that :func:`to_hf_searched` writes (and :func:`_searched_normalizer` reads)."""
    steps = [step for step, on in ((_SPACE_MARK, space_mark), (_PREFIX_ALWAYS, prefix_always)) if on]
    return None if not steps else steps[0] if len(steps) == 1 else {"type": "Sequence", "normalizers": steps}


def _searched_normalizer(normalizer) -> tuple[bool, bool]:
    """(space_mark, prefix_always) of a normalizer that :func:`_normalizer` writes; FormatError
    for any other, which would change the text before our model saw it."""
    for space_mark in (False, True):
        for always in (False, True):
            if normalizer == _normalizer(space_mark, always):
                return space_mark, always
    kind = normalizer.get("type") if isinstance(normalizer, dict) else normalizer
    raise FormatError(f"normalizer {str(kind)[:40]!r} is not supported: chunkpress tokenizes the raw bytes")


def _unused(i: int) -> str:
    """The piece written at an id that no token of ours has: its space is outside GPT-2's byte
    alphabet, so HF never matches it after ByteLevel, and :func:`searched_from_hf` skips it."""
    return f"<unused {i}>"


def to_hf_searched(tokens: list[bytes], ids: list[int], segmenter: str, hf_model: str | None, pretokenizer: str,
                   scores: list[float] | None = None, vocab: HFVocab | None = None) -> str:
    """A tokenizer.json for a vocabulary cut by search, not by merges: ``likelihood`` as HF's
    Unigram model (Viterbi over ``scores``; an id no token has is an unused piece, as HF numbers
    its pieces by their place), ``longest-prefix`` as HF's WordPiece (greedy longest match;
    each token also written with the continuation mark :data:`CONTINUES`, at the same id,
    since ours continue a word wherever they match). Tokens are spelled in GPT-2's byte
    characters behind a ByteLevel pre-tokenizer, so every byte is a token and nothing is
    unknown. ``vocab``: the added tokens and the prefix space of an imported vocabulary."""
    table = byte_to_unicode()
    spelled = ["".join(table[b] for b in token) for token in tokens]
    added = added_tokens_json(vocab.special if vocab is not None else ())
    if hf_model == "Unigram":
        if scores is None:
            raise FormatError("a likelihood vocabulary needs its tokens' log-probabilities to be exported")
        floor = min(scores, default=0.0) - UNKNOWN_BELOW
        pieces = [[_unused(i), floor] for i in range(1 + max(ids, default=-1))]
        for text, i, score in zip(spelled, ids, scores, strict=True):
            pieces[i] = [text, float(score)]
        model: dict = {"type": "Unigram", "unk_id": None, "byte_fallback": False, "vocab": pieces}
    elif hf_model == "WordPiece":
        words = {s: i for s, i in zip(spelled, ids, strict=True)}
        words.update({CONTINUES + s: i for s, i in zip(spelled, ids, strict=True)})
        model = {"type": "WordPiece", "unk_token": spelled[0], "continuing_subword_prefix": CONTINUES,
                 "max_input_chars_per_word": LONGEST_WORD, "vocab": words}
    else:
        raise FormatError(f"segmenter {segmenter!r} has no HF model that cuts text as it does (HF has merges, "
                          "Unigram's likelihood and WordPiece's longest prefix; 'likelihood' is HF's Unigram)")
    always = vocab is not None and vocab.prefix_always
    decoders: list[dict] = [{"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]
    if hf_model == "WordPiece":  # HF may spell an id either way: the mark goes before the bytes return
        decoders.insert(0, {"type": "Replace", "pattern": {"String": CONTINUES}, "content": ""})
    if always:  # as sentencepiece decodes: the dummy prefix off the text's start again
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
           "normalizer": _normalizer(vocab is not None and vocab.space_mark, always),
           "pre_tokenizer": _searched_pre_tokenizer(pretokenizer, vocab is not None and vocab.add_prefix_space
                                                    and not always),
           "post_processor": None,
           "decoder": decoders[0] if len(decoders) == 1 else {"type": "Sequence", "decoders": decoders},
           "model": model}
    return json.dumps(doc, ensure_ascii=False)


_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_piece(text: str) -> int | None:
    """The byte a byte-fallback piece (``<0x41>``) stands for, or None for any other text."""
    found = _BYTE_PIECE.fullmatch(text)
    return int(found.group(1), 16) if found else None


def add_byte_fallback(tokens: list[bytes], ids: list[int], scores: list[float] | None, byte_ids: dict[int, int],
                      floor: float, unknown: bool = False) -> None:
    """Every byte that no token spells, added as its byte-fallback piece ``byte_ids[b]`` (at
    ``floor`` where there are ``scores``), so that every text can be cut; FormatError where a
    byte has no such piece (unless ``unknown``: then its id is -1, the unknown piece's), or
    where two tokens spell the same bytes."""
    have = {t for t in tokens if len(t) == 1}
    for b in range(BYTE_SYMBOLS):
        if bytes([b]) in have:
            continue
        if b not in byte_ids and not unknown:
            raise FormatError(f"byte 0x{b:02x} is no token and has no byte-fallback piece: an unknown character "
                              "would have no bytes")
        tokens.append(bytes([b]))
        ids.append(byte_ids.get(b, -1))
        if scores is not None:
            scores.append(floor)
    if len(set(tokens)) != len(tokens):
        raise FormatError("two tokens spell the same bytes")


def _searched_pre(doc: dict) -> tuple[str, bool, str, bool]:
    """(our pre-tokenizer, HF's ids for a byte-level spelling, the prefix) of a search model's
    normalizer and pre-tokenizer: ByteLevel as :func:`to_hf_searched` writes it, or HF's
    Metaspace (split on, its ``▁`` our space). The prefix: ``never``; ``unless-space``, a space
    before a text segment that does not start with one (ByteLevel's add_prefix_space, and
    Metaspace's prepend scheme ``always``); ``always``, a space before every segment
    (sentencepiece's dummy prefix, HF's Prepend normalizer); or ``first``. Last, whether a
    ``▁`` in the text is a space (Metaspace, or a normalizer that makes it one)."""
    pre = doc.get("pre_tokenizer")
    space_mark, always = _searched_normalizer(doc.get("normalizer"))
    if isinstance(pre, dict) and pre.get("type") == "Metaspace" and not (space_mark or always):
        if pre.get("replacement", "\u2581") != "\u2581" or pre.get("split", True) is not True:
            raise FormatError("a Metaspace pre-tokenizer other than ▁ with split = true has no chunkpress equivalent")
        scheme = pre.get("prepend_scheme", "always" if pre.get("add_prefix_space", True) else "never")
        if scheme not in ("always", "never", "first"):
            raise FormatError(f"Metaspace prepend_scheme {str(scheme)[:40]!r} is not read")
        return "metaspace", False, "unless-space" if scheme == "always" else scheme, True
    for prefix in (False, True):
        if pre == _searched_pre_tokenizer("metaspace", prefix):
            name = "metaspace"
            break
    else:
        name, prefix = pre_tokenizer_name(pre)
    if always and prefix:
        raise FormatError("a Prepend normalizer and a prefix space from ByteLevel: not read")
    return name, True, "always" if always else "unless-space" if prefix else "never", space_mark


def searched_from_hf(doc: dict, model: dict) -> dict:
    """An HF Unigram or WordPiece model as a vocabulary of ours: ``tokens`` (bytes), their HF
    ``ids``, ``scores`` (Unigram's), the ``segmenter``, the pre-tokenizer and the prefix."""
    pre, byte_level, prefix, space_mark = _searched_pre(doc)
    table = byte_to_unicode()
    unicode_of = {c: b for b, c in table.items()}

    def spelled(piece: str) -> bytes | None:
        """The bytes HF matches ``piece`` to; None for a piece that HF never matches (a character
        outside GPT-2's byte alphabet after ByteLevel; a space after Metaspace made every space
        a ``▁``), which is then skipped."""
        if byte_level:
            return bytes(unicode_of[c] for c in piece) if all(c in unicode_of for c in piece) else None
        return None if " " in piece else piece.replace("\u2581", " ").encode("utf-8")

    tokens: list[bytes] = []
    ids: list[int] = []
    scores: list[float] | None = None
    found: dict = {}
    bytes_at: dict[int, int] = {}
    if model["type"] == "Unigram":
        vocab = model.get("vocab")
        if not isinstance(vocab, list) or not all(isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)
                                                  and isinstance(v[1], (int, float)) for v in vocab):
            raise FormatError("not an HF Unigram model: 'vocab' must be a list of [piece, score]")
        unk = model.get("unk_id")
        if unk is not None and not (is_int(unk) and 0 <= unk < len(vocab)):
            raise FormatError(f"HF Unigram model: unk_id {str(unk)[:40]} is no piece's index")
        scores = []
        for i, (piece, score) in enumerate(vocab):
            if not piece:
                raise FormatError(f"HF Unigram model: piece #{i} is empty")
            # the unknown piece is a piece like any other to HF: text that spells it gets it
            byte = byte_piece(piece) if model.get("byte_fallback") else None
            if byte is not None:
                bytes_at[byte] = i
            elif (text := spelled(piece)) is not None:
                tokens.append(text)
                ids.append(i)
                scores.append(float(score))
        check_scores(scores, "HF Unigram model")
        floor = min(scores, default=0.0) - UNKNOWN_BELOW
        found["fused_id"] = unk
        segmenter = segmenter_of("Unigram")
    else:
        vocab = model.get("vocab")
        mark = model.get("continuing_subword_prefix") or ""
        if not isinstance(mark, str):
            raise FormatError("not an HF WordPiece model: 'continuing_subword_prefix' must be a string")
        if isinstance(vocab, dict) and "" in vocab:
            raise FormatError("HF WordPiece model: a token is empty")
        if not isinstance(vocab, dict) or not all(isinstance(k, str) and is_int(v) for k, v in vocab.items()):
            raise FormatError("not an HF WordPiece model: 'vocab' must map tokens to integer ids")
        for piece, i in vocab.items():
            if mark and piece.startswith(mark) and piece != mark:
                if vocab.get(piece[len(mark):]) != i:
                    raise FormatError(f"WordPiece token {piece!r} continues a word with an id of its own: such a "
                                      "vocabulary cuts a word's start and its rest from two vocabularies, which "
                                      "chunkpress's longest-prefix segmenter does not (only one-vocabulary "
                                      "WordPiece models are read)")
                continue
            # the unknown token is a token like any other to HF: text that spells it gets it
            if (text := spelled(piece)) is not None:
                tokens.append(text)
                ids.append(i)
        longest = model.get("max_input_chars_per_word", 100)  # HF's default
        if not (is_int(longest) and longest >= 1):
            raise FormatError("HF WordPiece model: max_input_chars_per_word must be a positive integer")
        found["longest_word"] = None if longest >= LONGEST_WORD else min(longest, MAX_HF_ID)
        found["longest_in_bytes"] = byte_level
        floor = 0.0
        segmenter = segmenter_of("WordPiece")
    add_byte_fallback(tokens, ids, scores, bytes_at, floor)
    if not all(0 <= i <= MAX_HF_ID for i in ids):
        raise FormatError(f"vocabulary ids must be integers in [0, {MAX_HF_ID}]")
    return {"tokens": tokens, "ids": ids, "scores": scores, "segmenter": segmenter, "pretokenizer": pre,
            "prefix": prefix, "special": added_tokens_of(doc), "space_mark": space_mark, "template": template_of(doc),
            "pair_template": pair_template_of(doc),
            **found}
