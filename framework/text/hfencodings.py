"""HF's encodings of a batch from its symbols: HF's ids, the unknown token fused over what it
stands for, the added tokens and the post-processor's template put in, and each text's
:class:`~chunkpress.text.encoding.Encoding` (offsets into the text as given where a normalizer
says where its bytes came from)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..format.expand import expand, symbol_lengths
from .encoding import Encoding
from .hf import HFVocab, byte_to_unicode


def speller(rules: np.ndarray, hf: HFVocab | None) -> Callable[[np.ndarray, np.ndarray], list[str]]:
    """spell(ids, symbols): HF's byte-level spelling of each token (an added token, symbol -1,
    as its text), one spelling per symbol however many encodings share the speller."""
    names = dict((i, c) for c, i in hf.special) if hf is not None else {}
    if hf is not None:
        names.update((i, c) for side in hf.template for c, i in side)
        if hf.unknown is not None:
            names[hf.unknown[0]] = hf.unknown[1]
    table = byte_to_unicode()
    cache: dict = {}
    spelled_as = hf.spelled_as if hf is not None else "bytes"

    def spelled(data: bytes) -> str:
        if spelled_as == "bytes":
            return "".join(table[b] for b in data)
        text = data.decode("utf-8", "replace")
        if spelled_as == "metaspace":
            return text.replace(" ", "\u2581")
        return text[1:] if text.startswith(" ") else "##" + text  # a word's first piece holds its space

    def spell(ids: np.ndarray, symbols: np.ndarray) -> list[str]:
        out = []
        for i, s in zip(ids.tolist(), symbols.tolist(), strict=False):
            if s < 0:
                out.append(names[i])
                continue
            if s not in cache:
                cache[s] = spelled(expand(rules, [s]))
            out.append(cache[s])
        return out

    return spell


def normalized_around_added(normalizer, hf: HFVocab, texts: list[bytes]) -> list[tuple[bytes, np.ndarray | None]]:
    """Each text normalized between its added tokens, which stay as they are (HF matches them in
    the raw text, before its normalizer), and where each byte came from (None where the
    normalizer does not say): :meth:`~chunkpress.contract.Normalizer.normalize_batch`'s form."""
    spans = [hf.added_spans(t) for t in texts]
    between = [[t[a:b] for a, b in zip([0] + [e for _, e in cut], [s for s, _ in cut] + [len(t)], strict=True)]
               for t, cut in zip(texts, spans, strict=True)]
    done = iter(normalizer.normalize_batch([piece for pieces in between for piece in pieces]))
    out: list[tuple[bytes, np.ndarray | None]] = []
    for text, cut, pieces in zip(texts, spans, between, strict=True):
        parts = [next(done) for _ in pieces]
        if not cut:  # most texts: no added token, the normalizer's own answer
            out.append(parts[0])
            continue
        data = b"".join(part + (text[a:b] if k < len(cut) else b"")
                        for k, ((part, _), (a, b)) in enumerate(zip(parts, [*cut, (0, 0)], strict=True)))
        if any(origin is None for _, origin in parts):
            out.append((data, None))
            continue
        starts = [0] + [e for _, e in cut]
        flat = parts[0][1].ndim == 1
        pieces_origin = []
        for k, ((part, origin), start) in enumerate(zip(parts, starts, strict=True)):
            pieces_origin.append((origin[:len(part)] if flat else origin) + start)
            if k < len(cut):  # the added token's own bytes
                at = np.arange(cut[k][0], cut[k][1], dtype=np.int64)
                pieces_origin.append(at if flat else np.stack([at, at + 1], axis=1))
        if flat:
            pieces_origin.append(parts[-1][1][len(parts[-1][0]):] + starts[-1])
        out.append((data, np.concatenate(pieces_origin)))
    return out


def hf_encodings(hf: HFVocab, rules: np.ndarray, batch: dict, datas: list[bytes], texts, origins,
                 add_special_tokens: bool) -> list[Encoding]:
    """Each text's Encoding from ``batch``: its segments' bytes (``buf``), their pre-token
    ``breaks``, ``symbols``, the segments' ``ends`` and ``cut`` (each text's
    :meth:`~chunkpress.text.hf.HFVocab.segments`); ``origins``: each text's (origin, text as
    given) or None."""
    buf, breaks, symbols, ends, cut = (batch[k] for k in ("buf", "breaks", "symbols", "ends", "cut"))
    ids = hf.ids[symbols]
    hf.check_as_hf(buf, breaks, ids)
    lengths = symbol_lengths(rules)[symbols]
    # the symbols before each segment's end; a segment's first symbol holds its prefix space
    seg_symbols = np.searchsorted(np.cumsum(lengths), ends, side="right")
    firsts = np.concatenate([[0], seg_symbols[:-1]]).astype(np.int64)
    lengths[firsts[np.array([p for *_, prefixed in cut for p in prefixed], dtype=bool)]] -= 1
    if hf.unknown_words:
        ids, symbols, lengths, seg_symbols = hf.fuse_unknown_words(ids, symbols, lengths, seg_symbols, buf, breaks)
    elif ids.size and ids.min() < 0:
        ids, symbols, lengths, seg_symbols = hf.fuse_unknown(ids, symbols, lengths, seg_symbols)
    contents = dict((i, len(c.encode())) for c, i in hf.special)
    before_text, after_text = ([i for _, i in side] for side in (hf.template if add_special_tokens else ((), ())))
    spell = speller(rules, hf)
    stops = np.cumsum(lengths, dtype=np.int64)
    spans = np.stack([stops - lengths, stops], axis=1)  # bytes, from the batch's start
    counts = np.cumsum([0] + [len(segments) for segments, *_ in cut])
    # each text ends after its last segment's symbols (one without segments, where the last text did)
    his = np.concatenate([[0], seg_symbols]).astype(np.int64)[counts[1:]]
    los = np.concatenate([[0], his[:-1]]).astype(np.int64)
    # the template's tokens put in around every text at once; a template token spans nothing (-1)
    per = len(before_text) + len(after_text)
    ids_t, symbols_t, spans_t = ids, symbols, spans
    if per:  # (no copy of the batch's arrays where there is no template)
        at_all = np.concatenate([np.repeat(los[:, None], len(before_text), 1),
                                 np.repeat(his[:, None], len(after_text), 1)], axis=1).ravel()
        put = np.tile(np.array([*before_text, *after_text], dtype=np.int64), los.size)
        ids_t, symbols_t = np.insert(ids, at_all, put), np.insert(symbols, at_all, -1)
        spans_t = np.insert(spans, at_all, -1, axis=0)
    out = []
    for k, (data, text, (segments, special, where, _), aligned) in enumerate(zip(datas, texts, cut, origins,
                                                                               strict=True)):
        lo, hi, piece = int(los[k]), int(his[k]), int(counts[k])
        # the text as given, and where each normalized byte came from; a str's offsets count characters
        origin, original = aligned if aligned is not None else (None, data if isinstance(text, str) else None)
        if not special:  # the batch's arrays, read when asked
            out.append(Encoding(ids_t, spans_t, spell, symbols_t, lo + k * per, hi + (k + 1) * per,
                                int(stops[lo - 1]) if lo else 0, origin, original))
            continue
        # an added token goes after the symbols of the text segments before it; the template's around all
        added = [*before_text, *special, *after_text]
        at = np.concatenate([[0], seg_symbols[piece:piece + len(segments)] - lo])[where]
        at = np.concatenate([np.zeros(len(before_text)), at, np.full(len(after_text), hi - lo)]).astype(np.int64)
        spans_of = [0] * len(before_text) + [contents[i] for i in special] + [0] * len(after_text)
        with_added = np.insert(lengths[lo:hi], at, spans_of)
        tail = np.cumsum(with_added, dtype=np.int64)
        offsets = np.stack([tail - with_added, tail], axis=1)
        templated = np.zeros(with_added.size, dtype=bool)
        templated[:len(before_text)] = True
        templated[with_added.size - len(after_text):] = True
        offsets[templated] = -1  # HF gives a template's tokens (0, 0)
        out.append(Encoding(np.insert(ids[lo:hi], at, added).astype(np.int64), offsets, spell,
                            np.insert(symbols[lo:hi], at, -1), origin=origin, original=original))
    return out
