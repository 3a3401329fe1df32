r"""Word counts: a text as its distinct pre-tokens and how often each occurs, which is all that
word-level training needs (no pair crosses a pre-token). Counted once over a whole text, or
over shards of a stream (here or on Dask workers) and merged, so that the driver never holds
the corpus: only the distinct words, a few shards in flight and one being read.

A shard is cut only where the pre-tokenizer is sure to break, and where the text on either
side is split as it is in the whole. For ``gpt2`` and ``whitespace``: before an ASCII
white-space byte that follows a printable, non-space ASCII byte. The token before such a cut
ends at the class change and looks no further; the one after starts a match afresh (the GPT-2
pattern has no look-behind). A cut after a newline is not safe there: ``\s+(?!\S)`` splits
``"\n\n\nWord"`` differently from its halves. ``metaspace`` breaks before a space and
nowhere else (a newline or a tab stays inside its word), so its cuts are before a space. Text
pre-tokenized line by line breaks after every newline, whatever the pre-tokenizer: a cut there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import numba
import numpy as np

from ..errors import InputError
from ..fileio import Readable
from ..format.limits import COUNT_BYTES_PER_BYTE, work_limit
from ..parallel import ordered_map
from .characters import classes_kept
from .pretokenize import pretoken_breaks
from .units import opening_steps

#: the default shard: a few shards in flight per worker hold well under 1 GB
DEFAULT_SHARD_SIZE = 16 << 20
#: count shards into the running total every this many (bounds the pending counts)
MERGE_EVERY = 8


#: the low 32 bits: a word's id in a hash row, and the 32-bit hash kept beside it
_LOW32 = np.int64(0xFFFFFFFF)
#: a length this long or longer is not held in a row: it is read off the first occurrence
_LONG = np.int64(0xFFFFFF)


@numba.njit(cache=True)
def _distinct_tokens(data, bounds, weights, ids):
    """(the first token of each distinct byte string, numbered in first-seen order; the
    distinct strings one after the other; where each starts, the last entry the end; each one's
    count: its tokens' ``weights`` summed, or its tokens where ``weights`` is empty). Token t is
    ``data[bounds[t]:bounds[t + 1]]``; ``ids[t]`` gets its string's number where ``ids`` is not
    empty (a count needs no array a token).
    Exact: a hash hit is confirmed by comparing the bytes with the string kept, which lies in
    a compact buffer, so a token seen before costs its table row and a cached comparison."""
    n = bounds.size - 1
    size = 1 << 16
    table = np.full((size, 2), -1, dtype=np.int64)  # (hash << 32 | id, kept at << 24 | length, at most _LONG)
    keep_ids = ids.size > 0
    weighted = weights.size > 0
    first = np.empty(n, dtype=np.int64)
    tally = np.empty(n, dtype=np.int64)  # like first and offsets, touched only as far as the strings go
    total = bounds[n] - bounds[0]
    kept = np.empty(total, dtype=data.dtype)  # pages past what is kept are never touched
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    n_ids = 0
    used = 0
    for t in range(n):
        lo, length = bounds[t], bounds[t + 1] - bounds[t]
        h = np.int64(-3750763034362895579)  # FNV-1a offset basis
        for p in range(lo, lo + length):
            h = (h ^ np.int64(data[p])) * np.int64(1099511628211)
        h = (h ^ (h >> 32)) & _LOW32
        if 2 * (n_ids + 1) > size:  # keep the load under 1/2: double and re-insert
            old = table
            size *= 2
            table = np.full((size, 2), -1, dtype=np.int64)
            for j in range(old.shape[0]):
                if old[j, 0] != -1:
                    k = (((old[j, 0] >> 32) & _LOW32) * np.int64(0x9E3779B1)) & (size - 1)
                    while table[k, 0] != -1:
                        k = (k + 1) & (size - 1)
                    table[k, 0] = old[j, 0]
                    table[k, 1] = old[j, 1]
        i = (h * np.int64(0x9E3779B1)) & (size - 1)
        while True:
            key = table[i, 0]
            if key == -1:
                table[i, 0] = (h << 32) | n_ids
                table[i, 1] = (used << 24) | min(length, _LONG)
                kept[used:used + length] = data[lo:lo + length]
                used += length
                offsets[n_ids + 1] = used
                first[n_ids] = t
                tally[n_ids] = weights[t] if weighted else 1
                if keep_ids:
                    ids[t] = n_ids
                n_ids += 1
                break
            held = table[i, 1] & _LONG
            if ((key >> 32) & _LOW32) == h and held == min(length, _LONG) and \
                    (held < _LONG or offsets[(key & _LOW32) + 1] - offsets[key & _LOW32] == length):
                at = table[i, 1] >> 24
                same = True
                for k in range(length):
                    if kept[at + k] != data[lo + k]:
                        same = False
                        break
                if same:
                    tally[key & _LOW32] += weights[t] if weighted else 1
                    if keep_ids:
                        ids[t] = key & _LOW32
                    break
            i = (i + 1) & (size - 1)
    return first[:n_ids], kept[:used], offsets[:n_ids + 1], tally[:n_ids]


@numba.njit(cache=True)
def _count_within(ids, starts, word_ends, word_counts, counts, token_counts):
    """``counts[ids[t]]`` summed over the tokens, each weighted by the count of the word it lies
    in (the words end at ``word_ends``, ascending, as the tokens ``starts``); that count of each
    token in ``token_counts`` where it has room."""
    w = 0
    keep = token_counts.size > 0
    for t in range(ids.size):
        while word_ends[w] <= starts[t]:
            w += 1
        counts[ids[t]] += word_counts[w]
        if keep:
            token_counts[t] = word_counts[w]


@numba.njit(cache=True)
def _spans(src, starts, offsets, out):
    """``out[offsets[u]:offsets[u + 1]]`` is the same length of ``src`` from ``starts[u]``:
    each distinct word's entries of a per-byte array, taken at one occurrence."""
    for u in range(starts.size):
        s, lo = starts[u], offsets[u]
        for k in range(offsets[u + 1] - lo):
            out[lo + k] = src[s + k]


@numba.njit(cache=True)
def _assemble(ids, seg_start, seg_len, symbols, out):
    pos = 0
    for t in range(ids.size):
        u = ids[t]
        s = seg_start[u]
        for k in range(seg_len[u]):
            out[pos] = symbols[s + k]
            pos += 1
    return pos


class WordCounts:
    """Distinct words and their counts: word u is ``buf[offsets[u]:offsets[u + 1]]``, seen
    ``counts[u]`` times. ``steps``: where the words are a boundary policy's units (counted with
    one: :func:`count_words`), when each boundary inside them opens, an entry a byte of ``buf``
    as :func:`~.units.opening_steps` gives them (-1: never, as after every unit's last byte);
    None otherwise."""

    def __init__(self, buf: np.ndarray, offsets: np.ndarray, counts: np.ndarray, steps: np.ndarray | None = None):
        self.buf, self.offsets, self.counts, self.steps = buf, offsets, counts, steps

    @property
    def breaks(self) -> np.ndarray:
        """No pair between two words of ``buf``."""
        breaks = np.zeros(self.buf.size, dtype=bool)
        breaks[self.offsets[1:-1] - 1] = True
        return breaks

    @property
    def occurrences(self) -> int:
        """How many words the counted text has."""
        return int(self.counts.sum())

    def position_weights(self) -> np.ndarray:
        """Each byte of ``buf`` weighted by its word's count."""
        return np.repeat(self.counts, np.diff(self.offsets))

    @classmethod
    def merge(cls, parts: list[WordCounts]) -> WordCounts:
        """One table of the words of all ``parts``, their counts summed (exactly, in int64)."""
        parts = [p for p in parts if p.counts.size]
        if len(parts) <= 1:
            return parts[0] if parts else cls(np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(0, np.int64))
        buf = np.concatenate([p.buf for p in parts])
        shifts = np.cumsum([0] + [p.buf.size for p in parts[:-1]])
        # each part's words lie one after the other, and the parts too: one array of bounds
        bounds = np.concatenate([*(p.offsets[:-1] + s for p, s in zip(parts, shifts, strict=False)), [buf.size]])
        starts = bounds[:-1]
        first, merged, offsets, counts = _distinct_tokens(buf, bounds, np.concatenate([p.counts for p in parts]),
                                                          np.zeros(0, dtype=np.int64))
        steps = None
        if all(p.steps is not None for p in parts):  # a unit's steps are alike wherever it occurs
            steps = np.empty(merged.size, dtype=np.result_type(*(p.steps for p in parts)))
            _spans(np.concatenate([p.steps for p in parts]), starts[first], offsets, steps)
        return cls(merged, offsets, counts, steps)


class DistinctWords(WordCounts):
    """A text cut at pre-token boundaries, as its distinct words (a :class:`WordCounts`) plus
    ``ids[t]``: which distinct word token t is, so the text can be assembled again.
    ``within``: the word counts whose ``buf`` is ``arr``, each token then counted as often as
    the word it lies in; None: each token once. ``steps``: a boundary policy's opening steps
    over ``arr`` (:func:`~.units.opening_steps`): the words are then its units, cut only where
    a boundary never opens, and keep their steps (a unit is split alike wherever it occurs).
    ``keep_ids``: False where only the words and counts are wanted (``ids`` is then None).
    ``token_counts``: each token's count (that of the word of ``within`` it lies in), kept as
    ``token_counts`` (None otherwise). ``keep_ends``: each token's last byte, kept as ``ends``
    (None otherwise; the last token's is left out, as after it no boundary is)."""

    def __init__(self, arr: np.ndarray, breaks: np.ndarray, within: WordCounts | None = None,
                 steps: np.ndarray | None = None, keep_ids: bool = True, token_counts: bool = False,
                 keep_ends: bool = False):
        cuts = np.flatnonzero((breaks if steps is None else breaks & (steps < 0))[:-1])
        self.ends = cuts if keep_ends else None
        bounds = np.empty(cuts.size + 2, dtype=np.int64)  # token t: arr[bounds[t]:bounds[t + 1]]
        np.add(cuts, 1, out=bounds[1:-1])
        bounds[0], bounds[-1] = 0, arr.size
        del cuts
        starts = bounds[:-1]
        ids = np.empty(bounds.size - 1 if keep_ids or within is not None else 0, dtype=np.int64)
        first, buf, offsets, counts = _distinct_tokens(arr, bounds, np.zeros(0, dtype=np.int64), ids)
        self.token_counts = None
        if within is not None:
            counts = np.zeros(first.size, dtype=np.int64)
            per_token = np.empty(ids.size if token_counts else 0, dtype=np.int64)
            _count_within(ids, starts, within.offsets[1:], within.counts, counts, per_token)
            self.token_counts = per_token if token_counts else None
        self.ids = ids if keep_ids else None
        kept = None
        if steps is not None:
            kept = np.empty(buf.size, dtype=steps.dtype)
            _spans(steps, starts[first], offsets, kept)
        super().__init__(buf, offsets, counts, kept)

    def assemble(self, word_symbols: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray) -> np.ndarray:
        """The full text's symbols: word u's symbols are word_symbols[seg_start[u]:+seg_len[u]]."""
        out = np.empty(int(seg_len[self.ids].sum()), dtype=np.int64)
        _assemble(self.ids, seg_start, seg_len, word_symbols, out)
        return out


def cut_special(text: bytes, special: tuple[bytes, ...] = ()) -> tuple[bytes, np.ndarray]:
    """``text`` without its added tokens (matched whole, longest first, as HF matches them),
    and the offsets in what is left where one was cut out: the text on either side is
    pre-tokenized on its own and no pair crosses a cut."""
    if not special:
        return text, np.zeros(0, dtype=np.int64)
    pattern = re.compile(b"|".join(re.escape(s) for s in sorted(special, key=len, reverse=True)))
    kept, cuts, at, size = [], [], 0, 0
    for match in pattern.finditer(text):
        kept.append(text[at:match.start()])
        size += match.start() - at
        cuts.append(size)
        at = match.end()
    kept.append(text[at:])
    return b"".join(kept), np.array(cuts, dtype=np.int64)


def count_words(text: bytes, pretokenizer: str, lines: bool = False, special: tuple[bytes, ...] = (),
                boundary=None) -> WordCounts:
    """The word counts of one text (or shard) under a pre-tokenizer other than ``none``.
    ``lines``: each line is pre-tokenized on its own, as HF's trainer reads files; ``special``:
    added tokens, cut out of the text (not counted) and never inside a word; ``boundary``: a
    boundary policy, whose units (pre-tokens it may join) are counted as words."""
    text, cuts = cut_special(text, special)
    arr = np.frombuffer(text, dtype=np.uint8)
    if arr.size == 0:
        return WordCounts.merge([])
    with classes_kept():  # the pre-tokenizer's and the boundary policy's
        breaks = pretoken_breaks(arr, pretokenizer, pieces=cuts, lines=lines)
        if breaks is None:
            raise ValueError("word counts need a pre-tokenizer other than 'none'")
        ends = np.concatenate([cuts, np.flatnonzero(arr == 10) + 1]) if lines else cuts
        words = distinct_units(boundary, arr, breaks, ends, keep_ids=False)
    return WordCounts(words.buf, words.offsets, words.counts, words.steps)


def distinct_units(policy, arr: np.ndarray, breaks: np.ndarray, piece_ends=None, keep_ids: bool = True) -> DistinctWords:
    """The distinct units of ``arr`` cut at pre-token ``breaks``: the pre-tokens a boundary
    ``policy`` (None: one that opens nothing) may join, never across ``piece_ends``; with a
    policy, each unit keeps its steps (all -1 where nothing in ``arr`` opens). ``keep_ids`` as
    in :class:`DistinctWords`."""
    words = DistinctWords(arr, breaks, steps=opening_steps(policy, arr, breaks, piece_ends), keep_ids=keep_ids)
    if policy is not None and words.steps is None:  # every unit one pre-token
        words.steps = np.full(words.buf.size, -1, dtype=np.int8)
    return words


#: Unicode's white space beyond ASCII (U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029,
#: U+202F, U+205F, U+3000): a character before a cut must not be one of these
_WIDE_SPACES = frozenset([0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def _ends_in_text(arr: np.ndarray, cut: int) -> bool:
    """Whether the character before ``cut`` is white space of no kind: ASCII printable, or a
    whole UTF-8 character that is not Unicode white space (CJK text has few ASCII bytes)."""
    last = int(arr[cut - 1])
    if last < 0x80:
        return 0x21 <= last <= 0x7E
    lead = cut - 1
    while lead > max(0, cut - 4) and 0x80 <= arr[lead] <= 0xBF:
        lead -= 1
    try:
        char = bytes(arr[lead:cut]).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return len(char) == 1 and ord(char) not in _WIDE_SPACES


def _last_safe_cut(data: bytes, newline_only: bool = False, pretokenizer: str = "gpt2", lines: bool = False) -> int:
    """The last offset before which a shard may end (see the module docstring), or 0;
    ``newline_only``: only at a line's end (units a boundary policy joins end at one);
    ``lines``: the text is pre-tokenized line by line."""
    arr = np.frombuffer(data, dtype=np.uint8)
    for tail in (1 << 20, arr.size):  # almost always found near the end
        window = arr[max(0, arr.size - tail):]
        before, after = window[:-1], window[1:]  # the bytes either side of each possible cut
        if lines:  # after a newline
            found = np.flatnonzero(before == 10)
            if found.size:
                return arr.size - window.size + int(found[-1]) + 1
            if newline_only:
                continue
        if pretokenizer == "metaspace":  # before a space (after a newline: a line's end)
            found = np.flatnonzero((after == 32) & (before == 10) if newline_only else after == 32)
            if found.size:
                return arr.size - window.size + int(found[-1]) + 1
            continue
        space = (after == 10) if newline_only else (after == 32) | (after == 10) | (after == 9) | (after == 13)
        maybe = ((before >= 0x21) & (before <= 0x7E)) | ((before >= 0x80) & (before <= 0xBF))
        for at in np.flatnonzero(space & maybe)[::-1].tolist():
            cut = arr.size - window.size + at + 1
            if _ends_in_text(arr, cut):
                return cut
    return 0


def _outside_special(data: bytes, cut: int, special: tuple[bytes, ...]) -> int:
    """``cut``, moved back before any added token it would split."""
    moved = True
    while moved and cut > 0:
        moved = False
        for token in special:
            start = data.find(token, max(0, cut - len(token) + 1), cut + len(token) - 1)
            if 0 <= start < cut < start + len(token):
                cut, moved = start, True
    return cut


def shards(stream: Readable, size: int, special: tuple[bytes, ...] = (), limit: int | None = None,
           newline_only: bool = False, pretokenizer: str = "gpt2", lines: bool = False) -> Iterator[bytes]:
    """Pieces of ``stream`` of about ``size`` bytes, each ending where ``pretokenizer`` (line by
    line where ``lines``) is sure to break (never inside an added token of ``special``;
    ``newline_only``: at a line's end). A stretch with no safe cut
    (a single word, text with no white space) stays in one piece, up to ``limit`` bytes: an
    InputError past it (/dev/zero has no cut, and one word must be learned or encoded whole)."""
    pieces: list[bytes] = []
    held = 0
    while True:
        chunk = stream.read(size)
        if chunk:
            pieces.append(chunk)
            held += len(chunk)
        if not chunk or held >= size:
            data = b"".join(pieces)
            cut = _outside_special(data, _last_safe_cut(data, newline_only, pretokenizer, lines), special) if chunk else len(data)
            if cut > 0:
                yield data[:cut]
                data = data[cut:]
            pieces, held = ([data], len(data)) if data else ([], 0)
            if limit is not None and held > limit:
                raise InputError(f"more than {limit:,} bytes with no place to cut between words (a single word, or "
                                 "no white space after text), as much as fits the memory limit (set "
                                 "CHUNKPRESS_MAX_MEMORY to raise it)")
        if not chunk:
            return


def read_as_sentences(data: bytes) -> bytes:
    """``data`` read a sentence a line, as sentencepiece reads a file: each line that is not
    empty after a space (its dummy prefix), the line breaks gone."""
    data = data.lstrip(b"\n")
    if not data:
        return b""
    arr = np.frombuffer(data, dtype=np.uint8)
    breaks = arr == 10
    gone = breaks.copy()  # a break before another (an empty line) or at the end: nothing to prefix
    gone[:-1] &= breaks[1:]
    gone[-1] = breaks[-1]
    kept = arr[~gone]
    kept[kept == 10] = 32  # each other break: the next line's dummy prefix
    return b" " + kept.tobytes()


def count_stream(stream: Readable, pretokenizer: str, shard_size: int = DEFAULT_SHARD_SIZE,
                 workers: int | None = None, scheduler: str | None = None,
                 progress: Callable[[int], None] | None = None, lines: bool = False,
                 special: tuple[bytes, ...] = (), boundary=None, sentences: bool = False) -> WordCounts:
    """The word counts of everything ``stream`` holds, counted shard by shard (in parallel on
    Dask workers or a cluster when asked) and merged; ``progress`` hears the bytes counted.
    ``lines``, ``special`` and ``boundary`` as in :func:`count_words` (with a boundary policy,
    shards are cut before newlines only, so that no unit is cut); ``sentences``: each shard (whole
    lines) read a sentence a line (:func:`read_as_sentences`). A stretch with no place to cut may take
    what counting it needs within the memory limit (:func:`shards`)."""
    total, pending, done = WordCounts.merge([]), [], 0
    limit = work_limit(COUNT_BYTES_PER_BYTE)
    pieces: Iterator[bytes] = shards(stream, min(shard_size, limit), special, limit, newline_only=boundary is not None,
                                     pretokenizer=pretokenizer, lines=lines)
    if sentences:
        pieces = map(read_as_sentences, pieces)
    for shard, words in ordered_map(count_words, pieces, pretokenizer, lines, special, boundary,
                                    workers=workers, scheduler=scheduler):
        pending.append(words)
        done += len(shard)
        if len(pending) >= MERGE_EVERY:
            total, pending = WordCounts.merge([total, *pending]), []
        if progress:
            progress(done)
    return WordCounts.merge([total, *pending])
