"""Reading a sentencepiece model (``.model``, a ModelProto) as a vocabulary of ours.

The file is protocol buffers; the few fields read are decoded here (wire types 0, 1, 2 and 5),
so sentencepiece itself is not needed:

* ``pieces`` (1): each piece's text (1), score (2) and type (3: normal, unknown, control,
  user-defined, unused, byte);
* ``trainer_spec`` (2): the model type (3: unigram 1, BPE 2), ``byte_fallback`` (35),
  ``unk_surface`` (44) and the settings that cut words (22, 24, 26);
* ``normalizer_spec`` (3): the rule's name (1), its compiled map (2), ``add_dummy_prefix`` (3),
  ``remove_extra_whitespaces`` (4) and ``escape_whitespaces`` (5).

A unigram model (and a char model, whose pieces are characters) becomes a ``likelihood-f32``
vocabulary with its pieces' scores, and a BPE model a
``best-pair`` one (sentencepiece's BPE inference: the adjacent pair that spells the best-scored
piece joins first). Its words are ``metaspace``'s (sentencepiece's ``▁`` is our space), and ids
are sentencepiece's: a byte is the single-character piece where there is one, else its
``<0xNN>`` piece. The normalization travels with it: a model with a precompiled map or with
extra white space removed gets the ``sentencepiece`` normalizer (its map, its white-space
rules and the dummy prefix); an identity model keeps its bytes, and its dummy prefix is a
space put before every text. Without byte fallback, a run of bytes that no piece covers is one
``<unk>``, which decodes as the model's ``unk_surface``, as sentencepiece gives them. What would
tokenize otherwise is refused in one line: spaces not written as ``▁``, user-defined pieces
(matched whole before the model), and the settings that move where words are cut.
"""

from __future__ import annotations

import base64
import struct

from ..errors import FormatError
from ..format.rulesfile import check_scores
from .hf import UNKNOWN_BELOW
from .hfsearched import add_byte_fallback, byte_piece
from .vocabulary import LONGEST_TOKEN_BYTES  # sentencepiece loads no piece of as many bytes either

#: sentencepiece's piece types
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_KNOWN_TYPES = frozenset((NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE))
#: sentencepiece's model types, and the segmenter each becomes
SEGMENTER_OF = {1: "likelihood-f32", 2: "best-pair", 4: "likelihood-f32"}  # a char model's pieces are characters
_MODEL_NAMES = {1: "unigram", 2: "BPE", 3: "word", 4: "char"}
#: sentencepiece's white space
META_SPACE = "\u2581"


def _fields(data: bytes, where: str):
    """(field number, wire type, value) of each field of one message; FormatError past its end."""
    at, end = 0, len(data)

    def varint() -> int:
        nonlocal at
        value, shift = 0, 0
        while True:
            if at >= end or shift > 63:
                raise FormatError(f"{where}: truncated or corrupt (a number runs past the end)")
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < end:
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            yield field, wire, varint()
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if at + size > end:
                raise FormatError(f"{where}: truncated or corrupt (a number runs past the end)")
            yield field, wire, data[at:at + size]
            at += size
        elif wire == 2:
            size = varint()
            if at + size > end:
                raise FormatError(f"{where}: truncated or corrupt (a field runs past the end)")
            yield field, wire, data[at:at + size]
            at += size
        else:
            raise FormatError(f"{where}: not a sentencepiece model (wire type {wire})")


def read_model(data: bytes) -> dict:
    """The fields of a ``.model`` that encoding depends on."""
    pieces: list[tuple[str, float, int]] = []
    model_type, byte_fallback, unk_surface = 1, False, " \u2047 "
    #: TrainerSpec's fields that change how text is cut, by number, at their defaults
    splitting = {22: True, 24: False, 26: False}
    normalizer = {"name": "nmt_nfkc", "charsmap": b"", "add_dummy_prefix": True, "remove_extra_whitespaces": True,
                  "escape_whitespaces": True}
    for field, wire, value in _fields(data, "sentencepiece model"):
        if field == 1 and wire == 2:
            text, score, kind = None, 0.0, NORMAL
            for f, w, v in _fields(value, "sentencepiece piece"):
                if f == 1 and w == 2:
                    try:
                        text = v.decode("utf-8")
                    except UnicodeDecodeError:
                        raise FormatError("sentencepiece model: a piece is not UTF-8") from None
                elif f == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
                elif f == 3 and w == 0:
                    kind = v if v in _KNOWN_TYPES else NORMAL  # proto2 reads an unknown enum value as its default
            if text is None:
                raise FormatError("sentencepiece model: a piece has no text")
            if not text:
                raise FormatError(f"sentencepiece model: piece #{len(pieces)} is empty")
            if len(text.encode()) >= LONGEST_TOKEN_BYTES:
                raise FormatError(f"sentencepiece model: piece #{len(pieces)} is too long ({len(text.encode()):,} "
                                  f"bytes; sentencepiece loads no model with a piece of {LONGEST_TOKEN_BYTES:,} or more)")
            pieces.append((text, score, kind))
        elif field == 2 and wire == 2:
            for f, w, v in _fields(value, "sentencepiece trainer spec"):
                if f == 3 and w == 0:
                    model_type = v
                elif f == 35 and w == 0:
                    byte_fallback = bool(v)
                elif f == 44 and w == 2:
                    unk_surface = v.decode("utf-8", "replace")
                elif f in splitting and w == 0:
                    splitting[f] = bool(v)
        elif field == 3 and wire == 2:
            for f, w, v in _fields(value, "sentencepiece normalizer spec"):
                if f == 1 and w == 2:
                    normalizer["name"] = v.decode("utf-8", "replace")
                elif f == 2 and w == 2:
                    normalizer["charsmap"] = v
                elif f in (3, 4, 5) and w == 0:
                    normalizer[{3: "add_dummy_prefix", 4: "remove_extra_whitespaces", 5: "escape_whitespaces"}[f]] = bool(v)
    if not pieces:
        raise FormatError("not a sentencepiece model: it has no pieces")
    return {"pieces": pieces, "model_type": model_type, "byte_fallback": byte_fallback, "normalizer": normalizer,
            "unk_surface": unk_surface,
            "split_by_whitespace": splitting[22], "treat_whitespace_as_suffix": splitting[24],
            "allow_whitespace_only_pieces": splitting[26]}


def _check_tokenizes_as_we_do(model: dict) -> None:
    kind = model["model_type"]
    if kind not in SEGMENTER_OF:
        raise FormatError(f"sentencepiece {_MODEL_NAMES.get(kind, kind)!r} models are not read: only unigram, BPE "
                          "and char (a word model fuses runs of unknown words, which no search of ours does)")
    if not model["normalizer"]["escape_whitespaces"]:
        raise FormatError("escape_whitespaces = false: sentencepiece's pieces then do not mark spaces as ▁")
    if not model["byte_fallback"] and sum(kind == UNKNOWN for _, _, kind in model["pieces"]) != 1:
        raise FormatError("byte_fallback = false and not one <unk> piece: an unknown character would have no id")
    for setting, refused in (("split_by_whitespace", False), ("treat_whitespace_as_suffix", True),
                             ("allow_whitespace_only_pieces", True)):
        if model[setting] == refused:
            raise FormatError(f"{setting} = {str(refused).lower()} changes where sentencepiece cuts words (runs of "
                              "spaces, a word's end): not read, as it would give other ids")
    if any(kind == NORMAL and len(text) > 1 and set(text) == {META_SPACE} for text, _, kind in model["pieces"]):
        raise FormatError("a piece of white space alone (▁▁): sentencepiece cuts runs of spaces into such pieces, "
                          "which chunkpress does not; not read")
    if any(kind == USER_DEFINED for _, _, kind in model["pieces"]):
        raise FormatError("user-defined pieces are matched whole before the model: not read")


def vocabulary_of_model(data: bytes) -> dict:
    """A sentencepiece model as a vocabulary: ``tokens`` (bytes), their sentencepiece ``ids``
    and ``scores`` (aligned), the ``segmenter``, the ``prefix``, the ``unknown`` piece and, where
    the text is rewritten, the ``normalizer``."""
    model = read_model(data)
    _check_tokenizes_as_we_do(model)
    tokens: list[bytes] = []
    ids: list[int] = []
    scores: list[float] = []
    byte_ids: dict[int, int] = {}
    normal = [score for _, score, kind in model["pieces"] if kind == NORMAL]
    check_scores(normal, "sentencepiece model")
    floor = (min(normal) if normal else 0.0) - UNKNOWN_BELOW
    for i, (text, score, kind) in enumerate(model["pieces"]):
        if kind == NORMAL:
            tokens.append(text.replace(META_SPACE, " ").encode("utf-8"))
            ids.append(i)
            scores.append(score)
        elif kind == BYTE:
            byte = byte_piece(text)
            if byte is None:
                raise FormatError(f"sentencepiece model: byte piece {text[:40]!r} is not <0xNN>")
            byte_ids[byte] = i
    unknown = None
    if not model["byte_fallback"]:  # a byte that is no piece: <unk>, however many run together
        unknown = next((i, text, model["unk_surface"]) for i, (text, _, kind) in enumerate(model["pieces"])
                       if kind == UNKNOWN)
    add_byte_fallback(tokens, ids, scores, byte_ids, floor, unknown=unknown is not None)  # else: its <0xNN>
    found = {"tokens": tokens, "ids": ids, "scores": scores, "segmenter": SEGMENTER_OF[model["model_type"]],
             "size": len(model["pieces"]), "unknown": unknown}
    norm = model["normalizer"]
    if not norm["charsmap"] and not norm["remove_extra_whitespaces"]:  # the bytes as they are
        return {**found, "prefix": "always" if norm["add_dummy_prefix"] else "never"}
    params = {"charsmap": base64.b64encode(norm["charsmap"]).decode("ascii"),
              "remove_extra_whitespaces": norm["remove_extra_whitespaces"], "add_dummy_prefix": norm["add_dummy_prefix"]}
    return {**found, "normalizer": {"name": "sentencepiece", "params": params},
            "prefix": "normalizer" if norm["add_dummy_prefix"] else "never",
            "leading_spaces_dropped": norm["remove_extra_whitespaces"]}
