"""HF's post-processors as templates: the added tokens put around one text, and around a pair
of texts with each part's type id (``encode(a, b)``), read from TemplateProcessing,
BertProcessing, RobertaProcessing, a Sequence of them, or ByteLevel (which adds none)."""

from __future__ import annotations

from ..errors import FormatError


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _steps(doc: dict) -> list:
    """The post-processor's steps that put tokens in (FormatError for one not read)."""
    post = doc.get("post_processor")
    steps = post.get("processors") if isinstance(post, dict) and post.get("type") == "Sequence" else [post]
    found = []
    for step in steps if isinstance(steps, list) else [steps]:
        kind = step.get("type") if isinstance(step, dict) else None
        if step is None or kind == "ByteLevel":
            continue
        if kind in ("BertProcessing", "RobertaProcessing"):
            cls, sep = step.get("cls"), step.get("sep")
            if not all(isinstance(t, list) and len(t) == 2 and isinstance(t[0], str) and _is_int(t[1])
                       for t in (cls, sep)):
                raise FormatError(f"post-processor {kind}: cls and sep must be [token, id]")
        elif kind != "TemplateProcessing":
            raise FormatError(f"post-processor {str(kind)[:40]!r} is not read (TemplateProcessing, BertProcessing, "
                              "RobertaProcessing and ByteLevel are)")
        found.append(step)
    return found


def _items(step: dict, which: str) -> list[tuple]:
    """A step's template for ``which`` ("single" or "pair") as (kind, content, id, type id)
    items: kind "A" or "B" for a text, "T" for an added token."""
    kind = step["type"]
    if kind != "TemplateProcessing":
        cls, sep = tuple(step["cls"]), tuple(step["sep"])
        single = [("T", *cls, 0), ("A", "", -1, 0), ("T", *sep, 0)]
        if which == "single":
            return single
        if kind == "BertProcessing":
            return [*single, ("B", "", -1, 1), ("T", *sep, 1)]
        return [*single, ("T", *sep, 0), ("B", "", -1, 0), ("T", *sep, 0)]  # RoBERTa's: </s></s> between, type 0
    specials = step["special_tokens"] if isinstance(step.get("special_tokens"), dict) else {}
    out: list[tuple] = []
    for piece in step.get(which) or []:
        sequence = piece.get("Sequence") if isinstance(piece, dict) else None
        if isinstance(sequence, dict):
            out.append((sequence.get("id", "A"), "", -1, sequence.get("type_id", 0)))
            continue
        special = piece.get("SpecialToken", {}) if isinstance(piece, dict) else {}
        name = special.get("id")
        found = specials.get(name) if isinstance(name, str) else None
        ids = found.get("ids") if isinstance(found, dict) else None
        tokens = found.get("tokens") if isinstance(found, dict) else None
        if not (isinstance(ids, list) and isinstance(tokens, list) and len(ids) == len(tokens)
                and all(_is_int(i) for i in ids) and all(isinstance(t, str) for t in tokens)):
            raise FormatError(f"post-processor TemplateProcessing: special token {str(name)[:40]!r} is not defined")
        out += [("T", t, i, special.get("type_id", 0)) for t, i in zip(tokens, ids, strict=True)]
    if any(kind not in ("A", "B", "T") or not _is_int(type_id) for kind, _, _, type_id in out):
        raise FormatError("post-processor TemplateProcessing: a sequence is neither A nor B, or a type id not an integer")
    return out


def template_of(doc: dict) -> tuple:
    """The added tokens, (content, id), that HF's post-processor puts before and after one text
    (``encode`` with special tokens, HF's default)."""
    before: list = []
    after: list = []
    for step in _steps(doc):
        items = _items(step, "single")
        at = next((k for k, item in enumerate(items) if item[0] == "A"), len(items))
        before += [(c, i) for _, c, i, _ in items[:at]]
        after += [(c, i) for _, c, i, _ in items[at + 1:]]
    return tuple(before), tuple(after)


def pair_template_of(doc: dict) -> tuple:
    """The post-processor's template for a pair of texts, as (kind, content, id, type id)
    items (see :func:`_items`); empty where it has none or adds no tokens."""
    steps = _steps(doc)
    if not steps:
        return ()
    if len(steps) > 1:
        raise FormatError("a post-processor Sequence of more than one template is not read")
    items = _items(steps[0], "pair")
    return tuple(items) if items else ()
